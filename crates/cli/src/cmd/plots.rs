//! `--gnuplot PREFIX` and `--plot DIR` for the cache and TLB commands.

use crate::cli::PlotArgs;
use crate::common::write_output;
use anyhow::{Context, Result};
use hwcal_model::Profile;

/// Validate the destinations before a long measurement.
pub fn check(a: &PlotArgs) -> Result<()> {
    if let Some(prefix) = &a.gnuplot {
        if prefix.is_empty() || prefix.ends_with('/') {
            crate::usage!("--gnuplot {prefix:?}: expected a file prefix such as out/mymachine");
        }
        // The prefix is written into the .gp scripts: nothing that could
        // end a quoted string or a line there.
        if let Err(e) = hwcal_report::sanitize::check_script_path(prefix) {
            crate::usage!("--gnuplot {}: {e}", hwcal_report::sanitize::inert_line(prefix));
        }
        let p = std::path::Path::new(prefix);
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                crate::usage!("--gnuplot {prefix}: directory {} does not exist", dir.display());
            }
        }
    }
    if let Some(dir) = &a.plot {
        if dir.as_os_str().is_empty() {
            crate::usage!("--plot: empty path (give a directory)");
        }
        if dir.exists() && !dir.is_dir() {
            crate::usage!("--plot {}: not a directory", dir.display());
        }
        // Like every other output: its directory must exist (DIR itself is
        // created, not a whole tree).
        if !dir.exists() {
            if let Some(parent) = dir.parent().filter(|d| !d.as_os_str().is_empty()) {
                if !parent.is_dir() {
                    crate::usage!(
                        "--plot {}: directory {} does not exist",
                        dir.display(),
                        parent.display()
                    );
                }
            }
        }
    }
    Ok(())
}

/// Write the requested plot files for whatever the profile holds.
pub fn write(p: &Profile, a: &PlotArgs) -> Result<()> {
    if let Some(prefix) = &a.gnuplot {
        for (path, text) in hwcal_report::calibrator::gnuplot_files(p, prefix) {
            write_output(&path, text.as_bytes())?;
        }
    }
    if let Some(dir) = &a.plot {
        if !dir.is_dir() {
            std::fs::create_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        for (name, svg) in hwcal_report::calibrator::svg_plots(p) {
            let path = dir.join(name);
            std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}

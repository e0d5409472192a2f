//! hwcal's exporters behind one trait ([`Exporter`], like hyperfine's): each
//! turns a [`Profile`] into files of bytes ([`NamedFile`]); the caller
//! decides where they go (stdout, a file, the database). The text, JSON,
//! SVG, gnuplot, xgraph and context-switch table exporters live here; the
//! HTML one in `crate::html`.

use crate::{gnuplot, sanitize, text, xgraph};
use hwcal_model::Profile;

/// Errors from exporters.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot serialise the profile: {0}")]
    Json(#[from] serde_json::Error),
    #[error("nothing to export: {0}")]
    Empty(String),
}

/// One file an exporter produced: its name (empty for a single-file
/// exporter, whose destination the caller names; a file name, or a path
/// built from the caller's prefix, for the others) and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

impl NamedFile {
    /// The one, unnamed file of a single-file exporter.
    pub fn single(bytes: Vec<u8>) -> Vec<NamedFile> {
        vec![NamedFile {
            name: String::new(),
            bytes,
        }]
    }
}

/// Something that renders a profile to files (hyperfine's `Exporter`):
/// text, JSON, HTML, SVG plots, gnuplot scripts, xgraph data. Exporters
/// return bytes; the caller's output manager decides where they go.
pub trait Exporter {
    /// Short name (for messages).
    fn name(&self) -> &'static str;
    /// Every file this exporter makes of `profile` (none if the profile
    /// holds nothing it shows).
    fn files(&self, profile: &Profile) -> Result<Vec<NamedFile>, ReportError>;
    /// All the bytes, for a single-file exporter its one file.
    fn export(&self, profile: &Profile) -> Result<Vec<u8>, ReportError> {
        Ok(self.files(profile)?.into_iter().flat_map(|f| f.bytes).collect())
    }
}

/// The SVG plots (curves with the detected levels marked), one file each.
pub struct SvgExporter;

impl Exporter for SvgExporter {
    fn name(&self) -> &'static str {
        "svg"
    }
    fn files(&self, profile: &Profile) -> Result<Vec<NamedFile>, ReportError> {
        Ok(gnuplot::svg_plots(profile)
            .into_iter()
            .map(|(name, svg)| NamedFile {
                name,
                bytes: svg.into_bytes(),
            })
            .collect())
    }
}

/// The Calibrator's `.data` + gnuplot `.gp` files, named `{prefix}.*`.
pub struct GnuplotExporter {
    pub prefix: String,
}

impl Exporter for GnuplotExporter {
    fn name(&self) -> &'static str {
        "gnuplot"
    }
    fn files(&self, profile: &Profile) -> Result<Vec<NamedFile>, ReportError> {
        Ok(gnuplot::gnuplot_files(profile, &self.prefix)
            .into_iter()
            .map(|(name, text)| NamedFile {
                name,
                bytes: text.into_bytes(),
            })
            .collect())
    }
}

/// lat_ctx's xgraph lines of the context-switch section (none without one).
pub struct XgraphExporter;

/// The context-switch table alone (`hwcal ctx --summary`; none without a
/// context-switch section).
pub struct CtxTableExporter;

impl Exporter for CtxTableExporter {
    fn name(&self) -> &'static str {
        "ctx-table"
    }
    fn files(&self, profile: &Profile) -> Result<Vec<NamedFile>, ReportError> {
        Ok(match &profile.context_switch {
            Some(cs) => NamedFile::single(text::context_switch(cs).into_bytes()),
            None => Vec::new(),
        })
    }
}

impl Exporter for XgraphExporter {
    fn name(&self) -> &'static str {
        "xgraph"
    }
    fn files(&self, profile: &Profile) -> Result<Vec<NamedFile>, ReportError> {
        Ok(match &profile.context_switch {
            Some(cs) => NamedFile::single(xgraph::ctx_xgraph(cs).into_bytes()),
            None => Vec::new(),
        })
    }
}

/// The JSON profile (pretty-printed, trailing newline).
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn name(&self) -> &'static str {
        "json"
    }
    fn files(&self, profile: &Profile) -> Result<Vec<NamedFile>, ReportError> {
        let mut v = sanitize::json_inert(serde_json::to_vec_pretty(profile)?);
        v.push(b'\n');
        Ok(NamedFile::single(v))
    }
}

/// The human-readable summary (what `hwcal` prints on stdout).
pub struct TextExporter;

impl Exporter for TextExporter {
    fn name(&self) -> &'static str {
        "text"
    }
    fn files(&self, profile: &Profile) -> Result<Vec<NamedFile>, ReportError> {
        Ok(NamedFile::single(text::summary(profile).into_bytes()))
    }
}

/// The digest (`text::digest`), then the whole summary when `detail`;
/// `hint` closes the digest (how to see the detail) where there is none.
#[derive(Debug, Clone)]
pub struct DigestExporter {
    pub detail: bool,
    /// Colour the verdicts (ANSI): a terminal, and `NO_COLOR` unset.
    pub colour: bool,
    pub hint: Option<String>,
    /// The digest's columns ([`text::digest_width_for`] of the terminal's).
    pub width: usize,
}

impl Default for DigestExporter {
    fn default() -> DigestExporter {
        DigestExporter {
            detail: false,
            colour: false,
            hint: None,
            width: text::DIGEST_WIDTH,
        }
    }
}

/// The digest's width on standard output: the terminal's columns
/// (TIOCGWINSZ), else `$COLUMNS` where it is set (`COLUMNS=80 hwcal db show
/// 3 | less`), within 80 to 100 ([`text::digest_width_for`]); 100 where
/// neither says. The binary calls it: the digest itself is a pure function
/// of the width it is given.
pub fn stdout_digest_width() -> usize {
    let terminal = terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, _)| usize::from(w.0))
        .filter(|&w| w > 0);
    // An unset, empty or malformed $COLUMNS says nothing.
    let env = || {
        std::env::var("COLUMNS")
            .ok()?
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&w| w > 0)
    };
    text::digest_width_for(terminal.or_else(env))
}

impl DigestExporter {
    /// For standard output in `width` columns (the binary reads its
    /// terminal's): coloured on a terminal unless `NO_COLOR` is set to
    /// anything but the empty string (no-color.org).
    pub fn stdout(detail: bool, hint: String, width: usize) -> DigestExporter {
        use std::io::IsTerminal;
        let asked_not = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        DigestExporter {
            detail,
            colour: !asked_not && std::io::stdout().is_terminal(),
            hint: Some(hint),
            width,
        }
    }
}

impl Exporter for DigestExporter {
    fn name(&self) -> &'static str {
        "digest"
    }
    fn files(&self, profile: &Profile) -> Result<Vec<NamedFile>, ReportError> {
        let hint = (!self.detail).then_some(self.hint.as_deref()).flatten();
        let mut s = text::digest(profile, self.colour, hint, self.width);
        if self.detail {
            s.push('\n');
            s += &text::summary(profile);
        }
        Ok(NamedFile::single(s.into_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::parse_profile;

    #[test]
    fn schema_version_of_the_wrong_type_is_named() {
        let e = parse_profile(b"{\"schema_version\": \"1\"}").unwrap_err();
        assert!(e.contains("is a string"), "{e}");
        let e = parse_profile(b"{\"schema_version\": 1.5}").unwrap_err();
        assert!(e.contains("not a whole number"), "{e}");
        let e = parse_profile(b"{\"schema_version\": null}").unwrap_err();
        assert!(e.contains("null"), "{e}");
    }

    #[test]
    fn a_scrubbed_profile_reads_back() {
        let mut p = hwcal_model::sample::full_profile(3);
        p.caches.as_mut().unwrap()[0].miss_latency_ns = Some(-0.42);
        p.caches.as_mut().unwrap()[1].latency_ns = -2.0;
        p.raw[0].points[1].samples[0] = 1e14;
        assert!(parse_profile(&JsonExporter.export(&p).unwrap()).is_err());
        assert_eq!(hwcal_model::plausible::scrub(&mut p).len(), 3);
        let back = parse_profile(&JsonExporter.export(&p).unwrap()).expect("reads back");
        assert!(back.caches.as_ref().unwrap()[1].latency_ns.is_nan());
        assert!(back.raw[0].points[1].samples[0].is_nan());
    }

    #[test]
    fn json_roundtrip_and_schema_check() {
        let p = Profile::new("hwcal info", 7);
        let bytes = JsonExporter.export(&p).unwrap();
        assert_eq!(parse_profile(&bytes).unwrap(), p);
        assert!(parse_profile(b"{}").unwrap_err().contains("schema_version"));
        assert!(parse_profile(b"{\"schema_version\": 99}")
            .unwrap_err()
            .contains("99"));
        assert!(parse_profile(b"nope").unwrap_err().contains("JSON"));
        // Parses, but carries a 10^300 ns memory latency: refused, and said why.
        let mut p = hwcal_model::sample::full_profile(1);
        p.memory.as_mut().unwrap().latency_ns = 1e300;
        let bytes = JsonExporter.export(&p).unwrap();
        let e = parse_profile(&bytes).unwrap_err();
        assert!(e.contains("memory.latency_ns"), "{e}");
    }
}

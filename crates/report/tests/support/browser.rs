//! Finding headless Chromium for the rendering tests (the report's and the
//! database site's; `crates/cli/tests/site.rs` includes this file).

use std::path::PathBuf;

/// The browser: `$HWCAL_CHROMIUM` if set (a path that does not exist means
/// "no browser"), else the usual install locations.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HWCAL_CHROMIUM") {
        return Some(PathBuf::from(p)).filter(|p| p.exists());
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

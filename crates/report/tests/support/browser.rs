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

/// The screenshot Chromium wrote at `shot` is a painted page (a PNG of
/// some size, not an empty frame); `$HWCAL_KEEP_SCREENSHOT` keeps a copy.
pub fn check_screenshot(shot: &std::path::Path) {
    let png = std::fs::read(shot).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    if let Some(keep) = std::env::var_os("HWCAL_KEEP_SCREENSHOT") {
        std::fs::copy(shot, keep).unwrap();
    }
}

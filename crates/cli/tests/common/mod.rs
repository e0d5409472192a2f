//! Shared by the CLI tests: every profile a test gets from hwcal passes
//! the same plausibility check `hwcal analyze` and `hwcal db import` apply
//! (hwcal never writes what it would itself refuse to read).

/// Parse a JSON profile written by hwcal, failing (with the problems named)
/// if it does not pass `hwcal_report::parse_profile`'s checks.
#[allow(dead_code)]
pub fn profile_json(bytes: &[u8]) -> Result<serde_json::Value, String> {
    hwcal_report::parse_profile(bytes)
        .map_err(|e| format!("hwcal wrote a profile it refuses to read: {e}"))?;
    serde_json::from_slice(bytes).map_err(|e| e.to_string())
}

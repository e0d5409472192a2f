//! hwcal's exporters. Each turns a [`Profile`] into bytes; the caller decides
//! where they go (stdout, a file, the database). Like hyperfine's exporters,
//! they sit behind one trait so the CLI treats them alike.
#![forbid(unsafe_code)]

use hwcal_model::Profile;

pub mod svg;
pub mod text;
pub mod xgraph;

/// Errors from exporters.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot serialise the profile: {0}")]
    Json(#[from] serde_json::Error),
    #[error("nothing to export: {0}")]
    Empty(String),
}

/// Something that renders a profile to bytes.
pub trait Exporter {
    /// Short name (for messages).
    fn name(&self) -> &'static str;
    fn export(&self, profile: &Profile) -> Result<Vec<u8>, ReportError>;
}

/// The JSON profile (pretty-printed, trailing newline).
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn name(&self) -> &'static str {
        "json"
    }
    fn export(&self, profile: &Profile) -> Result<Vec<u8>, ReportError> {
        let mut v = serde_json::to_vec_pretty(profile)?;
        v.push(b'\n');
        Ok(v)
    }
}

/// The human-readable summary (what `hwcal` prints on stdout).
pub struct TextExporter;

impl Exporter for TextExporter {
    fn name(&self) -> &'static str {
        "text"
    }
    fn export(&self, profile: &Profile) -> Result<Vec<u8>, ReportError> {
        Ok(text::summary(profile).into_bytes())
    }
}

/// Parse a profile from JSON bytes, checking the schema version.
pub fn parse_profile(bytes: &[u8]) -> Result<Profile, String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"))?;
    match v.get("schema_version").and_then(|s| s.as_u64()) {
        Some(n) if n == hwcal_model::SCHEMA_VERSION as u64 => {}
        Some(n) => {
            return Err(format!(
                "schema_version {n} is not supported (this hwcal reads {})",
                hwcal_model::SCHEMA_VERSION
            ))
        }
        None => return Err("not an hwcal profile: no schema_version".into()),
    }
    serde_json::from_value(v).map_err(|e| format!("not an hwcal profile: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}

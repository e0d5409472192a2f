//! hwcal's exporters. Each turns a [`Profile`] into bytes; the caller decides
//! where they go (stdout, a file, the database). Like hyperfine's exporters,
//! they sit behind one trait so the CLI treats them alike.
#![forbid(unsafe_code)]

use hwcal_model::Profile;

pub mod atomic;
pub mod calibrator;
pub mod compare;
pub mod html;
pub mod plots;
pub mod repeat;
pub mod runs;
pub mod sanitize;
pub mod site;
pub mod svg;
pub mod text;
pub mod verbose;
pub mod xgraph;

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
        Ok(calibrator::svg_plots(profile)
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
        Ok(calibrator::gnuplot_files(profile, &self.prefix)
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

/// Escape text for HTML and SVG element content and attribute values
/// (the one escaper of every markup exporter).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A Unix time as `YYYY-MM-DD HH:MM UTC` (no time-zone database needed).
pub fn format_utc(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        secs / 3600,
        secs % 3600 / 60
    )
}

/// The most bytes a profile file may have (`db import`, `analyze`, `report
/// FILE`): far above any profile hwcal writes (a few MB with every raw
/// curve), far below what would exhaust memory.
pub const MAX_PROFILE_BYTES: u64 = 64 << 20;

/// Read a profile file: a regular file of at most [`MAX_PROFILE_BYTES`]
/// (a device such as `/dev/urandom`, a FIFO or a larger file is refused
/// before or while reading, never read to the end).
pub fn read_profile_file(path: &std::path::Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let md = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if md.is_dir() {
        return Err("is a directory, not a profile file".into());
    }
    if !md.is_file() {
        return Err("not a regular file (a device, FIFO or socket); give a JSON profile file".into());
    }
    if md.len() > MAX_PROFILE_BYTES {
        return Err(format!(
            "{} bytes, more than the {} MiB a profile may have",
            md.len(),
            MAX_PROFILE_BYTES >> 20
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.take(MAX_PROFILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(format!(
            "more than the {} MiB a profile may have",
            MAX_PROFILE_BYTES >> 20
        ));
    }
    Ok(bytes)
}

/// Parse a profile from JSON bytes: the schema version and the
/// plausibility check (`hwcal_model::parse_profile`).
pub use hwcal_model::parse_profile;

#[cfg(test)]
mod tests {
    use super::*;

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
    fn profile_files_are_capped_and_must_be_regular() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_profile_file(dir.path()).unwrap_err().contains("directory"));
        let urandom = std::path::Path::new("/dev/urandom");
        if urandom.exists() {
            assert!(read_profile_file(urandom)
                .unwrap_err()
                .contains("not a regular file"));
        }
        let big = dir.path().join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_PROFILE_BYTES + 1).unwrap();
        assert!(read_profile_file(&big).unwrap_err().contains("MiB"));
        let ok = dir.path().join("ok.json");
        std::fs::write(&ok, b"{}").unwrap();
        assert_eq!(read_profile_file(&ok).unwrap(), b"{}");
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

    #[test]
    fn utc_dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(format_utc(1_790_000_000), "2026-09-21 14:13 UTC");
    }
}

//! hwcal's exporters. Each turns a [`Profile`](hwcal_model::Profile) into
//! bytes; the caller decides where they go (stdout, a file, the database).
//! Like hyperfine's exporters, they sit behind one trait so the CLI treats
//! them alike. This root only declares the modules and re-exports their
//! public items.
#![forbid(unsafe_code)]

pub mod atomic;
pub mod compare;
pub mod destination;
pub mod export;
pub mod format;
pub mod gnuplot;
pub mod heatmap;
pub mod html;
pub mod plots;
pub mod profile_file;
pub mod repeat;
pub mod runs;
pub mod sanitize;
pub mod site;
pub mod svg;
pub mod text;
pub mod verbose;
pub mod xgraph;

pub use export::stdout_digest_width;
pub use export::{
    CtxTableExporter, DigestExporter, Exporter, GnuplotExporter, JsonExporter, NamedFile, ReportError,
    SvgExporter, TextExporter, XgraphExporter,
};
pub use format::{esc, format_utc};
pub use profile_file::{read_profile_file, MAX_PROFILE_BYTES};

/// Parse a profile from JSON bytes: the schema version and the
/// plausibility check (`hwcal_model::parse_profile`).
pub use hwcal_model::parse_profile;

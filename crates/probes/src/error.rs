//! The error every probe returns ([`ProbeError`]), in a module of its own so
//! the probes below the crate root can name it without reaching back up.

/// Errors a probe can report.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("cannot allocate {0} bytes: {1}")]
    Alloc(usize, String),
    #[error("{0} is not supported on this machine")]
    Unsupported(String),
    #[error("measurement failed: {0}")]
    Failed(String),
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Harness(#[from] hwcal_harness::HarnessError),
}

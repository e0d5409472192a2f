//! The harness's errors ([`HarnessError`]), in a module of its own so pinning
//! and the bench can name them without reaching back to the crate root.

/// Errors from the harness.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("CPU {0} does not exist or is not allowed")]
    NoSuchCpu(usize),
    #[error("cannot pin to CPU {0}: {1}")]
    Pin(usize, String),
}

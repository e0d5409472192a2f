//! hwcal's measuring kernels and their buffers.
//!
//! Kernels are tiny, measure exactly what they claim, and never print: they
//! return raw timings that `hwcal-analysis` turns into figures. This crate
//! and the harness's timer are the only places with `unsafe` and inline asm;
//! every such block carries a `SAFETY` note.

pub mod arm;
pub mod buffer;
pub mod cache;
pub mod chase;
pub mod clock;
pub mod ctx;
pub mod flush;
pub mod identity;
pub mod io;
pub mod mem;
pub mod neighbours;
pub mod numa;
pub mod pages;
pub mod sysinfo;
pub mod target;
pub mod tlb;

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

//! hwcal's runner: the one place that runs the probes.
//!
//! Between the libraries (model, harness, probes, analysis) and the binary.
//! Every probe is one [`ProbeEntry`] in the [`registry`] (uarch-bench and
//! multichase keep a kernel as one table entry the same way): an id, a
//! description, a `plan` step that turns the run's configuration and the
//! machine into the probe's parameters, and an `analyze` step that
//! recomputes the probe's figures from a profile's raw data. A plan `run`s
//! the kernels through the harness and returns a profile fragment (raw
//! curves and the analysed sections), which [`absorb`] merges into the run's
//! profile. Progress goes through the small [`Progress`] trait; the CLI
//! implements it (with indicatif or plain lines), tests use [`Silent`].
//!
//! The per-probe modules also hold the measuring code of the single-probe
//! commands (`hwcal cache`, `hwcal mem`, ...), which take plain
//! configuration structs, never command-line arguments.
#![forbid(unsafe_code)]

mod error;
pub mod machine;
pub mod registry;
#[cfg(feature = "synthetic")]
pub mod synthetic;

pub mod cache;
pub mod clock;
pub mod ctx;
pub mod io;
pub mod mem;
pub mod tlb;

pub use error::{Context, Result, RunnerError};
pub use machine::{Machine, Real};
pub use registry::{absorb, plan, probes, reanalyze, select, Plan, ProbeEntry, RunConfig};

/// Where a probe says what it is doing (a line per step). Implementations
/// decide whether and how to show it.
pub trait Progress {
    /// One progress message, without the `hwcal: ` prefix.
    fn say(&self, msg: &str);
}

/// Progress that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn say(&self, _msg: &str) {}
}

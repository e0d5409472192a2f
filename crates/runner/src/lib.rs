//! hwcal's runner: the one place that runs the probes.
//!
//! Between the libraries (model, harness, probes, analysis) and the binary.
//! Every probe is one [`ProbeEntry`] in the [`registry`] (uarch-bench and
//! multichase keep a kernel as one table entry the same way): an id, a
//! description, a `plan` step that turns the run's configuration and the
//! machine into the probe's parameters, and one `analyze` hook that
//! recomputes the probe's figures from a profile's raw data (the contract
//! is `probe.rs`). [`calibrate`] is the one place a calibration is
//! assembled: it describes the machine, plans, runs each plan (a profile
//! fragment of raw data, merged by [`absorb`]), analyses the merged
//! profile once and leaves out implausible figures ([`finish`]). Progress
//! goes through the small [`Progress`] and [`Observer`] traits; the CLI
//! implements them (with indicatif or plain lines), tests use [`Silent`].
//!
//! The per-probe modules also hold the measuring code of the single-probe
//! commands (`hwcal cache`, `hwcal mem`, ...), which take plain
//! configuration structs, never command-line arguments.
#![forbid(unsafe_code)]

mod batch;
mod calibrate;
mod error;
mod kernels;
pub mod machine;
pub mod points;
mod probe;
pub mod registry;
mod signals;
#[cfg(feature = "synthetic")]
pub mod synthetic;

pub mod c2c;
pub mod cache;
pub mod clock;
pub mod ctx;
pub mod io;
pub mod mem;
pub mod os;
pub mod tlb;
pub mod validate;

pub use batch::{calibrate_batch, BatchRun, Repeat};
pub use calibrate::{
    absorb, analyse, calibrate, calibrate_with, describe, estimate, finish, now_unix, reanalyse_imported,
    reanalyse_stored, Eta, Header, Observer, Phase,
};
pub use error::{Context, Result, RunnerError};
pub use kernels::Kernels;
pub use machine::Real;
pub use points::{
    ChaseBuffer, ChasePoints, Hardware, MemPoints, PagePoints, SetPoints, TlbBenches, TlbLayout, Watching,
};
pub use probe::{Machine, Plan, Planned, ProbeEntry, Progress, RunConfig, Silent};
pub use registry::{plan, probe_ids, probes, select};

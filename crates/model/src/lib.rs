//! The hwcal data model: every figure hwcal measures, as plain serde types.
//!
//! This is the JSON schema users' cost models read (`schema_version` 1). Field
//! names carry their unit (`latency_ns`, `size_bytes`, `core_mhz`) so a figure
//! can never be read in the wrong unit. Sections a command did not measure are
//! absent from the JSON (not `null`); figures inside a measured section that
//! could not be determined are `null`.
//!
//! One module per section of the profile: [`Profile`] and its envelope in
//! `profile`, reading it in `parse`, then `machine` (what the machine says
//! about itself, the harness setup), `clock`, `cache`, `memory` (latency past
//! the last cache, parallelism), `tlb`, `mem`, `bandwidth`, `ctx`, `io`,
//! `raw` (the raw curves), and the shared pieces `verdict` (noise verdict,
//! order statistics) and `serde_nan` (NaN as JSON `null`). Every type is
//! re-exported here, so `hwcal_model::ClockResult` names it wherever it lives.
#![forbid(unsafe_code)]

mod bandwidth;
mod cache;
mod clock;
pub mod columns;
pub mod cores;
mod ctx;
pub mod curve;
pub mod figure;
mod io;
mod machine;
mod mem;
mod memory;
pub mod note;
pub mod pages;
mod parse;
pub mod plausible;
mod profile;
mod raw;
/// Synthetic profiles for tests (feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
pub mod sample;
#[cfg(feature = "schema")]
pub mod schema;
mod serde_nan;
mod tlb;
mod units;
mod verdict;

pub use bandwidth::{Bandwidth, BandwidthPoint, LoadedLatencyPoint};
pub use cache::CacheLevel;
pub use clock::{ClockBatch, ClockRaw, ClockResult, ExpressionCycles};
pub use cores::Midr;
pub use ctx::{ContextSwitch, CtxPoint, CtxSize, SwitchCount};
pub use figure::{Direction, Figure, FigureUnit};
pub use io::{IoResult, IoThread};
pub use machine::{HarnessInfo, MachineIdentity, MachineInfo, NominalCache, NominalTlb, NumaNode};
pub use mem::{MemResult, MemThread, NumaLatency};
pub use memory::{MemoryLatency, MemoryMeasure, MlpPoint};
pub use note::{Note, Severity};
pub use parse::{parse_profile, parse_profile_unchecked};
pub use profile::{Batch, Profile, SCHEMA_VERSION};
pub use raw::{RawCurve, RawPoint};
pub use tlb::{TlbHugePageComparison, TlbLevel};
pub use units::{axis_bytes, human_bytes, measured_bytes, parse_size};
pub use verdict::{Spread, Verdict};

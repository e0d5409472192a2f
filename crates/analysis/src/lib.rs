//! hwcal's analysis: pure functions from raw timings (`hwcal-model` types)
//! to figures. No clock, no I/O, so every function is testable on synthetic
//! and recorded data and `hwcal analyze` can redo a run offline.
#![forbid(unsafe_code)]

pub mod batches;
pub mod bootstrap;
pub mod c2c;
pub mod cache;
mod chase;
pub mod clock;
pub mod colour;
pub mod compare;
pub mod consistency;
pub mod converged;
pub mod ctx;
mod footprint;
pub mod gcd;
pub mod io;
pub mod levels;
pub mod line;
pub mod mem;
pub mod mem_raw;
pub mod neighbours;
pub mod nominal;
pub mod os;
pub mod repeat;
pub mod segments;
pub mod stats;
pub mod tlb;
mod walk_free;

//! hwcal's measuring kernels and their buffers.
//!
//! Kernels are tiny, measure exactly what they claim, and never print: they
//! return raw timings that `hwcal-analysis` turns into figures. This crate
//! and the harness's timer are the only places with `unsafe` and inline asm;
//! every such block carries a `SAFETY` note.

pub mod arm;
pub mod buffer;
pub mod c2c;
pub mod cache;
pub mod chase;
pub mod clock;
pub mod cpu_names;
pub mod ctx;
mod error;
pub mod flush;
pub mod identity;
pub mod io;
pub mod mem;
pub mod neighbours;
pub mod numa;
pub mod os;
pub mod pages;
pub mod sets;
pub mod sysinfo;
pub mod tlb;

pub use error::ProbeError;
/// The I/O target's safety checks under their old path ([`io::safety`]).
pub use io::safety as target;

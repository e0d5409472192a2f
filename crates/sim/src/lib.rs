//! Simulated hardware for hwcal (issue 28): machines that exist only as a
//! model, with the truth known exactly, driven through the runner's
//! [`Machine`](hwcal_runner::Machine) trait like a real one so the real
//! analysis derives every figure, and a scorecard of how often that
//! analysis is right, flags its doubt, or is confidently wrong — as cache
//! simulators (gem5, Cachegrind, DRAMsim3) let hardware be studied before
//! it exists.
//!
//! What is modelled (`model`, `curves`, `steps`): cache levels with their
//! size, ways, line and latency, inclusive or a victim of the level
//! above, each set simulated under its replacement (LRU, MRU-bit PLRU,
//! random, adaptive insertion); base pages of 4, 16 or 64 KiB on random
//! frames (page colouring on the physically indexed levels past L1, which
//! is indexed virtually) or huge pages the TLB sees; base-page data TLB
//! levels, a fully associative first level that misses gradually past its
//! size and set-associative hashed levels; memory latency and the page
//! walks' share of it; L1 next-line and L2 neighbour-line prefetchers; the
//! misses a core keeps in flight; per-sample noise (jitter, spikes), a
//! sibling that takes half of L1 and L2 part of the time, a share of the
//! shared level that moves between points; the harness's stopping rule.
//! The cache probe's curves are produced as the runner plans them (the
//! sweep and its extension, colour placements, idle-gap chase, line pairs,
//! flush granule on x86, MLP chains), and the TLB probe's base-page and
//! dense curves.
//!
//! Not modelled: the clock (fixed), bandwidth, context switches,
//! core-to-core, OS and I/O; a timer's resolution and drift; page-walk
//! caches; DRAM pages and queueing. The corpus's cores use documented
//! figures; `calibration` builds a model from a recorded profile and
//! compares its simulated sweep with the recorded one (where the edges
//! fall, point by point), and `cli` is `hwcal sim`.
#![forbid(unsafe_code)]

pub mod calibration;
pub mod cli;
pub mod corpus;
pub mod curves;
pub mod guest;
pub mod machine;
pub mod model;
pub mod points;
pub mod score;
mod sets;

pub use machine::Sim;
pub use model::{Guest, Level, Model, Noise, Pages, Prefetch, Replacement, Sysfs, Thp, Tlb};

//! Simulated hardware for hwcal (issue 28): machines that exist only as a
//! model, with the truth known exactly, driven through the runner's
//! [`Machine`](hwcal_runner::Machine) trait like a real one so the real
//! analysis derives every figure, and a scorecard of how often that
//! analysis is right, flags its doubt, or is confidently wrong — as cache
//! simulators (gem5, Cachegrind, DRAMsim3) let hardware be studied before
//! it exists.
//!
//! What is modelled (`model`, `curves`): cache levels with their size,
//! ways, line and latency under LRU or random replacement (a set
//! simulated, for a level that keeps part of what overflows it as the L2s
//! of current cores do), inclusive or as a victim of the level above;
//! base pages of 4, 16 or 64 KiB on random frames (page colouring on the
//! physically indexed levels past L1, which is indexed virtually) or huge
//! pages the TLB sees; base-page data TLB levels, a fully associative
//! first level that misses gradually past its size and set-associative
//! hashed levels; memory latency and the page walks' share of it;
//! per-sample noise (jitter, spikes), a sibling that takes half of L1 and
//! L2 part of the time, a share of the shared level that moves between
//! points. The cache probe's latency sweep and colour placements and the
//! TLB probe's base-page and dense curves are produced.
//!
//! Not modelled yet: tree-PLRU and adaptive replacement as such (Zen 5's
//! L3), the gap chase (miss latency), the line and flush tests, MLP
//! chains, the clock, memory bandwidth, context switches and I/O; a
//! timer's resolution and drift. The corpus's cores use documented
//! figures, not fitted to recordings; `calibration` builds a model from a
//! recorded profile and compares its simulated sweep with the recorded one
//! (where the edges fall, point by point).
#![forbid(unsafe_code)]

pub mod calibration;
pub mod cli;
pub mod corpus;
pub mod curves;
pub mod machine;
pub mod model;
pub mod score;
pub mod steps;

pub use machine::Sim;
pub use model::{Level, Model, Noise, Pages, Prefetch, Replacement, Tlb};

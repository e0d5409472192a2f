//! `hwcal mem`, after micbench-mem: one memory access benchmark (random
//! chase or sequential read/write/copy) with its per-thread figures and
//! NUMA latency matrix. Keys keep micbench's names where it had them.

use crate::serde_nan::nan_if_null;
#[cfg(feature = "schema")]
use crate::serde_nan::NanOrNumber;
use crate::verdict::{Spread, Verdict};
use serde::{Deserialize, Serialize};

/// `hwcal mem` (micbench-mem): one memory access benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MemResult {
    /// `random` (dependent chase) or `sequential`.
    pub access_pattern: String,
    /// `read`, `write` or `copy` for sequential; `chase` for random.
    pub op: String,
    /// Threads (micbench's multiplicity, `-m`).
    pub threads: u32,
    /// One buffer per thread (micbench's `local`).
    pub local: bool,
    pub size_bytes: u64,
    pub page_size_bytes: u64,
    /// Whether huge pages were asked for (micbench's key).
    pub use_hugepages: bool,
    /// Loads or stores of one cache line, all threads (micbench's key, a count).
    pub total_ops: u64,
    /// Core cycles (from the clock measured alongside), all threads.
    /// micbench's key name, kept for compatibility (its unit is core clock
    /// cycles, `clk`); `null` when the clock was not measured.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub total_clk: f64,
    /// TSC ticks, all threads (what micbench calls clk).
    pub total_tsc: Option<f64>,
    /// Timed wall time, seconds (micbench's `exec_time`).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub exec_time_s: f64,
    /// Ops per second, all threads (micbench's key).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ops_per_sec: f64,
    /// Wall time per op, ns (mean; `null` if undefined).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ns_per_op: f64,
    /// Core clock cycles per op. micbench-mem's key, kept for compatibility
    /// with micbench output and scripts (`clk` is the unit: core cycles);
    /// micbench itself counted TSC ticks here, which hwcal reports as
    /// `tsc_per_op`. `null` when the clock was not measured.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub clk_per_op: f64,
    /// TSC ticks per op (micbench's own `clk_per_op`); `null` without a TSC.
    pub tsc_per_op: Option<f64>,
    /// Bytes moved per second, all threads (micbench's key).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub bytes_per_sec: f64,
    #[serde(default)]
    pub per_thread: Vec<MemThread>,
    pub verdict: Verdict,
    /// Streaming kernel used: `avx512`, `avx2` or `scalar` (random: `chase`).
    #[serde(default)]
    pub kernel: String,
    /// Sequential write/copy with non-temporal (streaming) stores.
    #[serde(default)]
    pub nontemporal: bool,
    /// Bytes one op moves (one cache line).
    #[serde(default)]
    pub bytes_per_op: u64,
    /// Share of the buffer(s) verified to be on huge pages (smaps), 0..1.
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub huge_fraction: f64,
    /// The TSC rate used for `total_tsc`, MHz.
    #[serde(default)]
    pub tsc_mhz: Option<f64>,
    /// Core clock readings taken between slices, MHz.
    #[serde(default)]
    pub core_mhz: Option<Spread>,
    /// ns per op of each ~20 ms slice, over all threads: a wide spread means
    /// the machine was busy (the mean above includes the disturbed slices).
    #[serde(default)]
    pub slice_ns_per_op: Option<Spread>,
    /// Involuntary context switches of the measuring threads while timed.
    #[serde(default)]
    pub preemptions: Option<u64>,
    /// ns per op counting only the time the threads were on their CPUs
    /// (thread CPU clock): what the memory costs when other processes
    /// time-slice the CPU.
    #[serde(default)]
    pub oncpu_ns_per_op: Option<f64>,
    #[serde(default)]
    pub oncpu_clk_per_op: Option<f64>,
    /// Share of the timed wall time the threads were on their CPUs, 0..1.
    #[serde(default)]
    pub oncpu_fraction: Option<f64>,
    /// Buffer setup (map, touch, link), wall seconds.
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub setup_s: f64,
    /// Whole command, wall seconds (micbench's total_exec_time).
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub total_exec_time_s: f64,
    /// NUMA nodes with memory on this machine.
    #[serde(default)]
    pub numa_nodes: u32,
    /// Independent chases per thread (random); 1 = pure latency.
    #[serde(default)]
    pub chains: u32,
    /// Latency from each CPU node to each memory node (random chase).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa_matrix: Vec<NumaLatency>,
    /// 95% intervals of `ns_per_op` and `bytes_per_sec`: ±1.96 standard
    /// errors of the timing slices' mean (the figures are means over all
    /// operations). Absent in older profiles and with under five slices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns_per_op_ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_sec_ci95: Option<[f64; 2]>,
}

/// One cell of the NUMA latency matrix.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NumaLatency {
    pub cpu_node: u32,
    pub cpu: usize,
    pub mem_node: u32,
    /// Latency, ns per load (`null` if undefined).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ns_per_op: f64,
    /// Core cycles per load (micbench's key name, kept for compatibility).
    pub clk_per_op: Option<f64>,
    /// The cell's chase judged as the `mem` section's is, with a 95%
    /// interval of its slices' mean. Absent in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns_per_op_ci95: Option<[f64; 2]>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MemThread {
    pub tid: u32,
    pub cpu: Option<usize>,
    pub node: Option<u32>,
    /// This thread's ops (a count).
    pub ops: u64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub exec_time_s: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ops_per_sec: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ns_per_op: f64,
    /// Core cycles per op (micbench's key name, kept for compatibility;
    /// `null` when the clock was not measured).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub clk_per_op: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub bytes_per_sec: f64,
    /// TSC ticks per op (micbench's clk_per_op).
    #[serde(default)]
    pub tsc_per_op: Option<f64>,
    /// Median core clock of this thread's slices, MHz.
    #[serde(default)]
    pub core_mhz: Option<f64>,
    /// What the thread did: `chase`, `read`, `write` or `copy`.
    #[serde(default)]
    pub work: String,
    #[serde(default)]
    pub preemptions: Option<u64>,
    #[serde(default)]
    pub oncpu_ns_per_op: Option<f64>,
}

//! The profile: one complete (or partial) calibration of a machine, the
//! envelope (schema version, tool, command, time) around every section.

use crate::bandwidth::Bandwidth;
use crate::cache::CacheLevel;
use crate::clock::{ClockRaw, ClockResult};
use crate::ctx::ContextSwitch;
use crate::figure::Figure;
use crate::io::IoResult;
use crate::machine::{HarnessInfo, MachineInfo};
use crate::mem::MemResult;
use crate::memory::MemoryLatency;
use crate::note::Note;
use crate::raw::RawCurve;
use crate::tlb::{TlbHugePageComparison, TlbLevel};
use serde::{Deserialize, Serialize};

/// Version of the JSON profile layout. Bump on incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// One complete (or partial) calibration of a machine: what `hwcal ... --json`
/// writes and `hwcal analyze` / `hwcal db import` read.
///
/// Field names carry their unit (`latency_ns`, `size_bytes`, `core_mhz`,
/// `exec_time_s`). The exceptions are keys kept under the name the original
/// tool gave them, for compatibility with its output and scripts: lat_ctx's
/// `us_min` / `us_median` / `us_mad` / `us_max` (µs, unit as a prefix) and
/// micbench-mem's `clk_per_op` / `total_clk` (core clock cycles), `ops_per_sec`,
/// `total_ops`; lat_ctx's `ovr` is `overhead_us` here. Each says so in its
/// description. Sections a command did not measure are absent; figures that
/// could not be determined are `null`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Profile {
    /// Version of this layout (1); bumped on an incompatible change.
    pub schema_version: u32,
    pub tool: String,
    pub tool_version: String,
    /// Seconds since the Unix epoch at the start of the run.
    pub created_unix: u64,
    /// The command line that produced the profile (e.g. `hwcal clock`).
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<HarnessInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches: Option<Vec<CacheLevel>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryLatency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlbs: Option<Vec<TlbLevel>>,
    /// The PS3 TLB note's comparison: the same page walk with 4 KiB pages
    /// and with huge pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb_huge_pages: Option<Vec<TlbHugePageComparison>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem: Option<MemResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Bandwidth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_switch: Option<ContextSwitch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoResult>,
    /// Notes the probes and the analysis attached (disagreements with
    /// nominal figures, noise warnings): `{probe, code, severity, text}`;
    /// older profiles hold plain strings, which still load (see `note`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// Named figures of probes without a typed section of their own (see
    /// `figure`): rendered and compared generically.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
    /// Raw measured curves; analysis is a pure function of these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw: Vec<RawCurve>,
    /// Raw timings of the clock probe (per batch, per expression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_clock: Option<ClockRaw>,
    /// This run's place in a batch of repeated calibrations (`hwcal run
    /// --repeat N`); absent for a single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<Batch>,
}

/// A run's place in a batch: N calibrations of one machine taken back to
/// back, stored as N runs that share an id, compared as a whole
/// (`hwcal db compare batch:ID ...`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Batch {
    /// The batch's id: the first run's start (Unix seconds) and the
    /// process id, in hex (`67a1c3e0-1f2b`).
    pub id: String,
    /// This run's place, 1 to `runs`.
    pub index: u32,
    /// Runs in the batch.
    pub runs: u32,
    /// Calibrations run first and thrown away (`--warmup`).
    #[serde(default)]
    pub warmup: u32,
}

impl Profile {
    /// An empty profile stamped with schema and tool version.
    pub fn new(command: impl Into<String>, created_unix: u64) -> Self {
        Profile {
            schema_version: SCHEMA_VERSION,
            tool: "hwcal".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            created_unix,
            command: command.into(),
            ..Default::default()
        }
    }

    /// The raw curve with the given id, if recorded.
    pub fn raw_curve(&self, id: &str) -> Option<&RawCurve> {
        self.raw.iter().find(|c| c.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ExpressionCycles;
    use crate::mem::MemThread;
    use crate::memory::MlpPoint;
    use crate::verdict::Verdict;

    #[test]
    fn absent_sections_are_omitted_and_roundtrip() {
        let mut p = Profile::new("hwcal clock", 1);
        p.clock = Some(ClockResult {
            core_mhz: 2500.0,
            verdict: Verdict::Noisy,
            ..Default::default()
        });
        let s = serde_json::to_string(&p).unwrap();
        assert!(s.contains("\"schema_version\":1"));
        assert!(s.contains("\"verdict\":\"noisy\""));
        assert!(!s.contains("\"caches\""));
        let back: Profile = serde_json::from_str(&s).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn undefined_figures_survive_a_json_roundtrip() {
        let mut p = Profile::new("hwcal mem", 1);
        p.mem = Some(MemResult {
            clk_per_op: f64::NAN,
            total_clk: f64::NAN,
            per_thread: vec![MemThread {
                clk_per_op: f64::NAN,
                ..Default::default()
            }],
            ..Default::default()
        });
        p.clock = Some(ClockResult {
            expression_cycles: vec![ExpressionCycles {
                expression: "p=*p".into(),
                ns: f64::INFINITY,
                cycles: f64::NAN,
            }],
            ..Default::default()
        });
        p.memory = Some(MemoryLatency {
            mlp: vec![MlpPoint {
                chains: 2,
                ns_per_load: f64::NAN,
                speedup: f64::NAN,
                ..Default::default()
            }],
            ..Default::default()
        });
        let s = serde_json::to_string(&p).unwrap();
        let back: Profile = serde_json::from_str(&s).unwrap();
        assert!(back.mem.unwrap().clk_per_op.is_nan());
        assert!(back.clock.unwrap().expression_cycles[0].ns.is_nan());
    }
}

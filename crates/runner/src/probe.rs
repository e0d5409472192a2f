//! The probe contract: what a probe gives the runner (a [`ProbeEntry`]: an
//! id, a plan step, one analysis hook) and what the runner gives it (the
//! run's [`RunConfig`], the [`Machine`] it measures on, a [`Progress`]
//! sink). A kernel is one table entry, as in uarch-bench and multichase;
//! the list of entries is the [`registry`](crate::registry).

use crate::Result;
use hwcal_model::{HarnessInfo, MachineInfo, NominalCache, Profile};
use std::path::PathBuf;

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

/// What a calibration passes to every probe's plan step.
#[derive(Debug, Clone, Default)]
pub struct RunConfig {
    /// The CPU the measuring thread is pinned to, if any.
    pub pinned_cpu: Option<usize>,
    /// Where the I/O probe may create its test file (`--io DIR`); without
    /// it the I/O probe is not planned.
    pub io_dir: Option<PathBuf>,
    /// The ids of the probes this run measures (a probe whose analysis
    /// reads another's curves measures them itself when that one is not
    /// among them: see [`ProbeEntry::reads`]).
    pub probes: Vec<String>,
}

impl RunConfig {
    /// Whether this run measures the probe `entry` (so another probe may
    /// leave that one's curves to it).
    pub fn measures(&self, entry: &ProbeEntry) -> bool {
        self.probes.iter().any(|p| p == entry.id)
    }
}

/// A probe's parameters for one run, ready to measure.
pub trait Plan: std::fmt::Debug {
    /// Run the plan's measurements on `hw` (the kernels, or a simulated
    /// machine's points); returns a profile fragment holding the probe's
    /// raw data (and whatever figures only the measurement can give). The
    /// figures derived from raw data come from the entry's `analyze`, run
    /// once over the merged profile by [`calibrate`](crate::calibrate).
    /// Probes whose measurements have no seam yet (clock, ctx, c2c, os,
    /// io, and `hwcal mem`'s own jobs) run their kernels directly.
    fn run(&self, hw: &dyn crate::points::Hardware, progress: &dyn Progress) -> Result<Profile>;

    /// The run so far (the fragments of the probes measured before this
    /// one, merged), handed to the plan just before it runs: a plan that
    /// adapts to what was measured keeps what it needs (the memory
    /// section, the cache sweep's top, to see whether its chase has
    /// converged). Most plans need nothing.
    fn sees(&mut self, _so_far: &Profile) {}
}

/// A planned probe: its entry and its parameters.
pub type Planned = (ProbeEntry, Box<dyn Plan>);

/// One registered probe.
#[derive(Clone, Copy)]
pub struct ProbeEntry {
    pub id: &'static str,
    pub description: &'static str,
    /// Enabled by an option of its own (io: a target directory) rather than
    /// by default: `--only` naming other probes does not drop it.
    pub opt_in: bool,
    /// Seconds the probe takes on a quiet 2-vCPU machine: only for the
    /// progress bar's estimate of the time left (the probes differ by 25×,
    /// so counting phases alone misleads).
    pub typical_s: f64,
    /// The probes whose raw curves this probe's analysis reads (the caches
    /// on 4 KiB pages remove the TLB's share with the TLB's curves): they
    /// are measured before it and analysed before it.
    pub reads: &'static [&'static str],
    /// The probe's parameters from the configuration and the machine;
    /// `None` when the configuration does not enable it.
    pub plan: fn(&RunConfig, &MachineInfo) -> Option<Box<dyn Plan>>,
    /// The analysis hook: recompute the probe's figures and notes from the
    /// raw data in a profile; `false` if the profile holds none of it.
    pub analyze: fn(&mut Profile) -> bool,
}

impl std::fmt::Debug for ProbeEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeEntry")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// What the runner measures on (hyperfine's executor trait): the real
/// machine, whose plans run the kernels, or — behind the `synthetic`
/// feature, for tests — a synthetic machine that returns deterministic
/// curves and figures, so `hwcal run` can be driven end to end (CLI →
/// runner → analysis → exporters → database) without timing anything.
pub trait Machine {
    /// The machine as the OS and CPUID describe it.
    fn info(&self) -> MachineInfo;
    /// The caches as CPUID leaf 4 states them (for the nominal
    /// cross-check against sysfs).
    fn cpuid_caches(&self) -> Vec<NominalCache>;
    /// The timing harness (timer, resolution) with the measuring thread on
    /// `pinned_cpu`.
    fn harness(&self, pinned_cpu: Option<usize>) -> HarnessInfo;
    /// Run one planned probe; returns its profile fragment.
    fn run(&self, probe: &ProbeEntry, plan: &dyn Plan, progress: &dyn Progress) -> Result<Profile>;
}

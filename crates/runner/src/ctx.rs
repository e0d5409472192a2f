//! The context-switch probe: context-switch latency, lmbench lat_ctx's ring of processes
//! and pipes (seed 001), with lat_ctx's options and output format.

use crate::probe::{Plan, ProbeEntry, Progress};
use crate::{usage, Context, Result};
use hwcal_analysis::ctx::{overhead_us, Samples};
use hwcal_model::{ContextSwitch, Profile, RawCurve, SwitchCount};
use hwcal_probes::ctx::{self, Kind, Placement, RingSetup, MAX_NPROCS};

/// The short section of `hwcal run`: 2 and 8 processes, 0 and 64 KiB, on the
/// CPU `run` pinned itself to, each size in [`RUN_ROUNDS`] rounds (up to
/// [`MAX_ROUNDS`]). 0.9–1.3 s on the Zen 3 guest (at most ~2 s), most of
/// it the pauses between rounds.
pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "ctx",
    description: "context switch (lat_ctx ring: 2 and 8 processes, 0 and 64 KiB)",
    opt_in: false,
    typical_s: 1.0,
    reads: &[],
    plan: |config, _| {
        let placement = config.pinned_cpu.map_or(Placement::None, Placement::Same);
        Some(Box::new(Ctx {
            sizes_kb: vec![0, 64],
            rounds: RUN_ROUNDS,
            ring: RingSetup {
                nprocs: vec![2, 8],
                warmups: 2,
                repetitions: 51,
                placement,
                ..RingSetup::default()
            },
        }))
    },
    analyze: hwcal_analysis::ctx::reanalyze,
};

/// Rounds per size in `hwcal run` (see [`measure`]).
pub const RUN_ROUNDS: u32 = 3;

/// Pause between rounds: long enough for the host's scheduling of the
/// core's other hyperthread to change.
const ROUND_PAUSE_MS: u64 = 150;

/// Most rounds per size when the quietest round is not confirmed by a
/// second ([`hwcal_analysis::ctx::quietest_confirmed`]): at most
/// ~0.5 s more per size on the Zen 3 guest.
pub const MAX_ROUNDS: u32 = 5;

/// The context-switch probe's plan: array sizes (KB), rounds per size and
/// the rings.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub sizes_kb: Vec<u64>,
    pub rounds: u32,
    pub ring: RingSetup,
}

impl Plan for Ctx {
    fn run(&self, _hw: &dyn crate::points::Hardware, progress: &dyn Progress) -> Result<Profile> {
        let (cs, raw) = measure(&self.sizes_kb, &self.ring, self.rounds, progress)?;
        Ok(Profile {
            notes: hwcal_analysis::ctx::notes(&cs),
            context_switch: Some(cs),
            raw,
            ..Default::default()
        })
    }
}

/// Measure every size in turn; figures and raw curves.
///
/// With `rounds` > 1 each size is measured that many times,
/// [`ROUND_PAUSE_MS`] apart, and the round whose overhead (the same token
/// pass and array sum without a switch) ran fastest is kept, raw samples
/// and all. A switch costs more while another thread shares the core — on
/// a VM, the host's other hyperthread, invisible to the guest, which slows
/// every sample of a round alike, the overhead included — so the fastest
/// overhead marks the round least
/// disturbed, as the minimum over samples does for a latency. Within a
/// round the samples are interleaved and their median is the figure.
/// Where no second round agrees with the quietest one, more rounds are
/// measured, up to [`MAX_ROUNDS`]: measure until the quiet state has been
/// seen twice, or the budget is spent.
pub fn measure(
    sizes: &[u64],
    ring: &RingSetup,
    rounds: u32,
    progress: &dyn Progress,
) -> Result<(ContextSwitch, Vec<RawCurve>)> {
    let start = std::time::Instant::now();
    let mut figs = Vec::new();
    let mut raw = Vec::new();
    fn sm(s: &ctx::Series) -> Samples<'_> {
        Samples {
            us: &s.us,
            mhz: &s.mhz,
        }
    }
    for &kb in sizes {
        progress.say(&format!(
            "ctx: size {kb} KiB, rings of {:?} {} ({} placement)",
            ring.nprocs,
            ring.kind.name(),
            ring.placement.name()
        ));
        let one =
            || ctx::measure_size(ring, kb).with_context(|| format!("context-switch ring, size {kb} KiB"));
        let mut r = one()?;
        let mut overheads = vec![r.overhead.us.clone()];
        loop {
            let n = overheads.len() as u32;
            let confirmed = || {
                let v: Vec<&[f64]> = overheads.iter().map(|o| o.as_slice()).collect();
                hwcal_analysis::ctx::quietest_confirmed(&v)
            };
            if n >= rounds && (rounds < 2 || n >= MAX_ROUNDS.max(rounds) || confirmed()) {
                break;
            }
            if n == rounds {
                progress.say(&format!(
                    "ctx: size {kb} KiB, no second round agrees with the quietest; measuring more"
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(ROUND_PAUSE_MS));
            let next = one()?;
            overheads.push(next.overhead.us.clone());
            if overhead_us(&next.overhead.us) < overhead_us(&r.overhead.us) {
                r = next;
            }
        }
        let rings: Vec<(u32, Samples)> = r.hops.iter().map(|(n, s)| (*n, sm(s))).collect();
        let mut curves = hwcal_analysis::ctx::raw_curves(kb, sm(&r.overhead), &rings);
        let counts: Vec<(u32, Option<SwitchCount>)> = r
            .hops
            .iter()
            .map(|(n, _)| *n)
            .zip(r.switches.iter().copied())
            .collect();
        curves.extend(hwcal_analysis::ctx::switches_curve(kb, &counts));
        figs.push(hwcal_analysis::ctx::size_from_raw(kb, &curves).context("raw curves of a measured size")?);
        raw.extend(curves);
    }
    let mut cs = ContextSwitch {
        placement: ring.placement.name().into(),
        kind: ring.kind.name().into(),
        parallel: ring.parallel,
        cpus: ring.placement.cpus(),
        warmups: ring.warmups,
        repetitions: ring.repetitions,
        ..Default::default()
    };
    hwcal_analysis::ctx::assemble(&mut cs, figs);
    cs.duration_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok((cs, raw))
}

/// Where `hwcal ctx` is asked to put the ring members (`--cpus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingCpus {
    /// Every member on one CPU: each hop is at least one switch.
    Same,
    /// Round-robin over the allowed CPUs: each hop is a cross-CPU wake-up.
    Spread,
    /// No pinning.
    None,
}

/// A whole number of KB (`hwcal ctx -s`), with a clear word for a negative one.
pub fn parse_kb(s: &str) -> Result<u64, String> {
    if s.trim().starts_with('-') {
        return Err(format!("'{s}': a size cannot be negative"));
    }
    s.trim()
        .parse()
        .map_err(|_| format!("'{s}': not a whole number of KB"))
}

/// The ring's placement from `--cpus`, `--cpu` and `--no-pin`: pinned to
/// one CPU by default (the highest allowed, as every probe), conflicting
/// requests refused.
/// Turn `--cpus`, `--cpu` and `--no-pin` into a placement.
pub fn placement(asked: Option<RingCpus>, cpu: Option<usize>, no_pin: bool) -> Result<Placement> {
    let allowed = hwcal_harness::pin::allowed_cpus();
    let which = match (asked, no_pin) {
        (Some(RingCpus::Same | RingCpus::Spread), true) => {
            usage!("--no-pin conflicts with --cpus same/spread (use --cpus none)")
        }
        (Some(c), _) => c,
        (None, true) => RingCpus::None,
        (None, false) => RingCpus::Same,
    };
    if let Some(c) = cpu {
        if which == RingCpus::None {
            usage!("--cpu {c} conflicts with unpinned placement (--cpus none / --no-pin)");
        }
        if !allowed.contains(&c) {
            usage!("--cpu {c}: no such CPU or not allowed (allowed: {allowed:?})");
        }
    }
    Ok(match which {
        RingCpus::Same => match cpu.or_else(hwcal_harness::pin::default_cpu) {
            Some(c) => Placement::Same(c),
            None => Placement::None,
        },
        RingCpus::Spread => {
            // Start at --cpu (or the highest allowed CPU, hwcal's default),
            // then the others in order.
            let first = cpu.or_else(hwcal_harness::pin::default_cpu).unwrap_or(0);
            let mut v: Vec<usize> = allowed.clone();
            if let Some(i) = v.iter().position(|&c| c == first) {
                v.rotate_left(i);
            }
            if v.is_empty() {
                Placement::None
            } else {
                Placement::Spread(v)
            }
        }
        RingCpus::None => Placement::None,
    })
}

/// Checks that keep a typo from exhausting the machine: a clear usage error
/// instead of a failed fork or the OOM killer.
pub fn check_limits(ring: &RingSetup, sizes: &[u64]) -> Result<()> {
    if let Some(&n) = ring.nprocs.iter().find(|&&n| n < 2) {
        usage!("NPROCS {n}: a ring needs at least 2 processes (the timing one and one more)");
    }
    if let Some(&n) = ring.nprocs.iter().find(|&&n| n > MAX_NPROCS) {
        usage!("NPROCS {n}: at most {MAX_NPROCS} processes per ring");
    }
    let alive = ctx::members_alive(ring);
    const MAX_ALIVE: u64 = 4096;
    if alive > MAX_ALIVE {
        usage!(
            "{alive} ring members would be alive at once (at most {MAX_ALIVE}); use fewer or smaller rings or a smaller -P"
        );
    }
    if ring.kind == Kind::Processes {
        if let Some(limit) = ctx::process_limit() {
            // Leave room for the processes the user already runs.
            if alive + 64 > limit {
                usage!("{alive} processes at once would exceed the process limit ({limit}, ulimit -u)");
            }
        }
    }
    let avail = hwcal_probes::sysinfo::available_memory();
    for &kb in sizes {
        let Some(each) = kb.checked_mul(1024) else {
            usage!("-s {kb}: too large");
        };
        // Every member and the timing process own one array.
        let total = each.saturating_mul(alive + 1);
        if avail > 0 && total > avail / 2 {
            usage!(
                "-s {kb}: {} arrays of {kb} KiB need {} MiB, more than half the available memory ({} MiB)",
                alive + 1,
                total >> 20,
                avail >> 20
            );
        }
    }
    Ok(())
}

//! `hwcal ctx`: context-switch latency, lmbench lat_ctx's ring of processes
//! and pipes (seed 001), with lat_ctx's options and output format.

use crate::cli::{CtxArgs, CtxCpus};
use crate::common::{
    check_db, check_dest, command_line, now_unix, save_if_requested, write_output, Progress,
};
use crate::registry::ProbeEntry;
use anyhow::{Context, Result};
use hwcal_analysis::ctx::Samples;
use hwcal_harness::{harness_info, pin, Timer};
use hwcal_model::{ContextSwitch, Profile, RawCurve, SwitchCount};
use hwcal_probes::ctx::{self, CtxPlan, Kind, Placement, MAX_NPROCS};

/// The short section of `hwcal run`: 2 and 8 processes, 0 and 64 KB, on the
/// CPU `run` pinned itself to. About 0.1–0.3 s on the reference machine.
pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "ctx",
    description: "context switch (lat_ctx ring: 2 and 8 processes, 0 and 64 KB)",
    measure: |rc, p| {
        let placement = rc.pinned_cpu.map_or(Placement::None, Placement::Same);
        let plan = CtxPlan {
            nprocs: vec![2, 8],
            warmups: 2,
            repetitions: 51,
            placement,
            ..CtxPlan::default()
        };
        let (cs, raw) = measure(&[0, 64], &plan, &rc.progress)?;
        p.notes.extend(hwcal_analysis::ctx::notes(&cs));
        p.context_switch = Some(cs);
        p.raw.extend(raw);
        Ok(())
    },
    reanalyze: |p| Ok(hwcal_analysis::ctx::reanalyze(p)),
};

/// Measure every size in turn; figures and raw curves.
pub fn measure(sizes: &[u64], plan: &CtxPlan, progress: &Progress) -> Result<(ContextSwitch, Vec<RawCurve>)> {
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
            "ctx: size {kb} KB, rings of {:?} {} ({} placement)",
            plan.nprocs,
            plan.kind.name(),
            plan.placement.name()
        ));
        let r = ctx::measure_size(plan, kb).with_context(|| format!("context-switch ring, size {kb} KB"))?;
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
        placement: plan.placement.name().into(),
        kind: plan.kind.name().into(),
        parallel: plan.parallel,
        cpus: plan.placement.cpus(),
        warmups: plan.warmups,
        repetitions: plan.repetitions,
        ..Default::default()
    };
    hwcal_analysis::ctx::assemble(&mut cs, figs);
    cs.duration_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok((cs, raw))
}

/// Turn `--cpus`, `--cpu` and `--no-pin` into a placement.
fn placement(a: &CtxArgs) -> Result<Placement> {
    let allowed = pin::allowed_cpus();
    let which = match (a.cpus, a.common.no_pin) {
        (Some(CtxCpus::Same | CtxCpus::Spread), true) => {
            crate::usage!("--no-pin conflicts with --cpus same/spread (use --cpus none)")
        }
        (Some(c), _) => c,
        (None, true) => CtxCpus::None,
        (None, false) => CtxCpus::Same,
    };
    if let Some(c) = a.common.cpu {
        if which == CtxCpus::None {
            crate::usage!("--cpu {c} conflicts with unpinned placement (--cpus none / --no-pin)");
        }
        if !allowed.contains(&c) {
            crate::usage!("--cpu {c}: no such CPU or not allowed (allowed: {allowed:?})");
        }
    }
    Ok(match which {
        CtxCpus::Same => match a.common.cpu.or_else(pin::default_cpu) {
            Some(c) => Placement::Same(c),
            None => Placement::None,
        },
        CtxCpus::Spread => {
            // Start at --cpu (or the highest allowed CPU, hwcal's default),
            // then the others in order.
            let first = a.common.cpu.or_else(pin::default_cpu).unwrap_or(0);
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
        CtxCpus::None => Placement::None,
    })
}

/// Checks that keep a typo from exhausting the machine: a clear usage error
/// instead of a failed fork or the OOM killer.
fn check_limits(plan: &CtxPlan, sizes: &[u64]) -> Result<()> {
    if let Some(&n) = plan.nprocs.iter().find(|&&n| n < 2) {
        crate::usage!("NPROCS {n}: a ring needs at least 2 processes (the timing one and one more)");
    }
    if let Some(&n) = plan.nprocs.iter().find(|&&n| n > MAX_NPROCS) {
        crate::usage!("NPROCS {n}: at most {MAX_NPROCS} processes per ring");
    }
    let alive = ctx::members_alive(plan);
    const MAX_ALIVE: u64 = 4096;
    if alive > MAX_ALIVE {
        crate::usage!(
            "{alive} ring members would be alive at once (at most {MAX_ALIVE}); use fewer or smaller rings or a smaller -P"
        );
    }
    if plan.kind == Kind::Processes {
        if let Some(limit) = ctx::process_limit() {
            // Leave room for the processes the user already runs.
            if alive + 64 > limit {
                crate::usage!(
                    "{alive} processes at once would exceed the process limit ({limit}, ulimit -u)"
                );
            }
        }
    }
    let avail = hwcal_probes::sysinfo::available_memory();
    for &kb in sizes {
        let Some(each) = kb.checked_mul(1024) else {
            crate::usage!("-s {kb}: too large");
        };
        // Every member and the timing process own one array.
        let total = each.saturating_mul(alive + 1);
        if avail > 0 && total > avail / 2 {
            crate::usage!(
                "-s {kb}: {} arrays of {kb} KB need {} MiB, more than half the available memory ({} MiB)",
                alive + 1,
                total >> 20,
                avail >> 20
            );
        }
    }
    Ok(())
}

pub fn run(a: CtxArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let placement = placement(&a)?;
    let plan = CtxPlan {
        nprocs: a.nprocs.clone(),
        parallel: a.parallel,
        warmups: a.warmups,
        repetitions: a.repetitions,
        placement,
        kind: if a.threads { Kind::Threads } else { Kind::Processes },
        enough_ns: a.block_us as f64 * 1e3,
    };
    let mut sizes: Vec<u64> = Vec::new();
    for &s in &a.size {
        if !sizes.contains(&s) {
            sizes.push(s);
        }
    }
    check_limits(&plan, &sizes)?;
    let mut p = Profile::new(command_line(), now_unix());
    // The timer is calibrated here, before any ring is forked.
    let _ = Timer::get();
    let (cs, raw) = measure(&sizes, &plan, &progress)?;
    progress.say(&format!("ctx: done in {:.2} s", cs.duration_ms / 1e3));
    p.harness = Some(harness_info(plan.placement.cpu_of(0)));
    p.notes.extend(hwcal_analysis::ctx::notes(&cs));
    for n in &p.notes {
        eprintln!("hwcal: note: {n}");
    }
    let text = if a.summary {
        hwcal_report::text::context_switch(&cs)
    } else {
        hwcal_report::xgraph::ctx_xgraph(&cs)
    };
    p.context_switch = Some(cs);
    p.raw = raw;
    let json = a.common.json.as_deref();
    if json != Some("-") {
        write_output("-", text.as_bytes())?;
    }
    if let Some(dest) = json {
        let bytes = hwcal_report::Exporter::export(&hwcal_report::JsonExporter, &crate::common::checked(&p))?;
        write_output(dest, &bytes)?;
    }
    save_if_requested(&p, a.common.save).map(drop)
}

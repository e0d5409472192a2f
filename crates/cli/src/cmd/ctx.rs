//! `hwcal ctx`: context-switch latency, lmbench lat_ctx's ring of processes
//! and pipes (seed 001), with lat_ctx's options and output format (the
//! probe is `hwcal_runner::ctx`).

use crate::cli::{CtxArgs, CtxCpus};
use crate::common::{check_db, command_line, now_unix, save_if_requested, Progress};
use crate::output::{check_dest, Dest, Outputs};
use anyhow::Result;
use hwcal_harness::{harness_info, pin, Timer};
use hwcal_model::Profile;
use hwcal_probes::ctx::{self, CtxPlan, Kind, Placement, MAX_NPROCS};
use hwcal_report::{CtxTableExporter, JsonExporter, XgraphExporter};
use hwcal_runner::ctx::measure;

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
    // One round, as lat_ctx measures (`hwcal run` keeps the quietest of
    // three).
    let (cs, raw) = measure(&sizes, &plan, 1, &progress)?;
    progress.say(&format!("ctx: done in {:.2} s", cs.duration_ms / 1e3));
    p.harness = Some(harness_info(plan.placement.cpu_of(0)));
    p.notes.extend(hwcal_analysis::ctx::notes(&cs));
    for n in &p.notes {
        crate::say!("note: {n}");
    }
    p.context_switch = Some(cs);
    p.raw = raw;
    // lat_ctx's xgraph lines (or the table) on stdout unless the JSON goes
    // there, and the JSON.
    let json = a.common.json.as_deref();
    let mut outputs = Outputs::default();
    if json != Some("-") {
        match a.summary {
            true => outputs.add(CtxTableExporter, Dest::Stdout),
            false => outputs.add(XgraphExporter, Dest::Stdout),
        };
    }
    if let Some(path) = json {
        let path = path.to_string();
        outputs.add(JsonExporter, Dest::File { flag: "--json", path });
    }
    outputs.write(&p)?;
    save_if_requested(&p, a.common.save).map(drop)
}

//! `hwcal ctx`: context-switch latency, lmbench lat_ctx's ring of processes
//! and pipes (seed 001), with lat_ctx's options and output format (the
//! probe is `hwcal_runner::ctx`).

use crate::cli::{CtxArgs, CtxCpus};
use crate::common::{check_db, header, save_if_requested, Progress};
use crate::output::{check_dest, Dest, Outputs};
use anyhow::Result;
use hwcal_harness::{pin, Timer};
use hwcal_probes::ctx::{CtxPlan, Kind, Placement};
use hwcal_report::{CtxTableExporter, JsonExporter, XgraphExporter};
use hwcal_runner::ctx::{Ctx, ENTRY};
use hwcal_runner::{calibrate_with, Planned, Real};

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
    hwcal_runner::ctx::check_limits(&plan, &sizes)?;
    let _ = Timer::get();
    let cpu = plan.placement.cpu_of(0);
    let ctx_plan = Ctx {
        sizes_kb: sizes,
        rounds: 1,
        plan,
    };
    let planner = move |_: &_| -> Vec<Planned> { vec![(ENTRY, Box::new(ctx_plan))] };
    let p = calibrate_with(&Real, header(cpu), &[ENTRY], planner, &progress)?;
    if let Some(cs) = &p.context_switch {
        progress.say(&format!("ctx: done in {:.2} s", cs.duration_ms / 1e3));
    }
    for n in &p.notes {
        crate::say!("note: {n}");
    }
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

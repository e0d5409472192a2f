//! `hwcal io`: storage IOPS, bandwidth and latency percentiles, the jobs of
//! micbench-io with fio's vocabulary (rw, bs, size, direct, ioengine,
//! iodepth). This module validates the flags into a plain
//! `hwcal_runner::io::IoSpec`; the runner owns the test file's life cycle.

use crate::cli::{IoArgs, IoEngineArg, IoRw};
use crate::common::{check_db, header, parse_size, save_if_requested, Progress, UsageError};
use crate::output::{check_dest, emit};
use crate::usage;
use anyhow::Result;
use hwcal_probes::io::{Engine, Pattern};
use hwcal_runner::io::{worker_cpus, IoSpec, ENTRY};
use hwcal_runner::{calibrate_with, Planned, Real};
use std::path::PathBuf;

fn pattern(rw: IoRw) -> Pattern {
    match rw {
        IoRw::Read => Pattern::Read,
        IoRw::Write => Pattern::Write,
        IoRw::Randread => Pattern::RandRead,
        IoRw::Randwrite => Pattern::RandWrite,
        IoRw::Rw => Pattern::ReadWrite,
        IoRw::Randrw => Pattern::RandRw,
    }
}

fn engine(e: IoEngineArg) -> Engine {
    match e {
        IoEngineArg::Sync => Engine::Sync,
        IoEngineArg::Psync => Engine::Psync,
        IoEngineArg::IoUring => Engine::IoUring,
    }
}

pub fn run(a: IoArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let spec = validate(&a)?;
    // The worker threads' first CPU is the one the harness section names.
    let cpu = spec.cpus.first().copied();
    let planner = move |_: &_| -> Vec<Planned> { vec![(ENTRY, Box::new(spec))] };
    let p = calibrate_with(&Real, header(cpu), &[ENTRY], planner, &progress)?;
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save).map(drop)
}

/// Check the flags that need no filesystem: block size (O_DIRECT needs
/// 512-byte multiples), --size, --time, and the options that only some
/// engines or patterns honour, so a request is refused rather than
/// silently run as something else.
fn validate(a: &IoArgs) -> Result<IoSpec> {
    let pat = pattern(a.rw);
    let eng = engine(a.engine);
    let bs = parse_size(&a.bs).map_err(|e| UsageError(format!("--bs {e}")))?;
    if bs == 0 {
        usage!("--bs must be > 0");
    }
    if bs > 1 << 30 {
        usage!("--bs {}: at most 1G", a.bs);
    }
    let size = match &a.size {
        Some(s) => {
            let v = parse_size(s).map_err(|e| UsageError(format!("--size {e}")))?;
            if v == 0 {
                usage!("--size must be > 0");
            }
            Some(v)
        }
        None => None,
    };
    let spec = IoSpec {
        path: a.path.clone().unwrap_or_else(|| PathBuf::from(".")),
        pattern: pat,
        rwmix_read: a.rwmix_read,
        bs,
        size,
        direct: a.direct,
        engine: eng,
        iodepth: a.iodepth,
        threads: a.threads,
        time: a.time,
        force: a.force,
        allow_mounted_write: a.allow_mounted_write,
        cpus: worker_cpus(a.common.cpu, a.common.no_pin)?,
    };
    spec.check()?;
    Ok(spec)
}

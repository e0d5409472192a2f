//! `hwcal mem`: micbench-mem in Rust (the probe is `hwcal_runner::mem`).
//! This module parses and validates the flags (`-a TID:cCPU:NODE`
//! affinity, NUMA nodes, sizes against available memory) into a plain
//! `hwcal_runner::mem::Config`.

use crate::cli::{MemArgs, MemOp};
use crate::common::{check_db, header, parse_size, save_if_requested, Progress};
use crate::output::{check_dest, emit};
use crate::usage;
use anyhow::Result;
use hwcal_probes::buffer::Backing;
use hwcal_probes::mem::{self as mem_kernels};
use hwcal_probes::numa;
use hwcal_runner::mem::syntax::{parse_affinity, parse_secs};
use hwcal_runner::mem::{Command, Config, Mode, Place, ENTRY};
use hwcal_runner::{calibrate_with, Planned, Real};
use std::time::Instant;

// ---------------------------------------------------------------------------
// Configuration.

fn hugetlb_dir(path: &std::path::Path) -> Result<std::path::PathBuf> {
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        match path.parent().filter(|p| p.is_dir()) {
            Some(p) => p.to_path_buf(),
            None => usage!("--hugetlbfile {}: no such directory", path.display()),
        }
    };
    let canon = dir.canonicalize().unwrap_or(dir.clone());
    let mounts = mem_kernels::hugetlbfs_mounts();
    if !mounts.iter().any(|m| canon.starts_with(m)) {
        usage!(
            "--hugetlbfile {}: not on a hugetlbfs mount (mounted: {}); mount one with `mount -t hugetlbfs none DIR` and reserve pages in /proc/sys/vm/nr_hugepages",
            path.display(),
            if mounts.is_empty() {
                "none".to_string()
            } else {
                mounts.iter().map(|m| m.display().to_string()).collect::<Vec<_>>().join(", ")
            }
        );
    }
    Ok(dir)
}

fn mode(a: &MemArgs) -> Mode {
    if a.sweep {
        Mode::Sweep
    } else if a.numa_matrix {
        Mode::NumaMatrix
    } else {
        Mode::Basic
    }
}

fn configure(a: &MemArgs) -> Result<Config> {
    let allowed = hwcal_harness::pin::allowed_cpus();
    let (threads, secs, size) = parse_scalars(a, &allowed)?;
    let backing = match (&a.hugetlbfile, a.hugepages) {
        (Some(p), _) => Backing::HugetlbFile(hugetlb_dir(p)?),
        (None, true) => Backing::Thp,
        (None, false) => Backing::Small,
    };
    let nodes = numa::nodes();
    let mem_nodes: Vec<u32> = nodes.iter().filter(|n| n.has_memory).map(|n| n.id).collect();
    let all_nodes: Vec<u32> = nodes.iter().map(|n| n.id).collect();
    let mut places = default_places(a, &allowed, threads)?;
    apply_affinity(a, threads, &allowed, &all_nodes, &mem_nodes, &mut places)?;
    let cfg = Config {
        threads,
        secs,
        size: size as usize,
        random: a.random,
        op: match a.op {
            MemOp::Read => hwcal_runner::mem::MemOp::Read,
            MemOp::Write => hwcal_runner::mem::MemOp::Write,
            MemOp::Copy => hwcal_runner::mem::MemOp::Copy,
        },
        local: a.local || a.sweep,
        backing,
        nontemporal: a.nontemporal,
        chains: a.chains,
        places,
        mem_nodes,
        allowed,
    };
    cfg.check_fits(size, mode(a), &a.size)?;
    Ok(cfg)
}

/// The plain numbers of the command line (thread count, seconds, size,
/// chains), each checked in turn so the first bad one is the one reported.
/// A sweep defaults to one thread per allowed CPU, anything else to one.
fn parse_scalars(a: &MemArgs, allowed: &[usize]) -> Result<(usize, f64, u64)> {
    let threads = match a.threads {
        Some(0) => usage!("--threads 0: at least one thread is needed"),
        Some(n) if n > 4096 => usage!("--threads {n}: at most 4096"),
        Some(n) => n as usize,
        None if a.sweep => allowed.len().max(1),
        None => 1,
    };
    let secs = match parse_secs(&a.time) {
        Ok(v) => v,
        Err(e) => usage!("{e}"),
    };
    let size = match parse_size(&a.size) {
        Ok(v) => v,
        Err(e) => usage!("{e}"),
    };
    if size < 4096 {
        usage!("size {size} bytes: at least 4K is needed (one page)");
    }
    if ![1, 2, 4, 8, 16].contains(&a.chains) {
        usage!("--chains {}: use 1, 2, 4, 8 or 16", a.chains);
    }
    Ok((threads, secs, size))
}

/// Placement before `-a`: no node binding, and unless `--no-pin`, thread 0
/// on --cpu or the highest allowed CPU (the one hwcal pins to everywhere),
/// the others on the next ones down, wrapping round when threads outnumber
/// CPUs.
fn default_places(a: &MemArgs, allowed: &[usize], threads: usize) -> Result<Vec<Place>> {
    let mut desc = allowed.to_vec();
    desc.reverse();
    if let Some(c) = a.common.cpu {
        if !allowed.contains(&c) {
            usage!("--cpu {c}: no such CPU or not allowed (allowed: {allowed:?})");
        }
        desc.retain(|&x| x != c);
        desc.insert(0, c);
    }
    Ok((0..threads)
        .map(|i| Place {
            cpu: if a.common.no_pin || desc.is_empty() {
                None
            } else {
                Some(desc[i % desc.len()])
            },
            node: None,
        })
        .collect())
}

/// Apply the `-a TID:cCPU:NODE` settings over the default placement: each
/// names an existing thread at most once, an allowed CPU and a NUMA node
/// that has memory (binding to a memory-less node would silently fall back).
fn apply_affinity(
    a: &MemArgs,
    threads: usize,
    allowed: &[usize],
    all_nodes: &[u32],
    mem_nodes: &[u32],
    places: &mut [Place],
) -> Result<()> {
    let mut seen = Vec::new();
    for s in &a.affinity {
        let af = match parse_affinity(s) {
            Ok(v) => v,
            Err(e) => usage!("{e}"),
        };
        if af.tid as usize >= threads {
            usage!(
                "affinity '{s}': thread {} does not exist (threads are 0..{})",
                af.tid,
                threads - 1
            );
        }
        if seen.contains(&af.tid) {
            usage!("affinity '{s}': thread {} given twice", af.tid);
        }
        seen.push(af.tid);
        if !allowed.contains(&af.cpu) {
            usage!(
                "affinity '{s}': CPU {} does not exist or is not allowed (allowed: {allowed:?})",
                af.cpu
            );
        }
        if !all_nodes.contains(&af.node) {
            usage!(
                "affinity '{s}': NUMA node {} does not exist (nodes: {all_nodes:?})",
                af.node
            );
        }
        if !mem_nodes.contains(&af.node) {
            usage!(
                "affinity '{s}': NUMA node {} has no memory (memory nodes: {mem_nodes:?})",
                af.node
            );
        }
        places[af.tid as usize] = Place {
            cpu: Some(af.cpu),
            node: Some(af.node),
        };
    }
    Ok(())
}

pub fn run(a: MemArgs) -> Result<()> {
    let start = Instant::now();
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let cfg = configure(&a)?;
    let progress = Progress::new(a.common.quiet);
    let cpu = cfg.places[0].cpu;
    let mode = mode(&a);
    let command = Command { cfg, mode, start };
    let planner = move |_: &_| -> Vec<Planned> { vec![(ENTRY, Box::new(command))] };
    let p = calibrate_with(&Real, header(cpu), &[ENTRY], planner, &progress)?;
    emit(&p, a.common.json.as_deref())?;
    if a.verbose && a.common.json.as_deref() != Some("-") {
        crate::out!("{}", hwcal_report::verbose::dump(&p)?);
    }
    save_if_requested(&p, a.common.save)?;
    Ok(())
}

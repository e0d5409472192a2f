//! Where a `hwcal mem` job's threads and pages go (micbench-mem's `-a
//! TID:cCPU:NODE`): the default placement, the affinity overrides checked
//! against the allowed CPUs and the NUMA nodes with memory, and the
//! hugetlbfs directory of `--hugetlbfile`.

use super::job::Place;
use super::syntax::{parse_affinity, parse_secs};
use crate::{usage, Result};
use hwcal_probes::mem::hugetlbfs_mounts;
use std::path::{Path, PathBuf};

pub fn hugetlb_dir(path: &Path) -> Result<PathBuf> {
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        match path.parent().filter(|p| p.is_dir()) {
            Some(p) => p.to_path_buf(),
            None => usage!("--hugetlbfile {}: no such directory", path.display()),
        }
    };
    let canon = dir.canonicalize().unwrap_or(dir.clone());
    let mounts = hugetlbfs_mounts();
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

/// Placement before `-a`: no node binding, and unless `--no-pin`, thread 0
/// on --cpu or the highest allowed CPU (the one hwcal pins to everywhere),
/// the others on the next ones down, wrapping round when threads outnumber
/// CPUs.
pub fn default_places(
    cpu: Option<usize>,
    no_pin: bool,
    allowed: &[usize],
    threads: usize,
) -> Result<Vec<Place>> {
    let mut desc = allowed.to_vec();
    desc.reverse();
    if let Some(c) = cpu {
        if !allowed.contains(&c) {
            usage!("--cpu {c}: no such CPU or not allowed (allowed: {allowed:?})");
        }
        desc.retain(|&x| x != c);
        desc.insert(0, c);
    }
    Ok((0..threads)
        .map(|i| Place {
            cpu: if no_pin || desc.is_empty() {
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
pub fn apply_affinity(
    affinity: &[String],
    threads: usize,
    allowed: &[usize],
    all_nodes: &[u32],
    mem_nodes: &[u32],
    places: &mut [Place],
) -> Result<()> {
    let mut seen = Vec::new();
    for s in affinity {
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

/// The plain numbers of the command line (thread count, seconds, size,
/// chains), each checked in turn so the first bad one is the one reported.
/// A sweep defaults to one thread per allowed CPU, anything else to one.
pub fn parse_scalars(
    threads: Option<u32>,
    sweep: bool,
    time: &str,
    size: &str,
    chains: usize,
    allowed: &[usize],
) -> Result<(usize, f64, u64)> {
    let threads = match threads {
        Some(0) => usage!("--threads 0: at least one thread is needed"),
        Some(n) if n > 4096 => usage!("--threads {n}: at most 4096"),
        Some(n) => n as usize,
        None if sweep => allowed.len().max(1),
        None => 1,
    };
    let secs = match parse_secs(time) {
        Ok(v) => v,
        Err(e) => usage!("{e}"),
    };
    let size = match hwcal_model::parse_size(size) {
        Ok(v) => v,
        Err(e) => usage!("{e}"),
    };
    if size < 4096 {
        usage!("size {size} bytes: at least 4K is needed (one page)");
    }
    if ![1, 2, 4, 8, 16].contains(&chains) {
        usage!("--chains {}: use 1, 2, 4, 8 or 16", chains);
    }
    Ok((threads, secs, size))
}

//! Buffer preparation: every buffer allocated, first touched and linked on
//! its own thread, pinned to the CPU (and node) that will use it.

use super::ring::{build_local_ring, build_ring};
use crate::buffer::{Backing, Buffer};
use crate::error::ProbeError;
use hwcal_harness::{pin, Timer};

/// One buffer to prepare.
#[derive(Debug, Clone)]
pub struct Prep {
    /// CPU to prepare on (first touch happens there).
    pub cpu: Option<usize>,
    /// NUMA node to bind the buffer to.
    pub node: Option<u32>,
    pub size: usize,
    pub backing: Backing,
    /// Entry points of a random cycle to build (0: no cycle, streaming use).
    pub ring_entries: usize,
    /// CPUs that write the cycle (split among them); empty: the preparing thread.
    pub ring_cpus: Vec<usize>,
    pub seed: u64,
    /// Also link the window-by-window cycle of [`build_local_ring`] (for a
    /// chase without page walks).
    pub local_ring: bool,
}

/// A prepared buffer.
#[derive(Debug)]
pub struct Prepared {
    pub buf: Buffer,
    /// Chase entry points (empty without a cycle).
    pub entries: Vec<usize>,
    /// Entry point of the window-by-window cycle, where one was linked.
    pub local_entry: Option<usize>,
    /// Wall time to map, touch and link, ns.
    pub setup_ns: f64,
    /// Share of the buffer on huge pages (smaps), 0..1.
    pub huge_fraction: f64,
    /// Share of sampled pages on the requested node, when one was requested
    /// and the kernel can tell.
    pub on_node: Option<f64>,
}

fn prepare_one(p: &Prep) -> Result<Prepared, ProbeError> {
    let t0 = Timer::wall_ns();
    if let Some(c) = p.cpu {
        pin::pin_to(c)?;
    }
    if let Some(n) = p.node {
        crate::numa::bind_thread_memory(n)?;
    }
    let buf = Buffer::new(p.size, p.backing.clone());
    if p.node.is_some() {
        crate::numa::reset_thread_policy();
    }
    let buf = buf?;
    let mut on_node = None;
    if let Some(n) = p.node {
        on_node = crate::numa::fraction_on_node(&buf, n, 64);
        if on_node.is_some_and(|f| f < 0.99) {
            // The policy did not place everything (e.g. pre-allocated
            // hugetlbfs pages): migrate, then check again.
            crate::numa::mbind_range(buf.as_ptr(), buf.len(), n)?;
            on_node = crate::numa::fraction_on_node(&buf, n, 64);
        }
    }
    let entries = if p.ring_entries > 0 {
        build_ring(&buf, p.size.min(buf.len()), p.ring_entries, p.seed, &p.ring_cpus)?
    } else {
        Vec::new()
    };
    let local_entry = if p.local_ring {
        build_local_ring(
            &buf,
            p.size.min(buf.len()),
            crate::pages::base_page(),
            p.seed ^ 0x10ca1,
            &p.ring_cpus,
        )
    } else {
        None
    };
    let huge_fraction = match p.backing {
        Backing::Small => 0.0,
        _ => buf.huge_fraction(),
    };
    Ok(Prepared {
        buf,
        entries,
        local_entry,
        setup_ns: (Timer::wall_ns() - t0) as f64,
        huge_fraction,
        on_node,
    })
}

/// Prepare every buffer at once, each on its own thread pinned to its CPU
/// (so pages are first touched, and zeroed by the kernel, in parallel and
/// on the right node). Results come back in order.
pub fn prepare_all(preps: &[Prep]) -> Vec<Result<Prepared, ProbeError>> {
    std::thread::scope(|s| {
        let hs: Vec<_> = preps.iter().map(|p| s.spawn(move || prepare_one(p))).collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ProbeError::InvalidInput("buffer preparation panicked".into())))
            })
            .collect()
    })
}

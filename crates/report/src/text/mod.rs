//! The terminal summary, in the spirit of The Calibrator's: one block per
//! measured section, nominal figures beside measured ones, every figure with
//! its unit, and the noise verdict wherever a figure is not trustworthy.
//! One module per section; this one puts them together ([`summary`]).

use crate::format::noisy_mark;
use hwcal_model::*;
use std::fmt::Write;

mod bandwidth;
mod caches;
mod clock;
mod ctx;
mod digest;
mod io;
mod machine;
mod mem;
mod tlb;
mod warnings;

pub use crate::format::ns_cy;
pub use bandwidth::bandwidth;
pub use caches::{
    buffer_pages, cache_smaps_huge_fraction, caches, caches_pages, level_intervals, memory_pages,
    memory_source, BufferPages,
};
pub use clock::clock;
pub use ctx::{context_switch, ctx_placement};
pub use digest::{
    digest, lines as digest_lines, width_for as digest_width_for, Line as DigestLine,
    MAX_LINES as DIGEST_LINES, MIN_WIDTH as DIGEST_MIN_WIDTH, WIDTH as DIGEST_WIDTH,
};
pub use hwcal_model::{human_bytes, measured_bytes};
pub use io::io_section;
pub use machine::{harness, machine};
pub use mem::{mem, mem_facts, mem_pages, mem_test, micbench, micbench_rows};
pub use tlb::{tlb_huge_pages, tlbs};
pub use warnings::MAX_SHOWN as DIGEST_MAX_WARNINGS;

pub(crate) use clock::clock_for;
pub(crate) use machine::{arm_cpu, counter, page_sizes};

/// The whole summary: every section the profile holds.
pub fn summary(p: &Profile) -> String {
    let mut s = String::new();
    if let Some(m) = &p.machine {
        s += &machine(m);
    }
    if let Some(h) = &p.harness {
        s += &harness(h);
    }
    if let Some(c) = &p.clock {
        // Arm has no TSC: no "TSC n/a" line there.
        s += &clock_for(c, !p.machine.as_ref().is_some_and(|m| m.is_arm()));
    }
    if p.caches.is_some() || p.memory.is_some() {
        s += &caches_pages(
            p.caches.as_deref().unwrap_or(&[]),
            p.memory.as_ref(),
            buffer_pages(p),
        );
    }
    if let Some(t) = &p.tlbs {
        s += &tlbs(t);
    }
    if let Some(c) = p.tlb_huge_pages.as_deref().filter(|c| !c.is_empty()) {
        s += &tlb_huge_pages(c);
    }
    if let Some(m) = &p.mem {
        s += &mem(m);
    }
    if let Some(b) = &p.bandwidth {
        s += &bandwidth(b);
    }
    if let Some(c) = &p.context_switch {
        s += &context_switch(c);
    }
    if let Some(io) = &p.io {
        s += &io_section(io);
    }
    if !p.figures.is_empty() {
        s += &figures(&p.figures);
    }
    if !p.notes.is_empty() {
        s += "\nnotes:\n";
        for n in &p.notes {
            s += &crate::format::wrap(&format!("  - {n}"), 100, 4);
        }
    }
    s
}

/// Named figures of probes without a section of their own, one line each.
pub fn figures(f: &[Figure]) -> String {
    let mut s = String::from("\nfigures:\n");
    let w = f
        .iter()
        .map(|f| f.probe.len() + f.name.len() + 2)
        .max()
        .unwrap_or(0);
    for f in f {
        let value = f
            .value
            .map_or("-".into(), |v| crate::format::value_with_unit(f.unit, v));
        let what = format!("{}: {}", f.probe, f.name);
        let _ = writeln!(s, "  {what:<w$}  {value:>14}{}", noisy_mark(f.verdict));
    }
    s
}

#[cfg(test)]
mod tests;

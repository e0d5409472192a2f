//! A `hwcal mem` job's configuration and the steps every mem measurement
//! shares (micbench-mem's structure): the validated request, preparing the
//! buffers, running the timed jobs, the result's template, and the notes on
//! where the threads and pages landed.

use crate::probe::Progress;
use crate::{Context, Result};
use hwcal_analysis::mem::{slice_point, summarize};
use hwcal_harness::Timer;
use hwcal_model::curve::MemSeries;
use hwcal_model::{human_bytes, Bandwidth, MemResult, MemThread, Note, Profile, RawCurve};
use hwcal_probes::buffer::Backing;
use hwcal_probes::mem::{self as mem_kernels, Job, Prep, Prepared, RunTiming, Work, GRAIN, LINE};
use hwcal_probes::pages::{base_page, huge_page};
use std::time::Instant;

/// Sequential operation of a bandwidth measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemOp {
    Read,
    Write,
    Copy,
}

/// What `hwcal mem` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One micbench-style measurement.
    Basic,
    /// Read, write, copy at 1..N threads, loaded latency, MLP.
    Sweep,
    /// Chase latency from every node's CPUs to every node's memory.
    NumaMatrix,
}

// ---------------------------------------------------------------------------
// Configuration.

/// Where one thread runs and where its memory lives.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub cpu: Option<usize>,
    pub node: Option<u32>,
}

/// A validated `hwcal mem` request.
#[derive(Debug)]
pub struct Config {
    pub threads: usize,
    pub secs: f64,
    pub size: usize,
    pub random: bool,
    pub op: MemOp,
    pub local: bool,
    pub backing: Backing,
    pub nontemporal: bool,
    pub chains: usize,
    /// One per thread.
    pub places: Vec<Place>,
    /// NUMA nodes that have memory.
    pub mem_nodes: Vec<u32>,
    /// CPUs this process may run on.
    pub allowed: Vec<usize>,
}

/// `size` rounded up to whole pages of `backing`.
pub fn round_size(size: u64, backing: &Backing) -> u64 {
    let page = if *backing == Backing::Small {
        base_page()
    } else {
        huge_page()
    } as u64;
    size.div_ceil(page) * page
}

// ---------------------------------------------------------------------------
// Running.

pub(super) fn op_name(op: MemOp) -> &'static str {
    match op {
        MemOp::Read => "read",
        MemOp::Write => "write",
        MemOp::Copy => "copy",
    }
}

/// The streaming work of one thread over `[off, off+len)` of `buf`.
pub(super) fn stream_work(
    buf: &hwcal_probes::buffer::Buffer,
    off: usize,
    len: usize,
    op: MemOp,
    nt: bool,
) -> Work<'_> {
    let len = len / GRAIN * GRAIN;
    match op {
        MemOp::Read => Work::Read { buf, off, len },
        MemOp::Write => Work::Write {
            buf,
            off,
            len,
            nontemporal: nt,
        },
        MemOp::Copy => {
            // Copy the first half of the range onto the second half.
            let half = (len / 2) / GRAIN * GRAIN;
            Work::Copy {
                buf,
                src: off,
                dst: off + half,
                len: half,
                nontemporal: nt,
            }
        }
    }
}

pub(super) fn prepared(results: Vec<Result<Prepared, hwcal_probes::ProbeError>>) -> Result<Vec<Prepared>> {
    results
        .into_iter()
        .map(|r| r.context("preparing the memory buffer"))
        .collect()
}

/// Verified page size and huge-page state of a set of buffers: the page
/// size is the one the TLB sees, `frac` what smaps says.
///
/// A hypervisor that backs guest memory with 4 KiB pages grants the guest
/// its huge pages (smaps counts them) while the TLB still holds 4 KiB
/// translations, so every random load still pays the TLB misses. smaps
/// cannot tell; a timing check can: a fresh 4 MiB THP buffer is checked
/// with the cache probe's TLB test (one line in each of 256 frames against
/// the same lines packed), and where its huge pages are 4 KiB to the TLB
/// the run's page size is reported as 4 KiB.
pub(super) fn pages(backing: &Backing, bufs: &[&Prepared]) -> (u64, bool, f64) {
    let frac = match backing {
        Backing::Small => 0.0,
        Backing::HugetlbFile(_) => 1.0,
        Backing::Thp => bufs.iter().map(|b| b.huge_fraction).fold(1.0, f64::min),
    };
    let huge = frac >= 0.9 && (*backing != Backing::Thp || tlb_sees_huge_pages());
    (
        if huge {
            huge_page() as u64
        } else {
            base_page() as u64
        },
        huge,
        frac,
    )
}

/// Whether the TLB sees transparent huge pages on this machine (see
/// [`pages`]); false if the check cannot run.
pub(super) fn tlb_sees_huge_pages() -> bool {
    hwcal_probes::cache::huge_buffer(2 * huge_page(), 1, 2 * huge_page(), false).is_ok_and(|(_, c)| c.head_ok)
}

/// Run `jobs`, keep one raw curve per thread (`{series}.t{tid}`) and
/// summarise them over `template`.
pub(super) fn measure(
    label: &MemSeries,
    jobs: &[Job],
    plan: &RunTiming,
    template: MemResult,
    raw: &mut Vec<RawCurve>,
) -> Result<MemResult> {
    let runs = run_jobs(jobs, plan)?;
    Ok(record(label, &runs, template, raw))
}

/// Run `jobs` on the kernels.
pub(super) fn run_jobs(jobs: &[Job], plan: &RunTiming) -> Result<Vec<mem_kernels::ThreadRun>> {
    mem_kernels::run(jobs, plan).context("measuring")
}

/// Keep one raw curve per thread of `runs` (`{series}.t{tid}`) and
/// summarise them over `template`.
pub(super) fn record(
    label: &MemSeries,
    runs: &[mem_kernels::ThreadRun],
    template: MemResult,
    raw: &mut Vec<RawCurve>,
) -> MemResult {
    let mut curves = Vec::with_capacity(runs.len());
    for (tid, r) in runs.iter().enumerate() {
        curves.push(RawCurve {
            id: label.thread(tid),
            x_label: "ops (64-byte lines) in one timing slice".into(),
            y_label: "ns per op".into(),
            points: r
                .slices
                .iter()
                .map(|s| slice_point(s.ops, s.ns, s.mhz, s.cpu_ns))
                .collect(),
        });
    }
    let mut tpl = template;
    tpl.bytes_per_op = LINE as u64;
    if tpl.per_thread.len() != runs.len() {
        tpl.per_thread = (0..runs.len())
            .map(|i| MemThread {
                tid: i as u32,
                ..Default::default()
            })
            .collect();
    }
    for (t, r) in tpl.per_thread.iter_mut().zip(runs) {
        t.cpu = r.cpu;
        t.work = r.work.into();
        t.preemptions = r.preemptions;
    }
    let refs: Vec<&RawCurve> = curves.iter().collect();
    let mut res = summarize(&tpl, &refs, Timer::get().tsc_mhz());
    res.preemptions = runs.iter().map(|r| r.preemptions).sum();
    raw.extend(curves);
    res
}

pub(super) fn template(cfg_pattern: &str, op: &str, size: usize, local: bool, threads: usize) -> MemResult {
    MemResult {
        access_pattern: cfg_pattern.into(),
        op: op.into(),
        threads: threads as u32,
        local,
        size_bytes: size as u64,
        bytes_per_op: LINE as u64,
        kernel: if cfg_pattern == "random" {
            "chase".into()
        } else {
            mem_kernels::isa().name().into()
        },
        ..Default::default()
    }
}

pub(super) fn stores(nt: bool) -> String {
    if nt { "non-temporal" } else { "regular" }.into()
}

/// Prepare `preps` (saying so first) and time it: the setup time is
/// reported apart from the measurement. `noun` and `size` only word the
/// progress line.
pub(super) fn prepare_timed(
    progress: &dyn Progress,
    preps: &[Prep],
    noun: &str,
    size: usize,
) -> Result<(Vec<Prepared>, f64)> {
    progress.say(&format!(
        "mem: preparing {} {noun} of {}",
        preps.len(),
        human_bytes(size as u64)
    ));
    let t0 = Instant::now();
    let bufs = prepared(mem_kernels::prepare_all(preps))?;
    Ok((bufs, t0.elapsed().as_secs_f64()))
}

/// A stream over the whole of a thread's own buffer (its first `cfg.size`
/// bytes: the buffer may be rounded up to whole pages).
pub(super) fn own_stream<'a>(cfg: &Config, b: &'a Prepared, op: MemOp, nontemporal: bool) -> Work<'a> {
    stream_work(&b.buf, 0, cfg.size.min(b.buf.len()), op, nontemporal)
}

/// Set the headline bandwidth figure of `op`.
pub(super) fn set_headline(bw: &mut Bandwidth, op: MemOp, bytes_per_sec: f64) {
    let v = Some(bytes_per_sec);
    match op {
        MemOp::Read => bw.read_bytes_per_sec = v,
        MemOp::Write => bw.write_bytes_per_sec = v,
        MemOp::Copy => bw.copy_bytes_per_sec = v,
    }
}

/// Notes on huge pages, TLB reach, NUMA placement.
pub(super) fn placement_notes(cfg: &Config, bufs: &[Prepared], p: &mut Profile) {
    let refs: Vec<&Prepared> = bufs.iter().collect();
    let (_, huge, frac) = pages(&cfg.backing, &refs);
    if cfg.backing == Backing::Thp && !huge {
        let text = format!(
            "mem: {}",
            hwcal_model::pages::statement(true, Some(frac), Some(false))
        );
        p.notes.push(Note::warning("mem", "thp_partial", text));
    }
    let reach = tlb_reach(p);
    if cfg.random && !huge && cfg.size as u64 > reach.map_or(8 << 20, |(_, b)| b) {
        let page = base_page();
        let what = match reach {
            Some((entries, bytes)) => format!(
                "the reach of this core's second-level TLB ({entries} entries × {} = {}, as the machine states it)",
                human_bytes(page as u64),
                human_bytes(bytes)
            ),
            None => "the reach of any second-level TLB (1–4k entries of 4 KiB pages on current cores: 4–16 MiB)"
                .to_string(),
        };
        let advice = if cfg.backing == Backing::Small {
            " Add --hugepages for DRAM latency alone (where the TLB sees them)."
        } else {
            ""
        };
        p.notes.push(Note::warning(
            "mem",
            "tlb_reach",
            format!(
                "mem: {} pages: the {} buffer spans {} pages, far beyond {what}, so most loads also pay a page \
                 walk: this latency is DRAM plus TLB misses.{advice}",
                human_bytes(page as u64),
                human_bytes(cfg.size as u64),
                cfg.size / page
            ),
        ));
    }
    for (i, b) in bufs.iter().enumerate() {
        if let Some(f) = b.on_node {
            if f < 0.99 {
                p.notes.push(Note::warning(
                    "mem",
                    "off_node",
                    format!(
                        "mem: buffer {i}: only {:.0}% of its pages are on the requested node",
                        f * 100.0
                    ),
                ));
            }
        }
    }
    numa_note(cfg.mem_nodes.len(), p);
}

/// The largest base-page TLB level the machine states (entries, reach in
/// bytes), where it is believable: a second level at least twice the
/// first (a hypervisor's CPUID can state 128 entries for a 4096-entry L2
/// DTLB, and the reach would then be understated 32-fold).
pub(super) fn tlb_reach(p: &Profile) -> Option<(u64, u64)> {
    let page = base_page() as u64;
    let tlbs = &p.machine.as_ref()?.nominal_tlbs;
    let small: Vec<&hwcal_model::NominalTlb> = tlbs.iter().filter(|t| t.page_bytes == page).collect();
    let l1 = small.iter().filter(|t| t.level == 1).map(|t| t.entries).max();
    let top = small.iter().max_by_key(|t| (t.level, t.entries))?;
    if top.level >= 2 && l1.is_some_and(|e| top.entries < 2 * e) {
        return None;
    }
    Some((top.entries, top.entries * page))
}

pub(super) fn numa_note(mem_nodes: usize, p: &mut Profile) {
    if mem_nodes <= 1 {
        p.notes.push(Note::info(
            "mem",
            "one_numa_node",
            "mem: this machine has one NUMA node with memory: every access is local, remote-memory latency cannot be measured here",
        ));
    }
}

/// The same configuration in random (chase) mode, for the placement notes
/// of a sweep's latency points.
pub(super) fn as_random(cfg: &Config) -> Config {
    Config {
        random: true,
        places: cfg.places.clone(),
        mem_nodes: cfg.mem_nodes.clone(),
        allowed: cfg.allowed.clone(),
        backing: cfg.backing.clone(),
        ..*cfg
    }
}

impl Config {
    /// The request fits the machine and its own split (a clear usage error
    /// instead of the OOM killer or an empty share): see [`check_memory`]
    /// and [`check_split`]. `size` is the size asked for, `asked` as typed.
    pub fn check_fits(&self, size: u64, mode: Mode, asked: &str) -> Result<()> {
        check_memory(self, size, mode, asked)?;
        check_split(self, asked)
    }
}

/// Memory: every buffer must fit in what the kernel says is available
/// (the random cycle lives inside the buffer; no side table). `size` is the
/// size asked for, before rounding to whole pages.
fn check_memory(cfg: &Config, size: u64, mode: Mode, asked: &str) -> Result<()> {
    let threads = cfg.threads;
    let one = round_size(size, &cfg.backing);
    let buffers = if mode == Mode::Sweep {
        threads as u64 + 1
    } else if mode == Mode::NumaMatrix {
        1
    } else if cfg.local {
        threads as u64
    } else {
        1
    };
    let need = one.saturating_mul(buffers);
    let avail = hwcal_probes::sysinfo::available_memory();
    if avail > 0 && need > avail / 10 * 9 {
        crate::usage!(
            "size {}: {} buffer(s) need {} MiB but only {} MiB of memory is available",
            asked,
            buffers,
            need >> 20,
            avail >> 20
        );
    }
    Ok(())
}

/// The buffer must hold the work it is split into: at least two lines per
/// chase on a ring, and on a shared buffer at least one grain per thread
/// (two for copy: source and destination halves).
fn check_split(cfg: &Config, asked: &str) -> Result<()> {
    let threads = cfg.threads;
    if cfg.random {
        let lines = cfg.size / LINE;
        let chains = cfg.chains * if cfg.local { 1 } else { threads };
        if lines < 2 * chains {
            crate::usage!(
                "size {}: {lines} lines are too few for {chains} chase(s) on one buffer",
                asked
            );
        }
    }
    if !cfg.random && !cfg.local {
        let piece = cfg.size / threads;
        let need = if cfg.op == MemOp::Copy { 2 * GRAIN } else { GRAIN };
        if piece < need {
            crate::usage!("size {}: too small to split among {threads} threads", asked);
        }
    }
    Ok(())
}

//! Every raw-curve id hwcal writes, in one place: the probes name their
//! curves with these, the analysis finds them with these, and exporters
//! tell a probe's curves apart with [`probe_of`] instead of prefix tests.
//! The strings are part of the JSON schema: stored profiles use them.

/// Cache probe: ns per load against working-set size (the chase).
pub const CACHE_LATENCY: &str = "cache.latency";
/// Cache probe: the same with an idle gap between loads.
pub const CACHE_GAP: &str = "cache.gap";
/// Cache probe: ns per load against independent chains.
pub const CACHE_MLP: &str = "cache.mlp";
/// Cache probe: share of the chase buffer in huge pages, TLB checks.
pub const CACHE_HUGE_FRACTION: &str = "cache.huge_fraction";
/// Cache probe: busy fraction of the other CPUs during the sweep (x = 0).
pub const CACHE_NEIGHBOURS: &str = "cache.neighbour_busy";
/// Cache probe: ns per load over a private level's edge on 4 KiB pages,
/// one sample per placement (another region of the buffer, so another draw
/// of physical pages); the page-colour fit reads their mean.
pub const CACHE_COLOUR: &str = "cache.colour";

/// Cache probe: a line-size test (`test` 1 or 2, offsets forward or back).
pub fn cache_line(test: u32, forward: bool) -> String {
    format!("cache.line.{test}.{}", if forward { "fwd" } else { "bwd" })
}

/// Cache probe: the flush-granule test of cache level `level`.
pub fn cache_flush(level: u32) -> String {
    format!("cache.flush.{level}")
}
/// Cache probe: one lap over a working set inside cache level `level`,
/// timed right after a scrub pushed it out of the levels below (the level's
/// latency without the share a level below keeps of a steady chase).
pub fn cache_cold(level: u32) -> String {
    format!("{CACHE_COLD_PREFIX}{level}")
}
/// What every [`cache_cold`] id starts with.
pub const CACHE_COLD_PREFIX: &str = "cache.cold.";
/// Cache probe: the eviction-set search over a pool of base pages for a
/// physically indexed level (`hwcal_probes::sets`): one point per page
/// colour found, x its index (0, 1, …), y how many of the pool's pages it
/// holds.
pub const CACHE_SETS: &str = "cache.sets";
/// Cache probe: for each colour of [`CACHE_SETS`] (x its index), the size
/// of the smallest set of its pages found to evict another of them (y):
/// the level's ways.
pub const CACHE_SETS_WAYS: &str = "cache.sets.ways";
/// Cache probe: the eviction-set search's facts, one point each, x the
/// fact's number ([`SETS_FACTS`] names them).
pub const CACHE_SETS_FACTS: &str = "cache.sets.facts";
/// The facts of [`CACHE_SETS_FACTS`], by x: the level searched, the pool's
/// pages, the page size (bytes), the pages left in no colour when the
/// search ended, ns per load of the target's lines where nothing evicted
/// them and where the whole pool did, and how the search ended
/// (0 it ran to its end: every page in a colour, or the pages left in none
/// no set of them evicts; 1 out of time; 2 no contrast between kept and
/// evicted; 3 the L1 and not the level decided the smallest set; 4 a
/// smallest set that did not test again as one; 5 no set evicted the first
/// page, or too few pages fell outside the first colour for a control;
/// 6 the first colour held too few pages to be every later test's control,
/// and the pool could not grow in time).
pub const SETS_FACTS: [&str; 7] = [
    "level",
    "pool pages",
    "page bytes",
    "pages left",
    "kept ns",
    "evicted ns",
    "end",
];
/// TLB probe: one load per 4 KiB page.
pub const TLB_SMALL: &str = "tlb.4k";
/// TLB probe: the 4 KiB walk again over a second buffer of other pages,
/// at the page counts just past each later level's step (a level that
/// is a structure's size steps there again; one made by where a buffer's
/// pages fell does not).
pub const TLB_RETEST: &str = "tlb.4k.retest";
/// TLB probe: the same lines without TLB misses (huge pages).
pub const TLB_BASELINE: &str = "tlb.baseline";
/// TLB probe: as many lines as pages, packed side by side (the dense
/// baseline, needs no huge pages).
pub const TLB_DENSE: &str = "tlb.dense";
/// TLB probe: one load per 2 MiB page.
pub const TLB_HUGE: &str = "tlb.2m";
/// TLB probe: huge-page shares of the three buffers.
pub const TLB_HUGE_FRACTION: &str = "tlb.huge_fraction";
/// TLB probe: busy fraction of the other CPUs during the sweep (x = 0).
pub const TLB_NEIGHBOURS: &str = "tlb.neighbour_busy";

/// Context-switch probe: µs per hop of every ring size, at `size_kb`.
pub fn ctx_hops(size_kb: u64) -> String {
    format!("ctx.s{size_kb}k")
}

/// Context-switch probe: switch counts of every ring size, at `size_kb`.
pub fn ctx_switches(size_kb: u64) -> String {
    format!("ctx.s{size_kb}k.switches")
}

/// Context-switch probe: the one-process overhead, at `size_kb`.
pub fn ctx_overhead(size_kb: u64) -> String {
    format!("ctx.s{size_kb}k.overhead")
}

/// A set of per-thread memory curves (`{series}.t{tid}`): which
/// measurement of the memory probe they belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemSeries {
    /// `hwcal mem`'s basic run.
    Basic,
    /// `hwcal run`'s latency chase.
    Latency,
    /// `hwcal run`'s chase of the same buffer window by window (few page
    /// walks): the page walks' share of the latency.
    LatencyLocal,
    /// `hwcal run`'s first latency chase, over `mib` MiB, kept where it had
    /// not converged against the cache sweep and the chase ran again over
    /// a larger working set (`mem.chase_{mib}m`).
    LatencyOver { mib: u64 },
    /// `hwcal run`'s streams: `op` with `threads` threads.
    Run { op: String, threads: u32 },
    /// A sweep's streams: `op` with `threads` threads.
    Sweep { op: String, threads: u32 },
    /// A sweep's chase with `streams` streaming threads beside it.
    Loaded { streams: u32 },
    /// A sweep's `chains` parallel chases.
    Mlp { chains: u32 },
    /// The NUMA matrix cell: a CPU of `cpu_node`, memory on `mem_node`.
    Numa { cpu_node: u32, mem_node: u32 },
}

impl MemSeries {
    /// The prefix of the series' curve ids.
    pub fn prefix(&self) -> String {
        match self {
            MemSeries::Basic => "mem".into(),
            MemSeries::Latency => "mem.latency".into(),
            MemSeries::LatencyLocal => "mem.latency_local".into(),
            MemSeries::LatencyOver { mib } => format!("mem.chase_{mib}m"),
            MemSeries::Run { op, threads } => format!("mem.{op}.{threads}t"),
            MemSeries::Sweep { op, threads } => format!("bw.{op}.{threads}t"),
            MemSeries::Loaded { streams } => format!("loaded.{streams}"),
            MemSeries::Mlp { chains } => format!("mlp.{chains}"),
            MemSeries::Numa { cpu_node, mem_node } => format!("numa.c{cpu_node}.n{mem_node}"),
        }
    }

    /// The curve id of thread `tid` of this series.
    pub fn thread(&self, tid: usize) -> String {
        format!("{}.t{tid}", self.prefix())
    }

    /// The earlier chase's working set (MiB) if `id` is the first thread's
    /// curve of a [`MemSeries::LatencyOver`].
    pub fn latency_over_mib(id: &str) -> Option<u64> {
        id.strip_prefix("mem.chase_")?.strip_suffix("m.t0")?.parse().ok()
    }

    /// The thread number if `id` is one of this series' curves.
    pub fn tid_of(&self, id: &str) -> Option<u32> {
        id.strip_prefix(&self.prefix())?
            .strip_prefix(".t")?
            .parse::<u32>()
            .ok()
    }
}

/// The registry id of the probe that wrote the curve `id`, if hwcal knows it.
pub fn probe_of(id: &str) -> Option<&'static str> {
    match id.split('.').next()? {
        "cache" => Some("cache"),
        "tlb" => Some("tlb"),
        "ctx" => Some("ctx"),
        "mem" | "bw" | "loaded" | "mlp" | "numa" => Some("mem"),
        _ => None,
    }
}

/// The id without its probe's prefix (`tlb.4k` → `4k`), for legends.
pub fn series_name(id: &str) -> &str {
    match id.split_once('.') {
        Some((head, rest)) if probe_of(head).is_some() => rest,
        _ => id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_stored_strings() {
        assert_eq!(cache_line(2, false), "cache.line.2.bwd");
        assert_eq!(ctx_switches(64), "ctx.s64k.switches");
        let s = MemSeries::Run {
            op: "read".into(),
            threads: 2,
        };
        assert_eq!(s.thread(1), "mem.read.2t.t1");
        assert_eq!(s.tid_of("mem.read.2t.t1"), Some(1));
        assert_eq!(MemSeries::Basic.tid_of("mem.read.2t.t1"), None);
        assert_eq!(
            MemSeries::Numa {
                cpu_node: 0,
                mem_node: 1
            }
            .thread(0),
            "numa.c0.n1.t0"
        );
        assert_eq!(probe_of(TLB_SMALL), Some("tlb"));
        assert_eq!(probe_of("loaded.3.t0"), Some("mem"));
        assert_eq!(probe_of("other"), None);
        assert_eq!(series_name(TLB_BASELINE), "baseline");
        let over = MemSeries::LatencyOver { mib: 1024 }.thread(0);
        assert_eq!(over, "mem.chase_1024m.t0");
        assert_eq!(MemSeries::latency_over_mib(&over), Some(1024));
        assert_eq!(MemSeries::latency_over_mib("mem.latency.t0"), None);
    }
}

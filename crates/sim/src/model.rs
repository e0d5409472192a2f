//! A modelled machine: its cache levels, memory, TLB levels, clock, how
//! its guest's pages are backed and how noisy it is — everything the
//! simulated probes need, and the truth the scorecard holds the analysis
//! to.

/// One cache level.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub size: u64,
    pub ways: u32,
    pub line: u64,
    /// Load-to-use latency of a hit, ns.
    pub ns: f64,
    /// Shared by every core (an L3): the guest's share of it may move.
    pub shared: bool,
    /// A victim cache of the level above (AMD's L3): it holds what that
    /// level evicts, so a chase is served by the two together until it
    /// outgrows both.
    pub victim: bool,
    /// Replacement within a set (see [`Replacement`]).
    pub replacement: Replacement,
}

/// How a set chooses the line to evict, and so what a cyclic chase that
/// overflows it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replacement {
    /// True LRU: an overflowing set misses every line of a cyclic chase
    /// (each is evicted just before its turn).
    Lru,
    /// Pseudo-LRU by MRU bits (the approximation L1s use, for any number
    /// of ways): a hit or fill sets its way's bit, the last bit clears the
    /// others, the victim is the first way without one — close to LRU,
    /// but an overflowing set keeps a line now and then.
    Plru,
    /// Random: an overflowing set keeps part of the chase (what the L2s
    /// of current cores, with their RRIP variants, look like).
    Random,
    /// Adaptive insertion (dueling LRU and bimodal insertion, as Intel's
    /// L3s since Ivy Bridge and the Zen 5 L3 behave): once a set thrashes,
    /// new lines go in at the LRU end and only one in 8 at the MRU end, so
    /// the set keeps a part of the chase — the slow climb past the L3
    /// recorded on Zen 5, whose chase still hit its L3 44% of the time at
    /// twice its size and 10% at four times (one in 8 gives 41% and 14%;
    /// the textbook one in 32 keeps twice that at four times).
    Adaptive,
}

/// One data TLB level for 4 KiB pages.
#[derive(Debug, Clone, PartialEq)]
pub struct Tlb {
    pub entries: u64,
    /// 0: fully associative (a first-level TLB, not LRU: it misses
    /// gradually past its size); else set-associative with a hashed index.
    pub ways: u32,
    /// What missing it costs on top of the level below, ns.
    pub miss_ns: f64,
}

/// The prefetchers a line-size test can meet (what fools a stride walk,
/// and can make a dependent pair's second load look like a hit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Prefetch {
    /// L1's next-line prefetcher (Intel's DCU, Arm's): a miss also asks
    /// for the line after it, so a second load one line ahead finds it on
    /// its way. Forward only.
    pub next_line: bool,
    /// An L2 prefetcher that brings a memory miss's neighbouring line, up
    /// or down (AMD's up/down prefetcher, Intel's 128-byte spatial pair):
    /// a second load one line away, either side, is served by L2.
    pub neighbour: bool,
}

/// How noisy the machine is while it is measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Noise {
    /// Spread of a sample's slowdown (|N(0, jitter)|, relative): noise only
    /// ever adds time.
    pub jitter: f64,
    /// Chance a sample meets a spike (an interrupt, the host's tick): 1.2–3×.
    pub spikes: f64,
    /// Share of the time an SMT sibling or another vCPU's work takes half
    /// of L1 and L2 (a sample then sees them halved).
    pub busy: f64,
    /// How far the guest's share of the shared level moves point to point
    /// (0.5: between half and all of it).
    pub share_moves: f64,
}

/// How the guest's memory is backed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    /// Base pages (4, 16 or 64 KiB: [`Model::page`]) on random physical
    /// frames: physically indexed levels see page colouring, and the TLB
    /// misses past its reach.
    Base,
    /// Huge pages the TLB sees (transparent huge pages honoured): the
    /// page-table level above the base page, 2 MiB over 4 KiB pages.
    Huge,
}

/// A machine as the simulator runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// `zen4/huge/quiet/2vcpu #17`: the core, the conditions and the seed.
    pub name: String,
    /// The core's name as hwcal's tables know it (`Zen 4`).
    pub core: String,
    pub vendor: String,
    pub mhz: f64,
    pub levels: Vec<Level>,
    /// Latency of a load from memory (no TLB miss), ns.
    pub memory_ns: f64,
    pub tlbs: Vec<Tlb>,
    pub pages: Pages,
    /// The base page, bytes: 4096 on x86 and most Arm kernels, 16 KiB on
    /// Apple's, 64 KiB on some Arm distributions' kernels.
    pub page: u64,
    pub vcpus: usize,
    /// Memory-level parallelism: the misses to memory one core keeps in
    /// flight (its L1 fill buffers or miss address buffers).
    pub mlp: f64,
    pub prefetch: Prefetch,
    pub noise: Noise,
    /// Seeds every random draw: the same model and seed give the same curves.
    pub seed: u64,
}

impl Model {
    /// The huge page: one page-table level above the base page (its
    /// entries are 8 bytes), 2 MiB over 4 KiB, 32 MiB over 16 KiB, 512 MiB
    /// over 64 KiB.
    pub fn huge_page(&self) -> u64 {
        self.page * (self.page / 8)
    }

    /// The time a load costs on top of its cache latency for missing the
    /// TLBs when a chase walks `pages` base pages, with `tlb_miss` the
    /// fraction of the pages each TLB level misses.
    pub fn tlb_penalty(&self, tlb_miss: &[f64]) -> f64 {
        self.tlbs.iter().zip(tlb_miss).map(|(t, m)| t.miss_ns * m).sum()
    }

    /// The figure the analysis should report as memory latency at a chase
    /// over `bytes`: memory's own plus, on base pages, the page walks.
    pub fn memory_truth(&self, bytes: f64) -> f64 {
        match self.pages {
            Pages::Huge => self.memory_ns,
            Pages::Base => self.memory_ns + self.tlb_penalty(&self.chase_tlb_miss(bytes / self.page as f64)),
        }
    }

    /// The fraction of loads each TLB level misses in a chase over the
    /// lines of `pages` pages: consecutive loads fall on pages picked at
    /// random (the lines, not the pages, are what the chase cycles
    /// through), so a level of E entries holds E of the P pages and misses
    /// with probability 1 − E/P; a page a lower level holds, no higher
    /// level misses.
    pub fn chase_tlb_miss(&self, pages: f64) -> Vec<f64> {
        let mut out: Vec<f64> = Vec::new();
        for t in &self.tlbs {
            let m = (1.0 - t.entries as f64 / pages).max(0.0);
            out.push(out.last().map_or(m, |&prev: &f64| m.min(prev)));
        }
        out
    }

    /// The levels private to a core (L1 and L2 on every core modelled).
    pub fn private_levels(&self) -> impl Iterator<Item = (usize, &Level)> {
        self.levels.iter().enumerate().filter(|(_, l)| !l.shared)
    }
}

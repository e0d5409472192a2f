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

/// What the guest is told about its caches and TLBs (sysfs, CPUID): the
/// truth, or one of the ways real guests are misinformed.
/// [`crate::guest::stated`] turns it into the nominal figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sysfs {
    /// Every level and TLB as the model has it (the simulator before issue 40).
    #[default]
    Truth,
    /// The first shared level stated at `nominal` bytes, the whole chip's
    /// (a KVM guest's sysfs says 105 MiB where it gets 4–6 MiB), while the
    /// model's level is the guest's effective share: the model's size is
    /// the truth, `nominal` is only what the guest reads.
    SharedAtNominal { nominal: u64 },
    /// No TLB figures at all (CPUID leaf 0x18 zeroed by the hypervisor, as
    /// on the Sapphire Rapids reference guest); caches stated truly.
    TlbMasked,
    /// TLB level `level` (1-based) stated with `entries` entries — the
    /// hypervisor's figure, not the core's (a Zen 5 guest's leaf
    /// 0x80000006 reads 128 for a 4096-entry L2 DTLB); the rest true.
    TlbWrong { level: u32, entries: u64 },
    /// No cache or TLB information at all (some containers, some Arm
    /// boards' device trees).
    Absent,
    /// The private L2 stated as a hypervisor's CPU model has it, not as
    /// the core does: QEMU's named models carry their own cache table
    /// (its AMD EPYC models an L2 of 512 KiB, 8 ways; its legacy table
    /// 4 MiB, 16 ways), whatever the host runs. `l2` bytes of `ways` ways;
    /// the rest true. A model whose L2 is shared, or that has none, is
    /// stated truly.
    CpuModel { l2: u64, ways: u64 },
}

/// The guest's transparent-huge-page setting
/// (`/sys/kernel/mm/transparent_hugepage/enabled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Thp {
    /// Huge pages when a buffer asks (`madvise`): the simulator before issue 40.
    #[default]
    Madvise,
    Always,
    /// Never: a probe that asks for huge pages gets base pages, so a model
    /// with `Thp::Never` has [`Pages::Base`] (the generated corpus sees to it).
    Never,
}

/// What a real guest does that the bare core does not: what it is told,
/// where its page tables live, how its memory drifts, whether it may have
/// huge pages. `Guest::default()` is the simulator as it was before
/// issue 40 (true sysfs, page walks that never miss the caches, memory
/// that holds still, THP `madvise`). The functions of [`crate::guest`]
/// read these fields.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Guest {
    /// What sysfs and CPUID say ([`crate::guest::stated`]).
    pub sysfs: Sysfs,
    /// The page tables' leaf entries live in the data caches and compete
    /// with the data: a chase on base pages whose entries outgrow a level
    /// pays for the walks' own misses ([`crate::guest::walk_extra_ns`]).
    /// `false`: walks cost what the TLB levels' `miss_ns` says at every
    /// footprint.
    pub page_tables_cached: bool,
    /// The host backs guest memory with base pages (the recorded Zen 3 and
    /// Zen 5 guests): a nested walk loads the host's leaf entry for the
    /// data's guest-physical page as well as the guest's, so the leaf
    /// entries' footprint and the walk's loads double. Only read where
    /// `page_tables_cached`.
    pub host_base_pages: bool,
    /// How far memory latency drifts above [`Model::memory_ns`] (relative:
    /// 0.2 moves it between `memory_ns` and 1.2 × it), as a neighbour's
    /// traffic comes and goes ([`crate::guest::memory_ns_at`]). 0: still.
    pub drift: f64,
    /// The drift's slowest period, seconds.
    pub drift_period_s: f64,
    /// The guest's THP setting ([`crate::guest::thp_mode`]).
    pub thp: Thp,
    /// The memory a cgroup or an rlimit leaves the process, bytes: what
    /// the probes are told is available. `None`: 48 GiB of a 64 GiB machine.
    pub memory_limit: Option<u64>,
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
    /// What the guest is told and does (`Guest::default()`: the bare model).
    pub guest: Guest,
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

    /// The levels private to a core (L1, and L2 where it is not the last level).
    pub fn private_levels(&self) -> impl Iterator<Item = (usize, &Level)> {
        self.levels.iter().enumerate().filter(|(_, l)| !l.shared)
    }
}

//! The corpus: documented cores (sizes, ways and load-to-use latencies
//! from the vendors' optimisation manuals and the usual public
//! measurements: Chips and Cheese, Agner Fog's tables, 7-cpu.com) crossed
//! with the conditions a guest meets — huge pages honoured or not, 1 to 16
//! vCPUs, quiet, a busy sibling, a moving share of the shared level. The
//! machine at index `i` is a pure function of `i`: any machine of a
//! scorecard can be built again alone.

use crate::model::{Guest, Level, Model, Noise, Pages, Prefetch, Replacement, Sysfs, Thp, Tlb};
use hwcal_stats::SplitMix64;

/// A documented core: (KiB, ways, line, cycles, shared, victim) per level,
/// memory latency (ns), (entries, ways, miss cycles) per 4 KiB TLB level
/// (ways 0: fully associative), clock (GHz).
struct Core {
    key: &'static str,
    name: &'static str,
    vendor: &'static str,
    ghz: f64,
    levels: &'static [(u64, u32, u64, f64, bool, bool)],
    memory_ns: f64,
    tlbs: &'static [(u64, u32, f64)],
    /// The kernel's base page, bytes.
    page: u64,
    /// Misses to memory one core keeps in flight (fill buffers, MABs).
    mlp: f64,
    /// Which prefetchers the core has (each machine draws whether its
    /// firmware leaves them on).
    prefetch: Prefetch,
    /// The shared level's replacement: adaptive insertion on Intel's L3s
    /// (since Ivy Bridge) and Zen 3, 4 and 5's (the recorded Zen 3 and Zen
    /// 5 L3 edges fall where adaptive insertion puts them, 3.6 steps past
    /// LRU's on Zen 3); the others are not documented, so they take LRU
    /// (Zen 2, Neoverse N1), random (Neoverse V2) and adaptive (the
    /// Apple-like core), to cover all three.
    llc: Replacement,
}

/// L1 next-line and an L2 neighbour-line prefetcher: AMD's cores (the L2
/// up/down prefetcher) and Intel's (the DCU and the spatial pair).
const BOTH: Prefetch = Prefetch {
    next_line: true,
    neighbour: true,
};
/// L1 next-line only (the Arm cores modelled).
const NEXT: Prefetch = Prefetch {
    next_line: true,
    neighbour: false,
};

const N1: Core = Core {
    key: "n1",
    name: "Neoverse N1",
    vendor: "ARM",
    ghz: 3.0,
    levels: &[
        (64, 4, 64, 4.0, false, false),
        (1024, 8, 64, 11.0, false, false),
        (32 << 10, 16, 64, 90.0, true, false),
    ],
    memory_ns: 110.0,
    tlbs: &[(48, 0, 6.0), (1280, 5, 80.0)],
    page: 4096,
    mlp: 12.0,
    prefetch: NEXT,
    llc: Replacement::Lru,
};

const ZEN4: Core = Core {
    key: "zen4",
    name: "Zen 4",
    vendor: "AuthenticAMD",
    ghz: 3.7,
    levels: &[
        (32, 8, 64, 4.0, false, false),
        (1024, 8, 64, 14.0, false, false),
        (32 << 10, 16, 64, 50.0, true, true),
    ],
    memory_ns: 110.0,
    tlbs: &[(72, 0, 7.5), (3072, 12, 95.0)],
    page: 4096,
    mlp: 24.0,
    prefetch: BOTH,
    llc: Replacement::Adaptive,
};

const CORES: &[Core] = &[
    Core {
        key: "zen2",
        name: "Zen 2",
        vendor: "AuthenticAMD",
        ghz: 3.3,
        levels: &[
            (32, 8, 64, 4.0, false, false),
            (512, 8, 64, 12.0, false, false),
            (16 << 10, 16, 64, 39.0, true, true),
        ],
        memory_ns: 95.0,
        tlbs: &[(64, 0, 7.0), (2048, 16, 90.0)],
        page: 4096,
        mlp: 22.0,
        prefetch: BOTH,
        llc: Replacement::Lru,
    },
    Core {
        key: "zen3",
        name: "Zen 3",
        vendor: "AuthenticAMD",
        ghz: 3.5,
        levels: &[
            (32, 8, 64, 4.0, false, false),
            (512, 8, 64, 12.0, false, false),
            (32 << 10, 16, 64, 46.0, true, true),
        ],
        memory_ns: 100.0,
        tlbs: &[(64, 0, 7.0), (2048, 16, 90.0)],
        page: 4096,
        mlp: 24.0,
        prefetch: BOTH,
        llc: Replacement::Adaptive,
    },
    ZEN4,
    // Zen 4c: the Zen 4 core with half the L3 per CCX, at a lower clock.
    Core {
        key: "zen4c",
        ghz: 3.1,
        levels: &[
            (32, 8, 64, 4.0, false, false),
            (1024, 8, 64, 14.0, false, false),
            (16 << 10, 16, 64, 48.0, true, true),
        ],
        memory_ns: 115.0,
        ..ZEN4
    },
    Core {
        key: "zen5",
        name: "Zen 5",
        vendor: "AuthenticAMD",
        ghz: 4.4,
        levels: &[
            (48, 12, 64, 4.0, false, false),
            (1024, 16, 64, 14.0, false, false),
            (32 << 10, 16, 64, 50.0, true, true),
        ],
        memory_ns: 120.0,
        tlbs: &[(96, 0, 7.0), (4096, 16, 100.0)],
        page: 4096,
        mlp: 24.0,
        prefetch: BOTH,
        llc: Replacement::Adaptive,
    },
    Core {
        key: "skx",
        name: "Skylake-SP",
        vendor: "GenuineIntel",
        ghz: 2.7,
        levels: &[
            (32, 8, 64, 4.0, false, false),
            (1024, 16, 64, 14.0, false, false),
            (22 << 10, 11, 64, 70.0, true, true),
        ],
        memory_ns: 95.0,
        tlbs: &[(64, 0, 9.0), (1536, 12, 80.0)],
        page: 4096,
        mlp: 10.0,
        prefetch: BOTH,
        llc: Replacement::Adaptive,
    },
    Core {
        key: "icx",
        name: "Ice Lake-SP",
        vendor: "GenuineIntel",
        ghz: 3.0,
        levels: &[
            (48, 12, 64, 5.0, false, false),
            (1280, 20, 64, 14.0, false, false),
            (48 << 10, 12, 64, 75.0, true, false),
        ],
        memory_ns: 105.0,
        tlbs: &[(64, 0, 9.0), (2048, 16, 85.0)],
        page: 4096,
        mlp: 12.0,
        prefetch: BOTH,
        llc: Replacement::Adaptive,
    },
    Core {
        key: "spr",
        name: "Sapphire Rapids",
        vendor: "GenuineIntel",
        ghz: 3.0,
        levels: &[
            (48, 12, 64, 5.0, false, false),
            (2048, 16, 64, 16.0, false, false),
            (105 << 10, 15, 64, 100.0, true, false),
        ],
        memory_ns: 120.0,
        tlbs: &[(64, 0, 9.0), (2048, 16, 85.0)],
        page: 4096,
        mlp: 16.0,
        prefetch: BOTH,
        llc: Replacement::Adaptive,
    },
    Core {
        key: "emr",
        name: "Emerald Rapids",
        vendor: "GenuineIntel",
        ghz: 2.9,
        levels: &[
            (48, 12, 64, 5.0, false, false),
            (2048, 16, 64, 16.0, false, false),
            (320 << 10, 20, 64, 110.0, true, false),
        ],
        memory_ns: 125.0,
        tlbs: &[(64, 0, 9.0), (2048, 16, 85.0)],
        page: 4096,
        mlp: 16.0,
        prefetch: BOTH,
        llc: Replacement::Adaptive,
    },
    Core {
        key: "gnr",
        name: "Granite Rapids",
        vendor: "GenuineIntel",
        ghz: 3.2,
        levels: &[
            (48, 12, 64, 5.0, false, false),
            (2048, 16, 64, 16.0, false, false),
            (288 << 10, 16, 64, 120.0, true, false),
        ],
        memory_ns: 135.0,
        tlbs: &[(96, 0, 9.0), (2048, 16, 85.0)],
        page: 4096,
        mlp: 16.0,
        prefetch: BOTH,
        llc: Replacement::Adaptive,
    },
    Core {
        key: "rpl",
        name: "Raptor Lake",
        vendor: "GenuineIntel",
        ghz: 5.0,
        levels: &[
            (48, 12, 64, 5.0, false, false),
            (2048, 16, 64, 16.0, false, false),
            (36 << 10, 12, 64, 75.0, true, false),
        ],
        memory_ns: 85.0,
        tlbs: &[(96, 0, 9.0), (2048, 16, 90.0)],
        page: 4096,
        mlp: 16.0,
        prefetch: BOTH,
        llc: Replacement::Adaptive,
    },
    N1,
    // The same core under a kernel of 64 KiB base pages (some Arm
    // distributions'): its TLBs map 64 KiB pages, its huge page is 512 MiB.
    Core {
        key: "n1-64k",
        page: 65536,
        ..N1
    },
    Core {
        key: "v2",
        name: "Neoverse V2",
        vendor: "ARM",
        ghz: 3.1,
        levels: &[
            (64, 4, 64, 4.0, false, false),
            (2048, 8, 64, 13.0, false, false),
            (114 << 10, 16, 64, 110.0, true, false),
        ],
        memory_ns: 120.0,
        tlbs: &[(48, 0, 6.0), (2048, 8, 80.0)],
        page: 4096,
        mlp: 20.0,
        prefetch: NEXT,
        llc: Replacement::Random,
    },
    Core {
        key: "apple",
        name: "Apple-like",
        vendor: "Apple",
        ghz: 3.5,
        levels: &[
            (128, 8, 128, 3.0, false, false),
            (16 << 10, 16, 128, 18.0, true, false),
        ],
        memory_ns: 100.0,
        tlbs: &[(160, 0, 6.0), (3072, 12, 70.0)],
        page: 16384,
        mlp: 32.0,
        prefetch: NEXT,
        llc: Replacement::Adaptive,
    },
];

/// The shared level's replacement of the corpus's core named `name`
/// (`Zen 5`), for models of recorded machines.
pub fn llc_of(name: &str) -> Option<Replacement> {
    CORES.iter().find(|c| c.name == name).map(|c| c.llc)
}

/// A guest's condition: how noisy the machine is while it is measured.
/// The documented corpus crosses its cores with [`Condition::ALL`]; the
/// generated one draws from [`Condition::GENERATED`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Condition {
    /// Hardly any jitter, a spike now and then (a dedicated host).
    VeryQuiet,
    Quiet,
    /// Frequent spikes (interrupts, a host's busy tick): one sample in 7.
    HeavySpikes,
    /// Another thread takes half of L1 and L2 half of the time.
    BusySibling,
    /// The guest's share of the shared level moves between half and all.
    MovingShare,
    /// Both at once.
    BusyAndMoving,
}

impl Condition {
    /// The documented corpus's conditions (its machine indices depend on
    /// this order).
    pub const ALL: [Condition; 3] = [Condition::Quiet, Condition::BusySibling, Condition::MovingShare];

    /// The generated corpus's noise mixes.
    pub const GENERATED: [Condition; 6] = [
        Condition::VeryQuiet,
        Condition::Quiet,
        Condition::HeavySpikes,
        Condition::BusySibling,
        Condition::MovingShare,
        Condition::BusyAndMoving,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Condition::VeryQuiet => "very quiet",
            Condition::Quiet => "quiet",
            Condition::HeavySpikes => "heavy spikes",
            Condition::BusySibling => "busy sibling",
            Condition::MovingShare => "moving share",
            Condition::BusyAndMoving => "busy sibling and moving share",
        }
    }

    /// A quiet machine: the scorecard's bar (every private level and
    /// memory right) is held on these.
    pub fn is_quiet(self) -> bool {
        matches!(self, Condition::VeryQuiet | Condition::Quiet)
    }

    pub fn noise(self) -> Noise {
        let quiet = Noise {
            jitter: 0.01,
            spikes: 0.02,
            ..Default::default()
        };
        let busy = Noise {
            busy: 0.5,
            jitter: 0.03,
            ..quiet
        };
        match self {
            Condition::VeryQuiet => Noise {
                jitter: 0.003,
                spikes: 0.005,
                ..Default::default()
            },
            Condition::Quiet => quiet,
            Condition::HeavySpikes => Noise {
                jitter: 0.02,
                spikes: 0.15,
                ..quiet
            },
            Condition::BusySibling => busy,
            Condition::MovingShare => Noise {
                share_moves: 0.5,
                ..quiet
            },
            Condition::BusyAndMoving => Noise {
                share_moves: 0.5,
                ..busy
            },
        }
    }
}

/// Machines per (core, pages, condition): the corpus holds
/// `cores × 2 × 3 × SEEDS` machines.
pub const SEEDS: usize = 6;

/// How many machines the corpus holds.
pub fn len() -> usize {
    CORES.len() * 2 * Condition::ALL.len() * SEEDS
}

/// The corpus's machine `i` (any `i`; it wraps), with its condition.
pub fn machine(i: usize) -> (Model, Condition) {
    let i = i % len();
    // i % SEEDS picks the seed: it only varies the draws below.
    let rest = i / SEEDS;
    let cond = Condition::ALL[rest % Condition::ALL.len()];
    let rest = rest / Condition::ALL.len();
    let pages = if rest.is_multiple_of(2) {
        Pages::Base
    } else {
        Pages::Huge
    };
    let core = &CORES[(rest / 2) % CORES.len()];
    let mut rng = SplitMix64::new(0x5157_0000 ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    // A part's own clock and memory: ±10% and ±15% about the core's.
    let spread = |rng: &mut SplitMix64, f: f64| {
        1.0 + f * (2.0 * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 1.0)
    };
    let ghz = core.ghz * spread(&mut rng, 0.1);
    let vcpus = [1usize, 2, 4, 8, 16][rng.index(5)];
    let levels = core
        .levels
        .iter()
        .enumerate()
        .map(|(k, &(kib, ways, line, cycles, shared, victim))| Level {
            size: kib << 10,
            ways,
            line,
            ns: cycles / ghz,
            shared,
            victim,
            // L1s as LRU on x86 (the recorded Zen 3, Zen 5 and Emerald
            // Rapids L1 edges are as sharp as LRU's: crossed half-way at
            // 51 KiB for 48 KiB, where MRU-bit PLRU keeps part of the chase
            // to 64 KiB), PLRU on the Arm cores, whose L1 edge nobody here
            // has recorded; L2s (tree-PLRU, RRIP) keep part of a working
            // set that overflows them, as random replacement does; the
            // shared level as the core's.
            replacement: match (k, shared) {
                (_, true) => core.llc,
                (0, false) if core.vendor.starts_with("Genuine") || core.vendor.starts_with("Authentic") => {
                    Replacement::Lru
                }
                (0, false) => Replacement::Plru,
                _ => Replacement::Random,
            },
        })
        .collect();
    let tlbs = core
        .tlbs
        .iter()
        .map(|&(entries, ways, cycles)| Tlb {
            entries,
            ways,
            miss_ns: cycles / ghz,
        })
        .collect();
    let model = Model {
        name: format!(
            "{}/{}/{}/{}vcpu #{i}",
            core.key,
            if pages == Pages::Huge {
                "huge".to_string()
            } else {
                format!("{}k", core.page / 1024)
            },
            cond.name().replace(' ', "-"),
            vcpus
        ),
        core: core.name.into(),
        vendor: core.vendor.into(),
        mhz: ghz * 1000.0,
        levels,
        memory_ns: core.memory_ns * spread(&mut rng, 0.15),
        tlbs,
        pages,
        page: core.page,
        vcpus,
        mlp: core.mlp,
        // Firmware leaves each prefetcher on three times in four.
        prefetch: Prefetch {
            next_line: core.prefetch.next_line && rng.index(4) != 0,
            neighbour: core.prefetch.neighbour && rng.index(4) != 0,
        },
        noise: cond.noise(),
        seed: rng.next_u64(),
        guest: Guest::default(),
    };
    (model, cond)
}

/// The seed `hwcal sim score --generated N` uses without `--seed`.
pub const DEFAULT_SEED: u64 = 1;

/// A uniform draw in [a, b).
fn uniform(rng: &mut SplitMix64, a: f64, b: f64) -> f64 {
    a + (b - a) * ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
}

fn pick<T: Copy>(rng: &mut SplitMix64, xs: &[T]) -> T {
    xs[rng.index(xs.len())]
}

/// Ways for a level of `size` bytes and `line`-byte lines among `ways`
/// that give a whole number of sets: one that makes the sets a power of
/// two where any does (three times in four; a real 1.25 MiB 16-way L2 has
/// 1280 sets, and always with `strict`), else any that divides.
fn ways_for(rng: &mut SplitMix64, size: u64, line: u64, ways: &[u32], strict: bool) -> u32 {
    let lines = size / line;
    let whole: Vec<u32> = ways
        .iter()
        .copied()
        .filter(|&w| lines.is_multiple_of(w as u64))
        .collect();
    let pow2: Vec<u32> = whole
        .iter()
        .copied()
        .filter(|&w| (lines / w as u64).is_power_of_two())
        .collect();
    match (pow2.is_empty(), whole.is_empty()) {
        (false, _) if strict || whole.len() == pow2.len() || rng.index(4) != 0 => pick(rng, &pow2),
        (_, false) => pick(rng, &whole),
        _ => ways[0],
    }
}

const POLICIES: [Replacement; 4] = [
    Replacement::Lru,
    Replacement::Plru,
    Replacement::Random,
    Replacement::Adaptive,
];

/// Machine `index` of the generated corpus of `seed`: a machine nobody
/// documented, drawn from physically plausible ranges — a pure function
/// of (seed, index), any index.
///
/// - Vendor: x86 like Intel (4 in 10) or AMD (3), Arm (2), Apple-like (1);
///   clock 2–5 GHz (Apple-like 3–4).
/// - Lines 64 B (Arm one in 5 and Apple-like: 128 B), the same at every
///   level; base pages 4 KiB on x86, 4/16/64 KiB on Arm, 16 KiB Apple-like.
/// - 2 levels (one in 10: L1 and a shared L2 of 4–32 MiB), 3 (7 in 10) or 4
///   (2 in 10: an L4 of 64–512 MiB at 50–70 ns, shared, a victim of L3
///   half the time, behind an L3 of at most 64 MiB).
/// - L1 32/48/64/96/128 KiB with 8/12/16 ways (sets a power of two), 3–5
///   cycles; L2 256 KiB–3 MiB (incl. 1.25/1.5/2.5/3 MiB) with 8–20 ways
///   (sets a power of two three times in four where some way count gives
///   one, else any whole number), 10–18 cycles; L3 4–256 MiB, at least
///   three times L2, shared, a victim of L2 four times in ten (else
///   inclusive), 11–20 ways, 30 + 10·log2(MiB/4) cycles ±25%. Each level's
///   latency at least 1.8× the one below it, memory at least 1.5× the last.
/// - Each level's replacement drawn from all four policies.
/// - TLBs: L1 32–96 entries fully associative (5–9 cycles a miss), L2
///   512–4096 entries with 4–16 ways (incl. 4, 5, 6), 60–120 cycles.
/// - Memory 70–200 ns; 1–64 vCPUs; MLP 8–32; each prefetcher on or off.
/// - Noise: one of [`Condition::GENERATED`], uniformly.
/// - Pages: THP `never` (base pages) in 15%, else huge pages the TLB
///   sees in 40% of the rest.
/// - Guest: sysfs true (50%), the shared level stated at 2–16× its
///   effective share (15%), TLBs masked (10%), one TLB figure wrong (10%:
///   1/32, half or twice), nothing stated (15%); page tables in the data
///   caches in 40% (the host on base pages in half of those); memory
///   drifting 5–30% over 2–30 s in 25%.
pub fn generated(seed: u64, index: usize) -> (Model, Condition) {
    let mut rng = SplitMix64::new(
        seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ (index as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9)
            ^ 0x6765_6e00,
    );
    let rng = &mut rng;
    let (vendor, kind) = match rng.index(10) {
        0..=3 => ("GenuineIntel", "x86i"),
        4..=6 => ("AuthenticAMD", "x86a"),
        7..=8 => ("ARM", "arm"),
        _ => ("Apple", "apple"),
    };
    let x86 = kind.starts_with("x86");
    let ghz = if kind == "apple" {
        uniform(rng, 3.0, 4.0)
    } else {
        uniform(rng, 2.0, 5.0)
    };
    let line: u64 = match kind {
        "apple" => 128,
        "arm" if rng.index(5) == 0 => 128,
        _ => 64,
    };
    let page: u64 = match kind {
        "apple" => 16384,
        "arm" => pick(rng, &[4096, 4096, 16384, 65536]),
        _ => 4096,
    };
    let count = match rng.index(10) {
        0 => 2,
        1..=7 => 3,
        _ => 4,
    };
    let kib = 1024u64;
    let mib = 1024 * kib;
    let mut levels: Vec<Level> = Vec::new();
    let mut level = |rng: &mut SplitMix64, size: u64, ways: u32, cycles: f64, shared: bool, victim: bool| {
        let below = levels.last().map_or(0.0, |l: &Level| l.ns);
        levels.push(Level {
            size,
            ways,
            line,
            ns: (cycles / ghz).max(1.8 * below),
            shared,
            victim,
            replacement: pick(rng, &POLICIES),
        });
    };
    // L1.
    let l1 = pick(rng, &[32, 48, 64, 96, 128]) * kib;
    let w = ways_for(rng, l1, line, &[8, 12, 16], true);
    let c = if kind == "apple" {
        3.0
    } else {
        pick(rng, &[3.0, 4.0, 4.0, 5.0, 5.0])
    };
    level(rng, l1, w, c, false, false);
    // L2: private, or the shared last level of a two-level machine.
    let l2 = if count == 2 {
        pick(rng, &[4, 8, 12, 16, 24, 32]) * mib
    } else {
        pick(
            rng,
            &[
                256 * kib,
                512 * kib,
                mib,
                1280 * kib,
                1536 * kib,
                2 * mib,
                2560 * kib,
                3 * mib,
            ],
        )
    };
    let w = ways_for(rng, l2, line, &(8..=20).collect::<Vec<u32>>(), false);
    let c = if count == 2 {
        uniform(rng, 16.0, 35.0)
    } else {
        uniform(rng, 10.0, 18.0)
    };
    level(rng, l2, w, c, count == 2, false);
    // L3 and L4: shared.
    let mut l3 = 0;
    if count >= 3 {
        let sizes: Vec<u64> = [4u64, 6, 8, 12, 16, 24, 32, 36, 48, 64, 96, 105, 128, 192, 256]
            .iter()
            .map(|m| m * mib)
            .filter(|&s| s >= 3 * l2 && (count == 3 || s <= 64 * mib))
            .collect();
        l3 = pick(rng, &sizes);
        let w = ways_for(rng, l3, line, &(11..=20).collect::<Vec<u32>>(), false);
        let mut c = (30.0 + 10.0 * (l3 as f64 / (4 * mib) as f64).log2()) * uniform(rng, 0.8, 1.25);
        if count == 4 {
            // Room for an L4 of 50 ns or more above it.
            c = c.min(50.0 / 1.8 * ghz);
        }
        let victim = rng.index(10) < 4;
        level(rng, l3, w, c, true, victim);
    }
    if count == 4 {
        let sizes: Vec<u64> = [64u64, 128, 256, 384, 512]
            .iter()
            .map(|m| m * mib)
            .filter(|&s| s >= 2 * l3)
            .collect();
        let l4 = pick(rng, &sizes);
        let w = ways_for(rng, l4, line, &[16, 12, 20], false);
        let ns = uniform(rng, 50.0, 70.0);
        let victim = rng.index(2) == 0;
        level(rng, l4, w, ns * ghz, true, victim);
    }
    let last = levels.last().map_or(1.0, |l| l.ns);
    let memory_ns = uniform(rng, 70.0, 200.0).max(1.5 * last);
    let l1_tlb = pick(rng, &[32u64, 48, 64, 72, 96]);
    let l2_tlb = pick(rng, &[512u64, 768, 1024, 1280, 1536, 2048, 3072, 4096]);
    let tlb_ways: Vec<u32> = [4u32, 5, 6, 8, 12, 16]
        .into_iter()
        .filter(|&w| l2_tlb.is_multiple_of(w as u64))
        .collect();
    let tlbs = vec![
        Tlb {
            entries: l1_tlb,
            ways: 0,
            miss_ns: uniform(rng, 5.0, 9.0) / ghz,
        },
        Tlb {
            entries: l2_tlb,
            ways: pick(rng, &tlb_ways),
            miss_ns: uniform(rng, 60.0, 120.0) / ghz,
        },
    ];
    let vcpus = pick(rng, &[1usize, 2, 4, 8, 16, 32, 48, 64]);
    let cond = pick(rng, &Condition::GENERATED);
    let thp = match rng.index(20) {
        0..=2 => Thp::Never,
        3..=5 => Thp::Always,
        _ => Thp::Madvise,
    };
    let pages = if thp != Thp::Never && rng.index(10) < 4 {
        Pages::Huge
    } else {
        Pages::Base
    };
    let shared = levels.iter().find(|l| l.shared).map_or(0, |l| l.size);
    let sysfs = match rng.index(20) {
        10..=12 => Sysfs::SharedAtNominal {
            nominal: shared * pick(rng, &[2, 3, 4, 8, 16]),
        },
        13..=14 => Sysfs::TlbMasked,
        15..=16 => {
            let k = rng.index(2);
            let e = tlbs[k].entries;
            Sysfs::TlbWrong {
                level: k as u32 + 1,
                entries: pick(rng, &[(e / 32).max(8), e / 2, e * 2]),
            }
        }
        17..=19 => Sysfs::Absent,
        // QEMU's EPYC models' L2 and its legacy table's.
        0..=1 => {
            let (l2, ways) = pick(rng, &[(512u64 << 10, 8u64), (4 << 20, 16)]);
            Sysfs::CpuModel { l2, ways }
        }
        _ => Sysfs::Truth,
    };
    let page_tables_cached = rng.index(10) < 4;
    let host_base_pages = page_tables_cached && rng.index(2) == 0;
    let (drift, drift_period_s) = if rng.index(4) == 0 {
        (uniform(rng, 0.05, 0.3), uniform(rng, 2.0, 30.0))
    } else {
        (0.0, 0.0)
    };
    let guest = Guest {
        sysfs,
        page_tables_cached,
        host_base_pages,
        drift,
        drift_period_s,
        thp,
        memory_limit: None,
    };
    let prefetch = Prefetch {
        next_line: rng.index(4) != 0,
        neighbour: x86 && rng.index(4) != 0,
    };
    let mlp = uniform(rng, 8.0, 32.0).round();
    let model = Model {
        name: format!(
            "gen{seed}/{kind}/{count}L/{}/{}/{vcpus}vcpu #{index}",
            if pages == Pages::Huge {
                "huge".to_string()
            } else {
                format!("{}k", page / 1024)
            },
            cond.name().replace(' ', "-"),
        ),
        core: "generated".into(),
        vendor: vendor.into(),
        mhz: ghz * 1000.0,
        levels,
        memory_ns,
        tlbs,
        pages,
        page,
        vcpus,
        mlp,
        prefetch,
        noise: cond.noise(),
        seed: rng.next_u64(),
        guest,
    };
    (model, cond)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_is_large_and_each_machine_a_function_of_its_index() {
        assert!(len() >= 500, "{}", len());
        assert_eq!(machine(123), machine(123));
        assert_ne!(machine(123).0, machine(124).0);
        let names: std::collections::BTreeSet<String> = (0..len()).map(|i| machine(i).0.name).collect();
        assert_eq!(names.len(), len());
    }

    #[test]
    fn generated_machines_are_functions_of_seed_and_index_within_their_ranges() {
        assert_eq!(generated(1, 5), generated(1, 5));
        assert_ne!(generated(1, 5).0, generated(2, 5).0);
        let mut counts = std::collections::BTreeMap::<String, usize>::new();
        let mut bump = |k: String| *counts.entry(k).or_default() += 1;
        for i in 0..3000 {
            let (m, c) = generated(DEFAULT_SEED, i);
            assert!(m.noise == c.noise());
            let n = m.levels.len();
            assert!((2..=4).contains(&n), "{}", m.name);
            bump(format!("{n} levels"));
            let l1 = &m.levels[0];
            assert!((32 << 10..=128 << 10).contains(&l1.size) && [8, 12, 16].contains(&l1.ways));
            assert!(
                (l1.size / l1.line / l1.ways as u64).is_power_of_two(),
                "{}",
                m.name
            );
            for (k, l) in m.levels.iter().enumerate() {
                assert_eq!(l.size % (l.line * l.ways as u64), 0, "{} L{}", m.name, k + 1);
                assert!([64, 128].contains(&l.line));
                assert_eq!(l.shared, k >= 2 || (n == 2 && k == 1), "{}", m.name);
                if k > 0 {
                    assert!(l.ns >= 1.8 * m.levels[k - 1].ns - 1e-9, "{}", m.name);
                    assert!(l.size >= 2 * m.levels[k - 1].size, "{}", m.name);
                }
                bump(format!("L{} {:?}", k + 1, l.replacement));
                if !(l.size / l.line / l.ways as u64).is_power_of_two() {
                    bump(format!("L{} sets not a power of two", k + 1));
                }
            }
            if n >= 3 {
                let l2 = &m.levels[1];
                assert!((256 << 10..=3 << 20).contains(&l2.size) && (8..=20).contains(&l2.ways));
                assert!((4 << 20..=256 << 20).contains(&m.levels[2].size));
            }
            if n == 4 {
                let l4 = &m.levels[3];
                assert!((64 << 20..=512 << 20).contains(&l4.size));
                assert!(l4.ns >= 50.0 && l4.ns < 80.0, "{} {}", m.name, l4.ns);
            }
            assert!(m.memory_ns >= 70.0 && m.memory_ns <= 200.0 && m.memory_ns >= 1.5 * m.levels[n - 1].ns);
            assert!((32..=96).contains(&m.tlbs[0].entries) && m.tlbs[0].ways == 0);
            let t2 = &m.tlbs[1];
            assert!((512..=4096).contains(&t2.entries) && (4..=16).contains(&t2.ways));
            assert_eq!(t2.entries % t2.ways as u64, 0);
            assert!((1..=64).contains(&m.vcpus));
            assert!(m.guest.thp != Thp::Never || m.pages == Pages::Base);
            bump(format!("{:?}", c));
            bump(format!("pages {:?} {}", m.pages, m.page));
            bump(format!("sysfs {:?}", std::mem::discriminant(&m.guest.sysfs)));
            bump(format!("pte {}", m.guest.page_tables_cached));
            bump(format!("drift {}", m.guest.drift > 0.0));
        }
        // Every shape is drawn: each policy at each level, each mix, each
        // page size, each lie.
        for k in 1..=4 {
            for p in POLICIES {
                assert!(
                    counts.contains_key(&format!("L{k} {p:?}")),
                    "L{k} {p:?}: {counts:?}"
                );
            }
        }
        for c in Condition::GENERATED {
            assert!(counts[&format!("{c:?}")] > 300, "{counts:?}");
        }
        for k in [
            "2 levels",
            "4 levels",
            "pages Base 65536",
            "pages Base 16384",
            "pages Huge 4096",
            "L2 sets not a power of two",
            "pte true",
            "drift true",
        ] {
            assert!(counts.contains_key(k), "{k}: {counts:?}");
        }
        assert_eq!(
            counts.keys().filter(|k| k.starts_with("sysfs")).count(),
            6,
            "{counts:?}"
        );
    }
}

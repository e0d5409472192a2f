//! The corpus: documented cores (sizes, ways and load-to-use latencies
//! from the vendors' optimisation manuals and the usual public
//! measurements: Chips and Cheese, Agner Fog's tables, 7-cpu.com) crossed
//! with the conditions a guest meets — huge pages honoured or not, 1 to 16
//! vCPUs, quiet, a busy sibling, a moving share of the shared level. The
//! machine at index `i` is a pure function of `i`: any machine of a
//! scorecard can be built again alone.

use crate::model::{Level, Model, Noise, Pages, Prefetch, Replacement, Tlb};
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

/// A guest's condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    Quiet,
    /// Another thread takes half of L1 and L2 half of the time.
    BusySibling,
    /// The guest's share of the shared level moves between half and all.
    MovingShare,
}

impl Condition {
    pub const ALL: [Condition; 3] = [Condition::Quiet, Condition::BusySibling, Condition::MovingShare];

    pub fn name(self) -> &'static str {
        match self {
            Condition::Quiet => "quiet",
            Condition::BusySibling => "busy sibling",
            Condition::MovingShare => "moving share",
        }
    }

    fn noise(self) -> Noise {
        let quiet = Noise {
            jitter: 0.01,
            spikes: 0.02,
            ..Default::default()
        };
        match self {
            Condition::Quiet => quiet,
            Condition::BusySibling => Noise {
                busy: 0.5,
                jitter: 0.03,
                ..quiet
            },
            Condition::MovingShare => Noise {
                share_moves: 0.5,
                ..quiet
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
}

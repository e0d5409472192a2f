//! What real guests do that the bare core does not (issue 40), as pure
//! functions of a [`Model`] and its [`Guest`](crate::model::Guest) fields:
//! what sysfs and CPUID tell the guest ([`stated`]), what the page walks
//! cost once their own entries miss the caches ([`walk_extra_ns`]), memory
//! latency that drifts as a neighbour's traffic comes and goes
//! ([`memory_ns_at`]), and the THP setting the guest reports
//! ([`thp_mode`]). `Guest::default()` makes every one of them what the
//! simulator did before: true figures, walks that never miss, memory that
//! holds still, THP `madvise`.
//!
//! The curve generation (`machine`, `curves`, `steps`) calls these; they
//! hold no state and draw nothing that is not seeded by `model.seed`.

use crate::model::{Model, Pages, Sysfs, Thp};
use hwcal_model::{NominalCache, NominalTlb};
use hwcal_stats::SplitMix64;

/// What sysfs (caches) and CPUID (TLBs) tell the guest: the
/// `nominal_caches` and `nominal_tlbs` of its `MachineInfo`.
///
/// Contract, by [`Sysfs`]:
/// - `Truth`: one data/unified cache per model level (`level` 1-based,
///   `Data` for L1, `Unified` above), its size, line, ways and
///   `sets = size / line / ways`, shared by every vCPU (`0..vcpus`) when
///   the level is shared, else by CPU 0 alone, `source: "sysfs"`; one TLB
///   per model TLB level (`page_bytes` the base page, `ways: None` for a
///   fully associative level), `source: "model"`. This is exactly what
///   `Sim::info` built before issue 40.
/// - `SharedAtNominal { nominal }`: as `Truth`, but the first shared level
///   is stated at `nominal` bytes (its sets scaled to match); the model's
///   own size stays the truth the analysis is held to.
/// - `TlbMasked`: the caches as `Truth`, no TLBs.
/// - `TlbWrong { level, entries }`: as `Truth`, with TLB `level` (1-based)
///   stated at `entries`; a `level` the model does not have changes nothing.
/// - `Absent`: no caches and no TLBs.
/// - `CpuModel { l2, ways }`: as `Truth`, with a private L2 stated at `l2`
///   bytes of `ways` ways (its sets to match).
///
/// Independent of the guest's other fields, of the noise and of the seed.
pub fn stated(model: &Model) -> (Vec<NominalCache>, Vec<NominalTlb>) {
    let cpus: Vec<usize> = (0..model.vcpus).collect();
    let first_shared = model.levels.iter().position(|l| l.shared);
    let caches: Vec<NominalCache> = model
        .levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let (size, ways) = match model.guest.sysfs {
                Sysfs::SharedAtNominal { nominal } if Some(i) == first_shared => (nominal, l.ways as u64),
                Sysfs::CpuModel { l2, ways } if i == 1 && !l.shared => (l2, ways),
                _ => (l.size, l.ways as u64),
            };
            NominalCache {
                level: i as u32 + 1,
                cache_type: if i == 0 { "Data" } else { "Unified" }.into(),
                size_bytes: size,
                line_bytes: Some(l.line),
                ways: Some(ways),
                sets: Some(size / l.line / ways.max(1)),
                shared_cpus: if l.shared { cpus.clone() } else { vec![0] },
                source: "sysfs".into(),
            }
        })
        .collect();
    let tlbs: Vec<NominalTlb> = model
        .tlbs
        .iter()
        .enumerate()
        .map(|(i, t)| NominalTlb {
            level: i as u32 + 1,
            page_bytes: model.page,
            entries: match model.guest.sysfs {
                Sysfs::TlbWrong { level, entries } if level as usize == i + 1 => entries,
                _ => t.entries,
            },
            ways: (t.ways > 0).then_some(t.ways as u64),
            source: "model".into(),
        })
        .collect();
    match model.guest.sysfs {
        Sysfs::Absent => (Vec::new(), Vec::new()),
        Sysfs::TlbMasked => (caches, Vec::new()),
        _ => (caches, tlbs),
    }
}

/// The guest's `MachineInfo::thp_mode`: `"madvise"`, `"always"` or
/// `"never"` as [`Thp`] says. Under `never` a probe that asks for huge
/// pages gets base pages; the model's [`Pages`] is then `Base` (the
/// generated corpus never draws `Never` with `Huge`).
pub fn thp_mode(model: &Model) -> &'static str {
    match model.guest.thp {
        Thp::Madvise => "madvise",
        Thp::Always => "always",
        Thp::Never => "never",
    }
}

/// The figure the analysis should report as memory latency at a chase
/// over `bytes`: memory's own (the floor of a drifting memory: the
/// neighbour at rest) plus, on base pages, the page walks — their TLB
/// misses and, where the page tables live in the data caches, the walks'
/// own misses ([`walk_extra_ns`]).
pub fn memory_truth(model: &Model, bytes: f64) -> f64 {
    match model.pages {
        Pages::Huge => model.memory_ns,
        Pages::Base => {
            model.memory_ns
                + model.tlb_penalty(&model.chase_tlb_miss(bytes / model.page as f64))
                + walk_extra_ns(model, bytes)
        }
    }
}

/// The bytes of one page-table leaf entry (x86-64, AArch64).
const PTE_BYTES: f64 = 8.0;

/// The extra time per load, ns, of a random chase over `bytes` (every line
/// of a buffer of `bytes`, in random cyclic order) that the page walks
/// cost because their own leaf-entry loads miss the data caches: on base
/// pages the buffer's leaf entries occupy `bytes / page × 8` bytes (a
/// chase over F bytes on 4 KiB pages: F/512), and they compete for the
/// caches with the chase's own lines. `walk_extra_ns_at(model, bytes /
/// page, lines)` with `lines` the buffer's lines; see there for the
/// derivation.
///
/// 0 on huge pages, where `page_tables_cached` is false, without TLB
/// levels, or while the chase's footprint does not miss the last TLB
/// level. Never negative, non-decreasing in `bytes` (up to the fixed-point
/// solve's precision), at most `walk × loads × (memory_ns − ns_base)` with
/// `walk` the last TLB level's miss fraction, `loads` the entries a walk
/// loads (1, or 2 with `host_base_pages`) and `ns_base` the latency of L2
/// (L1 on a one-level model).
pub fn walk_extra_ns(model: &Model, bytes: f64) -> f64 {
    let line = model.levels.first().map_or(64.0, |l| l.line as f64);
    walk_extra_ns_at(model, bytes / model.page as f64, bytes / line)
}

/// The general form of [`walk_extra_ns`]: a random walk over `pages` base
/// pages touching `lines` distinct data lines in all (`bytes / line` for a
/// dense chase; `pages` for the TLB probe's one line per page), each line
/// once per lap.
///
/// Derivation (no fitted constant): a fraction `walk` of the loads (the
/// last TLB level's miss fraction of [`Model::chase_tlb_miss`]`(pages)`)
/// walks the page tables, and each walk loads `loads` leaf entries (the
/// guest's; with `host_base_pages` the host's for the data's
/// guest-physical page too). The leaf entries occupy `E = pages × 8 ×
/// loads` bytes, `E / line` lines, each loaded at rate `walk × line / (8 ×
/// pages)` per load; the data lines at `1 / lines` per load each. Which of
/// them a level of C lines keeps is Che's approximation of LRU (Che, Tung
/// and Wang 2002; Fricker, Robert and Roberts 2012): the characteristic
/// time T solves `Σ_i n_i (1 − e^(−r_i T)) = C` over the two kinds, and a
/// line of rate r hits with probability `1 − e^(−r T)`. The walk's
/// entries are hundreds of times hotter than a data line, so they stay
/// cached long after the data has outgrown a level, then spill. A level's
/// C is its size (plus the level above's where it is a victim of it, as a
/// chase sees it; a shared level at the model's size, which is the guest's
/// effective share), the levels inclusive of each other (a level keeps at
/// least what the one below it keeps). A leaf entry served by L1 or L2
/// costs nothing extra: the TLB levels' `miss_ns` are the walks of the
/// page-per-load reference, whose entries sit there. One served by level
/// k > 2 costs `ns_k − ns_L2`, one from memory `memory_ns − ns_L2`. The
/// upper page-table levels (512 times smaller) are taken as cached; the
/// busy sibling and a moving share do not enter.
///
/// Checked against the recorded Zen 3 guest (`zen3-2vcpu.run.json`, 4 KiB
/// pages, the host on 4 KiB pages, an L3 share of ~6.5 MiB): its sweep
/// reads 150.8, 152.1, 154.0 and 164.7 ns at 16, 32, 64 and 128 MiB (a
/// climb of 14 ns, 10.7 of it in the last octave); a model of it reads
/// 142.4, 147.1, 152.1 and 160.6 (18 ns: 8 from the TLB's own misses as
/// they reach all loads, 10 from this, 8.5 in the last octave). On the
/// recorded Zen 5 guest (L3 share 16 MiB, a 4096-entry L2 TLB, 23 ns
/// walks) it puts the whole walk at 37 ns at 1 GiB and 29 ns at 256 MiB,
/// where fully random chases there read ~35 ns above few-walk ones at
/// 1 GiB and 10 ns less at 256 MiB (`peer-figures.md`).
pub fn walk_extra_ns_at(model: &Model, pages: f64, lines: f64) -> f64 {
    if model.pages == Pages::Huge || !model.guest.page_tables_cached || pages <= 0.0 || lines <= 0.0 {
        return 0.0;
    }
    let walk = model.chase_tlb_miss(pages).last().copied().unwrap_or(0.0);
    if walk <= 0.0 || model.levels.is_empty() {
        return 0.0;
    }
    let loads = if model.guest.host_base_pages { 2.0 } else { 1.0 };
    let base = model.levels.len().min(2) - 1;
    let ns_base = model.levels[base].ns;
    let mut kept = 0.0f64;
    let mut extra = 0.0;
    for (k, l) in model.levels.iter().enumerate() {
        let line = l.line as f64;
        let mut cap = l.size as f64;
        if l.victim && k > 0 {
            cap += model.levels[k - 1].size as f64;
        }
        let pte_lines = (pages * PTE_BYTES * loads / line).ceil().max(1.0);
        let pte_rate = walk * line / (PTE_BYTES * pages);
        let hit = che_hit(cap / line, (lines, 1.0 / lines), (pte_lines, pte_rate)).max(kept);
        if k > base {
            extra += (hit - kept) * (l.ns - ns_base).max(0.0);
        }
        kept = hit;
    }
    extra += (1.0 - kept) * (model.memory_ns - ns_base).max(0.0);
    walk * loads * extra
}

/// Che's approximation: the hit probability of a line of the second kind
/// (`(count, rate per load)`) in an LRU cache of `cap` lines shared with
/// the first kind. 1 when both fit.
fn che_hit(cap: f64, (n1, r1): (f64, f64), (n2, r2): (f64, f64)) -> f64 {
    if n1 + n2 <= cap {
        return 1.0;
    }
    let filled = |t: f64| n1 * (1.0 - (-r1 * t).exp()) + n2 * (1.0 - (-r2 * t).exp());
    let mut hi = cap / (r1 * n1 + r2 * n2).max(1e-300);
    while filled(hi) < cap {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if filled(mid) < cap {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    1.0 - (-r2 * 0.5 * (lo + hi)).exp()
}

/// Memory latency at `t_s` seconds into the run, ns: [`Model::memory_ns`]
/// while the neighbour rests, up to `memory_ns × (1 + drift)` at its
/// busiest. `memory_ns × (1 + drift × s(t))` with `s(t)` in [0, 1] the
/// weighted mean (weights 1, 1/2, 1/4) of three raised sinusoids
/// `(1 + sin(2π t / P_i + φ_i)) / 2` of periods `drift_period_s` × (1,
/// 0.618, 0.382) (incommensurate: the sum never repeats exactly) and
/// phases drawn from `model.seed`. A pure function of (model, t):
/// continuous in t, the same at the same t; exactly `memory_ns` at every
/// t where `drift` is 0 (or the period is not positive). The truth the
/// scorecard holds memory latency to stays `memory_ns` (its floor).
pub fn memory_ns_at(model: &Model, t_s: f64) -> f64 {
    let g = &model.guest;
    if g.drift <= 0.0 || g.drift_period_s <= 0.0 || !t_s.is_finite() {
        return model.memory_ns;
    }
    let mut rng = SplitMix64::new(model.seed ^ 0xd71f_7000_0000_0040);
    let mut s = 0.0;
    let mut w_sum = 0.0;
    for (w, f) in [(1.0, 1.0), (0.5, 0.618), (0.25, 0.382)] {
        let phase = 2.0 * std::f64::consts::PI * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let period = g.drift_period_s * f;
        s += w * 0.5 * (1.0 + (2.0 * std::f64::consts::PI * t_s / period + phase).sin());
        w_sum += w;
    }
    model.memory_ns * (1.0 + g.drift * s / w_sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Guest, Level, Noise, Prefetch, Replacement, Tlb};

    /// The recorded Zen 3 guest as a model: L1 32 KiB, L2 512 KiB, an L3
    /// share of 6.5 MiB (victim of L2), memory 150 ns with 4 KiB pages.
    fn zen3() -> Model {
        let level = |kib: u64, ways, ns, shared| Level {
            size: kib << 10,
            ways,
            line: 64,
            ns,
            shared,
            victim: shared,
            replacement: Replacement::Lru,
        };
        Model {
            name: "zen3".into(),
            core: "Zen 3".into(),
            vendor: "AuthenticAMD".into(),
            mhz: 3100.0,
            levels: vec![
                level(32, 8, 1.28, false),
                level(512, 8, 3.9, false),
                level(6656, 16, 16.5, true),
            ],
            memory_ns: 131.0,
            tlbs: vec![
                Tlb {
                    entries: 64,
                    ways: 0,
                    miss_ns: 2.4,
                },
                Tlb {
                    entries: 2048,
                    ways: 16,
                    miss_ns: 18.0,
                },
            ],
            pages: Pages::Base,
            page: 4096,
            vcpus: 2,
            mlp: 16.0,
            prefetch: Prefetch::default(),
            noise: Noise::default(),
            seed: 7,
            guest: Guest::default(),
        }
    }

    fn spill(mut m: Model) -> Model {
        m.guest.page_tables_cached = true;
        m.guest.host_base_pages = true;
        m
    }

    #[test]
    fn stated_truth_is_what_the_simulated_machine_said_before() {
        let m = crate::corpus::machine(17).0;
        assert_eq!(m.guest, Guest::default());
        let (c, t) = stated(&m);
        assert_eq!(c.len(), m.levels.len());
        assert_eq!(t.len(), m.tlbs.len());
        for (n, l) in c.iter().zip(&m.levels) {
            assert_eq!(n.size_bytes, l.size);
            assert_eq!(n.sets, Some(l.size / l.line / l.ways as u64));
            assert_eq!(n.shared_cpus.len(), if l.shared { m.vcpus } else { 1 });
            assert_eq!(n.source, "sysfs");
        }
        assert_eq!(c[0].cache_type, "Data");
        assert!(t
            .iter()
            .zip(&m.tlbs)
            .all(|(n, x)| n.entries == x.entries && n.page_bytes == m.page));
        assert_eq!(t[0].ways, None);
    }

    #[test]
    fn stated_lies_as_its_sysfs_says() {
        let mut m = zen3();
        m.guest.sysfs = Sysfs::SharedAtNominal { nominal: 32 << 20 };
        let (c, t) = stated(&m);
        assert_eq!(c[2].size_bytes, 32 << 20);
        assert_eq!(c[2].sets, Some((32 << 20) / 64 / 16));
        assert_eq!(c[1].size_bytes, 512 << 10);
        assert_eq!(m.levels[2].size, 6656 << 10, "the truth is the share");
        assert_eq!(t.len(), 2);
        m.guest.sysfs = Sysfs::TlbMasked;
        let (c, t) = stated(&m);
        assert_eq!((c.len(), t.len()), (3, 0));
        m.guest.sysfs = Sysfs::TlbWrong {
            level: 2,
            entries: 128,
        };
        let (_, t) = stated(&m);
        assert_eq!((t[0].entries, t[1].entries), (64, 128));
        m.guest.sysfs = Sysfs::TlbWrong {
            level: 5,
            entries: 128,
        };
        assert_eq!(stated(&m).1[1].entries, 2048);
        m.guest.sysfs = Sysfs::Absent;
        assert_eq!(stated(&m), (Vec::new(), Vec::new()));
        m.guest.sysfs = Sysfs::CpuModel {
            l2: 4 << 20,
            ways: 16,
        };
        let (c, t) = stated(&m);
        assert_eq!(
            (c[1].size_bytes, c[1].ways, c[1].sets),
            (4 << 20, Some(16), Some(4096))
        );
        assert_eq!(
            (c[0].size_bytes, c[2].size_bytes, t.len()),
            (32 << 10, 6656 << 10, 2)
        );
    }

    #[test]
    fn thp_mode_names_the_setting() {
        let mut m = zen3();
        assert_eq!(thp_mode(&m), "madvise");
        m.guest.thp = Thp::Never;
        assert_eq!(thp_mode(&m), "never");
        m.guest.thp = Thp::Always;
        assert_eq!(thp_mode(&m), "always");
    }

    #[test]
    fn page_walks_cost_nothing_more_by_default_on_huge_pages_or_while_the_entries_fit() {
        let m = zen3();
        assert_eq!(walk_extra_ns(&m, 1e9), 0.0);
        let mut h = spill(zen3());
        h.pages = Pages::Huge;
        assert_eq!(walk_extra_ns(&h, 1e9), 0.0);
        let s = spill(zen3());
        // Under the L2 TLB's reach: no walks at all.
        assert_eq!(walk_extra_ns(&s, 4.0 * 1048576.0), 0.0);
        // 16 MiB: 32 KiB of entries beside the data, kept by L2.
        assert!(
            walk_extra_ns(&s, 16.0 * 1048576.0) < 0.5,
            "{}",
            walk_extra_ns(&s, 16.0 * 1048576.0)
        );
    }

    #[test]
    fn page_walks_climb_as_their_entries_outgrow_l2_then_l3() {
        let s = spill(zen3());
        let mib = 1048576.0;
        let mut prev = 0.0;
        for k in 4..=14 {
            let x = walk_extra_ns(&s, mib * 2f64.powi(k));
            assert!(x >= prev - 1e-6, "{k}: {x} < {prev}");
            prev = x;
        }
        // At 16 GiB (64 MiB of entries, ten times the L3) nearly every
        // entry comes from memory: close to the bound, never past it.
        let bound = 2.0 * (s.memory_ns - s.levels[1].ns);
        assert!(prev > 0.8 * bound && prev <= bound, "{prev} of {bound}");
        // Without the host's entries, half the loads and the footprint.
        let mut one = s.clone();
        one.guest.host_base_pages = false;
        assert!(walk_extra_ns(&one, 128.0 * mib) < walk_extra_ns(&s, 128.0 * mib));
    }

    #[test]
    fn the_recorded_zen3_climb_past_its_l3_is_the_tlb_and_the_walks() {
        // Recorded sweep: 16 MiB 150.8 ns, 32 MiB 152.1, 64 MiB 154.0,
        // 128 MiB 164.7: +13.9 ns. The model: the TLB's misses climbing
        // to all of them, and the walks' entries spilling L2.
        let s = spill(zen3());
        let mib = 1048576.0;
        let at = |x: f64| memory_truth(&s, x * mib);
        let climb = at(128.0) - at(16.0);
        let walks = walk_extra_ns(&s, 128.0 * mib) - walk_extra_ns(&s, 16.0 * mib);
        assert!((10.0..20.0).contains(&climb), "{climb}");
        assert!((4.0..12.0).contains(&walks), "{walks}");
        // Without the spill the TLB alone falls short of the recording.
        assert!(memory_truth(&zen3(), 128.0 * mib) - memory_truth(&zen3(), 16.0 * mib) < 10.0);
    }

    #[test]
    fn the_approximation_keeps_hot_lines() {
        assert_eq!(che_hit(100.0, (50.0, 0.02), (10.0, 0.5)), 1.0);
        // Cold data ten times the cache, hot lines a tenth of it: kept.
        assert!(che_hit(1000.0, (10000.0, 1e-4), (100.0, 1e-2)) > 0.99);
        // Equal rates: the cache's share of all lines.
        let h = che_hit(1000.0, (5000.0, 1e-4), (5000.0, 1e-4));
        assert!((h - 0.1).abs() < 1e-6, "{h}");
    }

    #[test]
    fn memory_drifts_between_its_floor_and_the_amplitude_deterministically() {
        let mut m = zen3();
        assert!((0..100).all(|i| memory_ns_at(&m, i as f64 * 0.37) == m.memory_ns));
        m.guest.drift = 0.3;
        m.guest.drift_period_s = 5.0;
        let xs: Vec<f64> = (0..2000).map(|i| memory_ns_at(&m, i as f64 * 0.025)).collect();
        let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = xs.iter().copied().fold(0.0, f64::max);
        assert!(lo >= m.memory_ns && hi <= 1.3 * m.memory_ns, "{lo} {hi}");
        assert!(hi - lo > 0.15 * m.memory_ns, "{lo} {hi}");
        // Continuous and slow: 25 ms moves it well under 1%.
        assert!(xs.windows(2).all(|w| (w[1] - w[0]).abs() < 0.01 * m.memory_ns));
        assert_eq!(memory_ns_at(&m, 3.3), memory_ns_at(&m.clone(), 3.3));
        let mut other = m.clone();
        other.seed += 1;
        assert_ne!(memory_ns_at(&m, 3.3), memory_ns_at(&other, 3.3));
    }
}

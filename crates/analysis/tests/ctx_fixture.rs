//! Regression fixture: a `hwcal ctx -s 0,64 2 4 8 16` profile recorded on
//! the reference machine (KVM guest, Sapphire Rapids, 2 vCPUs, ring pinned
//! to CPU 1, other jobs compiling on the machine). Re-analysing its raw
//! curves must give back the stored figures, and the figures must show what
//! the method implies.

use hwcal_model::Profile;

fn fixture() -> Profile {
    let s = include_str!("data/ctx_s0_s64_sapphire_rapids_vm.json");
    serde_json::from_str(s).expect("fixture parses")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn reanalysis_reproduces_the_recorded_figures() {
    let mut p = fixture();
    let stored = p.context_switch.clone().unwrap();
    // Throw the figures away; only the raw curves remain to rebuild them.
    let cs = p.context_switch.as_mut().unwrap();
    cs.points.clear();
    cs.sizes[0].points.clear();
    assert!(hwcal_analysis::ctx::reanalyze(&mut p));
    let again = p.context_switch.unwrap();
    for (a, b) in again.all_sizes().iter().zip(stored.all_sizes().iter()) {
        assert_eq!(a.size_kb, b.size_kb);
        assert!(close(a.overhead_us, b.overhead_us));
        assert_eq!(a.points.len(), b.points.len());
        for (x, y) in a.points.iter().zip(&b.points) {
            assert_eq!(x.nprocs, y.nprocs);
            assert!(close(x.us_median, y.us_median) && close(x.us_min, y.us_min));
            assert!(close(x.cycles_median.unwrap(), y.cycles_median.unwrap()));
            assert_eq!(x.verdict, y.verdict);
        }
    }
}

#[test]
fn recorded_figures_follow_the_method() {
    let p = fixture();
    let cs = p.context_switch.unwrap();
    let sizes = cs.all_sizes();
    assert_eq!(sizes.len(), 2);
    let (s0, s64) = (&sizes[0], &sizes[1]);
    // Summing 64 KB per hop costs more than summing nothing.
    assert!(s64.overhead_us > s0.overhead_us + 0.3);
    for z in &sizes {
        for p in &z.points {
            // Pinned pipe-ring switches on this machine: about a microsecond
            // or two, never negative, min ≤ median.
            assert!(p.us_min >= 0.0 && p.us_min <= p.us_median);
            assert!(p.us_median > 0.3 && p.us_median < 10.0, "{p:?}");
            assert!(!p.overhead_exceeds);
        }
    }
    // Bigger rings of 64 KB processes refill more cache per switch than
    // 2-process rings.
    assert!(s64.points.last().unwrap().us_median > s64.points[0].us_median);
}

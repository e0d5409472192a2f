//! The memory-level-parallelism table held to what parallel chases can
//! do: `k` independent chains finish at most `k` times as fast as one.

use hwcal_model::note::analysis as note;
use hwcal_model::{MlpPoint, Note, Profile};

/// Whether a point's speed-up exceeds its chain count beyond its
/// interval: each of `k` chains still waits one memory latency per load,
/// so `k` chains cannot run more than `k` times as fast as one.
pub fn over_bound(q: &MlpPoint) -> bool {
    let low = q.speedup_ci95.map_or(q.speedup, |[lo, _]| lo);
    q.chains > 1 && low.is_finite() && low > q.chains as f64
}

/// Relation `mlp-bound`: where a speed-up exceeds its chain count (beyond
/// its interval), the single chase every speed-up is relative to ran
/// under slower conditions than the parallel ones (a share of memory that
/// moved between them: a simulated guest's 16 chains read 18.8x), so every
/// speed-up of the table is inflated by it: the table is withdrawn but
/// for the single chase.
pub fn mlp_bound(p: &mut Profile) -> Vec<Note> {
    let Some(m) = p.memory.as_mut() else {
        return Vec::new();
    };
    let Some(bad) = m.mlp.iter().find(|q| over_bound(q)).cloned() else {
        return Vec::new();
    };
    m.mlp.retain(|q| q.chains == 1);
    vec![note(
        "consistency",
        "mlp-bound",
        format!(
            "consistency: {} chains ran {:.1}x as fast as one, more than {} independent chains can (each still \
             waits one memory latency a load): the single chase every speed-up is relative to ran under \
             slower conditions, so the table's speed-ups are withdrawn",
            bad.chains, bad.speedup, bad.chains
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::MemoryLatency;

    fn pt(chains: u32, speedup: f64) -> MlpPoint {
        MlpPoint {
            chains,
            ns_per_load: 80.0 / speedup,
            speedup,
            ns_per_load_ci95: None,
            speedup_ci95: Some([speedup * 0.99, speedup * 1.01]),
        }
    }

    fn profile(s16: f64) -> Profile {
        Profile {
            memory: Some(MemoryLatency {
                mlp: vec![pt(1, 1.0), pt(2, 1.9), pt(16, s16)],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// 16 chains at 18.8x: the table is withdrawn; at 14x it stands.
    #[test]
    fn a_speedup_past_its_chain_count_withdraws_the_table() {
        let mut p = profile(18.8);
        let n = mlp_bound(&mut p);
        assert_eq!(n[0].code, "consistency.mlp-bound");
        assert_eq!(p.memory.as_ref().unwrap().mlp.len(), 1);
        let mut p = profile(14.0);
        assert!(mlp_bound(&mut p).is_empty());
        assert_eq!(p.memory.as_ref().unwrap().mlp.len(), 3);
    }
}

//! How busy the *other* CPUs were while a probe ran, from `/proc/stat`.
//!
//! A guest's vCPUs may be SMT siblings on the host without the guest being
//! told: they then share L1, L2 and the TLBs, so whatever runs on the other
//! one takes a share of them and the levels hwcal sees read smaller. The
//! probes record how busy the others were so the analysis can flag such
//! runs.

use hwcal_model::{RawCurve, RawPoint};

/// Busy and total jiffies per CPU.
fn sample() -> Vec<(usize, u64, u64)> {
    let Ok(s) = std::fs::read_to_string("/proc/stat") else {
        return Vec::new();
    };
    s.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let cpu = it.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
            let v: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
            let total: u64 = v.iter().take(8).sum();
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            Some((cpu, total - idle, total))
        })
        .collect()
}

/// Start watching; `finish` gives the busy fraction of every CPU but
/// `own` over the interval (0 with no data).
pub struct Watch {
    start: Vec<(usize, u64, u64)>,
    own: Option<usize>,
}

impl Watch {
    pub fn start(own: Option<usize>) -> Self {
        Watch { start: sample(), own }
    }

    pub fn finish(&self) -> f64 {
        let end = sample();
        let (mut busy, mut total) = (0u64, 0u64);
        for &(cpu, b1, t1) in &end {
            if Some(cpu) == self.own {
                continue;
            }
            if let Some(&(_, b0, t0)) = self.start.iter().find(|s| s.0 == cpu) {
                busy += b1.saturating_sub(b0);
                total += t1.saturating_sub(t0);
            }
        }
        if total == 0 {
            0.0
        } else {
            busy as f64 / total as f64
        }
    }

    /// The measurement as a raw curve (one point: x = 0, y = fraction).
    pub fn curve(&self, id: &str) -> RawCurve {
        RawCurve {
            id: id.into(),
            x_label: "-".into(),
            y_label: "busy fraction of the other CPUs during the sweep".into(),
            points: vec![RawPoint {
                x: 0.0,
                y: self.finish(),
                ..Default::default()
            }],
        }
    }
}

//! Repeated calibrations (`hwcal run --repeat N --warmup W`): hyperfine's
//! `--runs` and `--warmup` for a whole calibration. One run decides nothing
//! on a shared machine; N runs give each figure a median and a spread, and
//! two batches can be compared by a rank test over their runs
//! (`hwcal_analysis::compare::compare_batches`).
//!
//! The warm-up runs are measured and thrown away (the first calibration
//! after boot pays for page-cache misses, frequency ramps and the kernel's
//! first touches of the buffers). Each kept run is stamped with the batch
//! ([`hwcal_model::Batch`]) and handed to `keep` as soon as it is done, so
//! a batch cut short by an error or a signal keeps what it measured.

use crate::calibrate::{calibrate, now_unix, Header, Observer};
use crate::error::Result;
use crate::probe::{Machine, ProbeEntry, RunConfig};
use hwcal_model::{Batch, Profile};

/// How many runs to make, and how many to throw away first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    pub runs: u32,
    pub warmup: u32,
}

/// What one kept run of a batch was: its profile and how long it took.
pub struct BatchRun {
    pub profile: Profile,
    pub secs: f64,
}

/// Run `repeat.warmup` calibrations and forget them, then `repeat.runs`
/// kept ones, each stamped with the batch (when there is more than one)
/// and passed to `keep` before the next starts; returns the kept runs.
/// `header` makes each run's header (its own start time);
/// `announce(k, n, warm)` is told before each calibration.
#[allow(clippy::too_many_arguments)]
pub fn calibrate_batch(
    machine: &dyn Machine,
    config: &RunConfig,
    probes: &[ProbeEntry],
    repeat: Repeat,
    header: &dyn Fn() -> Header,
    observer: &dyn Observer,
    announce: &mut dyn FnMut(u32, u32, bool),
    keep: &mut dyn FnMut(&Profile) -> Result<()>,
) -> Result<Vec<BatchRun>> {
    let runs = repeat.runs.max(1);
    let id = format!("{:x}-{:x}", now_unix(), std::process::id());
    for k in 1..=repeat.warmup {
        announce(k, repeat.warmup, true);
        calibrate(machine, config, probes, header(), observer)?;
    }
    let mut out = Vec::with_capacity(runs as usize);
    for k in 1..=runs {
        announce(k, runs, false);
        let start = std::time::Instant::now();
        let mut profile = calibrate(machine, config, probes, header(), observer)?;
        if runs > 1 {
            profile.batch = Some(Batch {
                id: id.clone(),
                index: k,
                runs,
                warmup: repeat.warmup,
            });
        }
        keep(&profile)?;
        out.push(BatchRun {
            profile,
            secs: start.elapsed().as_secs_f64(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    // The synthetic machine (feature `synthetic`, on whenever the
    // workspace's tests are built together) measures nothing.
    #[cfg(feature = "synthetic")]
    #[test]
    fn a_batch_stamps_its_runs_and_keeps_each_as_it_is_done() {
        use super::*;
        use crate::synthetic::Synthetic;
        let probes = crate::registry::select(crate::registry::probes(), &["clock".into()], &[]).unwrap();
        let config = RunConfig {
            probes: vec!["clock".into()],
            ..Default::default()
        };
        let mut kept = 0;
        let mut told = Vec::new();
        let runs = calibrate_batch(
            &Synthetic,
            &config,
            &probes,
            Repeat { runs: 3, warmup: 1 },
            &|| Header::now("hwcal run --repeat 3".into(), None),
            &crate::probe::Silent,
            &mut |k, n, warm| told.push((k, n, warm)),
            &mut |_| {
                kept += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(kept, 3);
        assert_eq!(told, [(1, 1, true), (1, 3, false), (2, 3, false), (3, 3, false)]);
        let ids: Vec<_> = runs.iter().map(|r| r.profile.batch.clone().unwrap()).collect();
        assert!(ids
            .iter()
            .all(|b| b.id == ids[0].id && b.runs == 3 && b.warmup == 1));
        assert_eq!(ids.iter().map(|b| b.index).collect::<Vec<_>>(), [1, 2, 3]);
        // One run is no batch.
        let one = calibrate_batch(
            &Synthetic,
            &config,
            &probes,
            Repeat { runs: 1, warmup: 0 },
            &|| Header::now("hwcal run".into(), None),
            &crate::probe::Silent,
            &mut |_, _, _| {},
            &mut |_| Ok(()),
        )
        .unwrap();
        assert!(one[0].profile.batch.is_none());
    }
}

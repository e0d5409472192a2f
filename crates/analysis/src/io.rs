//! Notes on an I/O job's figures: what the page cache did to them and
//! whether there were enough samples for the percentiles.

use hwcal_model::{Note, Verdict};

/// The notes on a finished job: `direct` (O_DIRECT), whether it `reads`
/// and `writes`, and how many I/Os completed.
pub fn notes(direct: bool, reads: bool, writes: bool, ios: u64) -> Vec<Note> {
    let mut n = Vec::new();
    if !direct && reads {
        n.push(Note::info(
            "io",
            "buffered_reads",
            "io: buffered reads; the file's pages are dropped from the page cache before the run and at the \
             start of every pass over it (like fio's invalidate=1), so the figures are the device's behind \
             the kernel's readahead, not memory's. Use --direct to measure the device alone.",
        ));
    }
    if !direct && writes {
        n.push(Note::info(
            "io",
            "buffered_writes",
            "io: buffered writes complete into the page cache; write-back to the device is started at \
             each pass over the file and throttles the writer when too much is dirty, but the last pages \
             written are not flushed before the clock stops (no fsync, like fio's default). Use --direct \
             to measure the device alone.",
        ));
    }
    if ios < 100 {
        n.push(Note::warning(
            "io",
            "few_samples",
            format!("io: only {ios} I/Os completed; percentiles from so few samples are rough"),
        ));
    }
    n
}

/// An I/O job's verdict, from the rates of its reporting intervals: noisy
/// when they moved by more than [`crate::mem::NOISY_REL`] (MAD about
/// their median, the rule a streaming rate is judged by), when there were
/// under five intervals to judge by, or when under 100 I/Os completed
/// (the percentiles are rough).
pub fn verdict(iops_intervals: &[f64], ios: u64) -> Verdict {
    let v: Vec<f64> = iops_intervals.iter().copied().filter(|x| x.is_finite()).collect();
    let m = crate::stats::median(&v);
    let steady = v.len() >= 5 && m > 0.0 && crate::stats::mad(&v) / m <= crate::mem::NOISY_REL;
    if steady && ios >= 100 {
        Verdict::Ok
    } else {
        Verdict::Noisy
    }
}

/// A 95% interval of a job's rate (`iops`, over the whole wall time) from
/// its intervals' rates: ±1.96 standard errors of their mean, about it.
pub fn iops_ci95(iops_intervals: &[f64], iops: f64) -> Option<[f64; 2]> {
    let v: Vec<f64> = iops_intervals.iter().copied().filter(|x| x.is_finite()).collect();
    crate::stats::mean_ci95(&v, iops)
}

#[cfg(test)]
mod tests {
    use super::{iops_ci95, notes, verdict};
    use hwcal_model::Verdict;

    #[test]
    fn a_steady_job_is_ok_and_a_wandering_or_short_one_noisy() {
        let steady = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1000.0];
        assert_eq!(verdict(&steady, 6000), Verdict::Ok);
        let ci = iops_ci95(&steady, 1000.0).unwrap();
        assert!(ci[0] < 1000.0 && ci[1] > 1000.0 && ci[1] - ci[0] < 20.0, "{ci:?}");
        let wandering = [1000.0, 1400.0, 700.0, 1200.0, 800.0, 1000.0];
        assert_eq!(verdict(&wandering, 6000), Verdict::Noisy);
        assert_eq!(verdict(&steady[..3], 3000), Verdict::Noisy, "too few intervals");
        assert_eq!(verdict(&steady, 50), Verdict::Noisy, "too few I/Os");
    }

    #[test]
    fn buffered_and_short_jobs_are_noted() {
        assert!(notes(true, true, false, 1000).is_empty());
        let n = notes(false, true, true, 10);
        assert_eq!(n.len(), 3);
        assert!(n[0].text.starts_with("io: buffered reads"));
        assert!(n[1].text.starts_with("io: buffered writes"));
        assert_eq!(n[2].code, "io.few_samples");
        assert_eq!(
            n[2].text,
            "io: only 10 I/Os completed; percentiles from so few samples are rough"
        );
    }
}

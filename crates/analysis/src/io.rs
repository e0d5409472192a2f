//! Notes on an I/O job's figures: what the page cache did to them and
//! whether there were enough samples for the percentiles.

use hwcal_model::Note;

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

#[cfg(test)]
mod tests {
    use super::notes;

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

//! The cache analysis's note catalogue (every code a note may carry, with
//! what it says), the raw curve ids of the line tests, and the one
//! formatter every note's sizes go through.

/// Every code of a cache analysis note (`{N}`: the level), with what it
/// says. Codes are stable: scripts match them; a new kind of note gets a
/// new code, an old code keeps its meaning (README "Note codes").
pub const NOTE_CODES: [(&str, &str); 54] = [
    (
        "cache.no-plateau",
        "no latency plateau in the curve: no level reported",
    ),
    (
        "cache.l{N}-size-lower-bound",
        "the level's plateau runs to the largest size measured",
    ),
    (
        "cache.l{N}-short-shared",
        "effective size below nominal, the cache shared beyond this CPU",
    ),
    (
        "cache.l{N}-short-private",
        "effective size below nominal, the cache private (level marked noisy where judged)",
    ),
    (
        "cache.l{N}-over-nominal",
        "effective size above nominal (a private cache: level marked noisy, one core cannot hold more)",
    ),
    (
        "cache.l{N}-colour-fit",
        "size from a page-colour fit of the level's edge (4 KiB pages), with the most it was seen to hold",
    ),
    (
        "cache.l{N}-line-nominal-disagree",
        "measured line size differs from the nominal one",
    ),
    (
        "cache.l{N}-line-prefetched",
        "the dependent-pair test read a larger line than the flush granule",
    ),
    ("cache.l{N}-line-unmeasured", "no line size for the level"),
    (
        "cache.l{N}-miss-disagree",
        "no miss latency: the idle-gap chase and the sweep's plateaus put the step more than twice apart",
    ),
    (
        "cache.l{N}-step-unmeasured",
        "no miss latency or replace time: a stated level past it was not found, the step goes to memory",
    ),
    (
        "cache.l{N}-line-unconfirmed",
        "only the pair test measured the line, and it over-read elsewhere in the run or contradicts the stated line",
    ),
    (
        "cache.l{N}-no-plateau",
        "a nominal level without a plateau of its own; at most this much capacity added",
    ),
    (
        "cache.tlb-share",
        "chase on base pages (4, 16 or 64 KiB): the TLB's share of memory latency",
    ),
    (
        "cache.tlb-share-overshoot",
        "the TLB's modelled share exceeds the sweep's own latency: not taken out, every level noisy",
    ),
    (
        "cache.no-memory",
        "the sweep ended before memory latency; no memory figure",
    ),
    (
        "cache.busy",
        "the machine was busy during the sweep (figures marked noisy)",
    ),
    (
        "cache.busy-merged",
        "a busy sweep showed more plateaus than the machine states levels: the nearest taken as one",
    ),
    (
        "cache.neighbours-busy",
        "the other CPUs were busy (figures marked noisy)",
    ),
    (
        "cache.huge-pages-partial",
        "the chase buffer was not all huge pages as the TLB saw them",
    ),
    (
        "cache.cycles-not-whole",
        "L1 latency is not a whole number of cycles: cycle figures uncertain, L1 marked noisy",
    ),
    (
        "cache.l{N}-unstated",
        "more levels found than stated, and this one (past the stated private levels) not shown again by the idle-gap chase, or ending where the TLB's reach ends: marked noisy",
    ),
    (
        "cache.memory-climbing",
        "the memory plateau's top point reads above its figure beyond both intervals: latency still climbs there, memory marked noisy",
    ),
    (
        "cache.unstated-merged",
        "a plateau past the stated levels, as slow as memory and less than 1.5x below it, taken as memory",
    ),
    (
        "cache.l1-edge-overheld",
        "L1 read as holding more than where it began to climb: a level between without a plateau, L1 marked noisy",
    ),
    (
        "cache.l{N}-replace-unsettled",
        "no replace time: the next cache level's plateau is in doubt (scatter over 5%, or most points never settled)",
    ),
    (
        "cache.l{N}-stated-contradicted",
        "a private level on base pages whose edge no cache of the stated size and ways makes under any replacement: marked noisy",
    ),
    (
        "cache.l{N}-colour-through-missing",
        "the last level sized by a page-colour fit of an edge that runs to memory through a stated level not found: marked noisy",
    ),
    (
        "cache.mlp-superlinear",
        "a memory-level-parallelism speed-up above its chain count beyond its interval: the table marked noisy",
    ),
    (
        "cache.l{N}-size-unconfirmed",
        "a level past L1 read on base pages with neither its size nor its ways stated: no second figure confirms the size, marked noisy",
    ),
    (
        "cache.l{N}-numbering",
        "a level nearer the stated size of the level below, which was read well short: possibly that level found one number too high; or, with no cache stated, a level above one in doubt; marked noisy",
    ),
    (
        "cache.l{N}-sloping",
        "the level's plateau still slopes where it reads its level (over 5% across the octave there) and its cold laps do not give the latency: its median is no one latency, marked noisy",
    ),
    (
        "cache.l{N}-cold",
        "the level's plateau slopes (the level below serving part of a steady chase): its latency is read from one lap right after the levels below were scrubbed",
    ),
    (
        "cache.l{N}-sets",
        "the level's size counted by eviction sets on base pages: page colours × ways × the page (or the colours not sorted in time estimated from the share of the pool the sorted ones hold), in place of the sweep's spread edge",
    ),
    (
        "cache.l{N}-sets-unread",
        "a level the sweep showed only a climb for, counted by its eviction sets, whose cold laps do not give its latency: marked noisy",
    ),
    (
        "cache.l{N}-sets-disagree",
        "the eviction sets counted the level (named by the latency of its hits, else the first past L1) at more than twice the size the sweep read for it, and a level of its colours and ways does not explain the edge: two measurements of one level disagree, marked noisy",
    ),
    (
        "cache.l{N}-sets-latency",
        "a level sized by eviction sets whose latency the search's own reading of its hits (the target's lines pushed out of L1 alone) contradicts by more than 10%: marked noisy",
    ),
    (
        "cache.l{N}-within-count",
        "a plateau after the level the eviction sets counted that holds no more than the count: that level's edge read as a level of its own, marked noisy",
    ),
    (
        "cache.l{N}-edge-moved",
        "the level below a level placed by its eviction-set count reads a size against that level and another against the level above it, apart by more than a size is read to: its edge is not pinned, marked noisy",
    ),
    (
        "cache.sets-unused",
        "the eviction-set search ran and sizes no level: it could not sort the pool (noise, a thrash-resistant policy, the L1 deciding, time), or counted a size no level of the sweep is near",
    ),
    (
        "cache.l{N}-step-cold",
        "a step beside a level whose latency the cold laps gave: its replace time is taken again from that latency; its miss latency (the idle-gap chase, a steady chase too) is not stated",
    ),
    (
        "cache.l{N}-cold-refused",
        "the level's plateau slopes and its cold laps could not stand in for it (they disagree, read below the steady chase or halfway to the next level)",
    ),
    (
        "cache.l{N}-over-shared",
        "a level read larger than the shared cache stated for it: not that cache (a level below left no plateau, or memory's climb), marked noisy",
    ),
    (
        "cache.l{N}-step-unconfirmed",
        "no miss latency or replace time: the next level's plateau does not show it is flat (fewer than three points)",
    ),
    (
        "cache.l{N}-step-unranked",
        "no miss latency or replace time: the last level steps to memory, but a level below it is in doubt (if no level, this one is the level below its number)",
    ),
    (
        "cache.l{N}-latency-disagree",
        "the level's plateau and the idle-gap chase's point on it, two measurements of its latency, disagree beyond both intervals: marked noisy",
    ),
    (
        "cache.l{N}-bracketed",
        "the level's size is only bracketed: the most it was seen to hold and where its curve began to climb (L1, or huge pages) lie further apart than a size is measured to, with no sweep point between (level marked noisy)",
    ),
    (
        "cache.l{N}-latency-clock",
        "the level's plateau and the idle-gap chase's point on it disagree in ns but agree in cycles (each sample converted with the clock measured alongside it): the core clock moved between the two; the level stands, its ns at the sweep's clock",
    ),
    (
        "cache.l{N}-served-between",
        "past the level's edge the curve reads faster than the levels found can serve under any policy: a level between unresolved, or the level larger (level marked noisy)",
    ),
    (
        "cache.l{N}-latency-unresolved",
        "the levels below may still serve enough of the level's plateau (by their capacity and by the plateau's climb) to put it more than 5% under the level's latency (level marked noisy)",
    ),
    (
        "cache.l{N}-tlb-unmeasured",
        "the level is read past the reach of a TLB the machine states and the TLB probe did not find (where a TLB level it found is not ok): that TLB's misses stay in its latency, marked noisy",
    ),
    (
        "cache.l{N}-tlb-share-sensitive",
        "the level's latency is read inside a TLB level's edge: TLB entries anywhere on their steps move the correction by more than 5% of it (level marked noisy)",
    ),
    (
        "cache.l{N}-overheld",
        "L1, or a level past it on huge pages, read as holding more than where its curve began to climb: a level between without a plateau, the level marked noisy",
    ),
    (
        "cache.l{N}-tlb-share-unconfirmed",
        "the TLB misses taken out of the level's latency come from TLB figures that are not ok, and are more than the latency is resolved to: marked noisy",
    ),
];

/// The patterns of [`NOTE_CODES`] (what a re-analysis replaces).
pub fn note_patterns() -> Vec<&'static str> {
    NOTE_CODES.iter().map(|c| c.0).collect()
}

/// Raw curve id of the flush-granule test of cache level `level`.
pub fn flush_id(level: u32) -> String {
    hwcal_model::curve::cache_flush(level)
}

/// Raw curve id of level `level`'s cold laps.
pub fn cold_id(level: u32) -> String {
    hwcal_model::curve::cache_cold(level)
}

/// Raw curve id of a line-size test (`test` 1 or 2, forward or backward).
pub fn line_id(test: u32, forward: bool) -> String {
    hwcal_model::curve::cache_line(test, forward)
}

/// A size for a note: the one formatter every output uses.
pub(super) fn size_text(b: f64) -> String {
    hwcal_model::human_bytes(b.max(0.0).round() as u64)
}

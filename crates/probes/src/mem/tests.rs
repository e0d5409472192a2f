//! Tests of the memory probe: the kernels, both cycles, the permutation,
//! plan validation, short timed runs, the split and the mount parser.

use super::kernels::{copy_kernel, read_kernel, write_kernel};
use super::*;
use crate::buffer::{Backing, Buffer};
use crate::chase;
use hwcal_stats::SplitMix64;

#[test]
fn kernels_read_write_copy() {
    let b = Buffer::new(64 * 1024, Backing::Small).unwrap();
    let isa = isa();
    for k in [isa, Isa::Scalar] {
        // SAFETY: the buffer is ours, aligned, 64 KiB (multiple of GRAIN).
        unsafe {
            write_kernel(k, b.as_ptr(), 32 * 1024, 0x0101_0101_0101_0101, false);
            write_kernel(k, b.as_ptr().add(32 * 1024), 32 * 1024, 7, true);
            // Reading an even number of identical lines xors to zero.
            assert_eq!(read_kernel(k, b.as_ptr(), 32 * 1024), 0);
            copy_kernel(k, b.as_ptr(), b.as_ptr().add(32 * 1024), 32 * 1024, false);
            assert_eq!(*(b.as_ptr().add(40 * 1024) as *const u64), 0x0101_0101_0101_0101);
            write_kernel(k, b.as_ptr(), 256, 0, false);
            *(b.as_ptr() as *mut u64) = 5;
            assert_eq!(read_kernel(k, b.as_ptr(), 256), 5);
        }
    }
}

#[test]
fn ring_is_one_cycle_with_spread_entries() {
    let b = Buffer::new(64 * 1024, Backing::Small).unwrap();
    let e = build_ring(&b, 64 * 1024, 4, 3, &[]).unwrap();
    assert_eq!(e.len(), 4);
    // 1024 lines: 1024 loads (a multiple of 16) come back to the start.
    for &s in &e {
        // SAFETY: `s` is an entry of the ring just built in `b`.
        assert_eq!(unsafe { chase::chase(s, 1024) }, s);
    }
    // Entry 1 is 256 steps after entry 0.
    // SAFETY: as above.
    assert_eq!(unsafe { chase::chase(e[0], 256) }, e[1]);
    assert!(build_ring(&b, 64, 1, 1, &[]).is_err());
    // Split among workers (unpinned CPUs are fine for the test: use the
    // ones we may run on), and an n that is not a power of two.
    let cpus = hwcal_harness::pin::allowed_cpus();
    let n = 1000;
    let e = build_ring(&b, n * LINE, 1, 5, &cpus).unwrap();
    let mut seen = vec![false; n];
    let mut p = e[0];
    for _ in 0..n {
        let slot = (p - b.as_ptr() as usize) / LINE;
        assert!(slot < n && !seen[slot]);
        seen[slot] = true;
        // SAFETY: p is a slot address inside the buffer (checked above).
        p = unsafe { *(p as *const usize) };
    }
    assert_eq!(p, e[0]);
}

#[test]
fn the_local_ring_visits_every_even_line_window_by_window() {
    // Three windows of 256 pages of 4 KiB, and a page left over.
    let page = 4096;
    let size = (3 * LOCAL_WINDOW_PAGES + 1) * page;
    let b = Buffer::new(size, Backing::Small).unwrap();
    // The full ring first: the local one must leave its words alone.
    let e = build_ring(&b, size, 1, 3, &[]).unwrap();
    let cpus = hwcal_harness::pin::allowed_cpus();
    let start = build_local_ring(&b, size, page, 9, &cpus).unwrap();
    let base = b.as_ptr() as usize;
    let per_window = LOCAL_WINDOW_PAGES * page / (2 * LINE);
    let n = 3 * per_window;
    let mut seen = vec![false; size / LINE];
    let (mut p, mut pages_of_window) = (start, std::collections::BTreeSet::new());
    for step in 0..n {
        let off = p - base;
        assert_eq!(off % LINE, LOCAL_OFFSET, "step {step}");
        let line = off / LINE;
        assert!(line.is_multiple_of(2) && line < 3 * LOCAL_WINDOW_PAGES * page / LINE && !seen[line]);
        seen[line] = true;
        // A window's pages are spread 3 apart (page % 3 is its window).
        pages_of_window.insert((off / page) % 3);
        if (step + 1) % per_window == 0 {
            assert_eq!(pages_of_window.len(), 1, "one window at a time");
            pages_of_window.clear();
        }
        // SAFETY: p is a word of the local ring inside `b` (checked above).
        p = unsafe { *(p as *const usize) };
    }
    assert_eq!(p, start, "one cycle through every even line");
    // The full ring is intact.
    // SAFETY: `e[0]` is an entry of the full ring in `b`.
    assert_eq!(unsafe { chase::chase(e[0], (size / LINE) as u64) }, e[0]);
    // Fewer than two windows: no local ring.
    assert!(build_local_ring(&b, LOCAL_WINDOW_PAGES * page, page, 1, &[]).is_none());
}

#[test]
fn perm_is_a_bijection_with_its_inverse() {
    let mut rng = SplitMix64::new(11);
    for n in [2u64, 3, 5, 16, 17, 100, 1023, 4096, 5000] {
        let p = Perm::new(n, &mut rng);
        let mut seen = vec![false; n as usize];
        for k in 0..n {
            let s = p.apply(k);
            assert!(s < n && !seen[s as usize], "n={n}");
            seen[s as usize] = true;
            assert_eq!(p.invert(s), k);
        }
    }
    // Consecutive positions land far apart (no stride for a prefetcher).
    let p = Perm::new(1 << 20, &mut rng);
    let near = (0..1000u64)
        .filter(|&k| p.apply(k).abs_diff(p.apply(k + 1)) < 64)
        .count();
    assert!(near < 5, "{near}");
}

#[test]
fn validation_rejects_races_and_bad_ranges() {
    let b = Buffer::new(64 * 1024, Backing::Small).unwrap();
    let r = |off, len| Job {
        cpu: None,
        work: Work::Read { buf: &b, off, len },
    };
    let w = |off, len| Job {
        cpu: None,
        work: Work::Write {
            buf: &b,
            off,
            len,
            nontemporal: false,
        },
    };
    assert!(validate(&[r(0, 4096), r(0, 4096)]).is_ok());
    assert!(validate(&[w(0, 4096), w(4096, 4096)]).is_ok());
    assert!(validate(&[w(0, 4096), r(0, 4096)]).is_err());
    assert!(validate(&[r(0, 100)]).is_err());
    assert!(validate(&[r(60 * 1024, 8192)]).is_err());
    let c = Job {
        cpu: None,
        work: Work::Copy {
            buf: &b,
            src: 0,
            dst: 1024,
            len: 2048,
            nontemporal: false,
        },
    };
    assert!(validate(&[c]).is_err());
}

#[test]
fn short_runs_give_slices() {
    let b = Buffer::new(256 * 1024, Backing::Small).unwrap();
    let starts = build_ring(&b, 128 * 1024, 1, 9, &[]).unwrap();
    let plan = RunTiming {
        duration_ns: 30e6,
        slice_ns: 10e6,
        warm_up_ms: 1,
    };
    let jobs = [
        Job {
            cpu: None,
            work: Work::Chase {
                buf: &b,
                start: starts[0],
            },
        },
        Job {
            cpu: None,
            work: Work::Copy {
                buf: &b,
                src: 128 * 1024,
                dst: 192 * 1024,
                len: 64 * 1024,
                nontemporal: false,
            },
        },
    ];
    // The chase reads the whole buffer, the copy writes part of it.
    assert!(run(&jobs, &plan).is_err());
    let b2 = Buffer::new(128 * 1024, Backing::Small).unwrap();
    let jobs = [
        jobs[0],
        Job {
            cpu: None,
            work: Work::Copy {
                buf: &b2,
                src: 0,
                dst: 64 * 1024,
                len: 64 * 1024,
                nontemporal: false,
            },
        },
    ];
    let runs = run(&jobs, &plan).unwrap();
    assert_eq!(runs.len(), 2);
    // Four chains around one ring.
    let e = build_ring(&b2, 64 * 1024, 4, 2, &[]).unwrap();
    let mut starts = [0; MAX_CHAINS];
    starts[..4].copy_from_slice(&e);
    let chains = |k| Job {
        cpu: None,
        work: Work::Chains { buf: &b2, starts, k },
    };
    assert!(validate(&[chains(3)]).is_err());
    let r = run(&[chains(4)], &plan).unwrap();
    assert!(r[0].slices.iter().all(|s| s.ops > 0 && s.ops % 4 == 0));
    assert_eq!(r[0].work, "chains");
    for r in &runs {
        assert!(!r.slices.is_empty());
        assert!(r.slices.iter().all(|s| s.ns > 0.0 && s.ops > 0));
        // The last slice stops at the deadline, not after another full
        // run; the bound is loose because on a loaded 2-core machine the
        // thread can be kept off the CPU for tens of ms inside a slice.
        assert!(
            r.slices.last().unwrap().ns < 1e9,
            "the last slice ends near the deadline"
        );
        assert!(r
            .slices
            .iter()
            .all(|s| s.cpu_ns.is_nan() || (0.0..=s.ns).contains(&s.cpu_ns)));
        // At least one slice's worth: on a loaded 2-core machine a
        // thread can be kept off the CPU for most of a 30 ms run.
        let ns: f64 = r.slices.iter().map(|s| s.ns).sum();
        assert!(ns > 0.9 * plan.slice_ns && ns < 2e9, "{ns}");
    }
}

#[test]
fn splitting_and_mounts() {
    assert_eq!(split(4096, 2), vec![(0, 2048), (2048, 2048)]);
    assert_eq!(split(1000, 1), vec![(0, 768)]);
    let m = "none /dev/hugepages hugetlbfs rw 0 0\nproc /proc proc rw 0 0\n";
    assert_eq!(
        parse_hugetlbfs_mounts(m),
        vec![std::path::PathBuf::from("/dev/hugepages")]
    );
}

//! Tests of the I/O probe: the cursor's offsets, the job's checks, and a
//! real test file created, filled, run on with every engine and removed.

use super::cursor::{Cursor, NextIo};
use super::file::seed_from_time;
use super::run::explain_direct;
use super::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn job(pattern: Pattern, threads: u32, time: bool) -> IoJob {
    IoJob {
        pattern,
        rwmix_read: 70,
        bs: 4096,
        size: 4096 * 1000,
        direct: false,
        engine: Engine::Psync,
        iodepth: 1,
        threads,
        time_limit: time.then(|| Duration::from_secs(1)),
        cpus: vec![],
    }
}

#[test]
fn sequential_threads_cover_disjoint_slices_once() {
    let j = job(Pattern::Read, 3, false);
    let mut seen = vec![0u32; 1000];
    for tid in 0..3 {
        let mut c = Cursor::new(&j, tid, 1);
        let mut prev = None;
        while let Some(NextIo {
            off,
            write: w,
            new_pass,
        }) = c.next()
        {
            assert!(!new_pass, "size-bound runs make one pass");
            assert!(!w && off % 4096 == 0);
            if let Some(p) = prev {
                assert_eq!(off, p + 4096, "sequential");
            }
            prev = Some(off);
            seen[(off / 4096) as usize] += 1;
        }
    }
    assert!(seen.iter().all(|&s| s == 1));
}

#[test]
fn time_bound_sequential_wraps_in_its_slice() {
    let j = job(Pattern::Write, 2, true);
    let mut c = Cursor::new(&j, 1, 1);
    let ios: Vec<NextIo> = (0..1001).map(|_| c.next().unwrap()).collect();
    let offs: Vec<u64> = ios.iter().map(|io| io.off / 4096).collect();
    assert!(offs.iter().all(|&b| (500..1000).contains(&b)));
    assert_eq!(offs[0], 500);
    assert_eq!(offs[500], 500);
    // A new pass starts exactly where the slice wraps.
    let passes: Vec<usize> = ios
        .iter()
        .enumerate()
        .filter(|(_, io)| io.new_pass)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(passes, vec![500, 1000]);
    assert_eq!(c.pass_range(), (500 * 4096, 500 * 4096));
}

#[test]
fn random_offsets_are_aligned_uniform_and_mixed() {
    let j = job(Pattern::RandRw, 1, true);
    let mut c = Cursor::new(&j, 0, 42);
    let mut hits = vec![0u32; 10];
    let mut writes = 0;
    let n = 100_000;
    for _ in 0..n {
        let NextIo { off, write: w, .. } = c.next().unwrap();
        assert_eq!(off % 4096, 0);
        assert!(off < 4096 * 1000);
        hits[(off / 4096 / 100) as usize] += 1;
        writes += w as u32;
    }
    // 10 equal bins: each within 10% of n/10; writes ~30%.
    assert!(hits.iter().all(|&h| (9_000..11_000).contains(&h)), "{hits:?}");
    assert!((27_000..33_000).contains(&writes), "{writes}");
}

#[test]
fn direct_einval_is_explained() {
    let p = Path::new("/x/f");
    let einval = || IoError::Os("read".into(), std::io::Error::from_raw_os_error(libc::EINVAL));
    match explain_direct(einval(), true, 512, p) {
        IoError::Refused(m) => assert!(m.contains("O_DIRECT") && m.contains("512"), "{m}"),
        e => panic!("{e:?}"),
    }
    // Without O_DIRECT, or another errno, the error stays as it is.
    assert!(matches!(explain_direct(einval(), false, 512, p), IoError::Os(..)));
    let eio = IoError::Os("read".into(), std::io::Error::from_raw_os_error(libc::EIO));
    assert!(matches!(explain_direct(eio, true, 512, p), IoError::Os(..)));
}

#[test]
fn patterns() {
    assert!(Pattern::RandRw.random() && Pattern::RandRw.mixed() && Pattern::RandRw.writes());
    assert!(!Pattern::Read.writes() && !Pattern::RandRead.writes());
    assert_eq!(Pattern::Read.read_pct(10), 100);
    assert_eq!(Pattern::Write.read_pct(90), 0);
    assert_eq!(Pattern::ReadWrite.read_pct(90), 90);
}

fn tmpdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "hwcal-io-unit-{}-{}",
        std::process::id(),
        seed_from_time()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn create_fill_run_and_remove() {
    let dir = tmpdir();
    let stop = AtomicBool::new(false);
    let mut calls = 0;
    let tf = TestFile::create(&dir, 1 << 20, false, &stop, &mut |_, _| calls += 1).unwrap();
    assert_eq!(std::fs::metadata(tf.path()).unwrap().len(), 1 << 20);
    assert!(calls >= 1);
    for engine in [Engine::Sync, Engine::Psync, Engine::IoUring] {
        for pattern in [Pattern::Read, Pattern::RandWrite, Pattern::RandRw] {
            let mut j = job(pattern, 2, false);
            j.size = 1 << 20;
            j.engine = engine;
            j.iodepth = if engine == Engine::IoUring { 4 } else { 1 };
            let r = match run(&j, &tf, &stop, &mut |_, _| {}) {
                Err(IoError::Refused(m)) if engine == Engine::IoUring => {
                    eprintln!("skipping io_uring: {m}");
                    continue;
                }
                r => r.unwrap(),
            };
            // Size-bound: exactly one pass of 256 blocks split over 2 threads.
            assert_eq!(r.ios(), 256, "{engine:?} {pattern:?}");
            assert_eq!(r.bytes(), 1 << 20);
            assert_eq!(r.total_hist().count(), 256);
            assert!(r.wall_ns > 0.0);
        }
    }
    let p = tf.path().to_path_buf();
    drop(tf);
    assert!(!p.exists());
    std::fs::remove_dir(&dir).unwrap();
}

#[test]
fn stop_flag_interrupts_fill_and_removes_file() {
    let dir = tmpdir();
    let stop = AtomicBool::new(true);
    let r = TestFile::create(&dir, 8 << 20, false, &stop, &mut |_, _| {});
    assert!(matches!(r, Err(IoError::Interrupted)));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    std::fs::remove_dir(&dir).unwrap();
}

#[test]
fn no_space_is_refused_before_writing() {
    let dir = tmpdir();
    let stop = AtomicBool::new(false);
    let r = TestFile::create(&dir, 1 << 60, false, &stop, &mut |_, _| {});
    assert!(
        matches!(r, Err(IoError::Refused(ref m)) if m.contains("no space")),
        "{r:?}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    std::fs::remove_dir(&dir).unwrap();
}

#[test]
fn leftovers_of_a_killed_run_are_removed_and_nothing_else() {
    let d = std::env::temp_dir().join(format!("hwcal-io-leftover-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir(&d).unwrap();
    // A process id no process has: the kernel's limit is below 2^22.
    let dead = d.join(".hwcal-io-4194303-1f.tmp");
    std::fs::write(&dead, vec![0u8; 4096]).unwrap();
    // A live process's file (this one's parent), a link at a matching name,
    // and files that only look alike stay.
    let live = d.join(format!(
        ".hwcal-io-{}-2a.tmp",
        std::os::unix::process::parent_id()
    ));
    std::fs::write(&live, b"x").unwrap();
    let target = d.join("precious");
    std::fs::write(&target, b"keep").unwrap();
    std::os::unix::fs::symlink(&target, d.join(".hwcal-io-4194302-3b.tmp")).unwrap();
    for other in [
        ".hwcal-io-4194303-zz.tmp",
        "hwcal-io-4194303-1f.tmp",
        ".hwcal-io-4194303-1f.tmpx",
    ] {
        std::fs::write(d.join(other), b"x").unwrap();
    }
    let removed = super::remove_leftovers(&d);
    assert_eq!(removed, vec![(dead.clone(), 4096)]);
    assert!(!dead.exists() && live.exists());
    assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 6);
    std::fs::remove_dir_all(&d).unwrap();
}

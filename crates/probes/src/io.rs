//! Storage I/O kernels: the jobs of micbench-io and fio.
//!
//! Method (micbench-io, seed 002; fio as the yardstick): N threads, each with
//! its own file descriptor, issue block-sized reads and/or writes at
//! sequential or uniformly random block-aligned offsets of one test file,
//! for a fixed time or until each thread has moved its share of the file.
//! Every I/O is timed on the harness timer (TSC) from issue to completion
//! (fio's total `lat`, submission plus completion) and recorded into a
//! log-linear histogram, so latency percentiles are right to < 1% without
//! keeping every sample.
//!
//! Engines, as fio names them: `sync` (lseek + read/write, seeking only when
//! the position changes), `psync` (pread/pwrite) and `io_uring` (one ring per
//! thread, `iodepth` I/Os in flight; plain IORING_OP_READ/WRITE, no
//! registered buffers or polling, each I/O submitted as soon as its slot is
//! free and at least one completion awaited when the queue is full, like
//! fio's defaults).
//!
//! Why the page cache matters: a buffered read of a file that was just
//! written is served from memory, not the device, and a time-bound run that
//! loops over a file smaller than RAM would read (or overwrite) memory from
//! its second pass on. Like fio (`invalidate=1`), the file's pages are
//! dropped with `posix_fadvise(DONTNEED)` before the run and again at the
//! start of every pass (which also starts writing back dirty pages), so
//! buffered figures are those of the device behind the kernel's readahead
//! and write-back; measured on the reference VM, 1 MiB buffered sequential
//! reads and writes then agree with fio's, and are 2–3× higher (memory
//! speed) without the per-pass invalidation. `O_DIRECT` bypasses the cache:
//! it needs buffers, offsets and sizes aligned to the device's logical block
//! (512 B or 4 KiB).
//!
//! Test-file life cycle: [`TestFile::create`] makes a uniquely named file
//! with `O_EXCL` and removes it on drop, on every path (errors and
//! interruption included): the kernels poll a stop flag the caller's signal
//! handler sets, finish the I/Os in flight and return normally.

use crate::buffer::{Backing, Buffer};
use hwcal_harness::{Histogram, Timer};
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Access pattern (fio's `rw=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes.
    ReadWrite,
    /// Random mixed reads and writes.
    RandRw,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Read => "read",
            Pattern::Write => "write",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::ReadWrite => "rw",
            Pattern::RandRw => "randrw",
        }
    }
    pub fn random(self) -> bool {
        matches!(self, Pattern::RandRead | Pattern::RandWrite | Pattern::RandRw)
    }
    pub fn mixed(self) -> bool {
        matches!(self, Pattern::ReadWrite | Pattern::RandRw)
    }
    /// Whether the job writes to the target.
    pub fn writes(self) -> bool {
        !matches!(self, Pattern::Read | Pattern::RandRead)
    }
    /// Percentage of reads, given the mix asked for mixed patterns.
    pub fn read_pct(self, rwmix_read: u32) -> u32 {
        match self {
            Pattern::Read | Pattern::RandRead => 100,
            Pattern::Write | Pattern::RandWrite => 0,
            _ => rwmix_read.min(100),
        }
    }
}

/// How I/Os are issued (fio's `ioengine=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sync,
    Psync,
    IoUring,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sync => "sync",
            Engine::Psync => "psync",
            Engine::IoUring => "io_uring",
        }
    }
}

/// One I/O job.
#[derive(Debug, Clone)]
pub struct IoJob {
    pub pattern: Pattern,
    /// Percentage of reads for mixed patterns (ignored otherwise).
    pub rwmix_read: u32,
    /// Block size, bytes.
    pub bs: u64,
    /// Bytes of the target the job works on, from offset 0; a multiple of `bs`.
    pub size: u64,
    pub direct: bool,
    pub engine: Engine,
    /// I/Os in flight per thread (io_uring only; 1 otherwise).
    pub iodepth: u32,
    pub threads: u32,
    /// Run for this long (looping over the file); `None`: each thread moves
    /// its share of `size` once (size-bound).
    pub time_limit: Option<Duration>,
    /// Pin thread i to `cpus[i % len]` (empty: no pinning).
    pub cpus: Vec<usize>,
}

/// Errors of the I/O probe.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The job cannot run as asked on this target or system (O_DIRECT
    /// refused, io_uring unavailable, no space): the user has to change it.
    #[error("{0}")]
    Refused(String),
    /// The stop flag was raised (SIGINT/SIGTERM) before the job finished.
    #[error("interrupted")]
    Interrupted,
    #[error("{0}: {1}")]
    Os(String, std::io::Error),
}

fn os(ctx: impl Into<String>, e: std::io::Error) -> IoError {
    IoError::Os(ctx.into(), e)
}

/// Figures of one worker thread.
#[derive(Debug, Clone)]
pub struct ThreadStats {
    pub tid: u32,
    pub read_ios: u64,
    pub write_ios: u64,
    pub bytes: u64,
    /// From the common start to this thread's last completion, ns.
    pub elapsed_ns: f64,
    /// Per-I/O latency, ns.
    pub hist: Histogram,
}

impl ThreadStats {
    pub fn ios(&self) -> u64 {
        self.read_ios + self.write_ios
    }
}

/// Result of [`run`].
#[derive(Debug, Clone)]
pub struct IoRun {
    pub threads: Vec<ThreadStats>,
    /// From the common start until the last thread finished, ns.
    pub wall_ns: f64,
    /// I/Os completed in each reporting interval (see [`run`]'s `tick`).
    pub interval_ios: Vec<u64>,
    pub interval_s: f64,
}

impl IoRun {
    /// All threads' latencies together.
    pub fn total_hist(&self) -> Histogram {
        let mut h = Histogram::new();
        for t in &self.threads {
            h.merge(&t.hist);
        }
        h
    }
    pub fn ios(&self) -> u64 {
        self.threads.iter().map(|t| t.ios()).sum()
    }
    pub fn bytes(&self) -> u64 {
        self.threads.iter().map(|t| t.bytes).sum()
    }
}

/// The file or device a job runs on. A file this process created is
/// removed when the value is dropped.
#[derive(Debug)]
pub struct TestFile {
    path: PathBuf,
    created: bool,
    size: u64,
    block_device: bool,
}

impl Drop for TestFile {
    fn drop(&mut self) {
        if self.created {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Bytes available to an unprivileged user on the filesystem holding `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is a valid value of this plain C struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a writable statvfs that
    // outlives the call.
    let r = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    (r == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// A small, fast generator (xorshift64*) for offsets and data: the offsets
/// need uniformity, not cryptographic quality.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, never zero.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in 0..n (Lemire's multiply-shift; bias < n / 2^64).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    fn fill(&mut self, buf: &mut [u8]) {
        for c in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
    }
}

/// Drop the target's clean pages from the page cache (fio's `invalidate`),
/// so a buffered read starts from the device.
fn invalidate(f: &File) {
    // SAFETY: fadvise on a valid open descriptor only changes cache policy.
    unsafe {
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

/// Drop a range of the file from the page cache (and start writing back its
/// dirty pages) at the start of every pass of a buffered time-bound run, as
/// fio does for each loop over the file: otherwise every pass after the
/// first would read, or overwrite, memory instead of the device.
fn invalidate_range(f: &File, (off, len): (u64, u64)) {
    // SAFETY: fadvise on a valid open descriptor only changes cache policy.
    unsafe {
        libc::posix_fadvise(
            f.as_raw_fd(),
            off as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        );
    }
}

fn direct_refused(path: &Path) -> IoError {
    IoError::Refused(format!(
        "{}: the filesystem refuses O_DIRECT (EINVAL); run without --direct or on a disk-backed filesystem",
        path.display()
    ))
}

/// Open for the job. `O_DIRECT` failures at open time (tmpfs before Linux
/// 6.6, some FUSE and network filesystems) become a clear refusal.
fn open_target(path: &Path, write: bool, direct: bool) -> Result<File, IoError> {
    let mut o = OpenOptions::new();
    o.read(true).write(write);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path).map_err(|e| {
        if direct && e.raw_os_error() == Some(libc::EINVAL) {
            direct_refused(path)
        } else if matches!(
            e.raw_os_error(),
            Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS)
        ) {
            IoError::Refused(format!("{}: cannot open for this test: {e}", path.display()))
        } else {
            os(format!("opening {}", path.display()), e)
        }
    })
}

impl TestFile {
    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn size(&self) -> u64 {
        self.size
    }
    pub fn created(&self) -> bool {
        self.created
    }
    pub fn is_block_device(&self) -> bool {
        self.block_device
    }

    /// An existing regular file or block device, used in place and never
    /// removed. Whether the job may write to it is the caller's decision.
    pub fn existing(path: &Path) -> Result<TestFile, IoError> {
        let md = std::fs::metadata(path).map_err(|e| os(format!("{}", path.display()), e))?;
        let block_device = md.file_type().is_block_device();
        if !md.is_file() && !block_device {
            return Err(IoError::Refused(format!(
                "{}: neither a directory, a regular file nor a block device",
                path.display()
            )));
        }
        let size = if block_device {
            let mut f = File::open(path).map_err(|e| os(format!("opening {}", path.display()), e))?;
            f.seek(SeekFrom::End(0))
                .map_err(|e| os(format!("size of {}", path.display()), e))?
        } else {
            md.len()
        };
        Ok(TestFile {
            path: path.to_path_buf(),
            created: false,
            size,
            block_device,
        })
    }

    /// Create a uniquely named file of `size` bytes in `dir` and fill it
    /// with incompressible data (so reads hit allocated blocks, and writes
    /// overwrite them rather than allocate), then flush it and drop it from
    /// the page cache. `progress(done, total)` is called every 64 MiB.
    /// If `direct`, O_DIRECT is tried on the new file first, so a refusing
    /// filesystem fails before the fill.
    pub fn create(
        dir: &Path,
        size: u64,
        direct: bool,
        stop: &AtomicBool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<TestFile, IoError> {
        check_free_space(dir, size)?;
        let (file, path) = create_unique(dir)?;
        // From here on the guard removes the file on every path.
        let tf = TestFile {
            path,
            created: true,
            size,
            block_device: false,
        };
        if direct {
            drop(open_target(&tf.path, false, true)?);
        }
        preallocate(&file, size, tf.path.parent().unwrap_or(dir))?;
        fill_file(&file, size, stop, progress)?;
        file.sync_all().map_err(|e| os("flushing the test file", e))?;
        invalidate(&file);
        Ok(tf)
    }
}

/// Refuse a test file of `size` bytes that would not fit in `dir` with
/// slack to spare; no check when the free space cannot be read.
fn check_free_space(dir: &Path, size: u64) -> Result<(), IoError> {
    if let Some(free) = free_bytes(dir) {
        // Keep 1% + 64 MiB of slack: filling a filesystem to the brim
        // hurts the other users of the machine, and metadata needs room.
        let need = size + size / 100 + (64 << 20);
        if need > free {
            return Err(IoError::Refused(format!(
                "no space left: a {} MiB test file needs {} MiB free in {}, {} MiB available",
                size >> 20,
                need >> 20,
                dir.display(),
                free >> 20
            )));
        }
    }
    Ok(())
}

/// Create a new, uniquely named hidden file in `dir` (`create_new`, so an
/// existing file is never opened, let alone overwritten), trying up to 100
/// other names if one is taken. The caller owns its removal.
fn create_unique(dir: &Path) -> Result<(File, PathBuf), IoError> {
    let stamp = seed_from_time();
    let mut attempt = 0u64;
    loop {
        let name = format!(
            ".hwcal-io-{}-{:x}.tmp",
            std::process::id(),
            stamp.wrapping_add(attempt)
        );
        let p = dir.join(name);
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(f) => return Ok((f, p)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EACCES) | Some(libc::EROFS) | Some(libc::EPERM)
                ) =>
            {
                return Err(IoError::Refused(format!(
                    "cannot create a test file in {}: {e}",
                    dir.display()
                )))
            }
            Err(e) => return Err(os(format!("creating a test file in {}", dir.display()), e)),
        }
    }
}

/// Out of space, or over a file-size limit or quota: a refusal, not a
/// failure of the machine.
fn no_space(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSPC) | Some(libc::EFBIG) | Some(libc::EDQUOT)
    )
}

/// Reserve the space up front: an out-of-space error comes at once
/// instead of after minutes of writing, and the extents are contiguous.
/// `shown_dir` is the directory named in the refusal.
fn preallocate(file: &File, size: u64, shown_dir: &Path) -> Result<(), IoError> {
    // SAFETY: fallocate on a valid descriptor opened for writing.
    let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size as libc::off_t) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        if no_space(&e) {
            return Err(IoError::Refused(format!(
                "no space left for a {} MiB test file in {}: {e}",
                size >> 20,
                shown_dir.display()
            )));
        }
        // EOPNOTSUPP and friends: the filesystem cannot preallocate; the
        // writes below allocate instead.
    }
    Ok(())
}

/// Write `size` bytes of incompressible data into `file` in 1 MiB chunks,
/// checking `stop` before each and calling `progress(done, total)` every
/// 64 MiB and at the end.
fn fill_file(
    file: &File,
    size: u64,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), IoError> {
    let chunk = 1usize << 20;
    let mut buf = vec![0u8; chunk];
    let mut rng = Rng::new(seed_from_time());
    let mut off = 0u64;
    while off < size {
        if stop.load(Ordering::Relaxed) {
            return Err(IoError::Interrupted);
        }
        let n = chunk.min((size - off) as usize);
        rng.fill(&mut buf[..n]);
        write_all_at(file, &buf[..n], off).map_err(|e| {
            if no_space(&e) {
                IoError::Refused(format!("no space left while filling the test file: {e}"))
            } else {
                os("filling the test file", e)
            }
        })?;
        off += n as u64;
        if off.is_multiple_of(64 << 20) || off == size {
            progress(off, size);
        }
    }
    Ok(())
}

fn write_all_at(f: &File, mut buf: &[u8], mut off: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    while !buf.is_empty() {
        match f.write_at(buf, off) {
            Ok(0) => return Err(std::io::Error::from_raw_os_error(libc::ENOSPC)),
            Ok(n) => {
                buf = &buf[n..];
                off += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn seed_from_time() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ ((std::process::id() as u64) << 32)
}

/// Where each thread's next I/O goes and whether it reads or writes.
struct Cursor {
    rng: Rng,
    random: bool,
    read_pct: u32,
    bs: u64,
    /// Blocks of the whole target (random offsets range over all of it).
    nblocks: u64,
    /// This thread's sequential region, in blocks: [first, end).
    first: u64,
    end: u64,
    next_seq: u64,
    /// I/Os left in a size-bound run (u64::MAX when time-bound).
    left: u64,
    /// I/Os per pass (this thread's share of the file) and issued so far.
    share: u64,
    issued: u64,
}

/// One I/O to issue.
#[derive(Debug, Clone, Copy)]
struct NextIo {
    off: u64,
    write: bool,
    /// The first I/O of a new pass over this thread's share of the file
    /// (time-bound runs loop).
    new_pass: bool,
}

impl Cursor {
    fn new(job: &IoJob, tid: u32, seed: u64) -> Cursor {
        let nblocks = job.size / job.bs;
        let t = job.threads as u64;
        // Sequential threads each stream through their own slice of the
        // file (micbench-io's layout), so N threads never read the same
        // blocks; random threads range over the whole file.
        let first = nblocks * tid as u64 / t;
        let end = nblocks * (tid as u64 + 1) / t;
        let share = end - first;
        Cursor {
            rng: Rng::new(seed ^ (tid as u64).wrapping_mul(0x9E37_79B9)),
            random: job.pattern.random(),
            read_pct: job.pattern.read_pct(job.rwmix_read),
            bs: job.bs,
            nblocks,
            first,
            end,
            next_seq: first,
            left: if job.time_limit.is_some() { u64::MAX } else { share },
            share: share.max(1),
            issued: 0,
        }
    }

    /// Byte range this thread's passes cover: its slice when sequential,
    /// the whole file when random.
    fn pass_range(&self) -> (u64, u64) {
        if self.random {
            (0, self.nblocks * self.bs)
        } else {
            (self.first * self.bs, (self.end - self.first) * self.bs)
        }
    }

    /// The next I/O, or None when a size-bound share is done.
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let new_pass = self.issued > 0 && self.issued.is_multiple_of(self.share);
        self.issued += 1;
        let block = if self.random {
            self.rng.below(self.nblocks)
        } else {
            let b = self.next_seq;
            self.next_seq += 1;
            if self.next_seq >= self.end {
                self.next_seq = self.first;
            }
            b
        };
        let write = match self.read_pct {
            100 => false,
            0 => true,
            p => self.rng.below(100) >= p as u64,
        };
        Some(NextIo {
            off: block * self.bs,
            write,
            new_pass,
        })
    }
}

/// What a worker shares with the coordinator.
struct Shared<'a> {
    stop: &'a AtomicBool,
    /// Set when any worker fails, so the others stop too.
    abort: AtomicBool,
    /// Per-thread completed I/Os, for progress (one cache line each).
    done: Vec<Padded>,
    start: Barrier,
}

#[repr(align(128))]
struct Padded(AtomicU64);

impl Shared<'_> {
    #[inline]
    fn halted(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }
}

/// Run the job on `target`. The calling thread coordinates: it calls
/// `tick(ios_done, elapsed_s)` about every second while the workers run
/// (for progress) and records I/Os per interval. Returns
/// [`IoError::Interrupted`] if `stop` was raised before the end, after
/// every I/O in flight completed.
pub fn run(
    job: &IoJob,
    target: &TestFile,
    stop: &AtomicBool,
    tick: &mut dyn FnMut(u64, f64),
) -> Result<IoRun, IoError> {
    if job.bs == 0 || job.size < job.bs || job.threads == 0 || job.iodepth == 0 {
        return Err(IoError::Refused(
            "block size, size, threads and iodepth must be > 0".into(),
        ));
    }
    if job.size > target.size {
        return Err(IoError::Refused(format!(
            "{} holds {} bytes, fewer than --size {}",
            target.path.display(),
            target.size,
            job.size
        )));
    }
    if job.bs > u32::MAX as u64 / 2 {
        return Err(IoError::Refused("block size too large (max 1 GiB)".into()));
    }
    let shared = Shared {
        stop,
        abort: AtomicBool::new(false),
        done: (0..job.threads).map(|_| Padded(AtomicU64::new(0))).collect(),
        start: Barrier::new(job.threads as usize + 1),
    };
    if !job.direct {
        if let Ok(f) = File::open(&target.path) {
            invalidate(&f);
        }
    }
    let seed = seed_from_time();
    let interval = Duration::from_millis(1000);
    let (results, wall_ns, interval_ios) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..job.threads)
            .map(|tid| {
                let shared = &shared;
                s.spawn(move || worker(job, target, tid, seed, shared))
            })
            .collect();
        // Workers open their files and buffers, then wait here, so the
        // clock starts when all are ready.
        shared.start.wait();
        let started = Instant::now();
        let mut last_total = 0u64;
        let mut interval_ios = Vec::new();
        let mut next_tick = started + interval;
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
            let now = Instant::now();
            if now >= next_tick {
                let total: u64 = shared.done.iter().map(|d| d.0.load(Ordering::Relaxed)).sum();
                interval_ios.push(total - last_total);
                last_total = total;
                next_tick += interval;
                tick(total, (now - started).as_secs_f64());
            }
        }
        let results: Vec<Result<ThreadStats, IoError>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(IoError::Refused("an I/O thread panicked".into())))
            })
            .collect();
        let wall = results
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .map(|t| t.elapsed_ns)
            .fold(0.0, f64::max);
        (results, wall, interval_ios)
    });
    let mut threads = Vec::new();
    for r in results {
        threads.push(r?);
    }
    if stop.load(Ordering::Relaxed) {
        return Err(IoError::Interrupted);
    }
    Ok(IoRun {
        threads,
        wall_ns,
        interval_ios,
        interval_s: interval.as_secs_f64(),
    })
}

fn worker(job: &IoJob, target: &TestFile, tid: u32, seed: u64, sh: &Shared) -> Result<ThreadStats, IoError> {
    // Any failure before the barrier must still arrive at it, or the
    // coordinator waits forever: prepare, wait, then report.
    let prep = prepare(job, target, tid);
    if prep.is_err() {
        sh.abort.store(true, Ordering::SeqCst);
    }
    sh.start.wait();
    let (file, buf) = prep?;
    let mut st = ThreadStats {
        tid,
        read_ios: 0,
        write_ios: 0,
        bytes: 0,
        elapsed_ns: 0.0,
        hist: Histogram::new(),
    };
    if sh.halted() {
        return Ok(st);
    }
    let cur = Cursor::new(job, tid, seed);
    let r = match job.engine {
        Engine::Sync | Engine::Psync => sync_loop(job, &file, &buf, cur, tid, sh, &mut st),
        Engine::IoUring => uring::run(job, &file, buf, cur, tid, sh, &mut st),
    };
    if let Err(e) = r {
        sh.abort.store(true, Ordering::SeqCst);
        return Err(explain_direct(e, job.direct, job.bs, &target.path));
    }
    Ok(st)
}

/// An EINVAL from an I/O under O_DIRECT means the kernel refused the
/// alignment (block size or offset not a multiple of the device's logical
/// block) or the filesystem refuses direct I/O: say so instead of a bare
/// "Invalid argument".
fn explain_direct(e: IoError, direct: bool, bs: u64, path: &Path) -> IoError {
    match e {
        IoError::Os(_, ref ioe) if direct && ioe.raw_os_error() == Some(libc::EINVAL) => {
            IoError::Refused(format!(
                "{}: O_DIRECT I/O of {bs} bytes refused (EINVAL): the block size must be a multiple of the \
                 device's logical block size (see /sys/block/*/queue/logical_block_size), or the \
                 filesystem does not support O_DIRECT; run without --direct or choose another --bs",
                path.display(),
            ))
        }
        e => e,
    }
}

/// Open the target and allocate this thread's page-aligned buffers (one
/// block per I/O in flight), filled with incompressible data for writes.
fn prepare(job: &IoJob, target: &TestFile, tid: u32) -> Result<(File, Buffer), IoError> {
    if !job.cpus.is_empty() {
        let cpu = job.cpus[tid as usize % job.cpus.len()];
        hwcal_harness::pin::pin_to(cpu).map_err(|e| {
            os(
                format!("pinning I/O thread {tid}"),
                std::io::Error::other(e.to_string()),
            )
        })?;
    }
    let file = open_target(&target.path, job.pattern.writes(), job.direct)?;
    let depth = if job.engine == Engine::IoUring {
        job.iodepth as usize
    } else {
        1
    };
    let len = job.bs as usize * depth;
    let buf = Buffer::new(len, Backing::Small)
        .map_err(|e| os("allocating I/O buffers", std::io::Error::other(e.to_string())))?;
    // SAFETY: the buffer is `buf.len() >= len` writable bytes owned here,
    // not yet shared with the kernel.
    let bytes = unsafe { std::slice::from_raw_parts_mut(buf.as_ptr(), len) };
    Rng::new(seed_from_time() ^ tid as u64).fill(bytes);
    Ok((file, buf))
}

/// Make each 512-byte sector of a block about to be written unique (its
/// first 8 bytes: thread, I/O number, sector), so storage that deduplicates
/// or compresses cannot short-cut rewrites of the same buffer; the job of
/// fio's `scramble_buffers`, at one store per sector (~1 µs per MiB), which
/// is negligible next to the I/O.
#[inline]
fn stamp(block: *mut u8, bs: usize, seq: u64, tid: u32) {
    let tag = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((tid as u64) << 56);
    let mut off = 0;
    while off + 8 <= bs {
        // SAFETY: off + 8 <= bs, so the 8 bytes lie inside the block, which
        // no I/O in flight uses (callers guarantee); unaligned writes are fine.
        unsafe { block.add(off).cast::<u64>().write_unaligned(tag ^ off as u64) };
        off += 512;
    }
}

/// Record one finished I/O.
#[inline]
fn account(st: &mut ThreadStats, write: bool, bytes: u64, ns: f64) {
    if write {
        st.write_ios += 1;
    } else {
        st.read_ios += 1;
    }
    st.bytes += bytes;
    st.hist.record(ns.max(0.0) as u64);
}

fn sync_loop(
    job: &IoJob,
    file: &File,
    buf: &Buffer,
    mut cur: Cursor,
    tid: u32,
    sh: &Shared,
    st: &mut ThreadStats,
) -> Result<(), IoError> {
    let timer = Timer::get();
    let fd = file.as_raw_fd();
    let bs = job.bs as usize;
    let ptr = buf.as_ptr();
    let t0 = timer.now();
    let deadline = job
        .time_limit
        .map(|d| t0 + (d.as_nanos() as f64 / timer.ns_per_tick()) as u64);
    // The file position for `sync` (lseek only when it must move).
    let mut pos: i64 = -1;
    let mut end = t0;
    let mut n = 0u64;
    while !sh.halted() {
        if deadline.is_some_and(|d| end >= d) {
            break;
        }
        let Some(NextIo { off, write, new_pass }) = cur.next() else {
            break;
        };
        if new_pass && !job.direct {
            invalidate_range(file, cur.pass_range());
        }
        if write {
            stamp(ptr, bs, n, tid);
        }
        let start = timer.now();
        let r = loop {
            // SAFETY: `ptr` points to at least `bs` bytes of this thread's
            // buffer, which outlives the call; the kernel reads or writes
            // only those bytes, synchronously.
            let r = unsafe {
                match (job.engine, write) {
                    (Engine::Psync, false) => libc::pread(fd, ptr.cast(), bs, off as i64),
                    (Engine::Psync, true) => libc::pwrite(fd, ptr.cast(), bs, off as i64),
                    (_, w) => {
                        if pos != off as i64 && libc::lseek(fd, off as i64, libc::SEEK_SET) < 0 {
                            -1
                        } else if w {
                            libc::write(fd, ptr.cast(), bs)
                        } else {
                            libc::read(fd, ptr.cast(), bs)
                        }
                    }
                }
            };
            if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                pos = -1;
                continue;
            }
            break r;
        };
        end = timer.now();
        if r < 0 {
            return Err(os(
                format!("{} at offset {off}", if write { "write" } else { "read" }),
                std::io::Error::last_os_error(),
            ));
        }
        if r as usize != bs {
            return Err(os(
                format!(
                    "short {} at offset {off}: {r} of {bs} bytes",
                    if write { "write" } else { "read" }
                ),
                std::io::Error::from_raw_os_error(libc::EIO),
            ));
        }
        pos = (off + job.bs) as i64;
        account(st, write, job.bs, timer.elapsed_ns(start, end));
        n += 1;
        // A relaxed store to this thread's own cache line: ~1 ns, no sharing.
        sh.done[tid as usize].0.store(n, Ordering::Relaxed);
    }
    sh.done[tid as usize].0.store(n, Ordering::Relaxed);
    st.elapsed_ns = timer.elapsed_ns(t0, end);
    Ok(())
}

mod uring {
    //! The io_uring engine: one ring per thread, `iodepth` I/Os in flight.
    //! Every submission entry points into `buf`, which must stay alive and
    //! untouched until its completion is reaped; the loop therefore never
    //! returns with I/Os in flight (it drains them first), and leaks the
    //! buffer if it cannot.
    use super::*;
    use io_uring::{opcode, types, IoUring};

    fn setup_error(e: std::io::Error) -> IoError {
        match e.raw_os_error() {
            Some(libc::ENOSYS) => IoError::Refused(
                "io_uring is not available in this kernel (ENOSYS); use --engine psync".into(),
            ),
            Some(libc::EPERM) | Some(libc::EACCES) => IoError::Refused(
                "io_uring is disabled here (EPERM: kernel.io_uring_disabled or a seccomp filter); use --engine psync"
                    .into(),
            ),
            _ => os("setting up io_uring", e),
        }
    }

    /// A ring set up as fio's io_uring engine does: completion queue as
    /// deep as the submission queue; COOP_TASKRUN (no inter-processor
    /// interrupt to run completion work while the thread is busy) and
    /// SINGLE_ISSUER + DEFER_TASKRUN (completion work runs when the thread
    /// asks for events), which save a large part of the per-I/O CPU cost at
    /// high queue depth. Older kernels refuse the flags with EINVAL: drop
    /// them one step at a time.
    fn new_ring(depth: u32) -> std::io::Result<IoUring> {
        let einval = |e: &std::io::Error| e.raw_os_error() == Some(libc::EINVAL);
        let full = IoUring::builder()
            .setup_cqsize(depth)
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(depth);
        match full {
            Err(e) if einval(&e) => {}
            r => return r,
        }
        match IoUring::builder()
            .setup_cqsize(depth)
            .setup_coop_taskrun()
            .build(depth)
        {
            Err(e) if einval(&e) => IoUring::new(depth),
            r => r,
        }
    }

    pub(super) fn run(
        job: &IoJob,
        file: &File,
        buf: Buffer,
        mut cur: Cursor,
        tid: u32,
        sh: &Shared,
        st: &mut ThreadStats,
    ) -> Result<(), IoError> {
        let timer = Timer::get();
        let depth = job.iodepth as usize;
        let ring = new_ring(depth as u32).map_err(setup_error)?;
        let mut q = Queue::new(ring, file, &buf, job.bs as usize, depth);
        let t0 = timer.now();
        let deadline = job
            .time_limit
            .map(|d| t0 + (d.as_nanos() as f64 / timer.ns_per_tick()) as u64);
        q.end = t0;
        loop {
            // Refill the queue.
            if q.issuing && (sh.halted() || deadline.is_some_and(|d| timer.now() >= d)) {
                q.issuing = false;
            }
            q.refill(job, file, &mut cur, tid, timer);
            if q.inflight == 0 || q.failure.is_some() {
                break;
            }
            match q.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => {}
                Err(e) => {
                    q.failure = Some(os("io_uring_enter", e));
                    break;
                }
            }
            q.reap(job, st, timer);
            sh.done[tid as usize].0.store(q.n, Ordering::Relaxed);
        }
        // Only io_uring_enter failing can leave I/Os in flight: wait for them.
        if !q.drain() {
            // The kernel may still write into the buffer: never
            // unmap it.
            std::mem::forget(buf);
            return Err(q
                .failure
                .take()
                .unwrap_or_else(|| IoError::Refused("io_uring: lost completions".into())));
        }
        st.elapsed_ns = timer.elapsed_ns(t0, q.end);
        let failure = q.failure.take();
        // The ring goes before the buffer its entries pointed into.
        drop(q);
        drop(buf);
        failure.map_or(Ok(()), Err)
    }

    /// The ring and the state of its `depth` slots: the I/O in slot `i`
    /// uses block `i` of the buffer at `base`, so a slot is reused only
    /// once its completion is reaped. `base` is a raw pointer because `run`
    /// must be able to leak the buffer while the ring is still alive.
    struct Queue {
        ring: IoUring,
        fd: types::Fd,
        base: *mut u8,
        bs: usize,
        // Per slot: issue time and direction of the I/O using that slot's block.
        issued: Vec<u64>,
        is_write: Vec<bool>,
        offsets: Vec<u64>,
        free: Vec<usize>,
        inflight: usize,
        /// Time of the last completion.
        end: u64,
        /// The first failure; once set, no more I/Os are issued.
        failure: Option<IoError>,
        issuing: bool,
        /// I/Os completed.
        n: u64,
        /// I/Os issued (the sequence number stamped into written blocks).
        seq: u64,
    }

    impl Queue {
        fn new(ring: IoUring, file: &File, buf: &Buffer, bs: usize, depth: usize) -> Queue {
            Queue {
                ring,
                fd: types::Fd(file.as_raw_fd()),
                base: buf.as_ptr(),
                bs,
                issued: vec![0u64; depth],
                is_write: vec![false; depth],
                offsets: vec![0u64; depth],
                free: (0..depth).rev().collect(),
                inflight: 0,
                end: 0,
                failure: None,
                issuing: true,
                n: 0,
                seq: 0,
            }
        }

        /// Issue the cursor's next I/Os into the free slots, each handed to
        /// the kernel at once, until no slot is free or issuing stops (the
        /// cursor is done, or a submission failed).
        fn refill(&mut self, job: &IoJob, file: &File, cur: &mut Cursor, tid: u32, timer: &Timer) {
            let bs = self.bs;
            while self.issuing {
                let Some(&slot) = self.free.last() else { break };
                let Some(NextIo { off, write, new_pass }) = cur.next() else {
                    self.issuing = false;
                    break;
                };
                if new_pass && !job.direct {
                    invalidate_range(file, cur.pass_range());
                }
                self.free.pop();
                // SAFETY: slot < depth, so the block lies inside the buffer
                // of depth * bs bytes.
                let p = unsafe { self.base.add(slot * bs) };
                if write {
                    // The slot is free: no I/O in flight uses its block.
                    stamp(p, bs, self.seq, tid);
                }
                self.seq += 1;
                let e = if write {
                    opcode::Write::new(self.fd, p, bs as u32).offset(off).build()
                } else {
                    opcode::Read::new(self.fd, p, bs as u32).offset(off).build()
                }
                .user_data(slot as u64);
                // SAFETY: the entry references block `slot` of `buf` and the
                // open `file`; both outlive the I/O because `run` reaps every
                // completion (or leaks `buf`) before returning, and the slot
                // is not reused until its completion is reaped. The ring has
                // >= depth entries and at most depth are queued, so the push
                // cannot overflow.
                let pushed = unsafe { self.ring.submission().push(&e) };
                if pushed.is_err() {
                    self.free.push(slot);
                    break;
                }
                self.issued[slot] = timer.now();
                self.is_write[slot] = write;
                self.offsets[slot] = off;
                self.inflight += 1;
                // Hand each I/O to the kernel at once (fio's default
                // iodepth_batch_submit=1) rather than batching the refill:
                // measured on the reference VM at iodepth 32, batching left
                // the device idle between bursts and lost ~20% of the IOPS.
                match self.ring.submit() {
                    Ok(_) => {}
                    // Retried by the next io_uring_enter in `run`.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => {}
                    Err(e) => {
                        self.failure = Some(os("io_uring_enter", e));
                        self.issuing = false;
                    }
                }
            }
        }

        /// Reap the completions in the queue: free their slots and account
        /// each I/O, or keep the first error (a failed or short transfer)
        /// and stop issuing.
        fn reap(&mut self, job: &IoJob, st: &mut ThreadStats, timer: &Timer) {
            let bs = self.bs;
            let now = timer.now();
            for cqe in self.ring.completion() {
                let slot = cqe.user_data() as usize;
                self.inflight -= 1;
                self.free.push(slot);
                self.end = now;
                let res = cqe.result();
                let what = if self.is_write[slot] { "write" } else { "read" };
                if res < 0 {
                    self.failure.get_or_insert_with(|| {
                        os(
                            format!("{what} at offset {}", self.offsets[slot]),
                            std::io::Error::from_raw_os_error(-res),
                        )
                    });
                    self.issuing = false;
                } else if res as usize != bs {
                    self.failure.get_or_insert_with(|| {
                        os(
                            format!(
                                "short {what} at offset {}: {res} of {bs} bytes",
                                self.offsets[slot]
                            ),
                            std::io::Error::from_raw_os_error(libc::EIO),
                        )
                    });
                    self.issuing = false;
                } else {
                    account(
                        st,
                        self.is_write[slot],
                        job.bs,
                        timer.elapsed_ns(self.issued[slot], now),
                    );
                    self.n += 1;
                }
            }
        }

        /// Wait for every I/O still in flight. False if the ring cannot be
        /// waited on any more: the kernel may then still use the buffer.
        fn drain(&mut self) -> bool {
            while self.inflight > 0 {
                match self.ring.submit_and_wait(self.inflight) {
                    Ok(_) => {}
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => {}
                    Err(_) => return false,
                }
                self.inflight -= self.ring.completion().count();
            }
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

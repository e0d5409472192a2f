//! `hwcal io`: storage IOPS, bandwidth and latency percentiles, the jobs of
//! micbench-io with fio's vocabulary (rw, bs, size, direct, ioengine,
//! iodepth). The kernels are in `hwcal_probes::io`; this module validates
//! the request, owns the test file's life cycle (created in PATH, removed at
//! the end, on error and on SIGINT/SIGTERM/SIGHUP) and builds the profile.

use crate::cli::{CommonArgs, IoArgs, IoEngineArg, IoRw};
use crate::common::{
    check_db, check_dest, command_line, emit, now_unix, parse_size, save_if_requested, Progress, UsageError,
};
use crate::usage;
use anyhow::{anyhow, Context, Result};
use hwcal_harness::harness_info;
use hwcal_model::{IoResult, IoThread, Profile};
use hwcal_probes::io::{self as probe, Engine, IoError, IoJob, IoRun, Pattern, TestFile};
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Size of a new test file when --size is not given.
const DEFAULT_SIZE: u64 = 1 << 30;

fn pattern(rw: IoRw) -> Pattern {
    match rw {
        IoRw::Read => Pattern::Read,
        IoRw::Write => Pattern::Write,
        IoRw::Randread => Pattern::RandRead,
        IoRw::Randwrite => Pattern::RandWrite,
        IoRw::Rw => Pattern::ReadWrite,
        IoRw::Randrw => Pattern::RandRw,
    }
}

fn engine(e: IoEngineArg) -> Engine {
    match e {
        IoEngineArg::Sync => Engine::Sync,
        IoEngineArg::Psync => Engine::Psync,
        IoEngineArg::IoUring => Engine::IoUring,
    }
}

/// Probe errors as the user should see them: a refusal (O_DIRECT, io_uring,
/// space) is a usage error (exit 2), the rest a failed operation (exit 1).
fn io_err(e: IoError, created: bool) -> anyhow::Error {
    match e {
        IoError::Refused(m) => anyhow::Error::new(UsageError(m)),
        IoError::Interrupted => {
            if created {
                anyhow!("interrupted by a signal; the test file was removed")
            } else {
                anyhow!("interrupted by a signal")
            }
        }
        IoError::Os(ctx, e) => anyhow::Error::new(e).context(ctx),
    }
}

/// CPUs for the worker threads: thread 0 on the CPU hwcal pins to (the
/// highest allowed, or --cpu), further threads on the next lower allowed
/// CPUs in turn. Empty with --no-pin.
fn worker_cpus(common: &CommonArgs) -> Result<Vec<usize>> {
    if common.no_pin {
        return Ok(vec![]);
    }
    let allowed = hwcal_harness::pin::allowed_cpus();
    let first = match common.cpu {
        Some(c) if !allowed.contains(&c) => {
            usage!("--cpu {c}: no such CPU or not allowed (allowed: {allowed:?})")
        }
        Some(c) => c,
        None => match hwcal_harness::pin::default_cpu() {
            Some(c) => c,
            None => return Ok(vec![]),
        },
    };
    let i = allowed.iter().position(|&c| c == first).unwrap_or(0);
    let n = allowed.len();
    Ok((0..n).map(|k| allowed[(i + n - k) % n]).collect())
}

/// While alive, SIGINT, SIGTERM and SIGHUP raise `stop` instead of killing
/// the process, so the workers stop, finish the I/Os in flight and the test
/// file is removed on the normal path. A second SIGINT while the first is
/// being handled exits at once (130). Once dropped, the signals take their
/// default action again (signal-hook cannot uninstall a handler, so a
/// conditional "run the default action" is registered up front).
struct StopOnSignal {
    stop: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
}

impl StopOnSignal {
    fn install() -> Result<StopOnSignal> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal_hook::flag::register_conditional_default(sig, Arc::clone(&done))
                .context("installing a signal handler")?;
        }
        signal_hook::flag::register_conditional_shutdown(SIGINT, 130, Arc::clone(&stop))
            .context("installing the SIGINT handler")?;
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal_hook::flag::register(sig, Arc::clone(&stop)).context("installing a signal handler")?;
        }
        Ok(StopOnSignal { stop, done })
    }
}

impl Drop for StopOnSignal {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

pub fn run(a: IoArgs) -> Result<()> {
    check_dest(a.common.json.as_deref())?;
    check_db(a.common.save)?;
    let progress = Progress::new(a.common.quiet);
    let m = measure(&a, &progress)?;
    let mut p = Profile::new(command_line(), now_unix());
    p.harness = Some(harness_info(m.pinned_cpu));
    p.io = Some(m.io);
    p.notes.extend(m.notes);
    emit(&p, a.common.json.as_deref())?;
    save_if_requested(&p, a.common.save).map(drop)
}

/// What one I/O job measured, for `hwcal io` or a caller such as `hwcal run`.
pub struct Measured {
    pub io: IoResult,
    pub notes: Vec<String>,
    /// The CPU of the first I/O thread (None with --no-pin).
    pub pinned_cpu: Option<usize>,
}

/// Validate the request, create (or open) the target, run the job and
/// remove what was created; every path out of here leaves nothing behind.
pub fn measure(a: &IoArgs, progress: &Progress) -> Result<Measured> {
    let req = validate(a)?;
    let path: PathBuf = a.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let md = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            usage!("{}: no such file or directory", path.display())
        }
        Err(e) => usage!("{}: {e}", path.display()),
    };
    // fio's rules: no kernel pseudo files, no mounted block device, no
    // O_DIRECT on a memory filesystem (exit 2).
    let intent = hwcal_probes::target::Intent {
        writes: req.pattern.writes(),
        direct: a.direct,
        allow_mounted_write: a.allow_mounted_write,
    };
    hwcal_probes::target::check(&path, intent).map_err(|e| UsageError(e.to_string()))?;
    let cpus = worker_cpus(&a.common)?;
    let signals = StopOnSignal::install()?;
    let stop = &*signals.stop;

    let target = open_target(a, &req, &path, &md, stop, progress)?;
    let size = job_size(req.size, &target, &path, req.bs)?;
    let eng = req.engine;
    let job = IoJob {
        pattern: req.pattern,
        rwmix_read: a.rwmix_read.unwrap_or(50),
        bs: req.bs,
        size,
        direct: a.direct,
        engine: eng,
        iodepth: if eng == Engine::IoUring { a.iodepth } else { 1 },
        threads: a.threads,
        time_limit: a.time.map(Duration::from_secs_f64),
        cpus: cpus.clone(),
    };
    announce(progress, a, &job, &target);
    let mut last = 0u64;
    let mut tick = |ios: u64, t: f64| {
        progress.say(&format!("io: {t:.0} s, {} IOPS in the last second", ios - last));
        last = ios;
    };
    let result = probe::run(&job, &target, stop, &mut tick);
    let created = target.created();
    let shown_path = target.path().display().to_string();
    // Remove the test file before anything else can fail.
    drop(target);
    let r = result.map_err(|e| io_err(e, created))?;
    Ok(Measured {
        io: io_result(&job, &r, created, &shown_path, a.time),
        notes: notes(&job, &r),
        pinned_cpu: cpus.first().copied(),
    })
}

/// The job's parameters as the flags give them, checked before anything
/// touches the filesystem.
struct Request {
    pattern: Pattern,
    engine: Engine,
    bs: u64,
    /// --size, if given (> 0, not yet rounded to whole blocks).
    size: Option<u64>,
}

/// Check the flags that need no filesystem: block size (O_DIRECT needs
/// 512-byte multiples), --size, --time, and the options that only some
/// engines or patterns honour, so a request is refused rather than
/// silently run as something else.
fn validate(a: &IoArgs) -> Result<Request> {
    let pat = pattern(a.rw);
    let eng = engine(a.engine);
    let bs = parse_size(&a.bs).map_err(|e| UsageError(format!("--bs {e}")))?;
    if bs == 0 {
        usage!("--bs must be > 0");
    }
    if bs > 1 << 30 {
        usage!("--bs {}: at most 1G", a.bs);
    }
    if a.direct && bs % 512 != 0 {
        usage!("--bs {bs}: with --direct the block size must be a multiple of 512 bytes");
    }
    let size = match &a.size {
        Some(s) => {
            let v = parse_size(s).map_err(|e| UsageError(format!("--size {e}")))?;
            if v == 0 {
                usage!("--size must be > 0");
            }
            Some(v)
        }
        None => None,
    };
    if let Some(t) = a.time {
        if !(t.is_finite() && t > 0.0 && t <= 86_400.0) {
            usage!("--time {t}: must be > 0 and at most 86400 seconds");
        }
    }
    if a.iodepth > 1 && eng != Engine::IoUring {
        usage!(
            "--iodepth {}: only --engine io_uring keeps several I/Os in flight (sync and psync have one per thread)",
            a.iodepth
        );
    }
    if a.rwmix_read.is_some() && !pat.mixed() {
        usage!("--rwmix-read only applies to --rw rw or randrw");
    }
    Ok(Request {
        pattern: pat,
        engine: eng,
        bs,
        size,
    })
}

/// The target: a new file in a directory, or an existing file/device.
fn open_target(
    a: &IoArgs,
    req: &Request,
    path: &Path,
    md: &Metadata,
    stop: &AtomicBool,
    progress: &Progress,
) -> Result<TestFile> {
    if md.is_dir() {
        create_test_file(a, req, path, stop, progress)
    } else {
        existing_target(a, req.pattern, path, md)
    }
}

/// Create and fill a test file of --size (default 1 GiB, whole blocks) in
/// the directory `dir`; the probe removes it again on failure or a signal.
fn create_test_file(
    a: &IoArgs,
    req: &Request,
    dir: &Path,
    stop: &AtomicBool,
    progress: &Progress,
) -> Result<TestFile> {
    let bs = req.bs;
    let size = req.size.unwrap_or(DEFAULT_SIZE) / bs * bs;
    if size == 0 {
        usage!("--size must hold at least one block of --bs {bs}");
    }
    progress.say(&format!(
        "io: creating a {} test file in {}",
        hwcal_report::text::human_bytes(size),
        dir.display()
    ));
    // The probe reports every 64 MiB; a line per 256 MiB is enough.
    let mut say = |done: u64, total: u64| {
        if done.is_multiple_of(256 << 20) || done == total {
            progress.say(&format!("io: filled {} MiB of {} MiB", done >> 20, total >> 20))
        }
    };
    TestFile::create(dir, size, a.direct, stop, &mut say).map_err(|e| io_err(e, true))
}

/// An existing file or device, used in place. A writing job would destroy
/// its data, so that needs --force.
fn existing_target(a: &IoArgs, pat: Pattern, path: &Path, md: &Metadata) -> Result<TestFile> {
    if pat.writes() && !a.force {
        let what = if md.file_type().is_file() {
            "an existing file"
        } else {
            "a device"
        };
        usage!(
            "{}: refusing to write into {what} (its data would be overwritten); point PATH at a directory, \
             or add --force",
            path.display()
        );
    }
    let target = TestFile::existing(path).map_err(|e| io_err(e, false))?;
    if pat.writes() {
        // Said whatever --quiet: this overwrites data that was there.
        let what = match hwcal_probes::target::check(path, hwcal_probes::target::Intent::default()) {
            Ok(t) => t.describe(),
            Err(_) => path.display().to_string(),
        };
        eprintln!("hwcal: io: writing into {what}: its data is overwritten (--force)");
    }
    Ok(target)
}

/// Bytes the job covers: --size (at most the target's size) or the whole
/// target, in whole blocks of `bs`; at least one block.
fn job_size(size: Option<u64>, target: &TestFile, path: &Path, bs: u64) -> Result<u64> {
    let size = match size {
        Some(s) if s > target.size() => usage!(
            "--size {s}: {} holds only {} bytes",
            path.display(),
            target.size()
        ),
        Some(s) => s / bs * bs,
        None => target.size() / bs * bs,
    };
    if size == 0 {
        usage!("{}: smaller than one block of --bs {bs}", path.display());
    }
    Ok(size)
}

/// One progress line saying what is about to run and for how long.
fn announce(progress: &Progress, a: &IoArgs, job: &IoJob, target: &TestFile) {
    progress.say(&format!(
        "io: {} bs={} {} iodepth={} threads={}{} on {}, {}",
        job.pattern.name(),
        hwcal_report::text::human_bytes(job.bs),
        job.engine.name(),
        job.iodepth,
        job.threads,
        if a.direct { " O_DIRECT" } else { "" },
        target.path().display(),
        match a.time {
            Some(t) => format!("for {t} s"),
            None => format!("one pass over {}", hwcal_report::text::human_bytes(job.size)),
        }
    ));
}

fn us(ns: Option<f64>) -> f64 {
    ns.map_or(f64::NAN, |v| v / 1e3)
}

/// The profile section from a finished run. Rates of the whole job divide
/// by the wall time from the common start to the last thread's last
/// completion (fio's aggregate bandwidth); per-thread rates by the thread's
/// own run time.
pub fn io_result(job: &IoJob, r: &IoRun, created: bool, path: &str, time: Option<f64>) -> IoResult {
    let wall_s = r.wall_ns / 1e9;
    let rate = |x: u64, s: f64| if s > 0.0 { x as f64 / s } else { f64::NAN };
    let h = r.total_hist();
    let per_thread = r
        .threads
        .iter()
        .map(|t| {
            let s = t.elapsed_ns / 1e9;
            IoThread {
                tid: t.tid,
                ios: t.ios(),
                iops: rate(t.ios(), s),
                bytes_per_sec: rate(t.bytes, s),
                lat_p50_us: us(t.hist.percentile(50.0)),
                lat_p99_us: us(t.hist.percentile(99.0)),
                bytes: t.bytes,
                lat_min_us: us(t.hist.min().map(|v| v as f64)),
                lat_p999_us: us(t.hist.percentile(99.9)),
                lat_max_us: us(t.hist.max().map(|v| v as f64)),
            }
        })
        .collect();
    IoResult {
        rw: job.pattern.name().into(),
        rwmix_read: job.pattern.mixed().then_some(job.rwmix_read),
        bs_bytes: job.bs,
        size_bytes: job.size,
        engine: job.engine.name().into(),
        iodepth: job.iodepth,
        threads: job.threads,
        direct: job.direct,
        path: path.into(),
        runtime_s: wall_s,
        iops: rate(r.ios(), wall_s),
        bytes_per_sec: rate(r.bytes(), wall_s),
        lat_min_us: us(h.min().map(|v| v as f64)),
        lat_p50_us: us(h.percentile(50.0)),
        lat_p99_us: us(h.percentile(99.0)),
        lat_p999_us: us(h.percentile(99.9)),
        lat_max_us: us(h.max().map(|v| v as f64)),
        per_thread,
        ios: r.ios(),
        read_ios: r.threads.iter().map(|t| t.read_ios).sum(),
        write_ios: r.threads.iter().map(|t| t.write_ios).sum(),
        lat_mean_us: us(h.mean()),
        time_limit_s: time,
        created_file: created,
        iops_intervals: r.interval_ios.iter().map(|&n| n as f64 / r.interval_s).collect(),
    }
}

fn notes(job: &IoJob, r: &IoRun) -> Vec<String> {
    let mut n = Vec::new();
    let reads = job.pattern.read_pct(job.rwmix_read) > 0;
    if !job.direct && reads {
        n.push(
            "io: buffered reads; the file's pages are dropped from the page cache before the run and at the \
             start of every pass over it (like fio's invalidate=1), so the figures are the device's behind \
             the kernel's readahead, not memory's. Use --direct to measure the device alone."
                .into(),
        );
    }
    if !job.direct && job.pattern.writes() {
        n.push(
            "io: buffered writes complete into the page cache; write-back to the device is started at \
             each pass over the file and throttles the writer when too much is dirty, but the last pages \
             written are not flushed before the clock stops (no fsync, like fio's default). Use --direct \
             to measure the device alone."
                .into(),
        );
    }
    if r.ios() < 100 {
        n.push(format!(
            "io: only {} I/Os completed; percentiles from so few samples are rough",
            r.ios()
        ));
    }
    n
}

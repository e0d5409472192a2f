//! The I/O probe: storage IOPS, bandwidth and latency percentiles, the jobs
//! of micbench-io with fio's vocabulary (rw, bs, size, direct, ioengine,
//! iodepth). The kernels are in `hwcal_probes::io`; this module owns the
//! test file's life cycle (created in the target directory, removed at the
//! end, on error and on SIGINT/SIGTERM/SIGHUP) and builds the profile
//! section. It takes a plain [`IoSpec`]; `hwcal io` validates its flags into
//! one, `hwcal run --io DIR` plans the short job of [`ENTRY`].

use crate::probe::{Plan, ProbeEntry, Progress};
use crate::signals::StopOnSignal;
use crate::usage;
use crate::{Result, RunnerError};
use hwcal_model::{human_bytes, IoResult, IoThread, Note, Profile};
use hwcal_probes::io::{self as probe, Engine, IoError, IoJob, IoRun, Pattern, TestFile};
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// In `hwcal run --io DIR`: what a database cares about first (random 4 KiB
/// reads at depth), 2 s on its own 256 MiB file in DIR.
pub const ENTRY: ProbeEntry = ProbeEntry {
    id: "io",
    description: "4 KiB random reads, O_DIRECT, io_uring QD 32",
    opt_in: true,
    typical_s: 3.0,
    reads: &[],
    plan: |config, _| {
        let dir = config.io_dir.clone()?;
        let cpus = worker_cpus(config.pinned_cpu, config.pinned_cpu.is_none()).unwrap_or_default();
        Some(Box::new(IoSpec {
            path: dir,
            pattern: Pattern::RandRead,
            rwmix_read: None,
            bs: 4096,
            size: Some(256 << 20),
            direct: true,
            engine: Engine::IoUring,
            iodepth: 32,
            threads: 1,
            time: Some(2.0),
            force: false,
            allow_mounted_write: false,
            cpus,
        }))
    },
    // The I/O figures are computed from the histograms as they are taken
    // and no raw curve is kept: nothing to recompute.
    analyze: |_| false,
};

/// One I/O job, as validated plain values.
#[derive(Debug, Clone)]
pub struct IoSpec {
    /// Directory for the test file, or an existing file or block device.
    pub path: PathBuf,
    pub pattern: Pattern,
    /// Percentage of reads for the mixed patterns (default 50).
    pub rwmix_read: Option<u32>,
    /// Block size in bytes (> 0; a multiple of 512 with `direct`).
    pub bs: u64,
    /// Size of a new test file or of the part of an existing target used
    /// (> 0, not yet rounded to whole blocks); `None`: 1 GiB for a new file,
    /// the whole existing target.
    pub size: Option<u64>,
    pub direct: bool,
    pub engine: Engine,
    pub iodepth: u32,
    pub threads: u32,
    /// Seconds to run; `None`: one pass over the size.
    pub time: Option<f64>,
    /// Write into an existing file or device.
    pub force: bool,
    /// Write into a block device even if it (or a partition of it) is
    /// mounted, used as swap or held (fio's `allow_mounted_write`).
    pub allow_mounted_write: bool,
    /// CPUs of the worker threads in turn (empty: unpinned).
    pub cpus: Vec<usize>,
}

/// `--bs` and `--size` as typed: a block size from 1 byte to 1 GiB, a
/// file size above 0 (none: the file's own, or a new file's default).
pub fn parse_sizes(bs_text: &str, size_text: Option<&str>) -> Result<(u64, Option<u64>)> {
    let bs = hwcal_model::parse_size(bs_text).map_err(|e| RunnerError::Usage(format!("--bs {e}")))?;
    if bs == 0 {
        usage!("--bs must be > 0");
    }
    if bs > 1 << 30 {
        usage!("--bs {bs_text}: at most 1G");
    }
    let size = match size_text {
        Some(s) => {
            let v = hwcal_model::parse_size(s).map_err(|e| RunnerError::Usage(format!("--size {e}")))?;
            if v == 0 {
                usage!("--size must be > 0");
            }
            Some(v)
        }
        None => None,
    };
    Ok((bs, size))
}

impl IoSpec {
    /// Options that only some engines or patterns honour are refused rather
    /// than silently run as something else; O_DIRECT needs 512-byte blocks.
    pub fn check(&self) -> Result<()> {
        let bs = self.bs;
        if self.direct && !bs.is_multiple_of(512) {
            usage!("--bs {bs}: with --direct the block size must be a multiple of 512 bytes");
        }
        if let Some(t) = self.time {
            if !(t.is_finite() && t > 0.0 && t <= 86_400.0) {
                usage!("--time {t}: must be > 0 and at most 86400 seconds");
            }
        }
        if self.iodepth > 1 && self.engine != Engine::IoUring {
            usage!(
                "--iodepth {}: only --engine io_uring keeps several I/Os in flight (sync and psync have one per thread)",
                self.iodepth
            );
        }
        if self.rwmix_read.is_some() && !self.pattern.mixed() {
            usage!("--rwmix-read only applies to --rw rw or randrw");
        }
        Ok(())
    }
}

impl Plan for IoSpec {
    fn run(&self, _hw: &dyn crate::points::Hardware, progress: &dyn Progress) -> Result<Profile> {
        let m = measure(self, progress)?;
        Ok(Profile {
            io: Some(m.io),
            notes: m.notes,
            ..Default::default()
        })
    }
}

/// Size of a new test file when --size is not given.
const DEFAULT_SIZE: u64 = 1 << 30;

/// Probe errors as the user should see them: a refusal (O_DIRECT, io_uring,
/// space) is a usage error (exit 2), the rest a failed operation (exit 1).
fn io_err(e: IoError, created: bool) -> RunnerError {
    match e {
        IoError::Refused(m) => RunnerError::Usage(m),
        IoError::Interrupted => RunnerError::Failed(if created {
            "interrupted by a signal; the test file was removed".into()
        } else {
            "interrupted by a signal".into()
        }),
        IoError::Os(msg, e) => RunnerError::Context {
            msg,
            source: Box::new(e),
        },
    }
}

/// CPUs for the worker threads: thread 0 on the CPU hwcal pins to (the
/// highest allowed, or `cpu` (--cpu)), further threads on the next lower
/// allowed CPUs in turn. Empty with `no_pin`.
pub fn worker_cpus(cpu: Option<usize>, no_pin: bool) -> Result<Vec<usize>> {
    if no_pin {
        return Ok(vec![]);
    }
    let allowed = hwcal_harness::pin::allowed_cpus();
    let first = match cpu {
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

/// What one I/O job measured, for `hwcal io` or a caller such as `hwcal run`.
pub struct Measured {
    pub io: IoResult,
    pub notes: Vec<Note>,
    /// The CPU of the first I/O thread (None with --no-pin).
    pub pinned_cpu: Option<usize>,
}

/// Validate the request, create (or open) the target, run the job and
/// remove what was created; every path out of here leaves nothing behind.
pub fn measure(a: &IoSpec, progress: &dyn Progress) -> Result<Measured> {
    let path: PathBuf = a.path.clone();
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
        writes: a.pattern.writes(),
        direct: a.direct,
        allow_mounted_write: a.allow_mounted_write,
    };
    if let Err(e) = hwcal_probes::target::check(&path, intent) {
        usage!("{e}");
    }
    let cpus = a.cpus.clone();
    let signals = StopOnSignal::install()?;
    let stop = &*signals.stop;

    let target = open_target(a, &path, &md, stop, progress)?;
    let size = job_size(a.size, &target, &path, a.bs)?;
    let eng = a.engine;
    let job = IoJob {
        pattern: a.pattern,
        rwmix_read: a.rwmix_read.unwrap_or(50),
        bs: a.bs,
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

/// The target: a new file in a directory, or an existing file/device.
fn open_target(
    a: &IoSpec,
    path: &Path,
    md: &Metadata,
    stop: &AtomicBool,
    progress: &dyn Progress,
) -> Result<TestFile> {
    if md.is_dir() {
        create_test_file(a, path, stop, progress)
    } else {
        existing_target(a, a.pattern, path, md)
    }
}

/// Create and fill a test file of --size (default 1 GiB, whole blocks) in
/// the directory `dir`; the probe removes it again on failure or a signal.
fn create_test_file(a: &IoSpec, dir: &Path, stop: &AtomicBool, progress: &dyn Progress) -> Result<TestFile> {
    let bs = a.bs;
    let size = a.size.unwrap_or(DEFAULT_SIZE) / bs * bs;
    if size == 0 {
        usage!("--size must hold at least one block of --bs {bs}");
    }
    for (f, bytes) in hwcal_probes::io::remove_leftovers(dir) {
        progress.say(&format!(
            "io: removed {} ({}), a test file an interrupted hwcal left",
            f.display(),
            human_bytes(bytes)
        ));
    }
    progress.say(&format!(
        "io: creating a {} test file in {}",
        human_bytes(size),
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
fn existing_target(a: &IoSpec, pat: Pattern, path: &Path, md: &Metadata) -> Result<TestFile> {
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
fn announce(progress: &dyn Progress, a: &IoSpec, job: &IoJob, target: &TestFile) {
    progress.say(&format!(
        "io: {} bs={} {} iodepth={} threads={}{} on {}, {}",
        job.pattern.name(),
        human_bytes(job.bs),
        job.engine.name(),
        job.iodepth,
        job.threads,
        if a.direct { " O_DIRECT" } else { "" },
        target.path().display(),
        match a.time {
            Some(t) => format!("for {t} s"),
            None => format!("one pass over {}", human_bytes(job.size)),
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
    let intervals: Vec<f64> = r.interval_ios.iter().map(|&n| n as f64 / r.interval_s).collect();
    let (iops, bytes_per_sec) = (rate(r.ios(), wall_s), rate(r.bytes(), wall_s));
    let iops_ci95 = hwcal_analysis::io::iops_ci95(&intervals, iops);
    let pct = |p: f64| h.percentile_ci95(p).map(|(lo, hi)| [lo / 1e3, hi / 1e3]);
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
        iops,
        bytes_per_sec,
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
        iops_intervals: intervals.clone(),
        verdict: Some(hwcal_analysis::io::verdict(&intervals, r.ios())),
        iops_ci95,
        bytes_per_sec_ci95: iops_ci95
            .filter(|_| iops > 0.0)
            .map(|[lo, hi]| [lo * bytes_per_sec / iops, hi * bytes_per_sec / iops]),
        lat_p50_us_ci95: pct(50.0),
        lat_p99_us_ci95: pct(99.0),
        lat_p999_us_ci95: pct(99.9),
    }
}

/// The notes on a finished job (see `hwcal_analysis::io::notes`).
fn notes(job: &IoJob, r: &IoRun) -> Vec<Note> {
    hwcal_analysis::io::notes(
        job.direct,
        job.pattern.read_pct(job.rwmix_read) > 0,
        job.pattern.writes(),
        r.ios(),
    )
}

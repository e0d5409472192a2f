//! Operating-system latencies as lmbench reports them (McVoy & Staelin,
//! USENIX 1996; `lat_syscall`, `lat_sig`, `lat_proc`, `lat_pagefault`,
//! `lat_pipe`, `lat_unix`, `bw_pipe`): the cost of one system call, one
//! signal, one process, one page fault, one pipe or socket round trip, and
//! the rate a pipe moves data. They move with the kernel, its
//! speculative-execution mitigations (each system call entry pays them),
//! the hypervisor and the container, which is why people compare them.
//!
//! Each operation runs in batches timed with the harness timer, the batch
//! long enough (tens to hundreds of µs) that one timer read is lost in it;
//! the figure is the median of the batches' per-operation times, and their
//! spread says how quiet the machine was (the analysis judges it).

use crate::ProbeError;
use hwcal_harness::Timer;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// One measured operation. The order is the raw curve's x (append only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OsOp {
    /// `getppid()`: the cost of entering and leaving the kernel (lmbench
    /// "Simple syscall").
    Null,
    /// `read()` of one byte from `/dev/zero`.
    Read,
    /// `write()` of one byte to `/dev/null`.
    Write,
    /// `stat()` of a file in a temporary directory.
    Stat,
    /// `fstat()` of an open file.
    Fstat,
    /// `open()` + `close()` of that file.
    OpenClose,
    /// `sigaction()` installing a handler (lmbench "Signal handler installation").
    SigInstall,
    /// A signal sent to ourselves (`tgkill`, as lmbench's `kill(getpid())`)
    /// and the handler's run, less a send of the null signal (lmbench
    /// "Signal handler overhead": the delivery, not the system call).
    SigCatch,
    /// `fork()`, the child's `_exit()`, the parent's `waitpid()`.
    ForkExit,
    /// `fork()`, the child's `execve()` of `true`, the parent's `waitpid()`.
    ForkExec,
    /// The first write to a fresh anonymous 4 KiB page (zeroing and mapping it).
    PageFault,
    /// A token to a child process and back over two pipes (lmbench
    /// "Pipe latency": the round trip).
    PipeRoundTrip,
    /// Reads of a page-cache-resident file mapped shared, one byte per
    /// 4 KiB page in a random order (lmbench's `lat_pagefault`: the time per
    /// page touched, which the kernel's fault-around maps up to 16 at a time).
    PageFaultFile,
    /// A token to a child and back over an AF_UNIX stream socket pair
    /// (lmbench "AF_UNIX sock stream latency": the round trip).
    UnixRoundTrip,
    /// 64 KiB chunks from a writing child through a pipe (lmbench's
    /// `bw_pipe`): the per-chunk time, which the analysis turns into a rate.
    PipeBandwidth,
}

/// Bytes per chunk of the pipe-bandwidth operation (lmbench's XFERSIZE: the
/// default pipe buffer, so each chunk is one fill and one drain).
pub const PIPE_CHUNK: usize = 64 * 1024;

impl OsOp {
    /// Every operation, in the raw curve's order.
    pub const ALL: [OsOp; 15] = [
        OsOp::Null,
        OsOp::Read,
        OsOp::Write,
        OsOp::Stat,
        OsOp::Fstat,
        OsOp::OpenClose,
        OsOp::SigInstall,
        OsOp::SigCatch,
        OsOp::ForkExit,
        OsOp::ForkExec,
        OsOp::PageFault,
        OsOp::PipeRoundTrip,
        OsOp::PageFaultFile,
        OsOp::UnixRoundTrip,
        OsOp::PipeBandwidth,
    ];

    /// The stable id (figure ids, `--only`).
    pub fn id(self) -> &'static str {
        match self {
            OsOp::Null => "null",
            OsOp::Read => "read",
            OsOp::Write => "write",
            OsOp::Stat => "stat",
            OsOp::Fstat => "fstat",
            OsOp::OpenClose => "open_close",
            OsOp::SigInstall => "sig_install",
            OsOp::SigCatch => "sig_catch",
            OsOp::ForkExit => "fork_exit",
            OsOp::ForkExec => "fork_exec",
            OsOp::PageFault => "page_fault",
            OsOp::PipeRoundTrip => "pipe",
            OsOp::PageFaultFile => "page_fault_file",
            OsOp::UnixRoundTrip => "unix",
            OsOp::PipeBandwidth => "pipe_bw",
        }
    }

    /// The name lmbench prints for it.
    pub fn lmbench_name(self) -> &'static str {
        match self {
            OsOp::Null => "Simple syscall",
            OsOp::Read => "Simple read",
            OsOp::Write => "Simple write",
            OsOp::Stat => "Simple stat",
            OsOp::Fstat => "Simple fstat",
            OsOp::OpenClose => "Simple open/close",
            OsOp::SigInstall => "Signal handler installation",
            OsOp::SigCatch => "Signal handler overhead",
            OsOp::ForkExit => "Process fork+exit",
            OsOp::ForkExec => "Process fork+execve",
            OsOp::PageFault => "Anonymous page fault",
            OsOp::PipeRoundTrip => "Pipe latency",
            OsOp::PageFaultFile => "Pagefaults on file",
            OsOp::UnixRoundTrip => "AF_UNIX sock stream latency",
            OsOp::PipeBandwidth => "Pipe bandwidth",
        }
    }

    /// Operations per timed batch: enough for ~50–500 µs on today's
    /// machines, few enough that a batch rarely meets an interrupt.
    fn per_batch(self) -> usize {
        match self {
            OsOp::Null | OsOp::Read | OsOp::Write | OsOp::Fstat | OsOp::SigInstall => 1000,
            OsOp::Stat | OsOp::OpenClose | OsOp::SigCatch => 200,
            // 1 MiB: lmbench's smallest file for lat_pagefault.
            OsOp::PageFault | OsOp::PageFaultFile => 256,
            OsOp::PipeRoundTrip | OsOp::UnixRoundTrip => 20,
            // 2 MiB a batch: a few hundred µs at today's pipe rates.
            OsOp::PipeBandwidth => 32,
            OsOp::ForkExit | OsOp::ForkExec => 2,
        }
    }

    pub fn by_id(id: &str) -> Option<OsOp> {
        OsOp::ALL.into_iter().find(|o| o.id() == id)
    }
}

/// The kernel's speculative-execution mitigations as sysfs states them
/// (`/sys/devices/system/cpu/vulnerabilities/NAME`: `(NAME, state)`,
/// sorted): every system call entry pays for them, so they belong beside
/// these figures.
pub fn mitigations() -> Vec<(String, String)> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities") else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = dir
        .flatten()
        .filter_map(|e| {
            let state = std::fs::read_to_string(e.path()).ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                state.trim().to_string(),
            ))
        })
        .collect();
    out.sort();
    out
}

/// Batches thrown away first (caches, the page tables, the first fork's
/// copy of a large address space's page tables).
pub const WARM_UP_BATCHES: usize = 2;

/// Microseconds per operation, one value per batch, `batches` of them; the
/// file operations use a small file created in `scratch` and removed after.
pub fn measure(op: OsOp, batches: usize, scratch: &std::path::Path) -> Result<Vec<f64>, ProbeError> {
    let timer = Timer::get();
    let n = op.per_batch();
    let dir = private_dir(scratch)?;
    let file = dir.join("probe");
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"hwcal\n"));
    if let Err(e) = made {
        let _ = std::fs::remove_dir(&dir);
        return Err(e.into());
    }
    if matches!(op, OsOp::ForkExit | OsOp::ForkExec) {
        trim_heap();
    }
    let result = (|| {
        let mut run = kernel(op, &file)?;
        let mut out = Vec::with_capacity(batches);
        for b in 0..WARM_UP_BATCHES + batches {
            // A difference of two times (file page faults, signals) can come out
            // at or below zero when an interrupt lands in the subtracted
            // part: such a batch is run again, never stored.
            let mut ns = run(n, timer)?;
            for _ in 0..3 {
                if ns > 0.0 {
                    break;
                }
                ns = run(n, timer)?;
            }
            if ns <= 0.0 {
                return Err(ProbeError::Failed(format!(
                    "{}: a batch took no time four times running",
                    op.id()
                )));
            }
            if b >= WARM_UP_BATCHES {
                out.push(ns / n as f64 / 1e3);
            }
        }
        Ok(out)
    })();
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir(&dir);
    result
}

/// A new directory only this user can enter, under `scratch`: the file
/// operations' file lives in it. A fixed or guessable name in a shared
/// directory such as /tmp lets another user plant a symbolic link there
/// (a root hwcal would then overwrite the file it points to), a FIFO (the
/// open would block forever) or a directory (the write would fail); a
/// directory made by `mkdir`, which never follows a link in its last
/// component and fails if the name exists, under a name nobody can
/// predict, with mode 0700, has none of these.
fn private_dir(scratch: &std::path::Path) -> Result<std::path::PathBuf, ProbeError> {
    use std::os::unix::fs::DirBuilderExt;
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let mut last = None;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        // The address of a local adds what ASLR randomises to the name.
        let salt = &seq as *const u64 as usize as u64;
        let tag = (u64::from(nanos) ^ salt.rotate_left(17) ^ seq.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            & 0xffff_ffff_ffff;
        let dir = scratch.join(format!("hwcal-os-{}-{tag:012x}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.map_or_else(|| ProbeError::Failed("no scratch directory".into()), Into::into))
}

/// A batch runner: `n` operations, returns the ns they took.
type Kernel = Box<dyn FnMut(usize, &Timer) -> Result<f64, ProbeError>>;

fn os_err(what: &str) -> ProbeError {
    ProbeError::Failed(format!("{what}: {}", std::io::Error::last_os_error()))
}

fn cpath(p: &std::path::Path) -> Result<CString, ProbeError> {
    CString::new(p.as_os_str().as_encoded_bytes())
        .map_err(|_| ProbeError::InvalidInput(format!("{}: a NUL in the path", p.display())))
}

/// Time `n` calls of `f`.
fn timed(timer: &Timer, n: usize, mut f: impl FnMut() -> bool, what: &str) -> Result<f64, ProbeError> {
    let t0 = timer.now();
    for _ in 0..n {
        if !f() {
            return Err(os_err(what));
        }
    }
    Ok(timer.elapsed_ns(t0, timer.now()))
}

static CAUGHT: AtomicU64 = AtomicU64::new(0);

extern "C" fn count_signal(_: libc::c_int) {
    // Async-signal-safe: one atomic add.
    CAUGHT.fetch_add(1, Ordering::Relaxed);
}

/// The batch runner of `op`; `file` exists for the file operations.
fn kernel(op: OsOp, file: &std::path::Path) -> Result<Kernel, ProbeError> {
    let file_c = cpath(file)?;
    Ok(match op {
        OsOp::Null => Box::new(|n, t| {
            // SAFETY: getppid has no arguments and cannot fail.
            timed(t, n, || unsafe { libc::getppid() } >= 0, "getppid")
        }),
        OsOp::Read => {
            let fd = std::fs::File::open("/dev/zero")?;
            Box::new(move |n, t| {
                // The whole file, not only its number: it must stay open
                // as long as the closure lives.
                let fd = &fd;
                let mut c = 0u8;
                // SAFETY: one byte into a live local, from an open descriptor.
                timed(
                    t,
                    n,
                    || unsafe { libc::read(fd.as_raw_fd(), (&mut c as *mut u8).cast(), 1) } == 1,
                    "read /dev/zero",
                )
            })
        }
        OsOp::Write => {
            let fd = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
            Box::new(move |n, t| {
                let fd = &fd;
                let c = 0u8;
                // SAFETY: one byte from a live local, to an open descriptor.
                timed(
                    t,
                    n,
                    || unsafe { libc::write(fd.as_raw_fd(), (&c as *const u8).cast(), 1) } == 1,
                    "write /dev/null",
                )
            })
        }
        OsOp::Stat => Box::new(move |n, t| {
            // SAFETY: stat writes into a zeroed buffer of its own type; the
            // path is NUL-terminated.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            timed(
                t,
                n,
                || unsafe { libc::stat(file_c.as_ptr(), &mut st) } == 0,
                "stat",
            )
        }),
        OsOp::Fstat => {
            let fd = std::fs::File::open(file)?;
            Box::new(move |n, t| {
                let fd = &fd;
                // SAFETY: fstat writes into a zeroed buffer of its own type.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                // SAFETY: as above, on an open descriptor.
                timed(
                    t,
                    n,
                    || unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0,
                    "fstat",
                )
            })
        }
        OsOp::OpenClose => Box::new(move |n, t| {
            timed(
                t,
                n,
                || {
                    // SAFETY: a NUL-terminated path; a valid descriptor is closed at once.
                    let fd = unsafe { libc::open(file_c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
                    // SAFETY: closes only what this call opened.
                    fd >= 0 && unsafe { libc::close(fd) } == 0
                },
                "open/close",
            )
        }),
        OsOp::SigInstall => Box::new(|n, t| {
            let sa = handler_action();
            let mut old = handler_action();
            let r = timed(
                t,
                n,
                // SAFETY: valid sigaction structures; SIGUSR1's handler is
                // restored below.
                || unsafe { libc::sigaction(libc::SIGUSR1, &sa, &mut old) } == 0,
                "sigaction",
            );
            // SAFETY: puts back the handler found before the first install.
            unsafe { libc::sigaction(libc::SIGUSR1, &old, std::ptr::null_mut()) };
            r
        }),
        OsOp::SigCatch => Box::new(|n, t| {
            let sa = handler_action();
            let mut old = handler_action();
            // SAFETY: valid sigaction structures; restored below.
            if unsafe { libc::sigaction(libc::SIGUSR1, &sa, &mut old) } != 0 {
                return Err(os_err("sigaction"));
            }
            let before = CAUGHT.load(Ordering::Relaxed);
            // One system call per signal, as lmbench's kill(getpid()) in its
            // single-threaded process: tgkill to this thread (in a threaded
            // process no other thread may take it; glibc's raise would add
            // two sigprocmask calls around it).
            // SAFETY: getpid and gettid cannot fail.
            let (pid, tid) = unsafe { (libc::getpid(), libc::gettid()) };
            // SAFETY: signal 0 only checks that the thread exists; SIGUSR1's
            // handler only counts and runs before the system call returns
            // (the signal is not blocked).
            let send =
                |sig: libc::c_int| move || unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, sig) } == 0;
            // lmbench's "overhead" is the handler's: the catching send less
            // a send of the null signal (the system call and its checks),
            // about 0.4 µs of the 2.4 on a Zen 4 guest.
            let r = timed(t, n, send(0), "tgkill 0")
                .and_then(|null| timed(t, n, send(libc::SIGUSR1), "tgkill").map(|caught| caught - null));
            // SAFETY: puts back the handler found before.
            unsafe { libc::sigaction(libc::SIGUSR1, &old, std::ptr::null_mut()) };
            if CAUGHT.load(Ordering::Relaxed) - before < n as u64 {
                return Err(ProbeError::Failed("signals sent were not all caught".into()));
            }
            r
        }),
        OsOp::ForkExit => Box::new(|n, t| timed(t, n, || fork_and(None), "fork")),
        OsOp::ForkExec => {
            let prog = ["/bin/true", "/usr/bin/true"]
                .into_iter()
                .find(|p| std::path::Path::new(p).exists())
                .ok_or_else(|| ProbeError::Unsupported("execve: no /bin/true".into()))?;
            let prog = CString::new(prog).unwrap_or_default();
            Box::new(move |n, t| timed(t, n, || fork_and(Some(&prog)), "fork+execve"))
        }
        OsOp::PageFault => Box::new(page_faults),
        OsOp::PipeRoundTrip => {
            let (to_rd, to_wr) = crate::ctx::pipe()?;
            let (from_rd, from_wr) = crate::ctx::pipe()?;
            round_trips(Ends::new(to_rd, Some(from_wr)), Ends::new(to_wr, Some(from_rd)))?
        }
        OsOp::PageFaultFile => file_page_faults(file, op.per_batch())?,
        OsOp::UnixRoundTrip => {
            let (child, parent) = socket_pair()?;
            round_trips(Ends::new(child, None), Ends::new(parent, None))?
        }
        OsOp::PipeBandwidth => pipe_bandwidth()?,
    })
}

fn handler_action() -> libc::sigaction {
    // SAFETY: sigaction is plain data; zeroed is a valid empty action.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = count_signal as extern "C" fn(libc::c_int) as usize;
    sa
}

/// Hands the allocator's free memory back to the kernel before fork is
/// timed. Fork copies the page-table entries of every resident page of the
/// parent and write-protects them (each then costs the parent a fault on its
/// next write), so its cost grows with the parent's resident set: inside
/// `hwcal run`, after the cache probe, glibc's heap held 16 MiB of freed
/// memory and fork+exit read 570–860 µs where `hwcal os` alone reads
/// 120–170 µs (a Zen 4 guest). lmbench's `lat_proc` forks a process of a
/// few MiB; what is freed is not part of the process being measured.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory the allocator holds free; it
    // takes the allocator's own locks and touches no memory of ours.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The parent's resident set (bytes) from /proc/self/status, where the
/// kernel states it: the size fork's cost grows with ([`trim_heap`]).
pub fn resident_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Fork; the child exits at once (or execs `prog`, then exits 127 if that
/// fails); the parent waits for it. True when the child exited with 0.
fn fork_and(prog: Option<&CString>) -> bool {
    // SAFETY: the child calls only async-signal-safe functions (execve,
    // _exit) before it ends, as fork in a threaded process requires.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        if let Some(p) = prog {
            let argv = [p.as_ptr(), std::ptr::null()];
            let envp = [std::ptr::null()];
            // SAFETY: NUL-terminated argv and envp arrays of live strings.
            unsafe { libc::execve(p.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
            // SAFETY: async-signal-safe exit of the child.
            unsafe { libc::_exit(127) };
        }
        // SAFETY: async-signal-safe exit of the child.
        unsafe { libc::_exit(0) };
    }
    if pid < 0 {
        return false;
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    r == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

/// `n` first writes to fresh anonymous 4 KiB pages (huge pages declined,
/// so each write is one fault); the mapping and unmapping are not timed.
fn page_faults(n: usize, timer: &Timer) -> Result<f64, ProbeError> {
    let page = 4096usize;
    let len = n * page;
    // SAFETY: a fresh private anonymous mapping; checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(os_err("mmap"));
    }
    // SAFETY: advice on the mapping just made; failure only leaves THP as
    // the system's policy says.
    unsafe { libc::madvise(p, len, libc::MADV_NOHUGEPAGE) };
    let base = p.cast::<u8>();
    let t0 = timer.now();
    for k in 0..n {
        // SAFETY: k * page < len: inside the mapping, writable.
        unsafe { base.add(k * page).write_volatile(1) };
    }
    let ns = timer.elapsed_ns(t0, timer.now());
    // SAFETY: unmaps exactly the mapping made above.
    unsafe { libc::munmap(p, len) };
    Ok(ns)
}

/// One side's descriptors of a two-way channel: two pipe ends (read,
/// write) or one socket used both ways.
struct Ends {
    first: OwnedFd,
    second: Option<OwnedFd>,
}

impl Ends {
    fn new(first: OwnedFd, second: Option<OwnedFd>) -> Ends {
        Ends { first, second }
    }
    /// The descriptor written to and the one read from (the child reads
    /// `first`, the parent writes it: a pipe's two ends cross over).
    fn fds(&self) -> (RawFd, RawFd) {
        let a = self.first.as_raw_fd();
        (a, self.second.as_ref().map_or(a, |f| f.as_raw_fd()))
    }
}

/// lmbench's `lat_pipe` and `lat_unix`: a two-member ring of
/// `hwcal_probes::ctx` (this process and a forked child that echoes each
/// token back), a batch being `n` round trips with no work between them.
/// `child` holds the child's (read, write) ends, `parent` the parent's
/// (write, read) ends.
fn round_trips(child: Ends, parent: Ends) -> Result<Kernel, ProbeError> {
    let (rd, wr) = child.fds();
    let echo = Child::spawn(parent, || {
        crate::ctx::member_loop(rd, wr, &[], None);
    })?;
    drop(child);
    Ok(Box::new(move |n, t| {
        // The whole child (its descriptors, its reaping), not only the numbers.
        let echo = &echo;
        let (wr, rd) = echo.ends.as_ref().map_or((-1, -1), Ends::fds);
        let mut tok = 0u64;
        let t0 = t.now();
        if !crate::ctx::pass(wr, rd, n as u64, &[], &mut tok) {
            return Err(os_err("round trip"));
        }
        Ok(t.elapsed_ns(t0, t.now()))
    }))
}

/// lmbench's `bw_pipe`: a forked child writes 64 KiB chunks into a pipe
/// until it closes; a batch is this process reading `n` whole chunks.
fn pipe_bandwidth() -> Result<Kernel, ProbeError> {
    let (rd, wr) = crate::ctx::pipe()?;
    // Allocated before fork: the child must not allocate.
    let chunk = vec![1u8; PIPE_CHUNK];
    let wfd = wr.as_raw_fd();
    let writer = Child::spawn(Ends::new(rd, None), || loop {
        // SAFETY: writes from a live buffer of PIPE_CHUNK bytes; the loop
        // ends when the reader closes the pipe (EPIPE: SIGPIPE is ignored
        // in Rust programs, and the child inherits that).
        let r = unsafe { libc::write(wfd, chunk.as_ptr().cast(), PIPE_CHUNK) };
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    })?;
    drop(wr);
    let mut buf = vec![0u8; PIPE_CHUNK];
    Ok(Box::new(move |n, t| {
        let writer = &writer;
        let fd = writer.ends.as_ref().map_or(-1, |e| e.fds().0);
        let want = n * PIPE_CHUNK;
        let mut got = 0usize;
        let t0 = t.now();
        while got < want {
            let ask = PIPE_CHUNK.min(want - got);
            // SAFETY: reads at most `ask` ≤ buf.len() bytes into a live buffer.
            let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), ask) };
            if r > 0 {
                got += r as usize;
            } else if r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return Err(os_err("pipe read"));
            }
        }
        Ok(t.elapsed_ns(t0, t.now()))
    }))
}

/// An AF_UNIX stream socket pair, both ends close-on-exec.
fn socket_pair() -> Result<(OwnedFd, OwnedFd), ProbeError> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: socketpair writes two descriptors into the 2-element array.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(os_err("socketpair"));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// `n` reads of a 1 MiB page-cache-resident file mapped shared, one byte
/// per page in a random order, a fresh mapping per batch (lmbench's
/// `lat_pagefault`): the touches and the unmapping, less the unmapping of
/// an untouched mapping.
fn file_page_faults(file: &std::path::Path, pages: usize) -> Result<Kernel, ProbeError> {
    let page = 4096usize;
    // Written a page at a time: the page cache then holds 4 KiB pages, as
    // for a file that grew by small writes. One 1 MiB write gets large
    // folios on recent kernels (ext4, tmpfs), which fault in whole: lmbench
    // reads 0.09 µs per page there against 0.26 on 4 KiB pages of the same
    // machine (Linux 6.18, Zen 4 guest).
    {
        use std::io::Write;
        let mut w = std::fs::File::create(file)?;
        let one = [1u8; 4096];
        for _ in 0..pages {
            w.write_all(&one)?;
        }
    }
    let f = std::fs::File::open(file)?;
    // A random order, as lmbench's: in file order the kernel's read-ahead
    // and fault-around would serve most pages before they are touched.
    let mut order: Vec<usize> = (0..pages).collect();
    let mut rng = hwcal_stats::SplitMix64::new(0x05_fa_17);
    for i in (1..pages).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    Ok(Box::new(move |n, t| {
        let len = n.min(pages) * page;
        let map = || {
            // SAFETY: a fresh read-only shared mapping of an open file at
            // least `len` long; checked by the caller.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    f.as_raw_fd(),
                    0,
                )
            };
            (p != libc::MAP_FAILED).then_some(p).ok_or_else(|| os_err("mmap"))
        };
        let p = map()?;
        let base = p.cast::<u8>();
        let mut sum = 0u8;
        let t0 = t.now();
        for &k in order.iter().filter(|&&k| k * page < len) {
            // SAFETY: k * page < len: inside the mapping, readable.
            sum = sum.wrapping_add(unsafe { base.add(k * page).read_volatile() });
        }
        // The teardown of what the faults built (page-table entries, page
        // references) is part of a fault's cost, as in lmbench, whose time
        // is a touched mapping's life less an untouched one's.
        // SAFETY: unmaps exactly the mapping made above.
        unsafe { libc::munmap(p, len) };
        let touched = t.elapsed_ns(t0, t.now());
        std::hint::black_box(sum);
        let q = map()?;
        let t1 = t.now();
        // SAFETY: unmaps exactly the mapping just made.
        unsafe { libc::munmap(q, len) };
        Ok(touched - t.elapsed_ns(t1, t.now()))
    }))
}

/// A forked child running `body` (async-signal-safe: system calls and
/// memory allocated before the fork only) and the parent's ends of its
/// channel; dropping closes them (the child then sees EOF or EPIPE and
/// exits) and reaps it.
struct Child {
    pid: libc::pid_t,
    ends: Option<Ends>,
}

impl Child {
    fn spawn(parent: Ends, body: impl FnOnce()) -> Result<Child, ProbeError> {
        // SAFETY: the child runs `body`, which only makes system calls on
        // descriptors and buffers that exist before the fork, then exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // The parent's ends closed here: otherwise this child holds the
            // other side of its own channel and never sees it end.
            drop(parent);
            body();
            // SAFETY: async-signal-safe exit of the child.
            unsafe { libc::_exit(0) };
        }
        if pid < 0 {
            return Err(os_err("fork"));
        }
        Ok(Child {
            pid,
            ends: Some(parent),
        })
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.ends = None;
        let mut status = 0;
        // SAFETY: reaps the child this value forked.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_resident_set_fork_copies_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            // The test binary itself: more than a page, less than a TiB.
            let b = resident_bytes().expect("VmRSS in /proc/self/status");
            assert!(b > 4096 && b < 1 << 40, "{b}");
        }
    }

    use super::*;

    /// A scratch directory of this test's own under the system's temporary
    /// directory, removed at the end.
    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("hwcal-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        d
    }

    #[test]
    fn the_file_operations_never_follow_what_another_user_planted() {
        use std::os::unix::fs::PermissionsExt;
        let d = scratch("os-plant");
        let victim = d.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        // The names an older hwcal used, planted as a link and a directory.
        std::os::unix::fs::symlink(&victim, d.join(format!("hwcal-os-probe-{}", std::process::id())))
            .unwrap();
        std::fs::create_dir(d.join(format!("hwcal-os-{}", std::process::id()))).unwrap();
        let mine = private_dir(&d).unwrap();
        assert_eq!(
            std::fs::metadata(&mine).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_ne!(private_dir(&d).unwrap(), mine, "every directory is new");
        assert!(measure(OsOp::Stat, 1, &d).is_ok());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_scratch_directory_is_gone_after_a_measurement() {
        let d = scratch("os-clean");
        assert!(measure(OsOp::OpenClose, 1, &d).is_ok());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn ids_are_unique_and_found() {
        for op in OsOp::ALL {
            assert_eq!(OsOp::by_id(op.id()), Some(op));
        }
        assert_eq!(OsOp::by_id("nosuch"), None);
    }

    #[test]
    fn every_operation_measures_within_broad_bounds() {
        if hwcal_harness::platform::skip_if_emulated("os latencies") {
            return;
        }
        let dir = std::env::temp_dir();
        // The forking operations are left to the CLI's test (its own
        // process): their children would meet this crate's test that
        // counts its forked ring members.
        let forking = [
            OsOp::ForkExit,
            OsOp::ForkExec,
            OsOp::PipeRoundTrip,
            OsOp::UnixRoundTrip,
            OsOp::PipeBandwidth,
        ];
        for op in OsOp::ALL.into_iter().filter(|o| !forking.contains(o)) {
            let v = measure(op, 3, &dir).unwrap_or_else(|e| panic!("{op:?}: {e}"));
            assert_eq!(v.len(), 3);
            // More than a nanosecond, less than 100 ms per operation.
            assert!(v.iter().all(|&x| x > 1e-3 && x < 1e5), "{op:?}: {v:?}");
        }
    }
}

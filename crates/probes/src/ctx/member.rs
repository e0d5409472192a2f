//! A ring member's side of the context-switch probe: the token passed over
//! pipes, the array sum each member does per hop, and the forked child that
//! runs a member (async-signal-safe after `fork`: system calls and its own
//! memory only).

use crate::error::ProbeError;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// Sum of the array — the "work" each member does per hop. Eight
/// independent accumulators (an unrolled loop that reads every word, hence
/// every line of the array); `black_box` on the input keeps the compiler from
/// knowing the contents, and the result flows into the token that is written
/// to a pipe, so nothing can be elided.
#[inline(never)]
pub fn sum_words(a: &[u64]) -> u64 {
    let a = std::hint::black_box(a);
    let mut acc = [0u64; 8];
    let mut chunks = a.chunks_exact(8);
    for c in &mut chunks {
        for j in 0..8 {
            acc[j] = acc[j].wrapping_add(c[j]);
        }
    }
    let mut s = chunks.remainder().iter().fold(0u64, |s, &x| s.wrapping_add(x));
    for x in acc {
        s = s.wrapping_add(x);
    }
    s
}

/// Bytes per token (lat_ctx passes an int).
const TOKEN: usize = std::mem::size_of::<u64>();

/// Write the token; false on error or a closed pipe. No allocation (used
/// after fork).
#[inline]
pub(super) fn write_token(fd: RawFd, tok: u64) -> bool {
    let buf = tok.to_ne_bytes();
    loop {
        // SAFETY: `buf` is a live 8-byte stack buffer; write(2) only reads it.
        let r = unsafe { libc::write(fd, buf.as_ptr().cast(), TOKEN) };
        if r == TOKEN as isize {
            return true;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        // 8 bytes < PIPE_BUF: a pipe write is atomic, so a short write means
        // the pipe is gone.
        return false;
    }
}

/// Read the token; false on EOF or error. No allocation (used after fork).
#[inline]
fn read_token(fd: RawFd, tok: &mut u64) -> bool {
    let mut buf = [0u8; TOKEN];
    loop {
        // SAFETY: `buf` is a live 8-byte stack buffer that read(2) fills.
        let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), TOKEN) };
        if r == TOKEN as isize {
            *tok = u64::from_ne_bytes(buf);
            return true;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        // 0 = EOF: the previous member is gone. Tokens are written whole, so
        // a short read does not happen on a healthy ring.
        return false;
    }
}

/// The timing thread's part of a round trip, `iters` times: pass the token
/// on, wait for it to come back, do the work. The same sequence on a pipe to
/// itself is the overhead.
#[inline]
pub(crate) fn pass(wr: RawFd, rd: RawFd, iters: u64, arr: &[u64], tok: &mut u64) -> bool {
    for _ in 0..iters {
        if !write_token(wr, *tok) || !read_token(rd, tok) {
            return false;
        }
        *tok = tok.wrapping_add(sum_words(arr));
    }
    true
}

/// A ring member's life: read, work, write, until the ring breaks or `stop`
/// is set. Shared by forked children (no allocation inside) and threads.
pub(crate) fn member_loop(rd: RawFd, wr: RawFd, arr: &[u64], stop: Option<&AtomicBool>) {
    let mut tok = 0u64;
    loop {
        if !read_token(rd, &mut tok) {
            return;
        }
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return;
        }
        tok = tok.wrapping_add(sum_words(arr));
        if !write_token(wr, tok) {
            return;
        }
    }
}

/// A pipe, both ends close-on-exec.
pub(crate) fn pipe() -> Result<(OwnedFd, OwnedFd), ProbeError> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the 2-element array.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if r != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A CPU set with one CPU, built before fork so the child only copies it.
pub(super) fn cpu_set_of(cpu: usize) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET bounds-checks `cpu` against the set's size.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    set
}

/// Everything a forked child needs, prepared before fork.
pub(super) struct ChildSpec {
    pub(super) rd: RawFd,
    pub(super) wr: RawFd,
    pub(super) arr: *mut u64,
    pub(super) len: usize,
    pub(super) cpu: Option<libc::cpu_set_t>,
    pub(super) inject: bool,
    pub(super) parent: libc::pid_t,
}

/// Close every descriptor except 0–2 and the member's two pipe ends, so a
/// child holds no other ring's pipes open (EOF must reach the right reader)
/// and no file of the parent's. Only system calls: safe after fork.
fn close_other_fds(a: RawFd, b: RawFd) {
    let (lo, hi) = (a.min(b) as libc::c_uint, a.max(b) as libc::c_uint);
    let close_range = |first: libc::c_uint, last: libc::c_uint| -> bool {
        if first > last {
            return true;
        }
        // SAFETY: close_range(2) only closes descriptors of this process.
        unsafe { libc::syscall(libc::SYS_close_range, first, last, 0 as libc::c_uint) == 0 }
    };
    let ok = close_range(3, lo.saturating_sub(1))
        && close_range(lo + 1, hi.saturating_sub(1))
        && close_range(hi + 1, libc::c_uint::MAX);
    if !ok {
        // Kernels before 5.9: close one by one up to a generous bound.
        for fd in 3..4096 {
            if fd != a && fd != b {
                // SAFETY: closing a descriptor number this process may not
                // have open is harmless (EBADF).
                unsafe { libc::close(fd) };
            }
        }
    }
}

/// Body of a forked ring member. Never returns.
///
/// # Safety
/// Must be called only in a freshly forked child, with `spec.arr` pointing
/// to `spec.len` words that the parent allocated before forking.
unsafe fn child_main(spec: &ChildSpec) -> ! {
    // Only async-signal-safe system calls and plain memory accesses to the
    // child's own copy of the array follow: no allocation, no lock.
    //
    // Die with the parent, even by SIGKILL; then check it did not die
    // before the prctl took effect.
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets this process's attribute.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) };
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != spec.parent {
        // SAFETY: _exit ends this child at once, running no handlers.
        unsafe { libc::_exit(0) };
    }
    if let Some(set) = &spec.cpu {
        // SAFETY: `set` is a whole cpu_set_t that outlives the call, and its
        // size is passed with it.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
    }
    close_other_fds(spec.rd, spec.wr);
    // Write every word: the pages the parent allocated are shared
    // copy-on-write after fork; writing gives this member private pages,
    // so each member really has its own array in the caches.
    // SAFETY: getpid has no preconditions.
    let salt = unsafe { libc::getpid() } as u64;
    for i in 0..spec.len {
        // SAFETY: i < spec.len, and `spec.arr` points to `spec.len` words
        // the parent allocated before forking (this function's contract),
        // now this child's own copy.
        unsafe { spec.arr.add(i).write_volatile((i as u64) ^ salt) };
    }
    // SAFETY: the same `spec.len` initialised, aligned words, alive until
    // `_exit`; nothing else in this process writes them from here on.
    let arr = unsafe { std::slice::from_raw_parts(spec.arr as *const u64, spec.len) };
    if spec.inject && !write_token(spec.wr, 0) {
        // SAFETY: as above, _exit ends the child at once.
        unsafe { libc::_exit(0) };
    }
    member_loop(spec.rd, spec.wr, arr, None);
    // SAFETY: as above, _exit ends the child at once.
    unsafe { libc::_exit(0) }
}

/// Fork one ring member.
pub(super) fn fork_member(spec: &ChildSpec) -> Result<libc::pid_t, ProbeError> {
    // SAFETY: the child runs only `child_main`, which allocates nothing,
    // takes no lock and never returns; the parent continues normally.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    if pid == 0 {
        // SAFETY: we are the freshly forked child; `spec.arr` is the parent's
        // allocation of `spec.len` words, copied into this address space.
        unsafe { child_main(spec) }
    }
    Ok(pid)
}

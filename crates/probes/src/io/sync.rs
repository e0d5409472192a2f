//! The `sync` and `psync` engines (fio's names): one I/O at a time per
//! thread, `lseek` + `read`/`write` (seeking only when the position changes)
//! or `pread`/`pwrite`.

use super::cursor::{Cursor, NextIo};
use super::file::invalidate_range;
use super::job::{os, Engine, IoError, IoJob, ThreadStats};
use super::shared::{account, stamp, Shared};
use crate::buffer::Buffer;
use hwcal_harness::Timer;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::Ordering;

pub(super) fn sync_loop(
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

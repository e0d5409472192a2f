//! The test file's life cycle: a uniquely named file created with
//! `O_EXCL`, checked for free space, preallocated, filled with
//! incompressible data and removed on drop; opening the target for a job and
//! dropping its pages from the page cache (fio's `invalidate`).

use super::job::{os, IoError};
use hwcal_stats::SplitMix64;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The file or device a job runs on. A file this process created is
/// removed when the value is dropped.
#[derive(Debug)]
pub struct TestFile {
    pub(super) path: PathBuf,
    created: bool,
    pub(super) size: u64,
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

/// Drop the target's clean pages from the page cache (fio's `invalidate`),
/// so a buffered read starts from the device.
pub(super) fn invalidate(f: &File) {
    // SAFETY: fadvise on a valid open descriptor only changes cache policy.
    unsafe {
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

/// Drop a range of the file from the page cache (and start writing back its
/// dirty pages) at the start of every pass of a buffered time-bound run, as
/// fio does for each loop over the file: otherwise every pass after the
/// first would read, or overwrite, memory instead of the device.
pub(super) fn invalidate_range(f: &File, (off, len): (u64, u64)) {
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
pub(super) fn open_target(path: &Path, write: bool, direct: bool) -> Result<File, IoError> {
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

/// Test files that an hwcal killed before it could clean up (`kill -9`, a
/// power cut, a Slurm time limit) left in `dir`: hidden files named as
/// [`create_unique`] names them whose process no longer exists. Each is
/// removed (a GiB each, by default, that nothing else would ever remove);
/// returns what was removed and its size. Only regular files this user
/// owns (never a link: it is the link's name that matches, not what it
/// points to), and only where the process is gone (`kill(pid, 0)` says
/// "no such process"; a live one, ours or another user's, keeps its file).
pub fn remove_leftovers(dir: &Path) -> Vec<(PathBuf, u64)> {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    // SAFETY: geteuid has no arguments and cannot fail.
    let me = unsafe { libc::geteuid() };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(leftover_pid) else {
            continue;
        };
        let Ok(md) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if !md.file_type().is_file() || md.uid() != me || pid == std::process::id() {
            continue;
        }
        // SAFETY: signal 0 only checks that the process exists; nothing is sent.
        let gone = unsafe { libc::kill(pid as libc::pid_t, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone && std::fs::remove_file(e.path()).is_ok() {
            out.push((e.path(), md.len()));
        }
    }
    out
}

/// The process id in a name [`create_unique`] gives (`.hwcal-io-PID-HEX.tmp`).
fn leftover_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(".hwcal-io-")?.strip_suffix(".tmp")?;
    let (pid, hex) = rest.split_once('-')?;
    let hex_ok = !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    let pid: u32 = pid.parse().ok()?;
    (hex_ok && pid > 0).then_some(pid)
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
    let mut rng = SplitMix64::new(seed_from_time());
    let mut off = 0u64;
    while off < size {
        if stop.load(Ordering::Relaxed) {
            return Err(IoError::Interrupted);
        }
        let n = chunk.min((size - off) as usize);
        rng.fill_bytes(&mut buf[..n]);
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

pub(super) fn seed_from_time() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ ((std::process::id() as u64) << 32)
}

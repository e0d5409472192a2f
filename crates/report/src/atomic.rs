//! Writing an output file so that nothing is lost: the bytes go to a new
//! temporary file beside the destination, are flushed to the disk, and only
//! then take the destination's name by `rename(2)`. A full disk, a killed
//! process or a failed write leaves the earlier file whole and no temporary
//! file behind; a reader never sees half a report.
//!
//! The rename also decides what is replaced: the destination's *name*, never
//! the file it names. Two more cases are refused outright, because a user
//! who typed the path cannot have meant them:
//! - a symbolic link: writing through it would change a file elsewhere
//!   (hwcal did not create it), replacing it would silently drop the link;
//! - a protected file (the results database, an input profile), compared
//!   by device and inode, so a hard link or another spelling of the path
//!   is caught as well as the path itself.
//!
//! Character devices and FIFOs (`/dev/null`, a named pipe a script reads)
//! cannot be renamed over: they are written in place, as the user asked.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Why an output was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The destination is a symbolic link (refused, nothing written).
    #[error("{}: is a symbolic link; hwcal writes only plain files it can replace (give the link's target, or another name)", .0.display())]
    Symlink(PathBuf),
    /// The destination is a file hwcal must not overwrite.
    #[error("{}: is {what} (the same file, maybe through a hard link); choose another output", path.display())]
    Protected { path: PathBuf, what: String },
    /// The destination is a directory or another kind of file that cannot
    /// hold an output.
    #[error("{}: is {kind}, not a file", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    /// The file system refused (full, read-only, no permission).
    /// (The error is shown in the message, not chained as a source, so
    /// `{:#}` does not print it twice.)
    #[error("writing {}: {err}", path.display())]
    Io { path: PathBuf, err: std::io::Error },
}

impl WriteError {
    /// Whether what the user typed is the problem (exit status 2), as
    /// opposed to the file system (exit status 1).
    pub fn is_usage(&self) -> bool {
        !matches!(self, WriteError::Io { .. })
    }
}

/// One file that outputs must never replace, by identity.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Guarded {
    dev: u64,
    ino: u64,
    what: String,
}

/// Files no output may replace: the results database, the profiles a
/// command reads. Compared by device and inode at the moment of writing.
#[derive(Debug, Clone, Default)]
pub struct Protected {
    files: Vec<Guarded>,
}

impl Protected {
    /// Protect `path` (if it exists) as `what` ("the results database").
    pub fn add(&mut self, path: &Path, what: &str) {
        if let Ok(md) = std::fs::metadata(path) {
            let g = Guarded {
                dev: md.dev(),
                ino: md.ino(),
                what: what.to_string(),
            };
            if !self.files.contains(&g) {
                self.files.push(g);
            }
        }
    }

    /// What `md` is, if it is a protected file.
    fn which(&self, md: &std::fs::Metadata) -> Option<&str> {
        self.which_ids(md.dev(), md.ino())
    }

    /// What the file of device `dev` and inode `ino` is, if protected.
    fn which_ids(&self, dev: u64, ino: u64) -> Option<&str> {
        self.files
            .iter()
            .find(|g| g.dev == dev && g.ino == ino)
            .map(|g| g.what.as_str())
    }
}

/// Check that `path` may take an output: not a symbolic link, not a
/// directory, not a protected file. A missing file is fine.
pub fn check(path: &Path, protected: &Protected) -> Result<(), WriteError> {
    let md = match std::fs::symlink_metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => {
            return Err(WriteError::Io {
                path: path.to_path_buf(),
                err,
            })
        }
    };
    let ft = md.file_type();
    if ft.is_symlink() {
        return Err(WriteError::Symlink(path.to_path_buf()));
    }
    if ft.is_dir() {
        return Err(WriteError::NotAFile {
            path: path.to_path_buf(),
            kind: "a directory",
        });
    }
    if let Some(what) = protected.which(&md) {
        return Err(WriteError::Protected {
            path: path.to_path_buf(),
            what: what.to_string(),
        });
    }
    Ok(())
}

/// A name for the temporary file, unique within this process and hidden
/// (a leading dot) so a directory listing in the meantime shows no stray
/// file; the process id keeps two hwcal processes apart.
fn temp_name(path: &Path) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let base = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy());
    let name = format!(".{base}.hwcal-{}-{n}.tmp", std::process::id());
    path.with_file_name(name)
}

/// Write `bytes` to `path` atomically (see the module doc), after
/// [`check`]. An existing file's permissions are kept; a new file gets the
/// usual `0666` less the umask.
pub fn write(path: &Path, bytes: &[u8], protected: &Protected) -> Result<(), WriteError> {
    check(path, protected)?;
    let io = |err| WriteError::Io {
        path: path.to_path_buf(),
        err,
    };
    let existing = std::fs::metadata(path).ok();
    // A device or FIFO cannot be replaced by a rename (and `/dev/null`
    // must not be): write into it as asked.
    if existing.as_ref().is_some_and(|m| !m.is_file()) {
        let mut f = OpenOptions::new().write(true).open(path).map_err(io)?;
        return f.write_all(bytes).and_then(|()| f.flush()).map_err(io);
    }
    let tmp = temp_name(path);
    if let Err(err) = write_new(&tmp, bytes, existing.as_ref().map(|m| m.permissions().mode())) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(err));
    }
    // Checked again just before the rename: the destination may have
    // become a link or the database since the first check.
    if let Err(e) = check(path, protected).and_then(|()| std::fs::rename(&tmp, path).map_err(io)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    sync_dir(path);
    Ok(())
}

/// [`write`] of the plain name `name` (no `/`) in the open directory
/// `dir`: the check, the temporary file and the rename all name the file
/// relative to the descriptor, so a directory swapped for a symbolic link
/// after it was opened cannot send the bytes elsewhere (the site's `runs`
/// replaced by a link 20–100 ms into a build had its pages written into
/// another directory). `shown`: the path for messages. A new file gets
/// `0644`, an existing one is replaced by a new file of the same.
pub fn write_at(
    dir: &std::os::fd::OwnedFd,
    name: &str,
    shown: &Path,
    bytes: &[u8],
    protected: &Protected,
) -> Result<(), WriteError> {
    use rustix::fs::{openat, renameat, statat, unlinkat, AtFlags, FileType, Mode, OFlags};
    let io = |err: std::io::Error| WriteError::Io {
        path: shown.to_path_buf(),
        err,
    };
    let check = || -> Result<Option<u32>, WriteError> {
        match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => {
                let kind = FileType::from_raw_mode(st.st_mode as _);
                if kind == FileType::Symlink {
                    return Err(WriteError::Symlink(shown.to_path_buf()));
                }
                if kind != FileType::RegularFile {
                    return Err(WriteError::NotAFile {
                        path: shown.to_path_buf(),
                        kind: "not a plain file",
                    });
                }
                if let Some(what) = protected.which_ids(st.st_dev, st.st_ino) {
                    return Err(WriteError::Protected {
                        path: shown.to_path_buf(),
                        what: what.to_string(),
                    });
                }
                Ok(Some(st.st_mode & 0o7777))
            }
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(io(e.into())),
        }
    };
    let mode = check()?.unwrap_or(0o644);
    let tmp = temp_name(Path::new(name)).to_string_lossy().into_owned();
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = openat(dir, &tmp, flags, Mode::from_raw_mode(mode as _)).map_err(|e| io(e.into()))?;
    let mut f = File::from(fd);
    let written = f
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .and_then(|()| f.write_all(bytes))
        .and_then(|()| f.sync_all());
    let renamed = written
        .map_err(io)
        .and_then(|()| check())
        .and_then(|_| renameat(dir, &tmp, dir, name).map_err(|e| io(e.into())));
    if renamed.is_err() {
        let _ = unlinkat(dir, &tmp, AtFlags::empty());
    }
    renamed
}

/// Create `tmp` (never an existing file, nor through a link: `O_CREAT`
/// with `O_EXCL` fails on any existing name, a dangling link included),
/// write and flush it to the disk.
fn write_new(tmp: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let mut f: File = OpenOptions::new().write(true).create_new(true).open(tmp)?;
    if let Some(mode) = mode {
        f.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))?;
    }
    f.write_all(bytes)?;
    // Flushed before the rename: after a crash the name points at either
    // the old bytes or all of the new ones.
    f.sync_all()
}

/// Make the rename itself durable (best effort: some file systems refuse
/// to sync a directory, and the data is already safe).
fn sync_dir(path: &Path) {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".hwcal-"))
            .collect()
    }

    #[test]
    fn a_file_is_replaced_whole_and_keeps_its_permissions() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("a.json");
        std::fs::write(&p, b"old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        write(&p, b"new", &Protected::default()).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(leftovers(t.path()).is_empty());
    }

    #[test]
    fn a_symlink_is_neither_followed_nor_replaced() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("target.txt");
        std::fs::write(&target, b"precious").unwrap();
        let link = t.path().join("out.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = write(&link, b"new", &Protected::default()).unwrap_err();
        assert!(matches!(e, WriteError::Symlink(_)), "{e}");
        assert!(e.is_usage());
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        // A dangling link is not created through either.
        let dangling = t.path().join("dangling.json");
        std::os::unix::fs::symlink(t.path().join("nowhere"), &dangling).unwrap();
        assert!(write(&dangling, b"x", &Protected::default()).is_err());
        assert!(!t.path().join("nowhere").exists());
    }

    #[test]
    fn a_hard_link_to_a_protected_file_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join("hwcal.db");
        std::fs::write(&db, b"database").unwrap();
        let alias = t.path().join("x.json");
        std::fs::hard_link(&db, &alias).unwrap();
        let mut prot = Protected::default();
        prot.add(&db, "the results database");
        let e = write(&alias, b"{}", &prot).unwrap_err();
        assert!(e.to_string().contains("the results database"), "{e}");
        assert_eq!(std::fs::read(&db).unwrap(), b"database");
        // Another, unrelated file is written.
        write(&t.path().join("y.json"), b"{}", &prot).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("keep.json");
        std::fs::write(&p, b"good").unwrap();
        // A directory the temporary file cannot be created in stands for a
        // full or read-only disk (as root, permissions do not stop writes,
        // so the destination's directory is made to vanish instead).
        let gone = t.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let q = gone.join("x.json");
        std::fs::remove_dir(&gone).unwrap();
        let e = write(&q, b"new", &Protected::default()).unwrap_err();
        assert!(!e.is_usage(), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"good");
        assert!(leftovers(t.path()).is_empty());
    }

    #[test]
    fn devices_are_written_in_place() {
        use std::os::unix::fs::FileTypeExt;
        write(Path::new("/dev/null"), b"discarded", &Protected::default()).unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        // A full device is an error, not a silent success.
        let e = write(Path::new("/dev/full"), b"lost", &Protected::default()).unwrap_err();
        assert!(!e.is_usage(), "{e}");
    }

    #[test]
    fn a_directory_is_not_a_file() {
        let t = tempfile::tempdir().unwrap();
        let e = write(t.path(), b"x", &Protected::default()).unwrap_err();
        assert!(matches!(e, WriteError::NotAFile { .. }), "{e}");
    }
}

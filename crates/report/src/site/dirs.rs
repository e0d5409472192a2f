//! A site's directories, each opened once: the top directory and its
//! `machines` and `runs`, held as descriptors for the whole build, and
//! every page written, and every stale page removed, relative to them
//! (`openat`, `renameat`, `unlinkat`). A check of the paths at the start
//! alone left a window: `runs` swapped for a symbolic link 20–100 ms into a
//! build had 300 pages written into another directory, a file there
//! overwritten and one a forged marker listed deleted. A descriptor keeps
//! naming the directory it was opened on, whatever its name comes to point
//! at, and the subdirectories are opened without following a link.

use crate::atomic::{self, Protected};
use rustix::fs::{openat, unlinkat, AtFlags, Mode, OFlags, CWD};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The open directories of one site.
#[derive(Debug)]
pub struct SiteDirs {
    path: PathBuf,
    top: OwnedFd,
    machines: OwnedFd,
    runs: OwnedFd,
}

/// Why the site's directories could not be opened: the directory given
/// (or one of its own subdirectories) is not what hwcal created.
#[derive(Debug, thiserror::Error)]
#[error("{}: {why}", path.display())]
pub struct OpenError {
    pub path: PathBuf,
    pub why: String,
}

impl SiteDirs {
    /// Open `dir` (as given: the user named it) and its `machines` and
    /// `runs` (never through a symbolic link), which must exist.
    pub fn open(dir: &Path) -> Result<SiteDirs, OpenError> {
        let fail = |path: PathBuf, e: rustix::io::Errno| OpenError {
            path,
            why: match e {
                rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => {
                    "not a directory hwcal created (a symbolic link or another kind of file); \
                     hwcal writes a site only into directories it created"
                        .to_string()
                }
                e => std::io::Error::from(e).to_string(),
            },
        };
        let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let top = openat(CWD, dir, dir_flags, Mode::empty()).map_err(|e| fail(dir.to_path_buf(), e))?;
        let sub = |name: &str| {
            openat(&top, name, dir_flags | OFlags::NOFOLLOW, Mode::empty())
                .map_err(|e| fail(dir.join(name), e))
        };
        let (machines, runs) = (sub("machines")?, sub("runs")?);
        Ok(SiteDirs {
            path: dir.to_path_buf(),
            top,
            machines,
            runs,
        })
    }

    /// The directory a site file's name (`index.html`, `runs/2.html`)
    /// lies in, and its name there; `None` for a name in no directory of
    /// the site.
    fn place<'a>(&self, name: &'a str) -> Option<(&OwnedFd, &'a str)> {
        match name.split_once('/') {
            None => Some((&self.top, name)),
            Some(("machines", leaf)) if !leaf.contains('/') => Some((&self.machines, leaf)),
            Some(("runs", leaf)) if !leaf.contains('/') => Some((&self.runs, leaf)),
            Some(_) => None,
        }
    }

    /// Write the site file `name` whole (see [`atomic::write_at`]).
    pub fn write(&self, name: &str, bytes: &[u8], protected: &Protected) -> Result<(), atomic::WriteError> {
        let shown = self.path.join(name);
        let (dir, leaf) = self.place(name).ok_or_else(|| atomic::WriteError::NotAFile {
            path: shown.clone(),
            kind: "outside the site's directories",
        })?;
        atomic::write_at(dir, leaf, &shown, bytes, protected)
    }

    /// Remove the site file `name`; a file already gone is no error.
    pub fn remove(&self, name: &str) -> std::io::Result<()> {
        let Some((dir, leaf)) = self.place(name) else {
            return Ok(());
        };
        match unlinkat(dir, leaf, AtFlags::empty()) {
            Err(rustix::io::Errno::NOENT) => Ok(()),
            r => r.map_err(std::io::Error::from),
        }
    }
}

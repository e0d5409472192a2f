//! Writing a site into a directory, safely: a directory that holds anything
//! but an earlier site is refused before anything is written; the marker
//! is written first and lists every file a build writes, so a build stopped
//! midway leaves a directory the next build recognises and completes, and
//! the files a build removes (runs deleted since) are only ever ones a
//! build wrote. Profiles are read one at a time, twice (once for the tables,
//! once for each run's report), so a large database never sits in memory
//! whole.

use super::catalogue::Site;
use super::dirs::SiteDirs;
use super::facts::RunFacts;
use super::marker::{is_site_file, marker, parse_marker, stale, MARKER};
use crate::atomic::{self, Protected};
use crate::export::NamedFile;
use hwcal_model::Profile;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Why a site was not (completely) written.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The directory cannot take a site (the user's to fix; nothing written).
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Write(#[from] atomic::WriteError),
    /// (The I/O error follows as the source: `{:#}` prints it once.)
    #[error("{what} {}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("reading run {id}: {msg}")]
    Load { id: i64, msg: String },
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub machines: usize,
    pub runs: usize,
    pub index: PathBuf,
    /// Stored runs left out because they could not be read (id, why): one
    /// damaged row does not keep the others off the site.
    pub skipped: Vec<(i64, String)>,
    /// Runs removed from the database while the site was built (`db rm`
    /// beside it): left out, or, where the index already lists one, given
    /// a page that says so.
    pub removed: Vec<i64>,
}

/// Why `load` gave no profile for a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Unloaded {
    /// No longer in the database.
    Gone,
    /// Stored, but not a readable profile (why).
    Unreadable(String),
}

impl std::fmt::Display for Published {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        write!(
            f,
            "wrote the site of {} machine{} and {} run{}: open {}",
            self.machines,
            s(self.machines),
            self.runs,
            s(self.runs),
            self.index.display()
        )?;
        if !self.skipped.is_empty() {
            let ids: Vec<String> = self.skipped.iter().map(|(id, _)| id.to_string()).collect();
            write!(
                f,
                " ({} unreadable run{} left out: {})",
                ids.len(),
                s(ids.len()),
                ids.join(", ")
            )?;
        }
        if !self.removed.is_empty() {
            let ids: Vec<String> = self.removed.iter().map(|id| id.to_string()).collect();
            write!(
                f,
                " ({} run{} removed from the database meanwhile: {})",
                ids.len(),
                s(ids.len()),
                ids.join(", ")
            )?;
        }
        Ok(())
    }
}

/// The files of the earlier site in `dir` (none for a new or empty
/// directory); refused for anything else, before anything is written.
pub fn check_dir(dir: &Path) -> Result<Vec<String>, PublishError> {
    let refuse = |why: &str| Err(PublishError::Refused(format!("db site {}: {why}", dir.display())));
    if dir.as_os_str().is_empty() {
        return Err(PublishError::Refused("db site: empty directory name".into()));
    }
    if !dir.exists() {
        return Ok(Vec::new());
    }
    if !dir.is_dir() {
        return refuse("not a directory");
    }
    // The site's own subdirectories must be directories, not links: a
    // `runs` link would make the build write into, and remove stale pages
    // from, a directory hwcal never created.
    for sub in ["machines", "runs"] {
        if let Ok(md) = std::fs::symlink_metadata(dir.join(sub)) {
            if !md.file_type().is_dir() {
                return refuse(&format!(
                    "{sub} is {}; hwcal writes a site only into directories it created",
                    if md.file_type().is_symlink() {
                        "a symbolic link"
                    } else {
                        "not a directory"
                    }
                ));
            }
        }
    }
    let io = |source| PublishError::Io {
        what: "reading",
        path: dir.to_path_buf(),
        source,
    };
    if std::fs::read_dir(dir).map_err(io)?.next().is_none() {
        return Ok(Vec::new());
    }
    match std::fs::read(dir.join(MARKER))
        .ok()
        .and_then(|b| parse_marker(&b))
    {
        Some(files) => Ok(files),
        None => refuse(&format!(
            "the directory is not empty and is not an hwcal site (no {MARKER}); \
             give a new or empty directory, so that nothing in it is overwritten"
        )),
    }
}

/// Each page replaces its earlier version whole (`atomic::write_at`, in
/// the site's directory opened once): a build stopped by a full disk
/// leaves the earlier pages readable.
fn write(dirs: &SiteDirs, f: &NamedFile, protected: &Protected) -> Result<(), PublishError> {
    debug_assert!(is_site_file(&f.name), "{}", f.name);
    Ok(dirs.write(&f.name, &f.bytes, protected)?)
}

/// Calls `say` with a progress line at most once a second.
struct Ticker<'a> {
    say: &'a mut dyn FnMut(&str),
    total: usize,
    last: Instant,
}

impl Ticker<'_> {
    fn tick(&mut self, what: &str, done: usize) {
        if self.last.elapsed() >= Duration::from_secs(1) {
            (self.say)(&format!("site: {what}: {done} of {}", self.total));
            self.last = Instant::now();
        }
    }
}

/// Write the site of runs `ids` into `dir` (created if missing), each
/// profile read by `load`; `say` gets a progress line at most once a
/// second. No page replaces a `protected` file (the database). A run that
/// cannot be read is left out and named in [`Published::skipped`].
pub fn publish(
    dir: &Path,
    ids: &[i64],
    mut load: impl FnMut(i64) -> Result<Profile, Unloaded>,
    say: &mut dyn FnMut(&str),
    generated_unix: u64,
    protected: &Protected,
) -> Result<Published, PublishError> {
    let earlier = check_dir(dir)?;
    for sub in ["machines", "runs"] {
        let path = dir.join(sub);
        std::fs::create_dir_all(&path).map_err(|source| PublishError::Io {
            what: "creating",
            path,
            source,
        })?;
    }
    let dirs = SiteDirs::open(dir).map_err(|e| PublishError::Refused(format!("db site {e}")))?;
    let ticker = Ticker {
        say,
        total: ids.len(),
        last: Instant::now(),
    };
    publish_into(
        &dirs,
        (dir, earlier),
        ids,
        &mut load,
        ticker,
        generated_unix,
        protected,
    )
}

/// [`publish`] once the site's directories are open (`dirs`, on `dir`,
/// whose earlier build wrote `earlier`): from here on every file is named
/// relative to them.
fn publish_into(
    dirs: &SiteDirs,
    (dir, earlier): (&Path, Vec<String>),
    ids: &[i64],
    load: &mut dyn FnMut(i64) -> Result<Profile, Unloaded>,
    mut ticker: Ticker<'_>,
    generated_unix: u64,
    protected: &Protected,
) -> Result<Published, PublishError> {
    let mut facts = Vec::with_capacity(ids.len());
    let (mut skipped, mut removed) = (Vec::new(), Vec::new());
    for (i, &id) in ids.iter().enumerate() {
        ticker.tick("reading runs", i);
        match load(id) {
            Ok(p) => facts.push(RunFacts::of(id, &p)),
            Err(Unloaded::Gone) => removed.push(id),
            Err(Unloaded::Unreadable(msg)) => skipped.push((id, msg)),
        }
    }
    let readable = facts.len();
    let site = Site::new(facts, generated_unix);
    let names = site.file_names();
    let mut all = earlier.clone();
    all.extend(names.iter().filter(|n| !earlier.contains(n)).cloned());
    write(dirs, &marker(&all), protected)?;
    for (i, id) in site.run_ids().into_iter().enumerate() {
        ticker.tick("writing run reports", i);
        let page = match load(id) {
            Ok(p) => site.run_page(id, &p),
            // Removed since the index was planned (`db rm` beside the
            // build): its link must not dangle, and the build goes on.
            Err(Unloaded::Gone) => {
                removed.push(id);
                removed_page(id)
            }
            Err(Unloaded::Unreadable(msg)) => return Err(PublishError::Load { id, msg }),
        };
        write(dirs, &page, protected)?;
    }
    for name in stale(&earlier, &names) {
        dirs.remove(&name).map_err(|source| PublishError::Io {
            what: "removing",
            path: dir.join(&name),
            source,
        })?;
    }
    // The index, the comparison, the machine pages, and last the marker
    // with the new list.
    for f in site.pages() {
        write(dirs, &f, protected)?;
    }
    Ok(Published {
        machines: site.machines.len(),
        runs: readable,
        index: dir.join("index.html"),
        skipped,
        removed,
    })
}

/// The page of a run removed from the database while the site was built.
fn removed_page(id: i64) -> NamedFile {
    NamedFile {
        name: format!("runs/{id}.html"),
        bytes: format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hwcal — run {id} removed</title>\
             </head>\n<body><nav><a href=\"../index.html\">all machines</a></nav>\n<p>Run {id} was removed from the \
             database while this site was built. Build the site again to drop it from the index.</p></body></html>\n"
        )
        .into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::sample::full_profile;

    fn run(dir: &Path, ids: &[i64]) -> Result<Published, PublishError> {
        publish(
            dir,
            ids,
            |id| Ok(full_profile(id as u32)),
            &mut |_| {},
            0,
            &Protected::default(),
        )
    }

    /// Issue 41, medium 3: `runs` swapped for a symbolic link to another
    /// directory after the check (20–100 ms into a build) had the build
    /// write its pages into that directory, overwrite a file there and
    /// delete one a forged marker listed. The directories are opened once,
    /// before the swap here, and every page goes where they were opened.
    #[test]
    fn a_runs_directory_swapped_for_a_link_midway_gets_nothing_written_through_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("site");
        run(&dir, &[1, 2]).unwrap();
        let other = tmp.path().join("other");
        std::fs::create_dir(&other).unwrap();
        for f in ["1.html", "2.html", "keep.txt"] {
            std::fs::write(other.join(f), "theirs").unwrap();
        }
        let earlier = check_dir(&dir).unwrap();
        let dirs = SiteDirs::open(&dir).unwrap();
        std::fs::rename(dir.join("runs"), dir.join("runs.old")).unwrap();
        std::os::unix::fs::symlink(&other, dir.join("runs")).unwrap();
        let ticker = Ticker {
            say: &mut |_| {},
            total: 1,
            last: Instant::now(),
        };
        let mut load = |id: i64| Ok(full_profile(id as u32));
        publish_into(
            &dirs,
            (&dir, earlier),
            &[1, 3],
            &mut load,
            ticker,
            0,
            &Protected::default(),
        )
        .unwrap();
        // Nothing written, replaced or removed in the other directory.
        let mut theirs: Vec<String> = std::fs::read_dir(&other)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        theirs.sort();
        assert_eq!(theirs, ["1.html", "2.html", "keep.txt"]);
        for f in ["1.html", "2.html", "keep.txt"] {
            assert_eq!(std::fs::read_to_string(other.join(f)).unwrap(), "theirs", "{f}");
        }
        // The pages went into the directory that was opened, and its
        // stale page (run 2) was removed there.
        assert!(dir.join("runs.old/3.html").is_file());
        assert!(!dir.join("runs.old/2.html").exists());
        // A later build refuses the link outright.
        assert!(matches!(run(&dir, &[1]), Err(PublishError::Refused(_))));
    }

    #[test]
    fn a_new_directory_gets_the_site_and_a_rebuild_removes_only_its_own_stale_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("site");
        let done = run(&dir, &[1, 2, 3]).unwrap();
        assert_eq!((done.machines, done.runs), (3, 3));
        assert!(done.to_string().contains("3 machines and 3 runs"));
        for f in ["index.html", "compare.html", "runs/2.html", MARKER] {
            assert!(dir.join(f).is_file(), "{f}");
        }
        // A file the user put into the site stays; run 3's pages go with it.
        std::fs::write(dir.join("runs/notes.txt"), "mine").unwrap();
        run(&dir, &[1, 2]).unwrap();
        assert!(!dir.join("runs/3.html").exists());
        assert_eq!(
            std::fs::read_to_string(dir.join("runs/notes.txt")).unwrap(),
            "mine"
        );
        let listed = parse_marker(&std::fs::read(dir.join(MARKER)).unwrap()).unwrap();
        assert!(!listed.contains(&"runs/3.html".to_string()), "{listed:?}");
        assert_eq!(
            listed.len(),
            7,
            "marker, index, compare, 2 machines, 2 runs: {listed:?}"
        );
    }

    #[test]
    fn any_other_directory_is_refused_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("hwcal.db"), "precious").unwrap();
        let e = run(tmp.path(), &[1]).unwrap_err();
        assert!(matches!(e, PublishError::Refused(_)), "{e}");
        assert!(e.to_string().contains("not an hwcal site"), "{e}");
        let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "nothing written");
        // A file, an empty name: refused too; an empty directory is fine.
        let file = tmp.path().join("hwcal.db");
        assert!(run(&file, &[1])
            .unwrap_err()
            .to_string()
            .contains("not a directory"));
        assert!(matches!(run(Path::new(""), &[1]), Err(PublishError::Refused(_))));
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert_eq!(run(&empty, &[]).unwrap().machines, 0);
    }

    #[test]
    fn a_failed_read_is_named_and_the_marker_is_already_there() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        run(&dir, &[1]).unwrap();
        // The second read (for the report page) fails, midway through the build.
        let mut reads = 0;
        let e = publish(
            &dir,
            &[1, 2],
            |id| {
                reads += 1;
                if reads > 2 {
                    Err(Unloaded::Unreadable("gone".into()))
                } else {
                    Ok(full_profile(id as u32))
                }
            },
            &mut |_| {},
            0,
            &Protected::default(),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "reading run 1: gone");
        // Still a site: the next build goes ahead.
        assert!(check_dir(&dir).unwrap().contains(&"runs/2.html".to_string()));
        run(&dir, &[1, 2]).unwrap();
    }

    #[test]
    fn an_unreadable_run_is_left_out_not_fatal() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let load = |id: i64| match id {
            2 => Err(Unloaded::Unreadable("not a readable profile".to_string())),
            _ => Ok(full_profile(id as u32)),
        };
        let done = publish(&dir, &[1, 2, 3], load, &mut |_| {}, 0, &Protected::default()).unwrap();
        assert_eq!(done.runs, 2);
        assert_eq!(done.skipped, vec![(2, "not a readable profile".to_string())]);
        assert!(
            done.to_string().contains("1 unreadable run left out: 2"),
            "{done}"
        );
        assert!(dir.join("runs/1.html").is_file() && !dir.join("runs/2.html").exists());
    }

    /// `db rm` beside a build (issue 41): a run gone before the index was
    /// planned is left out, one gone after gets a page that says so; the
    /// build completes either way.
    #[test]
    fn a_run_removed_during_the_build_does_not_stop_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let mut reads = 0;
        let load = |id: i64| {
            reads += 1;
            match (id, reads) {
                (2, _) => Err(Unloaded::Gone),
                // Run 3's second read, for its page: removed meanwhile.
                (3, r) if r > 3 => Err(Unloaded::Gone),
                _ => Ok(full_profile(id as u32)),
            }
        };
        let done = publish(&dir, &[1, 2, 3], load, &mut |_| {}, 0, &Protected::default()).unwrap();
        assert_eq!(done.removed, vec![2, 3]);
        assert!(done.skipped.is_empty());
        assert!(
            done.to_string()
                .contains("2 runs removed from the database meanwhile: 2, 3"),
            "{done}"
        );
        assert!(!dir.join("runs/2.html").exists());
        let page = std::fs::read_to_string(dir.join("runs/3.html")).unwrap();
        assert!(page.contains("Run 3 was removed from the database"), "{page}");
        assert!(dir.join("runs/1.html").is_file() && dir.join("index.html").is_file());
    }

    #[test]
    fn a_linked_subdirectory_is_refused_and_its_target_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        run(&dir, &[1, 2]).unwrap();
        // Someone swaps `runs` for a link to a directory of their own.
        let theirs = tmp.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::write(theirs.join("2.html"), "theirs").unwrap();
        std::fs::remove_dir_all(dir.join("runs")).unwrap();
        std::os::unix::fs::symlink(&theirs, dir.join("runs")).unwrap();
        let e = run(&dir, &[1]).unwrap_err();
        assert!(matches!(e, PublishError::Refused(_)), "{e}");
        assert!(e.to_string().contains("runs is a symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(theirs.join("2.html")).unwrap(), "theirs");
        assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 1);
        // A page replaced by a link is not written through.
        std::fs::remove_file(dir.join("runs")).unwrap();
        run(&dir, &[1]).unwrap();
        std::fs::remove_file(dir.join("index.html")).unwrap();
        let target = tmp.path().join("target.html");
        std::fs::write(&target, "precious").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("index.html")).unwrap();
        assert!(run(&dir, &[1]).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    }

    #[test]
    fn the_database_is_never_a_page() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        run(&dir, &[1]).unwrap();
        // The database hard-linked into the site under a page's name.
        let db = tmp.path().join("hwcal.db");
        std::fs::write(&db, "precious").unwrap();
        std::fs::remove_file(dir.join("compare.html")).unwrap();
        std::fs::hard_link(&db, dir.join("compare.html")).unwrap();
        let mut prot = Protected::default();
        prot.add(&db, "the results database");
        let e = publish(
            &dir,
            &[1],
            |id| Ok(full_profile(id as u32)),
            &mut |_| {},
            0,
            &prot,
        )
        .unwrap_err();
        assert!(e.to_string().contains("the results database"), "{e}");
        assert_eq!(std::fs::read_to_string(&db).unwrap(), "precious");
    }
}

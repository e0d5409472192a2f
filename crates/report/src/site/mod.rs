//! A static web site of the results database, as the Calibrator's users
//! kept "the Calibrated Hardware Database": a web page of every machine
//! with its calibration, to look a machine up and compare it with another.
//!
//! The site is plain files that open from disk (relative links, inline
//! style and scripts, nothing from the network):
//!
//! - `index.html` — one row per machine (its latest run), sortable by a
//!   click on a header and filtered by a text box;
//! - `machines/KEY.html` — one page per machine, one row per run;
//! - `runs/ID.html` — each run's HTML report ([`crate::html::report`]);
//! - `compare.html` — any two machines' latest runs side by side, B / A.
//!   The comparison is built in the page from each machine's latest figures
//!   (embedded once), so the site grows with the number of machines, not its
//!   square: pre-generated pair pages (n·(n−1)/2 of them, each with its
//!   plots) would be thousands of files for a fleet of a hundred. The full
//!   two-run report stays one command away (`hwcal report A B`), and the page
//!   says which.
//! - `.hwcal-site` — the marker that says the directory is an hwcal site,
//!   with the list of files written, so a later build rewrites only those
//!   and never touches a directory it did not write.
//!
//! Runs are grouped by machine with [`machine::machine_key`]. Building is
//! pure: [`site`] takes the runs and returns the files; [`Site`] with
//! [`RunFacts`] does the same one profile at a time, and
//! [`publish::publish`] writes a site into a directory with that (the
//! library does the writing so that its safety rules are tested here and
//! the CLI stays a few lines).

use crate::NamedFile;
use hwcal_model::Profile;
use std::collections::BTreeMap;

mod assets;
pub mod facts;
pub mod machine;
mod pages;
pub mod publish;

pub use facts::RunFacts;
pub use machine::{machine_key, MachineKey};

/// The marker file of a site directory.
pub const MARKER: &str = ".hwcal-site";
const MARKER_HEAD: &str = "hwcal site";

/// A machine and its runs, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// As the latest run describes it, under the group's key.
    pub key: MachineKey,
    pub runs: Vec<RunFacts>,
}

impl Machine {
    /// The run the index shows.
    pub fn latest(&self) -> &RunFacts {
        &self.runs[0]
    }
}

/// Every machine of a database and their runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// In index order: by core, then host, then key.
    pub machines: Vec<Machine>,
    /// When the site was built (shown on the index).
    pub generated_unix: u64,
}

impl Site {
    /// Group runs by machine (see [`machine::resolve`]).
    pub fn new(runs: Vec<RunFacts>, generated_unix: u64) -> Site {
        let keys = machine::resolve(&runs.iter().map(|r| &r.machine).collect::<Vec<_>>());
        let mut groups: BTreeMap<String, Vec<RunFacts>> = BTreeMap::new();
        for (key, run) in keys.into_iter().zip(runs) {
            groups.entry(key).or_default().push(run);
        }
        let mut machines: Vec<Machine> = groups
            .into_iter()
            .map(|(key, mut runs)| {
                runs.sort_by_key(|r| std::cmp::Reverse((r.created_unix, r.id)));
                // Named as its latest identified run describes it (an older
                // run from before ids were recorded names the same machine).
                let mut k = runs
                    .iter()
                    .find(|r| r.machine.identified)
                    .unwrap_or(&runs[0])
                    .machine
                    .clone();
                k.key = key;
                Machine { key: k, runs }
            })
            .collect();
        machines.sort_by(|a, b| {
            (&a.key.core, &a.key.hostname, &a.key.key).cmp(&(&b.key.core, &b.key.hostname, &b.key.key))
        });
        Site {
            machines,
            generated_unix,
        }
    }

    /// Every run id, in the order the machines list them.
    pub fn run_ids(&self) -> Vec<i64> {
        self.machines
            .iter()
            .flat_map(|m| m.runs.iter().map(|r| r.id))
            .collect()
    }

    fn machine_of(&self, id: i64) -> Option<&Machine> {
        self.machines.iter().find(|m| m.runs.iter().any(|r| r.id == id))
    }

    /// The name of every file the site consists of, the marker included.
    pub fn file_names(&self) -> Vec<String> {
        let mut v = vec![MARKER.to_string(), "index.html".into(), "compare.html".into()];
        v.extend(self.machines.iter().map(|m| machine_path(&m.key.key)));
        v.extend(self.run_ids().into_iter().map(run_path));
        v
    }

    /// The report page of run `id` (its profile `p`), with links back to
    /// the index and its machine's page.
    pub fn run_page(&self, id: i64, p: &Profile) -> NamedFile {
        let p = crate::sanitize::inert_profile(p);
        let (key, name) = self.machine_of(id).map_or((String::new(), String::new()), |m| {
            (m.key.key.clone(), m.key.display())
        });
        let html = crate::html::report(&p, &format!("hwcal report — run {id} ({name})"));
        let mut nav = String::from("<nav><a href=\"../index.html\">all machines</a>");
        if !key.is_empty() {
            nav += &format!(
                "<a href=\"../{}\">{}: every run</a>",
                crate::esc(&machine_path(&key)),
                crate::esc(&name)
            );
        }
        nav += "</nav>\n";
        NamedFile {
            name: run_path(id),
            bytes: html
                .replacen("<main>\n", &format!("<main>\n{nav}"), 1)
                .into_bytes(),
        }
    }

    /// The index, the comparison page, each machine's page and the marker
    /// (everything but the run reports).
    pub fn pages(&self) -> Vec<NamedFile> {
        let file = |name: String, text: String| NamedFile {
            name,
            bytes: text.into_bytes(),
        };
        let mut v = vec![
            file("index.html".into(), pages::index(self)),
            file("compare.html".into(), pages::compare(self)),
        ];
        v.extend(
            self.machines
                .iter()
                .map(|m| file(machine_path(&m.key.key), pages::machine(m))),
        );
        v.push(marker(&self.file_names()));
        v
    }
}

fn machine_path(key: &str) -> String {
    format!("machines/{key}.html")
}

fn run_path(id: i64) -> String {
    format!("runs/{id}.html")
}

/// The whole site of `runs` (id, profile) at once.
pub fn site(runs: &[(i64, &Profile)], generated_unix: u64) -> Vec<NamedFile> {
    let facts = runs.iter().map(|(id, p)| RunFacts::of(*id, p)).collect();
    let s = Site::new(facts, generated_unix);
    let mut files: Vec<NamedFile> = runs.iter().map(|(id, p)| s.run_page(*id, p)).collect();
    files.extend(s.pages());
    files
}

/// The marker file listing the site's files.
pub fn marker(names: &[String]) -> NamedFile {
    let mut s = format!(
        "{MARKER_HEAD}\n# Written by `hwcal db site`. hwcal writes into this directory again only because\n\
         # this file is here, and removes only files listed below that a new build no longer has.\n"
    );
    for n in names {
        s += n;
        s.push('\n');
    }
    NamedFile {
        name: MARKER.into(),
        bytes: s.into_bytes(),
    }
}

/// The files an earlier site's marker lists, or `None` when `bytes` is not
/// an hwcal site marker. Names that are not site files (a tampered marker
/// naming `../x` or `/etc/passwd`) are left out.
pub fn parse_marker(bytes: &[u8]) -> Option<Vec<String>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    if lines.next()? != MARKER_HEAD {
        return None;
    }
    Some(
        lines
            .filter(|l| !l.starts_with('#') && is_site_file(l))
            .map(str::to_string)
            .collect(),
    )
}

/// Whether `name` is a file name a site build writes: the marker, the two
/// top pages, `machines/<key>.html`, `runs/<id>.html`.
pub fn is_site_file(name: &str) -> bool {
    let plain = |s: &str, f: fn(u8) -> bool| !s.is_empty() && s.len() <= 80 && s.bytes().all(f);
    let key_char = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    match name.split_once('/') {
        None => [MARKER, "index.html", "compare.html"].contains(&name),
        Some(("machines", f)) => f.strip_suffix(".html").is_some_and(|k| plain(k, key_char)),
        Some(("runs", f)) => f
            .strip_suffix(".html")
            .is_some_and(|k| plain(k, |b| b.is_ascii_digit())),
        _ => false,
    }
}

/// Files an earlier build wrote that this one does not (runs removed since):
/// the ones to delete after writing the new site.
pub fn stale(old: &[String], new: &[String]) -> Vec<String> {
    let new: std::collections::BTreeSet<&String> = new.iter().collect();
    old.iter()
        .filter(|n| !new.contains(n) && is_site_file(n))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests;

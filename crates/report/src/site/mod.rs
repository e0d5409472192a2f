//! A static web site of the results database, as the Calibrator's users
//! kept "the Calibrated Hardware Database": a web page of every machine
//! with its calibration, to look a machine up and compare it with another.
//!
//! The site is plain files that open from disk (relative links, inline
//! style and scripts, nothing from the network):
//!
//! - `index.html` — one row per machine (its latest run), sortable by a
//!   click on a header and filtered by a text box, and a chart per key
//!   figure across machines (each machine's current figure: the median of
//!   its recent runs);
//! - `machines/KEY.html` — one page per machine, one row per run, and the
//!   history of its key figures (each run against its usual range);
//! - `runs/ID.html` — each run's HTML report ([`crate::html::report`]);
//! - `compare.html` — any two machines side by side, B / A, judged over
//!   their recent runs by the same rule as `db compare batch:...`
//!   (computed here, module `verdicts`; the page's script only renders).
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

use crate::export::NamedFile;
use hwcal_model::Profile;

mod assets;
mod catalogue;
mod dirs;
pub mod facts;
mod history;
pub mod machine;
mod marker;
mod pages;
pub mod publish;
mod verdicts;

pub use catalogue::{Machine, Site};
pub use facts::RunFacts;
pub use history::{band, RECENT};
pub use machine::{machine_key, MachineKey};
pub use marker::{is_site_file, marker, parse_marker, stale, MARKER};

/// The whole site of `runs` (id, profile) at once.
pub fn site(runs: &[(i64, &Profile)], generated_unix: u64) -> Vec<NamedFile> {
    let facts = runs.iter().map(|(id, p)| RunFacts::of(*id, p)).collect();
    let s = Site::new(facts, generated_unix);
    let mut files: Vec<NamedFile> = runs.iter().map(|(id, p)| s.run_page(*id, p)).collect();
    files.extend(s.pages());
    files
}

#[cfg(test)]
mod tests;

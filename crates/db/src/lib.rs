//! hwcal's results database, in the spirit of The Calibrator's "Calibrated
//! Hardware Database": every run's profile, kept whole so any figure (and
//! the raw curves behind it) can be shown, compared or re-analysed later.
//!
//! Two stores behind one [`Db`]: an SQLite file (bundled SQLite, no server:
//! the default, one machine) and a shared PostgreSQL database
//! (`postgres://...`: a fleet's runs in one place). Both hold the same
//! table with the same migrations: each profile is one row, the complete
//! JSON profile (raw curves included) plus summary columns copied out of it
//! (host, machine id, core, CPU, key figures) so `hwcal db list` and lookups
//! need not parse every profile. Every write is one transaction, so a
//! process killed in the middle leaves each store as it was before that
//! write. A run's identity across stores is its `run_key`, the SHA-256 of
//! its JSON: [`Db::push_to`] copies only runs the target lacks.
#![forbid(unsafe_code)]
mod defaults;
mod error;
mod filter;
mod group;
mod location;
mod pg;
pub mod spool;
mod sqlite;
mod store;
mod table;
mod tls;
pub use defaults::{ENV_VAR, SCHEMA_VERSION};
pub use error::DbError;
pub use filter::{parse_since, ListFilter};
pub use group::{by_machine, short_id, CurrentFigures, MachineGroup};
use hwcal_model::Profile;
pub use location::{
    check_location, command_line_of, default_location, default_path, default_path_from, redact, redact_arg,
    redact_command, redact_profile, url_scheme, Location,
};
pub use sqlite::APPLICATION_ID;
use std::path::Path;
pub use store::{run_key, sections, OpenMode, Origin, Summary};
use store::{Filter, Row, Store};
pub use table::{list_text, FIT_WIDTH as LIST_FIT_WIDTH};
/// An open results database (an SQLite file or a PostgreSQL database).
pub struct Db(Box<dyn Store>);
impl Db {
    /// Open (creating it if needed) and migrate the database at `path` (a
    /// file, or a `postgres://` URL): [`Db::open_with`] in [`OpenMode::Create`].
    pub fn open(path: impl AsRef<Path>) -> Result<Db, DbError> {
        Db::open_with(path, OpenMode::Create)
    }

    /// Open the database at `path`: a file path, or a `postgres://` URL.
    pub fn open_with(path: impl AsRef<Path>, mode: OpenMode) -> Result<Db, DbError> {
        Db::open_location(&Location::of_path(path.as_ref())?, mode)
    }

    /// Open the database at a location. A file is opened only if it is an
    /// hwcal database (see `sqlite`); in PostgreSQL hwcal keeps to its own
    /// tables (`profiles`, `hwcal_schema`) and refuses a `profiles` table
    /// it did not create.
    pub fn open_location(loc: &Location, mode: OpenMode) -> Result<Db, DbError> {
        Ok(Db(match loc {
            Location::File(p) => Box::new(sqlite::Sqlite::open_with(p, mode)?),
            Location::Postgres(url) => Box::new(pg::Pg::open(url, mode)?),
        }))
    }

    /// Where this database lives, for messages: the file, or the URL
    /// without its password.
    pub fn path(&self) -> &Path {
        self.0.location()
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, DbError> {
        self.0.schema_version()
    }

    /// Store a profile measured here; returns its id.
    pub fn insert(&mut self, p: &Profile) -> Result<i64, DbError> {
        self.insert_with_origin(p, Origin::Run)
    }

    /// Store a profile, saying where it came from; returns its id. One
    /// transaction: the row is stored completely or not at all.
    pub fn insert_with_origin(&mut self, p: &Profile, origin: Origin) -> Result<i64, DbError> {
        self.insert_with_hook(p, origin, || {})
    }

    /// Store a profile unless an identical one (same run key) is stored
    /// already, in one transaction: its id, and whether it is new.
    pub fn insert_new(&mut self, p: &Profile, origin: Origin) -> Result<(i64, bool), DbError> {
        self.0.insert(&Row::of(p, origin.as_str())?, true, &mut || {})
    }

    /// [`Db::insert_with_origin`], calling `before_commit` once the row is
    /// written but not yet committed. For crash tests only (kill the process
    /// inside the transaction, deterministically).
    #[doc(hidden)]
    pub fn insert_with_hook(
        &mut self,
        p: &Profile,
        origin: Origin,
        before_commit: impl FnOnce(),
    ) -> Result<i64, DbError> {
        let mut hook = Some(before_commit);
        let row = Row::of(p, origin.as_str())?;
        let (id, _) = self.0.insert(&row, false, &mut || {
            if let Some(h) = hook.take() {
                h()
            }
        })?;
        Ok(id)
    }

    /// Every stored profile's summary, oldest first.
    pub fn list(&self) -> Result<Vec<Summary>, DbError> {
        self.0.summaries(None)
    }

    /// The summary of one stored profile.
    pub fn summary(&self, id: i64) -> Result<Summary, DbError> {
        self.0.summaries(Some(id))?.pop().ok_or(DbError::NotFound(id))
    }

    /// The current figures ([`CurrentFigures`]: the median of its newest
    /// five runs) of the machine run `id` belongs to (same machine id and
    /// core, as `db list` groups them), with how many runs it has; `None`
    /// for a run without a machine id.
    pub fn current_of(&self, id: i64) -> Result<Option<(CurrentFigures, usize)>, DbError> {
        let me = self.summary(id)?;
        if me.machine_id.is_none() {
            return Ok(None);
        }
        let rows = self.list()?;
        let same: Vec<&Summary> = rows
            .iter()
            .filter(|r| r.machine_id == me.machine_id && r.core == me.core)
            .collect();
        Ok(Some((CurrentFigures::of(&same), same.len())))
    }

    /// `db show`'s line on the machine of run `id` where it has several
    /// runs (a newline first): `its machine now (median of its newest 5 of
    /// 12 runs): core 3695 MHz, ...`; empty otherwise.
    pub fn current_line(&self, id: i64) -> Result<String, DbError> {
        Ok(match self.current_of(id)? {
            Some((c, n)) if n > 1 => format!(
                "\nits machine now (median of its newest {} of {n} runs): {}",
                c.runs,
                c.text()
            ),
            _ => String::new(),
        })
    }

    /// `db show`'s header for run `id`, whose profile is `p`: how it came
    /// here, its command, when (`when` formats a Unix time), hwcal's
    /// version, its batch and [`Db::current_line`], then a blank line.
    pub fn show_header(&self, id: i64, p: &Profile, when: &dyn Fn(u64) -> String) -> Result<String, DbError> {
        let how = match self.summary(id)?.origin.as_str() {
            "import" => "imported",
            _ => "measured here",
        };
        let (cmd, when, version) = (&p.command, when(p.created_unix), &p.tool_version);
        let batch = p.batch.as_ref().map_or(String::new(), |b| {
            format!(
                "\nrun {} of {} of batch {} (compare the batch: db compare batch:{} ...)",
                b.index, b.runs, b.id, b.id
            )
        });
        let current = self.current_line(id)?;
        Ok(format!(
            "run {id} ({how}): `{cmd}`, measured {when}, hwcal {version}{batch}{current}\n\n"
        ))
    }

    /// The stored profile with this id.
    pub fn get(&self, id: i64) -> Result<Profile, DbError> {
        let json = self.0.json(id)?.ok_or(DbError::NotFound(id))?;
        serde_json::from_str(&json).map_err(|e| DbError::Corrupt {
            id,
            reason: e.to_string(),
        })
    }

    /// The runs of batch `id` (`hwcal run --repeat N`), in their order in
    /// the batch; a prefix of the id is enough when it names one batch.
    /// The batch lives in each run's profile, so this reads them all: a
    /// database of thousands of runs takes a moment, nothing more.
    pub fn batch(&self, id: &str) -> Result<Vec<i64>, DbError> {
        let mut found: Vec<(String, u32, i64)> = Vec::new();
        for s in self.list()? {
            // A run that does not parse is in no batch anyone can name.
            if let Ok(Some(b)) = self.get(s.id).map(|p| p.batch) {
                if b.id.starts_with(id) {
                    found.push((b.id, b.index, s.id));
                }
            }
        }
        let mut ids: Vec<&String> = found.iter().map(|f| &f.0).collect();
        ids.sort();
        ids.dedup();
        match ids.len() {
            0 => Err(DbError::NoMatch(format!(
                "no batch '{id}' in {} (`hwcal run --repeat N` stores one; its id is in `db show`)",
                self.path().display()
            ))),
            1 => {
                found.sort_by_key(|f| (f.1, f.2));
                Ok(found.into_iter().map(|f| f.2).collect())
            }
            n => Err(DbError::Ambiguous(format!(
                "batch:{id} names {n} batches; give more of the id"
            ))),
        }
    }

    /// The runs a comparison side names: `batch:ID` (every run of that
    /// batch, [`Db::batch`]), or one run as a [`Selector`] reads it
    /// (`Err(NoMatch)`, a usage message, when the text is no selector).
    pub fn runs(&self, s: &str) -> Result<Vec<i64>, DbError> {
        match s.strip_prefix("batch:") {
            Some("") => Err(DbError::NoMatch(
                "batch: needs an id (`hwcal db show` of one of its runs names it)".into(),
            )),
            Some(b) => self.batch(b),
            None => {
                let sel: Selector = s.parse().map_err(DbError::NoMatch)?;
                Ok(vec![self.resolve(&sel)?])
            }
        }
    }

    /// The last `n` runs (oldest first) of the machine that measured
    /// `p`: the history two of its runs are judged against (none for a
    /// profile without a machine id).
    pub fn history_of(&self, p: &Profile, n: usize) -> Result<Vec<Profile>, DbError> {
        let Some(i) = p.machine.as_ref().and_then(|m| m.identity.as_ref()) else {
            return Ok(Vec::new());
        };
        // The same machine id on another core is another machine (see
        // `MachineGroup::core`).
        let same =
            |s: &Summary| s.machine_id.as_ref() == Some(&i.machine_id) && s.core.as_ref() == Some(&i.core);
        let ids: Vec<i64> = self.list()?.into_iter().filter(same).map(|s| s.id).collect();
        // A run that does not parse is no history; it is not an error here.
        Ok(ids[ids.len().saturating_sub(n)..]
            .iter()
            .filter_map(|id| self.get(*id).ok())
            .collect())
    }

    /// The history two sides of a comparison are judged against, the same
    /// for every view (`db compare`, `report A B`): [`Db::history_between`]
    /// where each side is one run, none for batches (their own runs are
    /// their spread) or without a database (`db`: `None`).
    pub fn history_for(db: Option<&Db>, a: &[Profile], b: &[Profile]) -> Result<Vec<Profile>, DbError> {
        match (db, a, b) {
            (Some(db), [x], [y]) => db.history_between(x, y, 20),
            _ => Ok(Vec::new()),
        }
    }

    /// The history two runs are judged against ([`Db::history_of`]) when
    /// they are of one machine (same machine id and core), without the two
    /// themselves (they cannot vouch for each other); none otherwise.
    pub fn history_between(&self, a: &Profile, b: &Profile, n: usize) -> Result<Vec<Profile>, DbError> {
        fn who(p: &Profile) -> Option<(&str, &str)> {
            let i = p.machine.as_ref()?.identity.as_ref()?;
            Some((i.machine_id.as_str(), i.core.as_str()))
        }
        if who(a).is_none() || who(a) != who(b) {
            return Ok(Vec::new());
        }
        let mut h = self.history_of(a, n + 2)?;
        h.retain(|h| h.created_unix != a.created_unix && h.created_unix != b.created_unix);
        Ok(h)
    }

    /// The id of the most recently measured profile (newest `created_unix`,
    /// the highest id among equals), if any: the run `latest` and
    /// `host:NAME` name, and the one the site shows first — one "latest"
    /// everywhere, whatever order the runs were imported in.
    pub fn latest_id(&self) -> Result<Option<i64>, DbError> {
        self.0.latest_id(Filter::All)
    }

    /// The id of the most recently measured profile of a host, if any.
    pub fn latest_id_of_host(&self, hostname: &str) -> Result<Option<i64>, DbError> {
        self.0.latest_id(Filter::Host(hostname))
    }

    /// The id of a stored profile identical to `p` (same JSON, so the same
    /// run key), if any; so importing the same file twice is recognised.
    pub fn find_identical(&self, p: &Profile) -> Result<Option<i64>, DbError> {
        self.0.id_with_key(&run_key(&serde_json::to_string(p)?))
    }

    /// Remove a stored profile. [`DbError::NotFound`] if there is none.
    pub fn delete(&mut self, id: i64) -> Result<(), DbError> {
        self.delete_all(&[id])
    }

    /// Remove stored profiles, all or none (one transaction): if one of
    /// them is not there, [`DbError::NotFound`] and nothing is removed.
    pub fn delete_all(&mut self, ids: &[i64]) -> Result<(), DbError> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        match self.0.delete(&ids)? {
            None => Ok(()),
            Some(id) => Err(DbError::NotFound(id)),
        }
    }

    /// The run a selector names (its existence is checked for `latest`,
    /// `host:` and `machine:`; a plain id is checked when it is read).
    /// `host:NAME` is refused when runs of that host come from more than one
    /// machine (look-alike guests are all called `vm`).
    pub fn resolve(&self, sel: &Selector) -> Result<i64, DbError> {
        let loc = self.path().display();
        let short = |ids: &[String]| {
            ids.iter()
                .map(|m| short_id(m).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match sel {
            Selector::Id(id) => Ok(*id),
            Selector::Latest => self.latest_id()?.ok_or_else(|| {
                DbError::NoMatch(format!(
                    "the database {loc} holds no run yet (`hwcal run` stores one)"
                ))
            }),
            Selector::Host(h) => {
                let machines = self.0.machine_ids(Filter::Host(h))?;
                if machines.len() > 1 {
                    return Err(DbError::Ambiguous(format!(
                        "host:{h} is ambiguous: its runs come from {} machines ({}); \
                         name one with machine:ID-PREFIX (see `hwcal db list`)",
                        machines.len(),
                        short(&machines)
                    )));
                }
                self.0.latest_id(Filter::Host(h))?.ok_or_else(|| {
                    DbError::NoMatch(format!("no run of host '{h}' in {loc} (see `hwcal db list`)"))
                })
            }
            Selector::Machine(prefix) => {
                let machines = self.0.machine_ids(Filter::MachinePrefix(prefix))?;
                match machines.as_slice() {
                    [] => Err(DbError::NoMatch(format!(
                        "no run of machine '{prefix}' in {loc} (see `hwcal db list`)"
                    ))),
                    [m] => self
                        .0
                        .latest_id(Filter::Machine(m))?
                        .ok_or_else(|| DbError::NoMatch(format!("no run of machine '{m}'"))),
                    _ => Err(DbError::Ambiguous(format!(
                        "machine:{prefix} matches {} machines ({}); give more digits",
                        machines.len(),
                        short(&machines)
                    ))),
                }
            }
        }
    }

    /// Copy every run of this database that `to` does not hold yet (same
    /// run key) into `to`, oldest first, each in its own transaction: a
    /// push stopped at any moment leaves `to` with whole runs only, and a
    /// second push copies the rest. This database is only read.
    pub fn push_to(&self, to: &mut Db) -> Result<PushReport, DbError> {
        self.push_with_hook(to, &mut |_| {})
    }

    /// [`Db::push_to`], calling `before_commit(local id)` inside each
    /// target transaction. For crash tests only.
    #[doc(hidden)]
    pub fn push_with_hook(
        &self,
        to: &mut Db,
        before_commit: &mut dyn FnMut(i64),
    ) -> Result<PushReport, DbError> {
        let mut report = PushReport::default();
        let runs = self.list()?;
        let total = runs.len();
        // An error past the first run says how far the push got.
        let stopped = |r: &PushReport, cause: DbError| DbError::PushStopped {
            copied: r.copied.len(),
            present: r.present.len(),
            total,
            cause: Box::new(cause),
        };
        for s in runs {
            let p = match self.get(s.id) {
                Ok(p) => p,
                Err(DbError::Corrupt { reason, .. }) => {
                    report.unreadable.push((s.id, reason));
                    continue;
                }
                Err(e) => return Err(stopped(&report, e)),
            };
            let row = Row::of(&p, &s.origin).map_err(|e| stopped(&report, e))?;
            let (id, new) =
                to.0.insert(&row, true, &mut || before_commit(s.id))
                    .map_err(|e| stopped(&report, e))?;
            match new {
                true => report.copied.push((s.id, id)),
                false => report.present.push((s.id, id)),
            }
        }
        Ok(report)
    }
}
/// `hwcal db push`: copy the runs of the database at `from` (which must
/// exist; it is only read) to the one at `to` (created if needed).
pub fn push(from: &Location, to: &Location) -> Result<PushReport, DbError> {
    if from == to {
        return Err(DbError::NoMatch(format!(
            "--to {}: is the database being pushed (--db); name another",
            to.display()
        )));
    }
    let src = Db::open_location(from, OpenMode::Read)?;
    src.push_to(&mut Db::open_location(to, OpenMode::Create)?)
}
impl std::fmt::Display for PushReport {
    /// `3 copied, 2 already there` (`, 1 unreadable` where some were).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} copied, {} already there",
            self.copied.len(),
            self.present.len()
        )?;
        match self.unreadable.len() {
            0 => Ok(()),
            n => write!(f, ", {n} unreadable (not pushed)"),
        }
    }
}
/// What [`Db::push_to`] did: (local id, target id) pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    /// Runs copied now.
    pub copied: Vec<(i64, i64)>,
    /// Runs the target already held.
    pub present: Vec<(i64, i64)>,
    /// Local runs whose JSON does not parse (left where they are).
    pub unreadable: Vec<(i64, String)>,
}
/// A run as typed on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// A run id.
    Id(i64),
    /// The most recently measured run ([`Db::latest_id`]).
    Latest,
    /// The latest run of a host name (refused when ambiguous).
    Host(String),
    /// The latest run of the machine whose id starts with these hex digits.
    Machine(String),
}
impl std::str::FromStr for Selector {
    /// A usage message.
    type Err = String;
    fn from_str(s: &str) -> Result<Selector, String> {
        if let Some(h) = s.strip_prefix("host:") {
            return Ok(Selector::Host(h.to_string()));
        }
        if let Some(m) = s.strip_prefix("machine:") {
            // A machine id is a SHA-256 (64 hex digits); a longer prefix
            // matches nothing and would only make the pattern expensive.
            if m.is_empty() || m.len() > 64 || !m.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!(
                    "'{s}': a machine id prefix is 1 to 64 hex digits (see the machine column of `hwcal db list`)"
                ));
            }
            return Ok(Selector::Machine(m.to_ascii_lowercase()));
        }
        if s == "latest" {
            return Ok(Selector::Latest);
        }
        match s.parse::<i64>() {
            Ok(id) if id > 0 => Ok(Selector::Id(id)),
            _ => Err(format!(
                "'{s}' is not a run id (a positive number, `latest`, `host:NAME` or \
                 `machine:ID-PREFIX`; see `hwcal db list`)"
            )),
        }
    }
}
#[cfg(test)]
mod tests;

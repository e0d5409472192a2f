//! Stored runs as the commands name them: ids, `latest`, `host:NAME`,
//! `machine:ID-PREFIX` resolved in the database, and a run's label.

use crate::common::{db_location, UsageError};
use anyhow::Result;
use hwcal_db::{Db, DbError};
use hwcal_model::Profile;

/// A missing run is the user's mistake: exit 2.
pub fn not_found(e: DbError) -> anyhow::Error {
    match e {
        DbError::NotFound(id) => {
            let path = db_location().map_or(String::new(), |l| format!(" {}", l.display()));
            anyhow::Error::new(UsageError(format!(
                "no run with id {id} in the database{path} (see `hwcal db list`)"
            )))
        }
        e => anyhow::Error::new(e),
    }
}

/// A stored run. Its recorded command line is masked again on the way out:
/// runs stored before hwcal masked passwords may hold one.
pub fn get(db: &Db, id: i64) -> Result<Profile> {
    let mut p = db.get(id).map_err(not_found)?;
    crate::common::redact_profile(&mut p);
    Ok(p)
}

/// A run as typed: an id, `latest`, `host:NAME` (that host's latest run;
/// refused when the name covers several machines) or `machine:ID-PREFIX`.
pub fn parse_id(db: &Db, s: &str) -> Result<i64> {
    let sel: hwcal_db::Selector = s.parse().map_err(|e: String| anyhow::Error::new(UsageError(e)))?;
    Ok(db.resolve(&sel)?)
}

/// The runs a comparison side or `db show batch:ID` names ([`Db::runs`])
/// and their profiles, made inert.
pub fn runs_of(db: &Db, s: &str) -> Result<(Vec<i64>, Vec<Profile>)> {
    let ids = db.runs(s).map_err(not_found)?;
    let ps = ids
        .iter()
        .map(|id| Ok(hwcal_report::sanitize::inert_profile(&get(db, *id)?).into_owned()));
    Ok((ids.clone(), ps.collect::<Result<_>>()?))
}

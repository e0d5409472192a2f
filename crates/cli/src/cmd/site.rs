//! `hwcal db site DIR`: the results database as a static web site
//! (`hwcal_report::site` builds the pages and writes them); a run `db rm`
//! takes away during the build is gone, not unreadable.

use crate::common::{now_unix, open_db_read, Progress, UsageError};
use anyhow::Result;
use hwcal_report::site::publish::{publish, PublishError, Unloaded};

pub fn run(dir: &std::path::Path) -> Result<()> {
    let db = open_db_read()?;
    let ids: Vec<i64> = db.list()?.into_iter().map(|s| s.id).collect();
    let load = |id| {
        crate::cmd::stored::get(&db, id).map_err(|e| match db.get(id) {
            Err(hwcal_db::DbError::NotFound(_)) => Unloaded::Gone,
            _ => Unloaded::Unreadable(format!("{e:#}")),
        })
    };
    let (progress, protected) = (Progress::new(false), crate::output::protected());
    let done = match publish(dir, &ids, load, &mut |m| progress.say(m), now_unix(), &protected) {
        Ok(done) => done,
        // A directory that cannot take the site is the user's to fix: exit 2.
        Err(PublishError::Refused(m)) => return Err(UsageError(m).into()),
        Err(e) => return Err(e.into()),
    };
    for (id, why) in &done.skipped {
        crate::say!("warning: run {id} left out of the site: {why}");
    }
    crate::say!("{done}");
    match done.skipped.len() {
        0 => Ok(()),
        n => anyhow::bail!("{n} stored run(s) are not readable profiles and were left out of the site"),
    }
}

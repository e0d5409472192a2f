//! The site's catalogue: every machine of the database with its runs
//! (grouped by [`machine_key`](super::machine::machine_key)), in index
//! order, and the file each page is written to.

use super::facts::RunFacts;
use super::machine::{self, MachineKey};
use super::marker::MARKER;
use std::collections::BTreeMap;

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

    pub(super) fn machine_of(&self, id: i64) -> Option<&Machine> {
        self.machines.iter().find(|m| m.runs.iter().any(|r| r.id == id))
    }

    /// The name of every file the site consists of, the marker included.
    pub fn file_names(&self) -> Vec<String> {
        let mut v = vec![MARKER.to_string(), "index.html".into(), "compare.html".into()];
        v.extend(self.machines.iter().map(|m| machine_path(&m.key.key)));
        v.extend(self.run_ids().into_iter().map(run_path));
        v
    }
}

pub(super) fn machine_path(key: &str) -> String {
    format!("machines/{key}.html")
}

pub(super) fn run_path(id: i64) -> String {
    format!("runs/{id}.html")
}

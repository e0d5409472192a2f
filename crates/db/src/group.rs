//! Stored runs grouped by the machine they describe (`db list`'s layout).

use crate::store::Summary;

/// The first 12 hex digits of a machine id: how lists show it (enough to
/// tell a fleet's machines apart; `machine:PREFIX` takes any prefix).
pub fn short_id(machine_id: &str) -> &str {
    machine_id.get(..12).unwrap_or(machine_id)
}

/// Runs of one machine, as `hwcal db list` groups them.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineGroup<'a> {
    /// `None`: runs without a machine id (profiles of older hwcal).
    pub machine_id: Option<&'a str>,
    /// Oldest first.
    pub runs: Vec<&'a Summary>,
}

impl MachineGroup<'_> {
    /// `machine 5a17e7c00000: Sapphire Rapids, QEMU Standard PC (...), 3 runs`.
    pub fn title(&self) -> String {
        let n = self.runs.len();
        let runs = format!("{n} run{}", if n == 1 { "" } else { "s" });
        let Some(id) = self.machine_id else {
            return format!("no machine id (profiles of an older hwcal): {runs}");
        };
        let last = self.runs.last();
        let mut parts: Vec<&str> = Vec::new();
        parts.extend(last.and_then(|r| r.core.as_deref()));
        parts.extend(last.and_then(|r| r.product.as_deref()));
        parts.push(&runs);
        format!("machine {}: {}", short_id(id), parts.join(", "))
    }
}

/// Group runs by machine: machines in the order of their first run, runs
/// oldest first; runs without a machine id last.
pub fn by_machine(rows: &[Summary]) -> Vec<MachineGroup<'_>> {
    let mut groups: Vec<MachineGroup<'_>> = Vec::new();
    for r in rows {
        let key = r.machine_id.as_deref();
        match groups.iter_mut().find(|g| g.machine_id == key) {
            Some(g) => g.runs.push(r),
            None => groups.push(MachineGroup {
                machine_id: key,
                runs: vec![r],
            }),
        }
    }
    groups.sort_by_key(|g| g.machine_id.is_none());
    groups
}

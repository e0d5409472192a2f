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
    /// The core the runs name: one machine id over two cores (a cloned
    /// image's /etc/machine-id, a guest moved to another host type) is two
    /// machines to calibrate.
    pub core: Option<&'a str>,
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

/// A machine's current figures (`hwcal_stats::recent`: each the median
/// of its last five runs that measured it, newest by measurement time), in
/// the summary's columns.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CurrentFigures {
    pub core_mhz: Option<hwcal_stats::Recent>,
    pub l1_latency_ns: Option<hwcal_stats::Recent>,
    pub memory_latency_ns: Option<hwcal_stats::Recent>,
    pub read_bytes_per_sec: Option<hwcal_stats::Recent>,
    pub ctx_us: Option<hwcal_stats::Recent>,
    /// The most runs any of them is over.
    pub runs: usize,
}

impl CurrentFigures {
    /// From a machine's runs, in any order.
    pub fn of(runs: &[&Summary]) -> CurrentFigures {
        let mut v = runs.to_vec();
        v.sort_by_key(|r| std::cmp::Reverse((r.created_unix, r.id)));
        let of = |g: fn(&Summary) -> Option<f64>| {
            let xs: Vec<f64> = v.iter().filter_map(|r| g(r)).collect();
            hwcal_stats::recent(&xs)
        };
        let mut c = CurrentFigures {
            core_mhz: of(|r| r.core_mhz),
            l1_latency_ns: of(|r| r.l1_latency_ns),
            memory_latency_ns: of(|r| r.memory_latency_ns),
            read_bytes_per_sec: of(|r| r.read_bytes_per_sec),
            ctx_us: of(|r| r.ctx_us),
            runs: 0,
        };
        c.runs = [
            c.core_mhz,
            c.l1_latency_ns,
            c.memory_latency_ns,
            c.read_bytes_per_sec,
            c.ctx_us,
        ]
        .iter()
        .flatten()
        .map(|r| r.runs)
        .max()
        .unwrap_or(0);
        c
    }

    /// `core 3695 MHz, L1 1.08 ns, memory 186.0 ns, read 34.02 GB/s, ctx 1.88 µs`.
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        let mut add = |name: &str, r: Option<hwcal_stats::Recent>, scale: f64, prec: usize, unit: &str| {
            if let Some(r) = r {
                parts.push(format!("{name} {:.prec$} {unit}", r.median * scale));
            }
        };
        add("core", self.core_mhz, 1.0, 0, "MHz");
        add("L1", self.l1_latency_ns, 1.0, 2, "ns");
        add("memory", self.memory_latency_ns, 1.0, 1, "ns");
        add("read", self.read_bytes_per_sec, 1e-9, 2, "GB/s");
        add("ctx", self.ctx_us, 1.0, 2, "µs");
        parts.join(", ")
    }
}

/// Group runs by machine: machines in the order of their first run, runs
/// oldest first; runs without a machine id last.
pub fn by_machine(rows: &[Summary]) -> Vec<MachineGroup<'_>> {
    let mut groups: Vec<MachineGroup<'_>> = Vec::new();
    for r in rows {
        let (key, core) = (r.machine_id.as_deref(), r.core.as_deref());
        match groups
            .iter_mut()
            .find(|g| g.machine_id == key && (key.is_none() || g.core == core))
        {
            Some(g) => g.runs.push(r),
            None => groups.push(MachineGroup {
                machine_id: key,
                core,
                runs: vec![r],
            }),
        }
    }
    groups.sort_by_key(|g| g.machine_id.is_none());
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_machine_id_on_two_cores_is_two_groups() {
        let run = |id: i64, m: Option<&str>, core: &str| Summary {
            id,
            machine_id: m.map(str::to_string),
            core: Some(core.into()),
            ..Default::default()
        };
        let rows = [
            run(1, Some("aa"), "Zen 5"),
            run(2, Some("aa"), "Zen 4"),
            run(3, Some("aa"), "Zen 5"),
            run(4, None, "Zen 3"),
            run(5, None, "Zen 2"),
        ];
        let g = by_machine(&rows);
        let ids: Vec<Vec<i64>> = g.iter().map(|g| g.runs.iter().map(|r| r.id).collect()).collect();
        assert_eq!(
            ids,
            [vec![1, 3], vec![2], vec![4, 5]],
            "runs without an id stay one group"
        );
        assert!(g[1].title().contains("Zen 4, 1 run"), "{}", g[1].title());
    }
}

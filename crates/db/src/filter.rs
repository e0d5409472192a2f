//! `db list --machine M --since WHEN --limit N`: which stored runs a list
//! shows. Pure, over the summaries the store returns (oldest first).

use crate::Summary;

/// What `db list` keeps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListFilter {
    /// A machine id prefix (hex), a host name, or a core name (`Zen 5`),
    /// matched case-insensitively.
    pub machine: Option<String>,
    /// Runs measured at or after this Unix time.
    pub since_unix: Option<u64>,
    /// The most recent N runs that pass the other filters.
    pub limit: Option<usize>,
}

impl ListFilter {
    /// The filter of `db list`'s options (`since` as [`parse_since`] reads
    /// it, relative to `now_unix`); a usage message for a bad `since`.
    pub fn parse(
        machine: Option<String>,
        since: Option<&str>,
        limit: Option<usize>,
        now_unix: u64,
    ) -> Result<Self, String> {
        let since_unix = since.map(|s| parse_since(s, now_unix)).transpose()?;
        Ok(ListFilter {
            machine,
            since_unix,
            limit,
        })
    }

    /// The runs of `rows` (oldest first) that pass, oldest first.
    pub fn apply(&self, rows: Vec<Summary>) -> Vec<Summary> {
        let want = self.machine.as_deref().map(str::to_lowercase);
        let matches = |s: &Summary| {
            let Some(w) = &want else { return true };
            let lower = |o: &Option<String>| o.as_deref().map(str::to_lowercase);
            lower(&s.machine_id).is_some_and(|m| m.starts_with(w.as_str()))
                || lower(&s.hostname).as_deref() == Some(w.as_str())
                || lower(&s.core).as_deref() == Some(w.as_str())
        };
        let mut kept: Vec<Summary> = rows
            .into_iter()
            .filter(|s| matches(s) && self.since_unix.is_none_or(|t| s.created_unix >= t))
            .collect();
        if let Some(n) = self.limit {
            let drop = kept.len().saturating_sub(n);
            kept.drain(..drop);
        }
        kept
    }
}

/// `--since`: a date (`2026-11-01`, midnight UTC), a date and time
/// (`2026-11-01T12:00`, UTC), or an age before `now` (`90m`, `36h`, `7d`,
/// `2w`). A usage message otherwise.
pub fn parse_since(s: &str, now_unix: u64) -> Result<u64, String> {
    let bad = || {
        format!("--since '{s}': give a date (2026-11-01), a UTC date and time (2026-11-01T12:00) or an age (90m, 36h, 7d, 2w)")
    };
    let s = s.trim();
    if let Some(unit) = s.chars().last().filter(|c| c.is_ascii_alphabetic()) {
        let n: u64 = s[..s.len() - 1].parse().map_err(|_| bad())?;
        let secs = match unit {
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 7 * 86_400,
            _ => return Err(bad()),
        };
        return Ok(now_unix.saturating_sub(n.saturating_mul(secs)));
    }
    let (date, time) = s.split_once(['T', ' ']).unwrap_or((s, "00:00"));
    let num = |t: &str| t.parse::<i64>().map_err(|_| bad());
    let d: Vec<&str> = date.split('-').collect();
    let t: Vec<&str> = time.split(':').collect();
    let ([y, mo, da], [h, mi]) = (d.as_slice(), &t[..t.len().min(2)]) else {
        return Err(bad());
    };
    let (y, mo, da, h, mi) = (num(y)?, num(mo)?, num(da)?, num(h)?, num(mi)?);
    if !(1..=12).contains(&mo)
        || !(1..=31).contains(&da)
        || !(0..24).contains(&h)
        || !(0..60).contains(&mi)
        || y < 1970
    {
        return Err(bad());
    }
    let days = days_from_civil(y, mo, da);
    Ok((days * 86_400 + h * 3600 + mi * 60) as u64)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: i64, t: u64, host: &str, machine: &str, core: &str) -> Summary {
        Summary {
            id,
            created_unix: t,
            hostname: Some(host.into()),
            machine_id: Some(machine.into()),
            core: Some(core.into()),
            ..Default::default()
        }
    }

    #[test]
    fn filters_by_machine_time_and_count() {
        let rows = vec![
            run(1, 100, "a", "5e1f00", "Zen 5"),
            run(2, 200, "b", "77aa00", "Zen 3"),
            run(3, 300, "a", "5e1f00", "Zen 5"),
            run(4, 400, "a", "5e1f00", "Zen 5"),
        ];
        let ids = |f: ListFilter| f.apply(rows.clone()).iter().map(|s| s.id).collect::<Vec<_>>();
        assert_eq!(
            ids(ListFilter {
                machine: Some("5E1F".into()),
                ..Default::default()
            }),
            [1, 3, 4]
        );
        assert_eq!(
            ids(ListFilter {
                machine: Some("zen 3".into()),
                ..Default::default()
            }),
            [2]
        );
        assert_eq!(
            ids(ListFilter {
                machine: Some("b".into()),
                ..Default::default()
            }),
            [2]
        );
        assert_eq!(
            ids(ListFilter {
                since_unix: Some(300),
                ..Default::default()
            }),
            [3, 4]
        );
        let last_two_of_a = ListFilter {
            machine: Some("a".into()),
            limit: Some(2),
            ..Default::default()
        };
        assert_eq!(ids(last_two_of_a), [3, 4]);
    }

    #[test]
    fn since_reads_dates_and_ages() {
        assert_eq!(parse_since("1970-01-02", 0), Ok(86_400));
        assert_eq!(parse_since("2026-11-25", 0), Ok(1_795_564_800));
        assert_eq!(parse_since("2026-11-25T12:30", 0), Ok(1_795_564_800 + 45_000));
        assert_eq!(parse_since("7d", 1_000_000), Ok(1_000_000 - 604_800));
        assert_eq!(parse_since("90m", 10_000), Ok(10_000 - 5400));
        for bad in ["yesterday", "2026-13-01", "7y", "", "2026-11"] {
            assert!(parse_since(bad, 0).is_err(), "{bad}");
        }
    }
}

//! `hwcal db list` as text: one line per run under a title line per machine
//! (look-alike guests are told apart by their machine id, not their host
//! name). A pure function of the summaries; the caller gives the date
//! format, how a stored string is made safe for one terminal field, and
//! whether every column is wanted (`--wide`).

use crate::group::{by_machine, CurrentFigures};
use crate::store::Summary;
use std::fmt::Write;

/// The most columns of `db list` without `--wide`: the CPU's name and the
/// sections measured are left out (the machine's title line names its
/// core and product; `--wide` and `--json` give both).
pub const FIT_WIDTH: usize = 100;

/// The list: a header, then each machine's title and its runs, and under
/// a machine of several runs its current figures ([`CurrentFigures`]: the
/// median of its newest five).
/// `time` formats a Unix time; `field` makes a stored string one inert line;
/// `wide`: every column, as wide as they are, else within [`FIT_WIDTH`].
pub fn list_text(
    rows: &[Summary],
    time: &dyn Fn(u64) -> String,
    field: &dyn Fn(&str) -> String,
    wide: bool,
) -> String {
    let opt = |v: Option<f64>, prec: usize| v.map_or("-".into(), |v| format!("{v:.prec$}"));
    let cut = |s: &str, n: usize| {
        if s.chars().count() > n {
            format!("{}…", s.chars().take(n - 1).collect::<String>())
        } else {
            s.to_string()
        }
    };
    // The CPU column and the sections, or nothing where they are left out.
    let cpu = |c: &str| if wide { format!("  {c:<30}") } else { String::new() };
    let mut s = format!(
        "{:>4}  {:<20}  {:<6}  {:<16}{}  {:>8}  {:>6}  {:>7}  {:>7}  {:>6}{}\n",
        "id",
        "measured",
        "origin",
        "host",
        cpu("cpu"),
        "core MHz",
        "L1 ns",
        "mem ns",
        "rd GB/s",
        "ctx µs",
        if wide { "  sections" } else { "" }
    );
    for g in by_machine(rows) {
        let title = field(&g.title());
        let title = if wide {
            title
        } else {
            hwcal_model::columns::cut_at_word(&title, FIT_WIDTH)
        };
        let _ = writeln!(s, "{title}");
        for r in &g.runs {
            let line = format!(
                "{:>4}  {:<20}  {:<6}  {:<16}{}  {:>8}  {:>6}  {:>7}  {:>7}  {:>6}",
                r.id,
                time(r.created_unix),
                field(&r.origin),
                cut(&field(r.hostname.as_deref().unwrap_or("-")), 16),
                cpu(&cut(field(r.cpu_model.as_deref().unwrap_or("-")).trim(), 30)),
                opt(r.core_mhz, 0),
                opt(r.l1_latency_ns, 2),
                opt(r.memory_latency_ns, 1),
                opt(r.read_bytes_per_sec.map(|b| b / 1e9), 2),
                opt(r.ctx_us, 2),
            );
            let _ = match wide {
                true => writeln!(s, "{line}  {}", field(&r.sections)),
                false => writeln!(s, "{line}"),
            };
        }
        // The machine's current figures under its runs, in their columns.
        if g.runs.len() > 1 {
            let c = CurrentFigures::of(&g.runs);
            let med = |r: Option<hwcal_stats::Recent>| r.map(|r| r.median);
            let _ = writeln!(
                s,
                "{:>4}  {:<20}  {:<6}  {:<16}{}  {:>8}  {:>6}  {:>7}  {:>7}  {:>6}",
                "",
                format!("current, median of {}", c.runs),
                "",
                "",
                cpu(""),
                opt(med(c.core_mhz), 0),
                opt(med(c.l1_latency_ns), 2),
                opt(med(c.memory_latency_ns), 1),
                opt(med(c.read_bytes_per_sec).map(|b| b / 1e9), 2),
                opt(med(c.ctx_us), 2),
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, host: &str, machine: Option<&str>) -> Summary {
        Summary {
            id,
            created_unix: 0,
            stored_unix: 0,
            origin: "run".into(),
            hostname: Some(host.into()),
            machine_id: machine.map(String::from),
            core: Some("Zen 3".into()),
            product: None,
            cpu_model: Some("AMD EPYC 7B13 64-Core Processor with a very long name".into()),
            command: "hwcal run".into(),
            core_mhz: Some(2450.4),
            l1_latency_ns: None,
            memory_latency_ns: Some(101.25),
            read_bytes_per_sec: Some(12.5e9),
            ctx_us: None,
            sections: "machine,clock".into(),
        }
    }

    #[test]
    fn runs_sit_under_their_machine() {
        let rows = [
            row(1, "vm", Some("aaaa1111bbbb2222")),
            row(2, "vm", Some("cccc")),
            row(3, "vm", Some("aaaa1111bbbb2222")),
        ];
        let t = list_text(&rows, &|u| format!("t{u}"), &|s| s.replace('\n', "\\n"), true);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].trim_start().starts_with("id  measured"));
        assert!(lines[1].starts_with("machine aaaa1111bbbb: Zen 3, 2 runs"), "{t}");
        assert!(lines[2].trim_start().starts_with("1  t0"));
        assert!(lines[3].trim_start().starts_with("3  "));
        // Under a machine of several runs, its current figures.
        assert!(lines[4].trim_start().starts_with("current, median of 2"), "{t}");
        assert!(lines[5].starts_with("machine cccc: Zen 3, 1 run"), "{t}");
        assert!(lines[2].contains("2450") && lines[2].contains("101.2") && lines[2].contains("12.50"));
        assert!(lines[2].contains("AMD EPYC 7B13 64-Core Process…"), "{t}");
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn a_machines_current_figure_is_the_median_of_its_newest_five() {
        // Seven runs, memory latency 100..160 ns by age; the newest five
        // (120..160 ns) give 140; an outlier among them does not move it
        // far; the newest is by measurement time, not by id.
        let rows: Vec<Summary> = (0..7)
            .map(|i| Summary {
                created_unix: 100 + i as u64,
                memory_latency_ns: Some(100.0 + 10.0 * i as f64),
                ..row(7 - i, "vm", Some("aa"))
            })
            .collect();
        let refs: Vec<&Summary> = rows.iter().collect();
        let c = CurrentFigures::of(&refs);
        let m = c.memory_latency_ns.unwrap();
        assert_eq!((m.median, m.runs, m.range), (140.0, 5, [120.0, 160.0]));
        assert_eq!(c.runs, 5);
        assert!(c.text().contains("memory 140.0 ns"), "{}", c.text());
        let mut noisy = rows.clone();
        noisy[6].memory_latency_ns = Some(900.0);
        let refs: Vec<&Summary> = noisy.iter().collect();
        assert_eq!(CurrentFigures::of(&refs).memory_latency_ns.unwrap().median, 140.0);
    }

    /// Without `--wide`: within 100 columns (characters: `µ` is two
    /// bytes), the same runs and figures in the same places, the CPU and
    /// the sections left to `--wide`, which prints what it always did.
    #[test]
    fn the_list_fits_100_columns_and_wide_keeps_every_column() {
        let mut rows = vec![
            row(1, "a-host-name-longer-than-its-column", Some("aaaa1111bbbb2222")),
            row(2, "vm", Some("cccc")),
            row(3, "vm", Some("aaaa1111bbbb2222")),
        ];
        rows[0].product =
            Some("Google Compute Engine c4d-standard-2 with a product name of some length".into());
        rows[0].sections = "machine,clock,cache,tlb,mem,bandwidth,ctx,os,c2c,io,neighbours".into();
        let time = |u: u64| format!("2026-11-22 00:{:02} UTC", u % 60);
        let field = |s: &str| s.to_string();
        let fit = list_text(&rows, &time, &field, false);
        let wide = list_text(&rows, &time, &field, true);
        for l in fit.lines() {
            assert!(
                l.chars().count() <= FIT_WIDTH,
                "{} columns: {l}\n{fit}",
                l.chars().count()
            );
        }
        assert!(wide.lines().any(|l| l.chars().count() > FIT_WIDTH), "{wide}");
        assert!(
            wide.contains("AMD EPYC 7B13") && wide.contains("neighbours"),
            "{wide}"
        );
        assert!(
            !fit.contains("AMD EPYC 7B13") && !fit.contains("neighbours"),
            "{fit}"
        );
        assert_eq!(fit.lines().count(), wide.lines().count());
        // Each run's line keeps its id, date, origin, host and figures.
        for (f, w) in fit.lines().zip(wide.lines()) {
            if w.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
                assert_eq!(f[..48], w[..48], "the leading columns");
                let figures = |l: &str| {
                    l.split_whitespace()
                        .filter(|x| x.parse::<f64>().is_ok() || *x == "-")
                        .map(String::from)
                        .collect::<Vec<_>>()
                };
                let (ff, wf) = (figures(f), figures(w));
                assert!(wf.ends_with(&ff[1..]), "{f}\n{w}");
            }
        }
        // --wide is the table as it always was: every column, whatever its width.
        let head = wide.lines().next().unwrap();
        assert_eq!(
            head,
            "  id  measured              origin  host              cpu                             core MHz   \
             L1 ns   mem ns  rd GB/s  ctx µs  sections"
        );
    }
}

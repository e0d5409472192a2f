//! Stored runs as a table, one row per run, for spreadsheets and scripts
//! (`hwcal db export --csv|--markdown`), as hyperfine's `--export-csv` and
//! `--export-markdown` do for benchmarks. Every figure's column name ends in
//! its unit (`l1_size_kib`, `mem_latency_ns`, `read_bw_gbs`, `ctx_2p_us`),
//! so a column means the same in every file; a figure a run did not measure
//! is an empty cell. CSV follows RFC 4180 (CRLF line ends, fields quoted
//! where they hold a comma, a quote or a line break).

use crate::format_utc;
use hwcal_model::Profile;

/// One stored run: its id and origin in the database, and its profile.
#[derive(Debug, Clone)]
pub struct Run {
    pub id: i64,
    pub origin: String,
    pub profile: Profile,
}

/// The columns, in order.
pub const COLUMNS: [&str; 46] = [
    "id",
    "measured_unix",
    "measured_utc",
    "origin",
    "host",
    "machine_id",
    "core",
    "product",
    "cpu",
    "logical_cpus",
    "core_mhz",
    "l1_size_kib",
    "l1_latency_ns",
    "l2_size_kib",
    "l2_latency_ns",
    "l3_size_kib",
    "l3_latency_ns",
    "mem_latency_ns",
    "bw_threads",
    "read_bw_gbs",
    "write_bw_gbs",
    "copy_bw_gbs",
    "ctx_2p_us",
    // Each headline figure's verdict (ok / noisy; empty where the profile
    // states none) and 95% interval, so noisy runs can be filtered out.
    "core_mhz_verdict",
    "core_mhz_ci95_low",
    "core_mhz_ci95_high",
    "l1_verdict",
    "l1_latency_ns_ci95_low",
    "l1_latency_ns_ci95_high",
    "l2_verdict",
    "l2_latency_ns_ci95_low",
    "l2_latency_ns_ci95_high",
    "l3_verdict",
    "l3_latency_ns_ci95_low",
    "l3_latency_ns_ci95_high",
    "mem_latency_verdict",
    "mem_latency_ns_ci95_low",
    "mem_latency_ns_ci95_high",
    "read_bw_verdict",
    "read_bw_gbs_ci95_low",
    "read_bw_gbs_ci95_high",
    "ctx_2p_verdict",
    "ctx_2p_us_ci95_low",
    "ctx_2p_us_ci95_high",
    // `hwcal run --repeat N`: the batch id, empty for a single run.
    "batch",
    "command",
];

/// A figure with enough digits for its unit; empty when absent or not finite.
fn num(v: Option<f64>, digits: usize) -> String {
    v.filter(|v| v.is_finite())
        .map_or(String::new(), |v| format!("{v:.digits$}"))
}

/// Run ids as a person reads them: `6-10` for a consecutive range, else
/// `3, 5, 9`.
pub fn id_list(ids: &[i64]) -> String {
    match (ids.first(), ids.last()) {
        (Some(a), Some(b)) if ids.len() > 2 && ids.windows(2).all(|w| w[1] == w[0] + 1) => format!("{a}-{b}"),
        _ => ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
    }
}

/// The cells of one run, in [`COLUMNS`] order.
pub fn cells(r: &Run) -> Vec<String> {
    let p = &r.profile;
    let m = p.machine.as_ref();
    let id = m.and_then(|m| m.identity.as_ref());
    let level = |n: u32| p.caches.as_ref().and_then(|c| c.iter().find(|l| l.level == n));
    let size = |n: u32| level(n).map(|l| l.size_bytes as f64 / 1024.0);
    let lat = |n: u32| level(n).map(|l| l.latency_ns);
    let bw = p.bandwidth.as_ref();
    let gbs = |f: fn(&hwcal_model::Bandwidth) -> Option<f64>| bw.and_then(f).map(|b| b / 1e9);
    let ctx2 = p
        .context_switch
        .as_ref()
        .and_then(|c| c.points.iter().find(|q| q.nprocs == 2))
        .map(|q| q.us_median);
    let text = |s: Option<&str>| s.unwrap_or("").to_string();
    let verdict = |v: Option<hwcal_model::Verdict>| {
        text(v.map(|v| {
            if v == hwcal_model::Verdict::Noisy {
                "noisy"
            } else {
                "ok"
            }
        }))
    };
    let ci = |c: Option<[f64; 2]>, scale: f64, digits: usize| {
        [
            num(c.map(|c| c[0] * scale), digits),
            num(c.map(|c| c[1] * scale), digits),
        ]
    };
    let ctx_point = p
        .context_switch
        .as_ref()
        .and_then(|c| c.points.iter().find(|q| q.nprocs == 2));
    let read_point = bw.and_then(|b| {
        b.scaling
            .iter()
            .find(|q| q.op == "read" && q.threads == b.threads)
    });
    let mut judged = Vec::new();
    let mut add = |v: String, [lo, hi]: [String; 2]| judged.extend([v, lo, hi]);
    let clock = p.clock.as_ref();
    add(
        verdict(clock.map(|c| c.verdict)),
        ci(clock.and_then(|c| c.core_mhz_ci95), 1.0, 0),
    );
    for n in 1..=3 {
        add(
            verdict(level(n).map(|l| l.verdict)),
            ci(level(n).and_then(|l| l.latency_ns_ci95), 1.0, 2),
        );
    }
    let mem = p.memory.as_ref();
    add(
        verdict(mem.map(|m| m.verdict)),
        ci(mem.and_then(|m| m.latency_ns_ci95), 1.0, 1),
    );
    add(
        verdict(read_point.and_then(|q| q.verdict).or(bw.and_then(|b| b.verdict))),
        ci(read_point.and_then(|q| q.bytes_per_sec_ci95), 1e-9, 2),
    );
    add(
        verdict(ctx_point.map(|q| q.verdict)),
        ci(ctx_point.and_then(|q| q.us_median_ci95), 1.0, 2),
    );
    let mut row = vec![
        r.id.to_string(),
        p.created_unix.to_string(),
        format_utc(p.created_unix),
        r.origin.clone(),
        text(m.map(|m| m.hostname.as_str())),
        text(id.map(|i| i.machine_id.as_str())),
        text(id.map(|i| i.core.as_str())),
        text(id.and_then(|i| i.product.as_deref())),
        text(m.map(|m| m.cpu_model_name.trim())),
        m.map_or(String::new(), |m| m.logical_cpus.to_string()),
        num(p.clock.as_ref().map(|c| c.core_mhz), 0),
        num(size(1), 0),
        num(lat(1), 2),
        num(size(2), 0),
        num(lat(2), 2),
        num(size(3), 0),
        num(lat(3), 2),
        num(p.memory.as_ref().map(|m| m.latency_ns), 1),
        bw.map_or(String::new(), |b| b.threads.to_string()),
        num(gbs(|b| b.read_bytes_per_sec), 2),
        num(gbs(|b| b.write_bytes_per_sec), 2),
        num(gbs(|b| b.copy_bytes_per_sec), 2),
        num(ctx2, 2),
    ];
    row.extend(judged);
    row.push(text(p.batch.as_ref().map(|b| b.id.as_str())));
    row.push(p.command.clone());
    row
}

/// An RFC 4180 field: quoted (quotes doubled) where it holds a comma, a
/// quote or a line break. A text cell a spreadsheet would take for a
/// formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage return:
/// a host name or command line anyone can set) gets a leading `'`, as
/// OWASP's CSV-injection advice says; a number, negative ones included, is
/// left as it is.
fn csv_field(s: &str) -> String {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.parse::<f64>().is_err();
    let s = if formula { format!("'{s}") } else { s.to_string() };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// The runs as CSV: a header line of [`COLUMNS`], then one line per run.
pub fn csv(runs: &[Run]) -> Vec<u8> {
    let mut out = COLUMNS.join(",") + "\r\n";
    for r in runs {
        let row: Vec<String> = cells(r).iter().map(|c| csv_field(c)).collect();
        out += &row.join(",");
        out += "\r\n";
    }
    out.into_bytes()
}

/// A Markdown table cell: pipes escaped, line breaks as spaces, and the
/// characters that start a link, emphasis or code escaped with a backslash,
/// those of HTML and entities as entities: a host name or command line
/// must not inject markup into a page that renders the table.
fn md_cell(s: &str) -> String {
    let mut md = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\r' => md.push(' '),
            '\\' | '|' | '`' | '*' | '_' | '[' | ']' | '!' => {
                md.push('\\');
                md.push(c);
            }
            c => md.push(c),
        }
    }
    // Then HTML's characters as entities, with the markup exporters' one
    // escaper (a backslash escape holds none of them).
    crate::esc(&md)
}

/// The runs as a Markdown (GitHub) table; numbers right-aligned (a column
/// is numeric when every cell in it is a number or empty, so a new column
/// needs no list of its own).
pub fn markdown(runs: &[Run]) -> Vec<u8> {
    let rows: Vec<Vec<String>> = runs.iter().map(cells).collect();
    let numeric = |j: usize| {
        rows.iter()
            .all(|r| r[j].is_empty() || r[j].parse::<f64>().is_ok())
    };
    let mut out = format!("| {} |\n|", COLUMNS.join(" | "));
    for j in 0..COLUMNS.len() {
        out += if numeric(j) { "---:|" } else { ":---|" };
    }
    out.push('\n');
    for r in &rows {
        let row: Vec<String> = r.iter().map(|c| md_cell(c)).collect();
        out += &format!("| {} |\n", row.join(" | "));
    }
    out += &current_table(runs, &rows);
    out.into_bytes()
}

/// The columns of [`current_table`]: a machine's key figures.
const CURRENT: [&str; 8] = [
    "core_mhz",
    "l1_latency_ns",
    "l2_latency_ns",
    "l3_latency_ns",
    "mem_latency_ns",
    "read_bw_gbs",
    "ctx_2p_us",
    "l3_size_kib",
];

/// Under the runs, each machine of several runs with its current figures
/// (`hwcal_stats::recent`: the median of its newest five runs that
/// measured each, the definition `db list`, `db show` and the site use);
/// empty when no machine has more than one run.
fn current_table(runs: &[Run], rows: &[Vec<String>]) -> String {
    let col = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap_or(0);
    let key = |r: &Vec<String>| (r[col("machine_id")].clone(), r[col("core")].clone());
    let mut machines: Vec<(String, String)> = Vec::new();
    for r in rows.iter().filter(|r| !r[col("machine_id")].is_empty()) {
        if !machines.contains(&key(r)) {
            machines.push(key(r));
        }
    }
    let mut out = String::new();
    for m in machines {
        let mut mine: Vec<(&Run, &Vec<String>)> =
            runs.iter().zip(rows).filter(|(_, r)| key(r) == m).collect();
        if mine.len() < 2 {
            continue;
        }
        mine.sort_by_key(|(r, _)| std::cmp::Reverse((r.profile.created_unix, r.id)));
        if out.is_empty() {
            out = format!(
                "\nCurrent figures: each machine's median over its newest {} runs that measured them.\n\n\
                 | machine_id | core | host | runs | {} |\n|:---|:---|:---|---:|{}\n",
                hwcal_analysis::stats::RECENT,
                CURRENT.join(" | "),
                "---:|".repeat(CURRENT.len())
            );
        }
        let cells: Vec<String> = CURRENT
            .iter()
            .map(|c| {
                let v: Vec<f64> = mine.iter().filter_map(|(_, r)| r[col(c)].parse().ok()).collect();
                let digits = r_digits(c);
                hwcal_analysis::stats::recent(&v).map_or(String::new(), |r| format!("{:.digits$}", r.median))
            })
            .collect();
        out += &format!(
            "| {} | {} | {} | {} | {} |\n",
            md_cell(&m.0),
            md_cell(&m.1),
            md_cell(&mine[0].1[col("host")]),
            mine.len(),
            cells.join(" | ")
        );
    }
    out
}

/// Digits a current figure is shown with, as its run column has them.
fn r_digits(column: &str) -> usize {
    match column {
        "core_mhz" | "l3_size_kib" => 0,
        "mem_latency_ns" => 1,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::sample::full_profile;

    #[test]
    fn verdict_and_interval_columns_let_noisy_runs_be_filtered() {
        let mut p = full_profile(0);
        p.memory.as_mut().unwrap().verdict = hwcal_model::Verdict::Noisy;
        p.memory.as_mut().unwrap().latency_ns_ci95 = Some([200.0, 206.0]);
        p.batch = Some(hwcal_model::Batch {
            id: "abc-1".into(),
            index: 2,
            runs: 5,
            warmup: 0,
        });
        let row = cells(&Run {
            id: 7,
            origin: "run".into(),
            profile: p,
        });
        assert_eq!(row.len(), COLUMNS.len());
        let at = |name: &str| &row[COLUMNS.iter().position(|c| *c == name).unwrap()];
        assert_eq!(at("mem_latency_verdict"), "noisy");
        assert_eq!(at("mem_latency_ns_ci95_low"), "200.0");
        assert_eq!(at("mem_latency_ns_ci95_high"), "206.0");
        assert_eq!(at("core_mhz_verdict"), "ok");
        assert_eq!(at("batch"), "abc-1");
        // Every figure column has its verdict column.
        for fig in ["core_mhz", "l1", "l2", "l3", "mem_latency", "read_bw", "ctx_2p"] {
            assert!(COLUMNS.contains(&format!("{fig}_verdict").as_str()), "{fig}");
        }
    }

    #[test]
    fn one_row_per_run_with_unit_suffixed_columns() {
        let (a, mut b) = (full_profile(0), full_profile(1));
        b.machine.as_mut().unwrap().hostname = "vm, \"quoted\"\nhost".into();
        b.bandwidth = None;
        let runs = [
            Run {
                id: 1,
                origin: "run".into(),
                profile: a.clone(),
            },
            Run {
                id: 7,
                origin: "import".into(),
                profile: b.clone(),
            },
        ];
        let text = String::from_utf8(csv(&runs)).unwrap();
        let lines: Vec<&str> = text.split("\r\n").collect();
        // Header, two rows (the embedded LF stays inside its quoted field), "".
        assert_eq!(lines.len(), 4, "{text:?}");
        assert!(lines[0].starts_with("id,measured_unix,measured_utc,origin,host,machine_id,core"));
        for c in ["l1_size_kib", "mem_latency_ns", "read_bw_gbs", "ctx_2p_us"] {
            assert!(COLUMNS.contains(&c));
        }
        let row = cells(&runs[0]);
        assert_eq!(row.len(), COLUMNS.len());
        let col = |name: &str| row[COLUMNS.iter().position(|c| *c == name).unwrap()].clone();
        assert_eq!(col("mem_latency_ns"), "145.0");
        assert_eq!(col("core"), "Sapphire Rapids");
        assert_eq!(
            col("machine_id"),
            a.machine.as_ref().unwrap().identity.as_ref().unwrap().machine_id
        );
        let l1 = &a.caches.as_ref().unwrap()[0];
        assert_eq!(
            col("l1_size_kib"),
            format!("{:.0}", l1.size_bytes as f64 / 1024.0)
        );
        assert!(!col("read_bw_gbs").is_empty() && !col("ctx_2p_us").is_empty());
        // The awkward host is one quoted field; absent figures are empty.
        assert!(text.contains("\"vm, \"\"quoted\"\"\nhost\""), "{text}");
        let b_row = cells(&runs[1]);
        assert_eq!(
            b_row[COLUMNS.iter().position(|c| *c == "read_bw_gbs").unwrap()],
            ""
        );
    }

    #[test]
    fn cells_a_spreadsheet_would_run_are_neutralised() {
        for (cell, want) in [
            ("=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""),
            ("+1+cmd", "'+1+cmd"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("-0.42", "-0.42"),
            ("+5", "+5"),
            ("vm-1", "vm-1"),
            ("", ""),
        ] {
            assert_eq!(csv_field(cell), want, "{cell:?}");
        }
    }

    #[test]
    fn markdown_cells_carry_no_markup() {
        let cell = md_cell("<img src=x onerror=alert(1)> [a](javascript:x) *b* `c` &amp; a|b\nnext");
        assert!(
            !cell.contains('<') && !cell.contains('>') && !cell.contains('\n'),
            "{cell}"
        );
        assert!(
            cell.contains("&lt;img") && cell.contains("\\[a\\]") && cell.contains("\\*b\\*"),
            "{cell}"
        );
        assert!(cell.contains("&amp;amp;") && cell.contains("a\\|b"), "{cell}");
    }

    #[test]
    fn markdown_ends_with_each_machines_current_figures() {
        // Three runs of one machine, memory latency 100, 300 (a noisy
        // run) and 110 ns: its current figure is their median, 110.
        let runs: Vec<Run> = [100.0, 300.0, 110.0]
            .iter()
            .enumerate()
            .map(|(i, ns)| {
                let mut p = full_profile(0);
                p.created_unix += i as u64;
                p.memory.as_mut().unwrap().latency_ns = *ns;
                Run {
                    id: i as i64 + 1,
                    origin: "run".into(),
                    profile: p,
                }
            })
            .collect();
        let md = String::from_utf8(markdown(&runs)).unwrap();
        let tail = &md[md.find("Current figures").expect(&md)..];
        let header = tail.lines().find(|l| l.starts_with("| machine_id")).unwrap();
        let row = tail.lines().last().unwrap();
        let at = header.split(" | ").position(|c| c == "mem_latency_ns").unwrap();
        assert_eq!(row.split(" | ").nth(at), Some("110.0"), "{tail}");
        assert!(row.contains("| 3 |"), "{row}");
        // One run per machine: no such table.
        let one = String::from_utf8(markdown(&runs[..1])).unwrap();
        assert!(!one.contains("Current figures"));
    }

    #[test]
    fn markdown_is_a_table_of_the_same_rows() {
        let mut a = full_profile(0);
        a.machine.as_mut().unwrap().hostname = "a|b".into();
        let runs = [Run {
            id: 3,
            origin: "run".into(),
            profile: a.clone(),
        }];
        let md = String::from_utf8(markdown(&runs)).unwrap();
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 3);
        let pipes = |l: &str| l.replace("\\|", "").matches('|').count();
        assert!(lines.iter().all(|l| pipes(l) == COLUMNS.len() + 1), "{md}");
        assert!(lines[1].starts_with("|---:|---:|:---|"));
        // Each column aligned by what it holds: text left, numbers right.
        let align: Vec<&str> = lines[1].trim_matches('|').split('|').collect();
        let at = |name: &str| align[COLUMNS.iter().position(|c| *c == name).unwrap()];
        for text in ["host", "machine_id", "core", "cpu", "command"] {
            assert_eq!(at(text), ":---", "{text}");
        }
        for number in ["logical_cpus", "core_mhz"] {
            assert_eq!(at(number), "---:", "{number}");
        }
        assert!(lines[2].starts_with("| 3 | ") && lines[2].contains("a\\|b"));
    }
}

//! The digest: what the machine is, on one screen — at most [`MAX_LINES`]
//! lines of at most the given width (80 columns or more), one line per
//! fact (core and clock, each cache level's size · latency · cycles, each
//! TLB level, memory, bandwidth, context switch, the named figures of the
//! other probes), each with its verdict in a column of its own, then at
//! most five warnings (ranked, each fact once: [`super::warnings`]), each
//! cut at a word. It answers "what is this machine" before the detail
//! ([`super::summary`]) explains how each figure was reached. The verdict
//! column is coloured only when asked (a terminal without `NO_COLOR`).
//! The width is a parameter: the binary reads the terminal's
//! ([`width_for`] turns that into the digest's).

use super::warnings;
use crate::format::value_with_unit;
use hwcal_model::columns::cut_at_word;
use hwcal_model::*;

/// Columns of the digest where no terminal says otherwise (a pipe, a
/// file), and the most it takes on a wider terminal: its lines are laid
/// out for 100, and more columns would only move the verdicts away from
/// their figures.
pub const WIDTH: usize = 100;
/// The fewest columns the digest is laid out for: on a narrower terminal
/// it wraps, as anything does.
pub const MIN_WIDTH: usize = 80;
/// Lines at most, the closing hint included.
pub const MAX_LINES: usize = 25;
/// Columns of the label at the start of each line.
const LABEL: usize = 10;
/// Columns of the verdict at the end of each line (`noisy`, right-aligned).
const VERDICT: usize = 5;

/// The digest's width for a terminal of `columns` (`None`: not a terminal,
/// or its size unknown): [`WIDTH`] at most, [`MIN_WIDTH`] at least.
pub fn width_for(columns: Option<usize>) -> usize {
    columns.map_or(WIDTH, |c| c.clamp(MIN_WIDTH, WIDTH))
}

/// One line of the digest.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// What the line is about (`L2`, `memory`), at most [`LABEL`] columns.
    pub label: String,
    pub text: String,
    /// `None` where the figure carries no verdict (descriptive lines, or a
    /// section that has none yet).
    pub verdict: Option<Verdict>,
}

impl Line {
    fn new(label: &str, text: String, verdict: Option<Verdict>) -> Line {
        Line {
            label: label.into(),
            text,
            verdict,
        }
    }
}

/// The digest of `p` in `width` columns (at least [`MIN_WIDTH`]): its
/// lines, the warnings that fit, and `hint` (how to see the detail, as
/// `detail: hwcal run --detail`) as the last line; verdicts coloured when
/// `colour`. No line is wider than `width` characters, colour codes aside.
pub fn digest(p: &Profile, colour: bool, hint: Option<&str>, width: usize) -> String {
    let width = width.max(MIN_WIDTH);
    let lines = lines(p);
    let mut out: Vec<String> = lines.iter().map(|l| render(l, colour, width)).collect();
    let count = p.notes.iter().filter(|n| n.severity == Severity::Warning).count();
    let closing = usize::from(hint.is_some());
    if !p.notes.is_empty() {
        // Room for the warnings: below the header, above the "+N more"
        // line and the hint.
        let room = MAX_LINES.saturating_sub(out.len() + 2 + closing);
        let noisy: Vec<&str> = lines
            .iter()
            .filter(|l| l.verdict == Some(Verdict::Noisy))
            .map(|l| l.label.as_str())
            .collect();
        let (shown, more) = warnings::first_screen(&p.notes, &noisy, room);
        out.push(format!(
            "{} note{}, {} warning{}{}",
            p.notes.len(),
            plural(p.notes.len()),
            count,
            plural(count),
            if count == 0 { "" } else { ":" }
        ));
        for n in &shown {
            let mark = if colour { "\x1b[33m!\x1b[0m" } else { "!" };
            out.push(format!("  {mark} {}", cut_at_word(&n.text, width - 4)));
        }
        if more > 0 {
            // Where every warning is printed: the hint's first command (up
            // to its `--detail`: `run`'s hint names two), or the summary
            // that follows when the detail was asked for.
            let whence = match hint {
                Some(h) => {
                    let h = h.strip_prefix("detail: ").unwrap_or(h);
                    h.find("--detail")
                        .map_or(h, |i| &h[..i + "--detail".len()])
                        .to_string()
                }
                None => "every note below".to_string(),
            };
            out.push(cut_at_word(&format!("  +{more} more ({whence})"), width));
        }
    }
    if let Some(h) = hint {
        out.push(cut_at_word(h, width));
    }
    out.truncate(MAX_LINES);
    let mut s = out.join("\n");
    s.push('\n');
    s
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A line as printed: label, text (cut at a word to fit), the verdict
/// right-aligned in the last columns. A line without a verdict (the
/// machine) has those columns for its text.
fn render(l: &Line, colour: bool, width: usize) -> String {
    let label = cut_at_word(&l.label, LABEL);
    let Some(v) = l.verdict else {
        let line = format!("{label:<LABEL$}{}", cut_at_word(&l.text, width - LABEL));
        return line.trim_end().to_string();
    };
    let text_width = width - LABEL - VERDICT - 2;
    let text = cut_at_word(&l.text, text_width);
    let verdict = if colour {
        let code = if v == Verdict::Ok { "32" } else { "33" };
        format!("\x1b[{code}m{:>VERDICT$}\x1b[0m", v.as_str())
    } else {
        format!("{:>VERDICT$}", v.as_str())
    };
    format!("{label:<LABEL$}{text:<text_width$}  {verdict}")
}

/// Every fact line the profile holds, in the order of the summary.
pub fn lines(p: &Profile) -> Vec<Line> {
    let mut out = Vec::new();
    if let Some(m) = &p.machine {
        out.push(Line::new("machine", machine(m), None));
    }
    if let Some(c) = &p.clock {
        let tsc = c.tsc_mhz.map_or(String::new(), |t| format!(" · TSC {t:.0} MHz"));
        out.push(Line::new(
            "clock",
            format!(
                "{:.0} MHz core · range {:.0}–{:.0}{tsc}",
                c.core_mhz, c.core_mhz_min, c.core_mhz_max
            ),
            Some(c.verdict),
        ));
    }
    for c in p.caches.iter().flatten() {
        out.push(cache(c));
    }
    if let Some(m) = &p.memory {
        out.push(memory(m, p.machine.as_ref().and_then(|i| i.page_bytes)));
    }
    for t in p.tlbs.iter().flatten() {
        let cy = t
            .miss_latency_cycles
            .map_or(String::new(), |c| format!(" = {c:.1} cy"));
        out.push(Line::new(
            &format!("L{} TLB", t.level),
            format!(
                "{} entries × {} pages · miss +{:.2} ns{cy}",
                t.entries,
                human_bytes(t.page_bytes),
                t.miss_latency_ns
            ),
            Some(t.verdict),
        ));
    }
    if let Some(m) = &p.mem {
        out.push(mem(m));
    }
    if let Some(b) = &p.bandwidth {
        // The kinds measured only (a run measures read; `mem` may add more).
        let rates: Vec<String> = [
            ("read", b.read_bytes_per_sec),
            ("write", b.write_bytes_per_sec),
            ("copy", b.copy_bytes_per_sec),
        ]
        .iter()
        .filter_map(|(k, v)| {
            v.filter(|v| v.is_finite())
                .map(|v| format!("{k} {:.1} GB/s", v / 1e9))
        })
        .collect();
        if !rates.is_empty() {
            out.push(Line::new(
                "bandwidth",
                format!(
                    "{} · {} thread{}, {} each",
                    rates.join(" · "),
                    b.threads,
                    plural(b.threads as usize),
                    human_bytes(b.size_bytes)
                ),
                b.verdict,
            ));
        }
    }
    if let Some(c) = &p.context_switch {
        out.extend(ctx(c));
    }
    if let Some(io) = &p.io {
        out.push(Line::new(
            "io",
            format!(
                "{} {}: {:.0} IOPS · {:.1} MB/s · p99 {:.1} µs (queue {}, {})",
                io.rw,
                human_bytes(io.bs_bytes),
                io.iops,
                io.bytes_per_sec / 1e6,
                io.lat_p99_us,
                io.iodepth,
                io.engine
            ),
            None,
        ));
    }
    out.extend(figures(&p.figures));
    out
}

/// `Zen 5 · host vm · AMD EPYC · 2 CPUs · KVM guest · 23.5 GiB · Linux 6.18.44`.
fn machine(m: &MachineInfo) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(core) = m.core_name() {
        parts.push(core.to_string());
    }
    if !m.hostname.is_empty() {
        parts.push(format!("host {}", m.hostname));
    }
    if !m.cpu_model_name.is_empty() {
        parts.push(m.cpu_model_name.clone());
    }
    parts.push(format!("{} CPU{}", m.logical_cpus, plural(m.logical_cpus)));
    if let Some(h) = &m.hypervisor {
        parts.push(format!("{h} guest"));
    }
    if m.memory_total_bytes > 0 {
        parts.push(human_bytes(m.memory_total_bytes));
    }
    if let Some(e) = &m.emulation {
        parts.push(format!("emulated ({e})"));
    }
    if !m.kernel.is_empty() {
        parts.push(m.kernel.clone());
    }
    parts.join(" · ")
}

fn cache(c: &CacheLevel) -> Line {
    let cy = c
        .latency_cycles
        .map_or(String::new(), |cy| format!(" = {cy:5.1} cy"));
    let line = c.line_bytes.map_or(String::new(), |l| format!(" · line {l} B"));
    // A measured size far from the nominal one is said here: a share of a
    // shared cache, or a level the analysis could not size.
    let nominal = match c.nominal_size_bytes {
        Some(n) if n > 0 && (c.size_bytes as f64 / n as f64 - 1.0).abs() > 0.125 => {
            format!(" (nominal {})", human_bytes(n))
        }
        _ => String::new(),
    };
    Line::new(
        &format!("L{}", c.level),
        format!(
            "{:>9} · {:6.2} ns{cy}{line}{nominal}",
            measured_bytes(c.size_bytes),
            c.latency_ns
        ),
        Some(c.verdict),
    )
}

fn memory(m: &MemoryLatency, base_page: Option<u64>) -> Line {
    let cy = m
        .latency_cycles
        .map_or(String::new(), |c| format!(" = {c:.0} cy"));
    let mlp = m
        .mlp
        .iter()
        .max_by(|a, b| a.speedup.total_cmp(&b.speedup))
        .map_or(String::new(), |q| {
            // A table in doubt says so and shows no figure (the line's
            // verdict is memory latency's, and a speed-up past its chains,
            // cut off the end of the line with its mark, read as `ok`).
            if q.verdict == Some(hwcal_model::Verdict::Noisy) {
                " · MLP (noisy)".to_string()
            } else {
                format!(" · {:.1}× with {} chains", q.speedup, q.chains)
            }
        });
    // The TLB check's word, as the detail's (`pages::statement`, briefly):
    // smaps may count huge pages the TLB never sees.
    let pages = hwcal_model::pages::on_base(hwcal_model::pages::brief(true, Some(m.huge_pages)), base_page);
    match m.latency_no_walks_ns {
        // DRAM's latency first (page walks held out, as multichase's default
        // chase and MLC's idle latency read it), then what the walks add at
        // the footprint chased: the fully random figure depends on the page
        // size and the working set, and stays in the `mem` line.
        Some(l) => {
            let cy = m
                .no_walks_cycles()
                .map_or(String::new(), |c| format!(" = {c:.0} cy"));
            let over = m
                .size_bytes
                .map_or(String::new(), |b| format!(" at {}", hwcal_model::human_bytes(b)));
            let doubt = if m.verdict == hwcal_model::Verdict::Noisy {
                " (noisy)"
            } else {
                ""
            };
            Line::new(
                "memory",
                format!(
                    "{l:.1} ns{cy} no walks · walks +{:.1} ns{over}{doubt}{mlp}",
                    (m.latency_ns - l).max(0.0)
                ),
                Some(m.latency_no_walks_verdict.unwrap_or(m.verdict)),
            )
        }
        None => Line::new(
            "memory",
            format!("{:.1} ns{cy} · {pages}{mlp}", m.latency_ns),
            Some(m.verdict),
        ),
    }
}

fn mem(m: &MemResult) -> Line {
    let what = if m.access_pattern == "random" {
        format!("{:.1} ns per load", m.ns_per_op)
    } else {
        format!("{:.2} GB/s", m.bytes_per_sec / 1e9)
    };
    Line::new("mem", format!("{what} · {}", super::mem_test(m)), Some(m.verdict))
}

/// The smallest ring of the smallest array per ring count at once: lat_ctx's
/// headline (2 processes, 0 KiB).
fn ctx(c: &ContextSwitch) -> Option<Line> {
    let sizes = c.all_sizes();
    let size = sizes.iter().min_by_key(|z| z.size_kb)?;
    let q = size.points.iter().min_by_key(|q| q.nprocs)?;
    Some(Line::new(
        "ctx",
        format!(
            "{:.2} µs per switch · lat_ctx, {} processes, {} KiB each, placement {}",
            q.us_median, q.nprocs, size.size_kb, c.placement
        ),
        Some(q.verdict),
    ))
}

/// The figures shown of each probe that has named figures (id, short
/// name), most telling first; a probe not listed shows its first three.
type Shown = (&'static str, &'static [(&'static str, &'static str)]);
const SHOWN: [Shown; 2] = [
    (
        "c2c",
        &[
            ("fastest", "fastest pair"),
            ("slowest", "slowest"),
            ("rw_fastest", "read/write fastest"),
        ],
    ),
    (
        "os",
        &[
            ("null", "syscall"),
            ("fork_exit", "fork+exit"),
            ("page_fault", "page fault"),
            ("pipe", "pipe"),
        ],
    ),
];

/// One line per probe of named figures: `name value · …`, the verdict the
/// worst of those shown.
fn figures(f: &[Figure]) -> Vec<Line> {
    let mut probes: Vec<&str> = Vec::new();
    for x in f {
        if !probes.contains(&x.probe.as_str()) {
            probes.push(&x.probe);
        }
    }
    probes
        .into_iter()
        .filter_map(|probe| {
            let mine: Vec<&Figure> = f
                .iter()
                .filter(|x| x.probe == probe && x.value.is_some())
                .collect();
            let chosen: Vec<(&Figure, &str)> = match SHOWN.iter().find(|(p, _)| *p == probe) {
                Some((_, ids)) => ids
                    .iter()
                    .filter_map(|(id, name)| {
                        let x = mine.iter().find(|x| x.id == format!("{probe}.{id}"))?;
                        Some((*x, *name))
                    })
                    .collect(),
                None => mine.iter().take(3).map(|x| (*x, x.name.as_str())).collect(),
            };
            if chosen.is_empty() {
                return None;
            }
            let text: Vec<String> = chosen
                .iter()
                .map(|(x, name)| format!("{name} {}", value_with_unit(x.unit, x.value.unwrap_or(f64::NAN))))
                .collect();
            let verdict = chosen.iter().fold(Verdict::Ok, |v, (x, _)| v.and(x.verdict));
            Some(Line::new(probe, text.join(" · "), Some(verdict)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whole recorded runs of two machines (Zen 4 and Zen 5 KVM guests).
    fn recorded() -> Vec<(String, Profile)> {
        [
            (
                "zen4",
                &include_bytes!("../../../analysis/tests/data/zen4-run-a.json")[..],
            ),
            (
                "zen5",
                &include_bytes!("../../../analysis/tests/data/zen5-run-a.json")[..],
            ),
        ]
        .into_iter()
        .map(|(name, b)| (name.to_string(), hwcal_model::parse_profile(b).expect(name)))
        .collect()
    }

    /// The recorded `hwcal run` profiles of `shared/reference/machines`
    /// (HWCAL_REFERENCE_DIR, else `shared/` beside the checkout or inside
    /// it, as the other crates' tests find them); none where it is absent.
    fn reference() -> Vec<(String, Profile)> {
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = [
            std::env::var_os("HWCAL_REFERENCE_DIR").map(std::path::PathBuf::from),
            Some(here.join("../../../shared/reference/machines")),
            Some(here.join("../../shared/reference/machines")),
        ]
        .into_iter()
        .flatten()
        .find(|d| d.is_dir());
        let Some(dir) = dir else {
            eprintln!("shared/reference/machines not found: the recorded machines are skipped");
            return Vec::new();
        };
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| {
                let name = f.file_name().unwrap().to_string_lossy().into_owned();
                let p = hwcal_model::parse_profile(&std::fs::read(f).unwrap()).expect(&name);
                (name, p)
            })
            .collect()
    }

    fn all_machines() -> Vec<(String, Profile)> {
        let mut all = recorded();
        all.extend(reference());
        all.push(("sample".into(), hwcal_model::sample::full_profile(0)));
        all
    }

    /// One screen, no line wider than `width` characters (not bytes: `µ`,
    /// `×`, `·` are two bytes each).
    fn fits(name: &str, text: &str, width: usize) {
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() <= MAX_LINES, "{name}: {} lines\n{text}", lines.len());
        for l in &lines {
            assert!(
                l.chars().count() <= width,
                "{name} at {width}: {} columns: {l}",
                l.chars().count()
            );
        }
    }

    /// A shown text cut from `full`: either all of it, or a prefix that
    /// ends where a word ends, then `…`.
    fn cut_at_a_word(shown: &str, full: &str) -> bool {
        let Some(head) = shown.strip_suffix('…') else {
            return shown == full;
        };
        let next = full.strip_prefix(head).and_then(|rest| rest.chars().next());
        next.is_some_and(|c| c.is_whitespace() || " ·,;:(".contains(c))
    }

    #[test]
    fn the_memory_line_leads_with_dram_and_says_what_walks_add() {
        let mut m = hwcal_model::sample::full_profile(0).memory.unwrap();
        m.latency_ns = 166.0;
        m.latency_cycles = Some(614.2);
        m.size_bytes = Some(1 << 30);
        m.verdict = Verdict::Noisy;
        m.latency_no_walks_ns = Some(143.6);
        m.latency_no_walks_verdict = Some(Verdict::Ok);
        let l = memory(&m, Some(4096));
        // The walk-free figure first, in its own verdict; the walks' cost at
        // the footprint, with the walking figure's doubt beside it.
        assert!(
            l.text
                .starts_with("143.6 ns = 531 cy no walks · walks +22.4 ns at 1 GiB (noisy)"),
            "{}",
            l.text
        );
        assert_eq!(l.verdict, Some(Verdict::Ok));
        // A speed-up table in doubt shows no figure, only its doubt: cut off
        // the line's end with its mark, 22× with 16 chains read as `ok`.
        for q in &mut m.mlp {
            q.verdict = Some(Verdict::Noisy);
        }
        let l = memory(&m, Some(4096));
        assert!(
            l.text.ends_with(" · MLP (noisy)") && !l.text.contains("chains"),
            "{}",
            l.text
        );
        // Without a walk-free chase (an older profile, the sweep's figure)
        // the line is the figure with its pages, as before.
        m.latency_no_walks_ns = None;
        m.latency_no_walks_verdict = None;
        let l = memory(&m, Some(4096));
        assert!(l.text.starts_with("166.0 ns = 614 cy · "), "{}", l.text);
        assert_eq!(l.verdict, Some(Verdict::Noisy));
    }

    #[test]
    fn width_follows_the_terminal_within_80_to_100() {
        assert_eq!(width_for(None), 100);
        assert_eq!(width_for(Some(80)), 80);
        assert_eq!(width_for(Some(91)), 91);
        assert_eq!(width_for(Some(60)), 80);
        assert_eq!(width_for(Some(250)), 100);
    }

    #[test]
    fn one_screen_on_recorded_and_sample_machines() {
        for (name, p) in &all_machines() {
            for width in [MIN_WIDTH, 90, WIDTH] {
                let text = digest(p, false, Some("detail: hwcal run --detail"), width);
                fits(name, &text, width);
                assert_eq!(text.lines().last(), Some("detail: hwcal run --detail"), "{name}");
                assert!(!text.contains('\x1b'), "{name}: colour not asked");
                // Every cache level and the memory are there, each with its
                // verdict in the last column: kept at every width.
                for c in p.caches.iter().flatten() {
                    let label = format!("L{} ", c.level);
                    let line = text
                        .lines()
                        .find(|l| l.starts_with(&label))
                        .unwrap_or_else(|| panic!("{name}: {label}\n{text}"));
                    assert!(line.ends_with(c.verdict.as_str()), "{name}: {line}");
                    assert_eq!(line.chars().count(), width, "{name}: the verdict column: {line}");
                }
                assert!(text.lines().any(|l| l.starts_with("memory ")), "{name}\n{text}");
                assert!(text.lines().any(|l| l.starts_with("clock ")), "{name}\n{text}");
                // A fact line's text is cut at a word, never inside one.
                for (l, shown) in lines(p).iter().zip(text.lines()) {
                    let body = shown[LABEL.min(shown.len())..].trim_end();
                    let body = body
                        .strip_suffix(" ok")
                        .or(body.strip_suffix(" noisy"))
                        .unwrap_or(body);
                    assert!(
                        cut_at_a_word(body.trim_end(), &l.text),
                        "{name} at {width}: {shown}"
                    );
                }
                // Coloured, the same text once the colour codes are taken out.
                let coloured = digest(p, true, Some("detail: hwcal run --detail"), width);
                let plain = coloured
                    .replace("\x1b[32m", "")
                    .replace("\x1b[33m", "")
                    .replace("\x1b[0m", "");
                assert_eq!(plain, text, "{name}");
            }
            let coloured = digest(p, true, None, WIDTH);
            assert!(
                coloured.contains("\x1b[32m") || coloured.contains("\x1b[33m"),
                "{name}"
            );
        }
    }

    #[test]
    fn at_most_five_warnings_each_fact_once_each_cut_at_a_word() {
        for (name, p) in &all_machines() {
            let warnings: Vec<&Note> = p
                .notes
                .iter()
                .filter(|n| n.severity == Severity::Warning)
                .collect();
            for width in [MIN_WIDTH, WIDTH] {
                let text = digest(p, false, Some("detail: hwcal db show 3 --detail"), width);
                let shown: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("  ! ")).collect();
                assert!(shown.len() <= warnings::MAX_SHOWN, "{name}\n{text}");
                let mut distinct: Vec<String> = warnings.iter().map(|n| warnings::fact(n)).collect();
                distinct.sort();
                distinct.dedup();
                assert_eq!(
                    shown.len(),
                    distinct.len().min(warnings::MAX_SHOWN),
                    "{name}\n{text}"
                );
                let mut facts = Vec::new();
                for s in &shown {
                    let n = warnings
                        .iter()
                        .find(|n| cut_at_a_word(s, &n.text))
                        .unwrap_or_else(|| panic!("{name} at {width}: not cut at a word: {s}"));
                    let key = warnings::fact(n);
                    assert!(!facts.contains(&key), "{name}: one fact twice\n{text}");
                    facts.push(key);
                }
                // Nothing lost: what is not shown is counted, with where to see it.
                let more = warnings.len() - shown.len();
                if more > 0 {
                    let line = format!("  +{more} more (hwcal db show 3 --detail)");
                    assert!(text.lines().any(|l| l == line), "{name}: {line}\n{text}");
                } else {
                    assert!(!text.contains(" more ("), "{name}\n{text}");
                }
            }
        }
    }

    #[test]
    fn warnings_past_the_screen_are_counted_not_printed() {
        let mut p = hwcal_model::sample::full_profile(0);
        for k in 0..40 {
            p.notes.push(Note::warning(
                "cache",
                &format!("x{k}"),
                format!("warning {k} {}", "long ".repeat(40)),
            ));
        }
        let total = p.notes.iter().filter(|n| n.severity == Severity::Warning).count();
        let text = digest(&p, false, Some("detail: hint"), MIN_WIDTH);
        fits("many warnings", &text, MIN_WIDTH);
        assert_eq!(
            text.lines().filter(|l| l.starts_with("  ! ")).count(),
            5,
            "{text}"
        );
        assert!(text.contains(&format!("  +{} more (hint)", total - 5)), "{text}");
        assert!(
            text.contains("warning 0 "),
            "the first warnings are shown: {text}"
        );
        assert!(
            text.lines().all(|l| !l.ends_with("lon…")),
            "cut at a word: {text}"
        );
        assert_eq!(text.lines().last(), Some("detail: hint"));
        // With the detail below (no hint), the rest is said to follow.
        let text = digest(&p, false, None, WIDTH);
        assert!(text.contains(" more (every note below)"), "{text}");
        let run = "detail: hwcal db show latest --detail (this run), or hwcal run --detail";
        let text = digest(&p, false, Some(run), WIDTH);
        assert!(text.contains(" more (hwcal db show latest --detail)\n"), "{text}");
        // The same fact from three probes is shown once.
        let mut q = hwcal_model::sample::full_profile(0);
        q.notes = vec![
            Note::warning(
                "mem",
                "latency_not_huge",
                "mem: the latency buffer: huge pages asked",
            ),
            Note::warning("tlb", "huge-missing", "tlb: 2 MiB pages were not obtained"),
            Note::warning(
                "cache",
                "huge-pages-partial",
                "cache: only 0% of the chase buffer",
            ),
        ];
        let text = digest(&q, false, Some("detail: hint"), WIDTH);
        assert_eq!(
            text.lines().filter(|l| l.starts_with("  ! ")).count(),
            1,
            "{text}"
        );
        assert!(text.contains("  +2 more (hint)"), "{text}");
        // A noisy level says so in its verdict column.
        p.caches.as_mut().unwrap()[0].verdict = Verdict::Noisy;
        let text = digest(&p, false, None, MIN_WIDTH);
        assert!(
            text.lines().any(|l| l.starts_with("L1 ") && l.ends_with("noisy")),
            "{text}"
        );
    }
}

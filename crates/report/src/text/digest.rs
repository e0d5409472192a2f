//! The digest: what the machine is, on one screen — at most [`MAX_LINES`]
//! lines of at most [`WIDTH`] columns, one line per fact (core and clock,
//! each cache level's size · latency · cycles, each TLB level, memory,
//! bandwidth, context switch, the named figures of the other probes), each
//! with its verdict in a column of its own, then the warnings, shortened,
//! as many as fit. It answers "what is this machine" before the detail
//! ([`super::summary`]) explains how each figure was reached. The verdict
//! column is coloured only when asked (a terminal without `NO_COLOR`).

use crate::format::value_with_unit;
use hwcal_model::*;

/// Columns of the widest line.
pub const WIDTH: usize = 100;
/// Lines at most, the closing hint included.
pub const MAX_LINES: usize = 25;
/// Columns of the label at the start of each line.
const LABEL: usize = 10;
/// Columns of the verdict at the end of each line (`noisy`, right-aligned).
const VERDICT: usize = 5;

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

/// The digest of `p`: its lines, the warnings that fit, and `hint` (how to
/// see the detail) as the last line; verdicts coloured when `colour`.
pub fn digest(p: &Profile, colour: bool, hint: Option<&str>) -> String {
    let lines = lines(p);
    let mut out: Vec<String> = lines.iter().map(|l| render(l, colour)).collect();
    let warnings: Vec<&Note> = p
        .notes
        .iter()
        .filter(|n| n.severity == Severity::Warning)
        .collect();
    let closing = usize::from(hint.is_some());
    if !p.notes.is_empty() {
        let room = MAX_LINES.saturating_sub(out.len() + 1 + closing);
        out.push(format!(
            "{} note{}, {} warning{}{}",
            p.notes.len(),
            plural(p.notes.len()),
            warnings.len(),
            plural(warnings.len()),
            if warnings.is_empty() { "" } else { ":" }
        ));
        let shown = if warnings.len() > room {
            room.saturating_sub(1)
        } else {
            warnings.len()
        };
        for n in &warnings[..shown] {
            let mark = if colour { "\x1b[33m!\x1b[0m" } else { "!" };
            out.push(format!("  {mark} {}", clip(&n.text, WIDTH - 4)));
        }
        if shown < warnings.len() {
            out.push(format!("  … and {} more", warnings.len() - shown));
        }
    }
    if let Some(h) = hint {
        out.push(clip(h, WIDTH));
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

/// `text` cut to `width` characters, an ellipsis marking the cut.
fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut s: String = text.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// A line as printed: label, text (cut to fit), the verdict right-aligned.
fn render(l: &Line, colour: bool) -> String {
    let text_width = WIDTH - LABEL - VERDICT - 2;
    let text = clip(&l.text, text_width);
    let verdict = match (l.verdict, colour) {
        (None, _) => String::new(),
        (Some(v), false) => format!("{:>VERDICT$}", v.as_str()),
        (Some(v), true) => {
            let code = if v == Verdict::Ok { "32" } else { "33" };
            format!("\x1b[{code}m{:>VERDICT$}\x1b[0m", v.as_str())
        }
    };
    let line = format!("{:<LABEL$}{text:<text_width$}  {verdict}", clip(&l.label, LABEL));
    line.trim_end().to_string()
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
            // A table in doubt says so beside its figure: the line's
            // verdict is memory latency's.
            let doubt = if q.verdict == Some(hwcal_model::Verdict::Noisy) {
                " (noisy)"
            } else {
                ""
            };
            format!(" · {:.1}× with {} chains{doubt}", q.speedup, q.chains)
        });
    // The TLB check's word, as the detail's (`pages::statement`, briefly):
    // smaps may count huge pages the TLB never sees.
    let pages = hwcal_model::pages::on_base(hwcal_model::pages::brief(true, Some(m.huge_pages)), base_page);
    Line::new(
        "memory",
        format!("{:.1} ns{cy} · {pages}{mlp}", m.latency_ns),
        Some(m.verdict),
    )
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
    fn recorded() -> Vec<(&'static str, Profile)> {
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
        .map(|(name, b)| (name, hwcal_model::parse_profile(b).expect(name)))
        .collect()
    }

    fn fits(name: &str, text: &str) {
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() <= MAX_LINES, "{name}: {} lines\n{text}", lines.len());
        for l in &lines {
            assert!(
                l.chars().count() <= WIDTH,
                "{name}: {} columns: {l}",
                l.chars().count()
            );
        }
    }

    #[test]
    fn one_screen_on_recorded_and_sample_machines() {
        let mut all = recorded();
        all.push(("sample", hwcal_model::sample::full_profile(0)));
        for (name, p) in &all {
            let text = digest(p, false, Some("detail: hwcal run --detail"));
            fits(name, &text);
            assert_eq!(text.lines().last(), Some("detail: hwcal run --detail"), "{name}");
            assert!(!text.contains('\x1b'), "{name}: colour not asked");
            // Every cache level and the memory are there, each with its verdict.
            for c in p.caches.iter().flatten() {
                let label = format!("L{} ", c.level);
                let line = text
                    .lines()
                    .find(|l| l.starts_with(&label))
                    .unwrap_or_else(|| panic!("{name}: {label}\n{text}"));
                assert!(line.ends_with(c.verdict.as_str()), "{name}: {line}");
            }
            assert!(text.lines().any(|l| l.starts_with("memory ")), "{name}\n{text}");
            assert!(text.lines().any(|l| l.starts_with("clock ")), "{name}\n{text}");
            // Coloured, the same text once the colour codes are taken out.
            let coloured = digest(p, true, Some("detail: hwcal run --detail"));
            assert!(coloured.contains("\x1b[32m"), "{name}");
            let plain = coloured
                .replace("\x1b[32m", "")
                .replace("\x1b[33m", "")
                .replace("\x1b[0m", "");
            assert_eq!(plain, text, "{name}");
        }
    }

    #[test]
    fn warnings_past_the_screen_are_counted_not_printed() {
        let mut p = hwcal_model::sample::full_profile(0);
        for k in 0..40 {
            p.notes.push(Note::warning(
                "cache",
                "x",
                format!("warning {k} {}", "long ".repeat(40)),
            ));
        }
        let text = digest(&p, false, Some("detail: hint"));
        fits("many warnings", &text);
        assert!(text.contains("more"), "{text}");
        assert!(
            text.contains("warning 0 "),
            "the first warnings are shown: {text}"
        );
        assert_eq!(text.lines().last(), Some("detail: hint"));
        // A noisy level says so in its verdict column.
        p.caches.as_mut().unwrap()[0].verdict = Verdict::Noisy;
        let text = digest(&p, false, None);
        assert!(
            text.lines().any(|l| l.starts_with("L1 ") && l.ends_with("noisy")),
            "{text}"
        );
    }
}

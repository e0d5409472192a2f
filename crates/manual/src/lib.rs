//! hwcal's man pages, generated from the same clap definitions `hwcal`
//! parses with (so they cannot drift from the real flags): clap_mangen's
//! NAME, SYNOPSIS, DESCRIPTION, OPTIONS and SUBCOMMANDS, then what clap
//! knows nothing of — the `after_help` text kept as written under NOTES,
//! each page's EXAMPLES (`man/examples`), and the main page's OUTPUT, EXIT
//! STATUS, ENVIRONMENT and FILES (`man/hwcal.sections`). Pages are bytes;
//! the binary writes them.
#![forbid(unsafe_code)]

use clap_mangen::roff::{roman, Roff};

/// DESCRIPTION of hwcal.1.
const DESCRIPTION: &str = "\
hwcal measures what a machine really does (core clock, caches, TLBs, memory, context \
switches, core-to-core and OS latencies, I/O) and says how much to trust each figure: every \
figure carries its spread and a noise verdict (ok or noisy). It follows The Calibrator, \
lmbench (mhz, lat_ctx, lat_syscall...) and micbench (mem, io), and keeps their flags and \
output formats where users know them.

Measure: run, clock, cache, tlb, mem, ctx, c2c, os, io, validate.

Results: db, report, analyze.

Tools: info, completions, man, schema, sim.";

/// Every page's EXAMPLES: `## hwcal run`, then its lines as written.
pub const EXAMPLES: &str = include_str!("../man/examples");

/// The main page's own sections: `## TITLE`, then the text as written.
pub const SECTIONS: &str = include_str!("../man/hwcal.sections");

/// The command as the man pages show it: built (so subcommands know their
/// full name, `hwcal-db-list`), its about without the `hwcal: ` prefix the
/// `--help` header carries, hwcal.1's description, and no `help` page.
pub fn prepare(cmd: clap::Command) -> clap::Command {
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    let about = about.strip_prefix("hwcal: ").unwrap_or(&about).to_string();
    let mut cmd = cmd
        .about(about)
        .long_about(DESCRIPTION)
        .disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// One man page as roff: clap_mangen's sections, then NOTES (the text
/// after the options, line layout kept instead of filled into one
/// paragraph), EXAMPLES where `man/examples` has some for this command,
/// and on the main page (the one with a version) its own sections.
pub fn render(cmd: &clap::Command) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd.clone()).source(format!("hwcal {}", env!("CARGO_PKG_VERSION")));
    let mut w: Vec<u8> = Vec::new();
    man.render_title(&mut w)?;
    man.render_name_section(&mut w)?;
    man.render_synopsis_section(&mut w)?;
    man.render_description_section(&mut w)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut w)?;
    }
    if cmd.get_subcommands().any(|c| !c.is_hide_set()) {
        man.render_subcommands_section(&mut w)?;
    }
    if let Some(text) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) {
        section(&mut w, "NOTES", &text.to_string())?;
    }
    if let Some(text) = examples(cmd.get_bin_name().unwrap_or(cmd.get_name())) {
        section(&mut w, "EXAMPLES", text)?;
    }
    if cmd.get_version().or_else(|| cmd.get_long_version()).is_some() {
        for part in SECTIONS.split("## ").skip(1) {
            let (title, body) = part.split_once('\n').unwrap_or((part, ""));
            section(&mut w, title.trim(), body)?;
        }
        man.render_version_section(&mut w)?;
    }
    Ok(w)
}

/// Every page, the main one first, then each subcommand's (and theirs):
/// (file name, roff).
pub fn pages(cmd: &clap::Command) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut out = vec![(clap_mangen::Man::new(cmd.clone()).get_filename(), render(cmd)?)];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out.extend(pages(sub)?);
    }
    Ok(out)
}

/// The EXAMPLES lines of page `name` (`hwcal run`), if it has any.
pub fn examples(name: &str) -> Option<&'static str> {
    let head = format!("## {name}\n");
    let at = EXAMPLES.find(&head)? + head.len();
    let body = &EXAMPLES[at..];
    Some(&body[..body.find("\n## ").map_or(body.len(), |e| e + 1)])
}

/// A section whose text keeps its lines (`.nf` ... `.fi`).
fn section(w: &mut Vec<u8>, title: &str, text: &str) -> std::io::Result<()> {
    let mut roff = Roff::new();
    roff.control("SH", [title]).control("nf", []);
    for line in text.lines() {
        roff.text([roman(line)]);
    }
    roff.control("fi", []).to_writer(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd() -> clap::Command {
        clap::Command::new("hwcal")
            .version("1")
            .about("hwcal: calibrate")
            .subcommand(
                clap::Command::new("run")
                    .about("The full calibration")
                    .after_help("Line one\n  line two"),
            )
            .subcommand(clap::Command::new("info").about("What the OS says"))
    }

    #[test]
    fn pages_carry_their_own_sections() {
        let p = pages(&prepare(cmd())).unwrap();
        let names: Vec<&str> = p.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["hwcal.1", "hwcal-run.1", "hwcal-info.1"]);
        let main = String::from_utf8(p[0].1.clone()).unwrap();
        for s in [
            "EXIT STATUS",
            ".SH ENVIRONMENT",
            ".SH FILES",
            ".SH EXAMPLES",
            "c2c, os",
        ] {
            assert!(main.contains(s), "{s}");
        }
        let run = String::from_utf8(p[1].1.clone()).unwrap();
        assert!(run.contains(".SH NOTES") && run.contains("  line two"));
        assert!(
            run.contains(".SH EXAMPLES") && run.contains("hwcal run \\-\\-detail"),
            "{run}"
        );
        assert!(!run.contains(".SH ENVIRONMENT"), "main page only");
    }

    #[test]
    fn examples_stop_at_the_next_page() {
        let run = examples("hwcal run").unwrap();
        assert!(run.starts_with("hwcal run ") && !run.contains("## "), "{run}");
        assert!(examples("hwcal nosuch").is_none());
    }
}

//! `hwcal completions SHELL` and `hwcal man [DIR]`: shell completions and
//! man pages generated from the same clap definitions `hwcal` parses with,
//! so they cannot drift from the real flags.

use crate::cli::{define, CommandEntry, Group, Whole};
use anyhow::{Context, Result};
use clap::{Args, FromArgMatches};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Directory to write hwcal.1 and hwcal-SUBCOMMAND.1 into (created if missing);
    /// without it hwcal.1 goes to stdout (`hwcal man > hwcal.1; man ./hwcal.1`).
    #[arg(value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
}

/// `hwcal completions` in the command table.
pub const COMMAND: CommandEntry = CommandEntry {
    name: "completions",
    group: Group::Tools,
    define: || {
        define::<CompletionsArgs>(
            "completions",
            "Shell completion script (bash, zsh, fish, elvish, powershell) on stdout",
        )
        .after_help(COMPLETIONS_AFTER_HELP)
    },
    run: |m, whole| completions(CompletionsArgs::from_arg_matches(m)?, whole),
};

const COMPLETIONS_AFTER_HELP: &str = "\
Install, e.g.:
  bash: hwcal completions bash > ~/.local/share/bash-completion/completions/hwcal
  zsh:  hwcal completions zsh > ~/.zfunc/_hwcal   (with fpath+=~/.zfunc before compinit)
  fish: hwcal completions fish > ~/.config/fish/completions/hwcal.fish";

/// `hwcal man` in the command table.
pub const MAN_COMMAND: CommandEntry = CommandEntry {
    name: "man",
    group: Group::Tools,
    define: || {
        define::<ManArgs>(
            "man",
            "Man pages: hwcal.1 on stdout, or hwcal.1 and one page per subcommand into DIR",
        )
    },
    run: |m, whole| man(ManArgs::from_arg_matches(m)?, whole),
};

pub fn completions(a: CompletionsArgs, whole: &Whole) -> Result<()> {
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut (whole.grouped)(), "hwcal", &mut buf);
    crate::output::write_output("-", &buf)
}

/// hwcal.1 as roff.
pub fn man_page(whole: &Whole) -> Result<Vec<u8>> {
    render(man_command(whole))
}

/// One man page: clap_mangen's sections, except that the text after the
/// options (`after_help`: exit status, output formats) keeps its line
/// layout under NOTES instead of being filled into one paragraph.
fn render(cmd: clap::Command) -> Result<Vec<u8>> {
    use clap_mangen::roff::{roman, Roff};
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
        let mut roff = Roff::new();
        roff.control("SH", ["NOTES"]).control("nf", []);
        for line in text.to_string().lines() {
            roff.text([roman(line)]);
        }
        roff.control("fi", []);
        roff.to_writer(&mut w)?;
    }
    // A subcommand's EXAMPLES (man/examples: `## hwcal run`, then its lines).
    let page = format!("## {}\n", cmd.get_bin_name().unwrap_or(cmd.get_name()));
    let all = include_str!("../../man/examples");
    if let Some(at) = all.find(&page) {
        let body = &all[at + page.len()..];
        let mut roff = Roff::new();
        roff.control("SH", ["EXAMPLES"]).control("nf", []);
        for line in body.lines().take_while(|l| !l.starts_with("## ")) {
            roff.text([roman(line)]);
        }
        roff.control("fi", []).to_writer(&mut w)?;
    }
    if cmd.get_version().or_else(|| cmd.get_long_version()).is_some() {
        // The main page's own sections (man/hwcal.sections: `## TITLE`, then text as written).
        for part in include_str!("../../man/hwcal.sections").split("## ").skip(1) {
            let (title, body) = part.split_once('\n').unwrap_or((part, ""));
            let mut roff = Roff::new();
            roff.control("SH", [title.trim()]).control("nf", []);
            for line in body.lines() {
                roff.text([roman(line)]);
            }
            roff.control("fi", []).to_writer(&mut w)?;
        }
        man.render_version_section(&mut w)?;
    }
    Ok(w)
}

pub fn man(a: ManArgs, whole: &Whole) -> Result<()> {
    let Some(dir) = a.dir else {
        return crate::output::write_output("-", &man_page(whole)?);
    };
    if dir.exists() && !dir.is_dir() {
        crate::usage!("{}: not a directory", dir.display());
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for path in write_pages(man_command(whole), &dir)? {
        crate::outln!("{}", path.display());
    }
    Ok(())
}

/// DESCRIPTION of hwcal.1.
const DESCRIPTION: &str = "\
hwcal measures what a machine really does (core clock, caches, TLBs, memory, context \
switches, I/O) and says how much to trust each figure: every figure carries its spread \
and a noise verdict (ok or noisy). It follows The Calibrator, lmbench (mhz, lat_ctx) and \
micbench (mem, io), and keeps their flags and output formats where users know them.

Measure: run, clock, cache, tlb, mem, ctx, io, validate.

Results: db, report, analyze.

Tools: info, completions, man, schema.";

/// The command as the man pages show it: built (so subcommands know their
/// full name, `hwcal-db-list`), with a description of its own.
fn man_command(whole: &Whole) -> clap::Command {
    // The plain command, not the grouped one: the grouped `--help`
    // template means nothing to roff, and `help` gets no page.
    let cmd = (whole.plain)();
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    let about = about.strip_prefix("hwcal: ").unwrap_or(&about).to_string();
    let mut cmd = cmd
        .about(about)
        .long_about(DESCRIPTION)
        .disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// hwcal.1, then hwcal-SUB.1 for each subcommand (and hwcal-db-SUB.1 for
/// theirs), into `dir`; returns the files written.
fn write_pages(cmd: clap::Command, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let path = dir.join(clap_mangen::Man::new(cmd.clone()).get_filename());
    let page = render(cmd.clone()).context("rendering a man page")?;
    crate::output::write_file_unsaid(&path, &page)?;
    written.push(path);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        written.extend(write_pages(sub.clone(), dir)?);
    }
    Ok(written)
}

//! `hwcal completions SHELL` and `hwcal man [DIR]`: shell completions and
//! man pages generated from the same clap definitions `hwcal` parses with,
//! so they cannot drift from the real flags.

use crate::cli::{define, CommandEntry, Group, Whole};
use anyhow::{Context, Result};
use clap::{Args, FromArgMatches};

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
    Ok(hwcal_manual::render(&man_command(whole))?)
}

pub fn man(a: ManArgs, whole: &Whole) -> Result<()> {
    let Some(dir) = a.dir else {
        return crate::output::write_output("-", &man_page(whole)?);
    };
    if dir.exists() && !dir.is_dir() {
        crate::usage!("{}: not a directory", dir.display());
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, page) in hwcal_manual::pages(&man_command(whole)).context("rendering the man pages")? {
        let path = dir.join(name);
        crate::output::write_file_unsaid(&path, &page)?;
        crate::outln!("{}", path.display());
    }
    Ok(())
}

/// The plain command, not the grouped one: the grouped `--help` template
/// means nothing to roff.
fn man_command(whole: &Whole) -> clap::Command {
    hwcal_manual::prepare((whole.plain)())
}

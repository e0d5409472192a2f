//! The command-line definition's shared parts: the options several commands
//! share, the exit-status text, the command table's entry type, and the
//! grouped `--help`. Each subcommand's arguments live in its own file under
//! `cmd/`, with its [`CommandEntry`]; `cmd` lists the entries.

pub const AFTER_HELP: &str = "\
Exit status:
  0  success (figures the machine was too noisy to measure are still printed, marked \"noisy\")
  1  a measurement or file operation failed
  2  invalid usage or input (bad flag, value, CPU, size, path)

Every measuring command pins itself to one CPU (the highest allowed) unless
--cpu or --no-pin says otherwise, and writes its figures as a JSON profile with
--json FILE (\"-\" for stdout, which then replaces the text summary).";

/// Where `--help` lists a subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Measure,
    Results,
    Tools,
}

impl Group {
    /// In `--help`'s order.
    pub const ALL: [Group; 3] = [Group::Measure, Group::Results, Group::Tools];

    pub fn title(self) -> &'static str {
        match self {
            Group::Measure => "Measure",
            Group::Results => "Results",
            Group::Tools => "Tools",
        }
    }
}

/// The whole command line, for the commands that describe it (completions,
/// man pages): passed in by the dispatcher, so no command file reaches for
/// the table that lists it.
#[derive(Debug, Clone, Copy)]
pub struct Whole {
    /// With the grouped `--help`: what `hwcal` parses with.
    pub grouped: fn() -> clap::Command,
    /// Without it: what the man pages render.
    pub plain: fn() -> clap::Command,
}

/// One subcommand: a command-table entry (as a probe is a registry entry).
/// Adding a subcommand is one file under `cmd/` holding its arguments, its
/// `run` and this entry, plus one line in `cmd::COMMANDS`.
#[derive(Clone, Copy)]
pub struct CommandEntry {
    pub name: &'static str,
    pub group: Group,
    /// The subcommand's clap definition (its `about`, its arguments).
    pub define: fn() -> clap::Command,
    /// Run it on its parsed arguments.
    pub run: fn(&clap::ArgMatches, &Whole) -> anyhow::Result<()>,
}

impl std::fmt::Debug for CommandEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandEntry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A subcommand's [`CommandEntry`] from its arguments' type and its `run`
/// (`fn(Args) -> Result<()>`), in `--help`'s group, with its one-line about:
/// `subcommand! { pub COMMAND = "clock" in Measure: ClockArgs => run, "..." }`.
#[macro_export]
macro_rules! subcommand {
    ($vis:vis $const:ident = $name:literal in $group:ident: $args:ty => $run:expr, $about:literal) => {
        $vis const $const: $crate::cli::CommandEntry = $crate::cli::CommandEntry {
            name: $name,
            group: $crate::cli::Group::$group,
            define: || $crate::cli::define::<$args>($name, $about),
            run: |m, _| $run(<$args as clap::FromArgMatches>::from_arg_matches(m)?),
        };
    };
}

/// A subcommand whose arguments are the derive's `A`, with a one-line
/// `about` (as a documented enum variant gives it).
pub fn define<A: clap::Args>(name: &'static str, about: &'static str) -> clap::Command {
    A::augment_args(clap::Command::new(name))
        .about(about)
        .long_about(None)
}

/// `cmd` with the subcommands listed by group in its help (clap lists them
/// in one block): `by_group` in order, each with its subcommands' names.
pub fn grouped_help(cmd: clap::Command, by_group: &[(&str, Vec<&str>)]) -> clap::Command {
    let mut cmd = cmd;
    let heading = *cmd.get_styles().get_header();
    let literal = *cmd.get_styles().get_literal();
    cmd.build();
    let width = cmd
        .get_subcommands()
        .map(|c| c.get_name().len())
        .max()
        .unwrap_or(0);
    let mut groups = String::new();
    for (title, names) in by_group {
        groups.push_str(&format!("{heading}{title} commands:{heading:#}\n"));
        for name in names {
            let about = cmd
                .find_subcommand(name)
                .and_then(|c| c.get_about())
                .map(|a| a.to_string())
                .unwrap_or_default();
            let pad = " ".repeat(width - name.len().min(width));
            groups.push_str(&format!("  {literal}{name}{literal:#}{pad}  {about}\n"));
        }
        groups.push('\n');
    }
    cmd.help_template(format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{groups}{heading}Options:{heading:#}\n{{options}}{{after-help}}"
    ))
}

mod common_args;
pub use common_args::{CommonArgs, PlotArgs};

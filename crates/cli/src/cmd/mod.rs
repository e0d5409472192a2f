//! One module per subcommand, each with its arguments, its `run` and its
//! [`CommandEntry`]; [`COMMANDS`] lists them (the CLI's registry, as the
//! runner's lists the probes), and the parser is built from that list.

pub mod analyze;
pub mod c2c;
pub mod cache;
pub mod clock;
pub mod completions;
pub mod ctx;
pub mod db;
pub mod info;
pub mod io;
pub mod mem;
pub mod os;
pub mod report;
pub mod run;
pub mod schema;
pub mod sim;
pub mod site;
pub mod stored;
pub mod tlb;
pub mod validate;

use crate::cli::{grouped_help, CommandEntry, Group, Whole, AFTER_HELP};
use anyhow::Result;
use clap::Parser;

/// Every subcommand, in the order `--help`, the completions and the man
/// pages list them.
pub const COMMANDS: &[CommandEntry] = &[
    run::COMMAND,
    info::COMMAND,
    clock::COMMAND,
    cache::COMMAND,
    tlb::COMMAND,
    mem::COMMAND,
    ctx::COMMAND,
    c2c::COMMAND,
    os::COMMAND,
    io::COMMAND,
    validate::COMMAND,
    db::COMMAND,
    report::COMMAND,
    analyze::COMMAND,
    completions::COMMAND,
    completions::MAN_COMMAND,
    schema::COMMAND,
    sim::COMMAND,
];

/// hwcal: measure what this machine really does.
///
/// Core clock, caches, TLBs, memory, context switches and I/O, each figure
/// with its spread and a noise verdict.
#[derive(Debug, Parser)]
#[command(name = "hwcal", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Cli {
    /// Results database: an SQLite file, or postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME
    /// or libpq's 'host=H user=U dbname=D' (TLS by sslmode= and sslrootcert= as libpq;
    /// PGPASSWORD is read, keeping the password off the command line; every exchange
    /// with the server is limited to 10 s to connect and 30 s a statement,
    /// HWCAL_PG_TIMEOUT_S=N or connect_timeout=N to change) (default: $HWCAL_DB, else $XDG_DATA_HOME/hwcal/hwcal.db, else
    /// ~/.local/share/hwcal/hwcal.db).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub command: Chosen,
}

/// The subcommand given and its arguments, matched against [`COMMANDS`].
#[derive(Debug, Clone)]
pub struct Chosen {
    pub entry: CommandEntry,
    pub matches: clap::ArgMatches,
}

impl clap::FromArgMatches for Chosen {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let missing = || clap::Error::new(clap::error::ErrorKind::MissingSubcommand);
        let (name, sub) = m.subcommand().ok_or_else(missing)?;
        let entry = *COMMANDS.iter().find(|c| c.name == name).ok_or_else(missing)?;
        Ok(Chosen {
            entry,
            matches: sub.clone(),
        })
    }
    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Subcommand for Chosen {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        COMMANDS.iter().fold(cmd, |cmd, c| cmd.subcommand((c.define)()))
    }
    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }
    fn has_subcommand(name: &str) -> bool {
        COMMANDS.iter().any(|c| c.name == name)
    }
}

/// The commands that read or write the results database: only they take
/// `--db` (after the subcommand too); elsewhere it is refused, not ignored.
const DB_COMMANDS: [&str; 11] = [
    "run", "clock", "cache", "tlb", "mem", "ctx", "c2c", "os", "io", "db", "report",
];

/// The clap command without the grouped help: what the man pages render.
pub fn plain_command() -> clap::Command {
    let mut c = <Cli as clap::CommandFactory>::command();
    let db = c.get_arguments().find(|a| a.get_id() == "db").cloned();
    for name in DB_COMMANDS {
        c = c.mut_subcommand(name, |s| s.args(db.clone().map(|a| a.global(true))));
    }
    // `run` stores by default: its --save (shared with the other measuring commands) is hidden.
    c.mut_subcommand("run", |s| s.mut_arg("save", |a| a.hide(true)))
}

/// The clap command with the subcommands grouped in its help: what `main`
/// parses with and the completions are generated from.
pub fn command() -> clap::Command {
    let mut groups: Vec<(&str, Vec<&str>)> = Group::ALL
        .iter()
        .map(|g| {
            (
                g.title(),
                COMMANDS
                    .iter()
                    .filter(|c| c.group == *g)
                    .map(|c| c.name)
                    .collect(),
            )
        })
        .collect();
    // clap's own `help` subcommand, with the tools.
    if let Some(tools) = groups.iter_mut().find(|(t, _)| *t == Group::Tools.title()) {
        tools.1.push("help");
    }
    grouped_help(plain_command(), &groups)
}

/// The whole command line, as the completions and man commands see it.
pub const WHOLE: Whole = Whole {
    grouped: command,
    plain: plain_command,
};

pub fn dispatch(cli: Cli) -> Result<()> {
    let name = cli.command.entry.name;
    // `try_`: a command without --db has no such id (get_one panics in debug builds).
    let sub = cli.command.matches.try_get_one::<std::path::PathBuf>("db");
    let db = cli.db.or_else(|| sub.ok().flatten().cloned());
    if db.is_some() && !DB_COMMANDS.contains(&name) {
        crate::usage!("--db: `hwcal {name}` does not use the results database");
    }
    crate::common::set_db_override(db);
    (cli.command.entry.run)(&cli.command.matches, &WHOLE)
}

#[cfg(test)]
mod tests;

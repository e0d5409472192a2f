//! The `hwcal` binary: parse, validate into plain config, dispatch, print.
#![forbid(unsafe_code)]

mod cli;
mod common;
mod output;
// After the modules whose macros (`usage!`, `outln!`) it uses.
mod cmd;

use clap::FromArgMatches;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Parsed with `cli::command()`: the derive's definitions plus the
    // grouped subcommand list of `--help`.
    let matches = cli::command().get_matches();
    let args = cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut cli::command()).exit());
    match cmd::dispatch(args) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`hwcal db export 3 | head`): not an error.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            // One line per cause, no backtrace: `hwcal: error: ...: ...`.
            let usage = e.chain().any(|c| {
                c.is::<common::UsageError>()
                    || c.downcast_ref::<hwcal_runner::RunnerError>()
                        .is_some_and(hwcal_runner::RunnerError::is_usage)
                    || c.downcast_ref::<hwcal_db::DbError>()
                        .is_some_and(hwcal_db::DbError::is_usage)
            });
            let msg = format!("{e:#}");
            eprintln!("hwcal: error: {}", hwcal_report::sanitize::inert(&msg));
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

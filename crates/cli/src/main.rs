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
    // Parsed with `cmd::command()`: the derive's definitions plus the
    // grouped subcommand list of `--help`.
    let matches = match cmd::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => return clap_exit(e),
    };
    let args = cmd::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut cmd::command()).exit());
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
            common::say_line(&format!("error: {e:#}"));
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

/// What clap has to say instead of a command (`--help`, `--version`, a
/// usage error), printed where clap would print it; a failed write (stdout
/// to `/dev/full`) is a failure (exit 1), never a silent success or a panic.
/// A reader that went away (`hwcal --help | head -1`) is not a failure.
fn clap_exit(e: clap::Error) -> ExitCode {
    use std::io::Write;
    // One prefix for every error, clap's as the commands' own.
    let text = e
        .render()
        .to_string()
        .replacen("error:", "hwcal: error:", e.use_stderr() as usize);
    let written = if e.use_stderr() {
        let mut err = std::io::stderr().lock();
        err.write_all(text.as_bytes()).and_then(|()| err.flush())
    } else {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes()).and_then(|()| out.flush())
    };
    match written {
        Err(w) if w.kind() != std::io::ErrorKind::BrokenPipe => {
            common::say_line(&format!("error: writing the help text: {w}"));
            ExitCode::FAILURE
        }
        _ => ExitCode::from(e.exit_code() as u8),
    }
}

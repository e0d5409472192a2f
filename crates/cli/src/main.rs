//! The `hwcal` binary: parse, validate into plain config, dispatch, print.
#![forbid(unsafe_code)]

mod cli;
mod cmd;
mod common;
mod registry;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cmd::dispatch(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line per cause, no backtrace: `hwcal: error: ...: ...`.
            let usage = e.downcast_ref::<common::UsageError>().is_some();
            eprintln!("hwcal: error: {e:#}");
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

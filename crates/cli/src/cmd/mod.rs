//! One module per subcommand.

pub mod analyze;
pub mod cache;
pub mod clock;
pub mod info;
pub mod neighbours;
pub mod plots;
pub mod run;
pub mod tlb;

use crate::cli::{Cli, Command};
use anyhow::Result;

pub fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Info(a) => info::run(a),
        Command::Clock(a) => clock::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Cache(a) => cache::run(a),
        Command::Tlb(a) => tlb::run(a),
    }
}

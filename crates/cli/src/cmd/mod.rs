//! One module per subcommand.

pub mod analyze;
pub mod clock;
pub mod info;
pub mod io;
pub mod run;

use crate::cli::{Cli, Command};
use anyhow::Result;

pub fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Info(a) => info::run(a),
        Command::Clock(a) => clock::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Io(a) => io::run(a),
    }
}

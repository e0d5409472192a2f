//! One module per subcommand.

pub mod analyze;
pub mod cache;
pub mod clock;
pub mod completions;
pub mod ctx;
pub mod db;
pub mod info;
pub mod io;
pub mod mem;
pub mod report;
pub mod run;
pub mod schema;
pub mod site;
pub mod stored;
pub mod tlb;
pub mod validate;

use crate::cli::{Cli, Command};
use anyhow::Result;

pub fn dispatch(cli: Cli) -> Result<()> {
    crate::common::set_db_override(cli.db);
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Info(a) => info::run(a),
        Command::Clock(a) => clock::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Cache(a) => cache::run(a),
        Command::Tlb(a) => tlb::run(a),
        Command::Mem(a) => mem::run(a),
        Command::Validate(a) => validate::run(a),
        Command::Db(a) => db::run(a),
        Command::Report(a) => report::run(a),
        Command::Ctx(a) => ctx::run(a),
        Command::Io(a) => io::run(a.normalize()),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => completions::man(a),
        Command::Schema => schema::run(),
    }
}

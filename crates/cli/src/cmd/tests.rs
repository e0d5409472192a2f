//! Parsing tests: aliases, groups, normalisation.

use super::*;
use clap::FromArgMatches;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    let m = command().try_get_matches_from(args)?;
    Cli::from_arg_matches(&m)
}

fn io(args: &[&str]) -> io::IoArgs {
    let chosen = parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}")).command;
    assert_eq!(chosen.entry.name, "io");
    io::IoArgs::from_arg_matches(&chosen.matches).unwrap().normalize()
}

#[test]
fn fio_names_are_aliases_of_the_io_flags() {
    let words = |s: &'static str| s.split(' ').collect::<Vec<_>>();
    let fio = io(&words(
        "hwcal io --ioengine io_uring --runtime 3 --rwmixread=70 --numjobs 4 --rw randrw --direct=1 --filename=/tmp/x",
    ));
    let own = io(&words(
        "hwcal io --engine io_uring -t 3 --rwmix-read 70 -m 4 --rw randrw --direct /tmp/x",
    ));
    for a in [&fio, &own] {
        assert_eq!(a.engine, io::IoEngineArg::IoUring);
        assert_eq!(a.time, Some(3.0));
        assert_eq!(a.rwmix_read, Some(70));
        assert_eq!(a.threads, 4);
        assert!(a.direct);
        assert_eq!(a.path.as_deref(), Some(std::path::Path::new("/tmp/x")));
    }
    assert_eq!(io(&["hwcal", "io", "--time", "2"]).time, Some(2.0));
    assert!(!io(&["hwcal", "io", "--direct=0"]).direct);
    assert!(!io(&["hwcal", "io"]).direct);
    // `--direct PATH` keeps PATH positional (the flag takes a value only with `=`).
    let d = io(&["hwcal", "io", "--direct", "/mnt"]);
    assert!(d.direct);
    assert_eq!(d.path.as_deref(), Some(std::path::Path::new("/mnt")));
    assert!(parse(&["hwcal", "io", "--filename", "/a", "/b"]).is_err());
    assert!(parse(&["hwcal", "io", "--direct=maybe"]).is_err());
}

#[test]
fn clap_definitions_are_consistent() {
    command().debug_assert();
}

/// Adding a subcommand is its arguments, its `run` and its entry (one file)
/// plus its line in `COMMANDS`; here the entry joins the table in the test.
#[derive(Debug, clap::Args)]
struct BranchArgs {
    #[arg(long, default_value_t = 15.0)]
    flush_ns: f64,
}

static RAN_WITH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn branch(a: BranchArgs) -> anyhow::Result<()> {
    RAN_WITH.store(a.flush_ns.to_bits(), std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

crate::subcommand! { BRANCH = "branch" in Measure: BranchArgs => branch, "Branch-mispredict cost" }

#[test]
fn a_new_subcommand_is_one_entry() {
    let cmd = plain_command().subcommand((BRANCH.define)());
    let m = cmd
        .try_get_matches_from(["hwcal", "branch", "--flush-ns", "30"])
        .unwrap();
    let (name, sub) = m.subcommand().unwrap();
    assert_eq!(name, BRANCH.name);
    (BRANCH.run)(sub, &WHOLE).unwrap();
    assert_eq!(
        f64::from_bits(RAN_WITH.load(std::sync::atomic::Ordering::Relaxed)),
        30.0
    );
}

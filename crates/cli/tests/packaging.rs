//! What a packager and a new user rely on: `--version`, the grouped
//! `--help`, shell completions and man pages generated from the clap
//! definitions, fio's flag names on `io`. Nothing here measures.

use assert_cmd::Command;
use predicates::prelude::*;

fn hwcal() -> Command {
    Command::cargo_bin("hwcal").unwrap()
}

#[test]
fn version_names_the_crate_version() {
    hwcal()
        .arg("--version")
        .assert()
        .success()
        .stdout(format!("hwcal {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn help_groups_the_subcommands() {
    let out = hwcal().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let at = |s: &str| {
        help.find(s)
            .unwrap_or_else(|| panic!("{s:?} missing from\n{help}"))
    };
    assert!(at("Measure commands:") < at("  run ") && at("  run ") < at("Results commands:"));
    assert!(at("Results commands:") < at("  db ") && at("  db ") < at("Tools commands:"));
    assert!(at("Tools commands:") < at("  completions ") && at("  completions ") < at("Options:"));
    // Every subcommand in exactly one group (listed once), `help` included.
    let names = [
        "run", "clock", "cache", "tlb", "mem", "ctx", "c2c", "os", "io", "validate",
    ]
    .into_iter()
    .chain([
        "db",
        "report",
        "analyze",
        "info",
        "completions",
        "man",
        "schema",
        "help",
    ]);
    for name in names {
        assert_eq!(
            help.matches(&format!("\n  {name} ")).count(),
            1,
            "{name} in\n{help}"
        );
    }
    // `hwcal help` shows the same grouped list.
    let out = hwcal().arg("help").output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), help);
}

#[test]
fn completions_for_every_shell_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = hwcal().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.len() > 1000, "{shell}: {} bytes", script.len());
        for word in ["cache", "ctx", "completions", "json", "ioengine"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    hwcal().args(["completions", "tcsh"]).assert().code(2);
    hwcal().arg("completions").assert().code(2);
}

#[test]
fn bash_completion_script_parses() {
    let Ok(status) = std::process::Command::new("bash").arg("--version").output() else {
        eprintln!("bash not installed: syntax check skipped");
        return;
    };
    assert!(status.status.success());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hwcal.bash");
    let out = hwcal().args(["completions", "bash"]).output().unwrap();
    std::fs::write(&path, out.stdout).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn man_page_on_stdout_is_roff() {
    let out = hwcal().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq") || page.contains("\n.TH "),
        "{page}"
    );
    assert!(page.contains(".TH hwcal 1"), "{page}");
    for word in ["completions", "cache", "Exit status"] {
        assert!(page.contains(word), "man page lacks {word}");
    }
    // Beyond --help: what it prints, how it ends, what it reads, examples.
    for section in [
        ".SH OUTPUT",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH EXAMPLES",
    ] {
        assert!(page.contains(section), "man page lacks {section}");
    }
    for word in ["HWCAL_DB", "NO_COLOR", "hwcal db compare 3 7"] {
        assert!(page.contains(word), "man page lacks {word}");
    }
    // Every environment variable hwcal reads is there.
    for var in [
        "HWCAL_PG_TIMEOUT_S",
        "HWCAL_EMULATION",
        "HWCAL_TIMER",
        "HWCAL_MEM_ISA",
    ] {
        assert!(page.contains(var), "man page lacks {var}");
    }
}

#[test]
fn man_pages_into_a_directory_render() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("man1");
    let out = hwcal().arg("man").arg(&target).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for page in [
        "hwcal.1",
        "hwcal-run.1",
        "hwcal-io.1",
        "hwcal-db.1",
        "hwcal-db-list.1",
    ] {
        let path = target.join(page);
        assert!(path.is_file(), "{page} not written");
        assert!(String::from_utf8(out.stdout.clone()).unwrap().contains(page));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(".TH "), "{page} has no .TH");
    }
    // Rendered as `man -l` would show it, where man-db is installed.
    let rendered = std::process::Command::new("man")
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .arg("-l")
        .arg(target.join("hwcal-io.1"))
        .output();
    match rendered {
        Ok(r) if r.status.success() => {
            let text = String::from_utf8_lossy(&r.stdout);
            assert!(text.contains("NAME") && text.contains("hwcal-io"), "{text}");
            assert!(text.contains("--ioengine"), "{text}");
        }
        _ => eprintln!("man -l not available: rendering not checked"),
    }
    // A path that is a file is a usage error.
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    hwcal().arg("man").arg(&file).assert().code(2);
}

#[test]
fn fio_flag_names_are_accepted_by_io() {
    // Parsing only: a bad engine name under fio's flag is a usage error that
    // names the flag, and the alias shows in `io --help`.
    hwcal()
        .args(["io", "--ioengine", "libaio"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'libaio'"));
    hwcal()
        .args(["io", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--ioengine"))
        .stdout(predicate::str::contains("--runtime"))
        .stdout(predicate::str::contains("--rwmixread"))
        .stdout(predicate::str::contains("--numjobs"));
    hwcal().args(["io", "--filename", "/a", "/b"]).assert().code(2);
}

#[test]
fn mem_help_shows_verbose() {
    hwcal()
        .args(["mem", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("-v, --verbose"));
}

#[test]
fn every_page_has_examples_that_parse() {
    let dir = tempfile::tempdir().unwrap();
    let out = hwcal().arg("man").arg(dir.path()).output().unwrap();
    assert!(out.status.success());
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains(".SH EXAMPLES"),
            "{} has no EXAMPLES",
            path.display()
        );
    }
    // Each example's arguments pass the parser: with --help appended clap
    // checks every flag and value before it, and measures nothing.
    let examples = include_str!("../../manual/man/examples");
    let mut checked = 0;
    for line in examples.lines().filter(|l| l.starts_with("hwcal ")) {
        let code = line.split('#').next().unwrap().split('>').next().unwrap();
        let args: Vec<&str> = code.split_whitespace().skip(1).collect();
        hwcal()
            .args(&args)
            .arg("--help")
            .assert()
            .success()
            .stderr(predicate::str::is_empty());
        checked += 1;
    }
    assert!(checked >= 40, "{checked} examples");
}

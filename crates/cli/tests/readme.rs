//! The README's claims that a machine can check: the quick start's two
//! commands on its first screen, the usage block naming every subcommand
//! (and every `db` subcommand) with flags the binary really has, the help
//! groups quoted as `hwcal --help` prints them, every repository path it
//! names, and the binary size where a release build is at hand.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn readme() -> String {
    std::fs::read_to_string(workspace().join("README.md")).unwrap()
}

fn help(args: &[&str]) -> String {
    let out = Command::cargo_bin("hwcal")
        .unwrap()
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommand names a `--help` lists under its "Commands:" headings.
fn subcommands(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.ends_with("ommands:") {
            inside = true;
        } else if line.trim().is_empty() {
            inside = false;
        } else if inside && line.starts_with("  ") && !line.starts_with("   ") {
            let name = line.split_whitespace().next().unwrap();
            if name != "help" {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// The fenced block that follows the first line containing `heading`.
fn block_after(text: &str, heading: &str) -> String {
    let at = text
        .find(heading)
        .unwrap_or_else(|| panic!("README has no {heading:?}"));
    let rest = &text[at..];
    let open = rest.find("```").unwrap();
    let body = &rest[open + 3..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").unwrap()].to_string()
}

#[test]
fn the_quick_start_is_on_the_first_screen() {
    let first: String = readme().lines().take(25).collect::<Vec<_>>().join("\n");
    assert!(first.contains("cargo run --release -- run"), "{first}");
    assert!(first.contains("cargo test --workspace"), "{first}");
    // And CI runs that very test command.
    let ci = std::fs::read_to_string(workspace().join(".ci/run")).unwrap();
    assert!(ci.contains("cargo test --workspace"));
}

#[test]
fn the_usage_block_names_every_subcommand_with_real_flags() {
    let usage = block_after(&readme(), "## Usage");
    let top = subcommands(&help(&[]));
    assert!(top.len() >= 15, "{top:?}");
    for name in &top {
        assert!(
            usage.contains(&format!("hwcal {name} ")) || usage.contains(&format!("| {name}")),
            "the README's usage block lacks `hwcal {name}`"
        );
    }
    let db_line = usage
        .lines()
        .find(|l| l.starts_with("hwcal db "))
        .expect("a db line");
    for name in subcommands(&help(&["db"])) {
        assert!(
            db_line.contains(&name),
            "the usage block's db line lacks {name}: {db_line}"
        );
    }
    // Each line's long flags exist in that subcommand's --help.
    for line in usage.lines().filter(|l| l.starts_with("hwcal ")) {
        let cmd = line.split_whitespace().nth(1).unwrap();
        let sub = cmd.split('|').next().unwrap();
        if !top.iter().any(|t| t == sub) {
            continue;
        }
        let text = if ["validate", "sim"].contains(&sub) {
            let which = line.split_whitespace().nth(2).unwrap();
            help(&[sub, which])
        } else {
            help(&[sub])
        };
        let code = line.split('#').next().unwrap();
        for flag in code
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with("--"))
        {
            assert!(
                text.contains(flag),
                "README: `{line}`: {flag} is not in `hwcal {sub} --help`"
            );
        }
    }
}

#[test]
fn the_help_groups_are_quoted_as_printed() {
    let quoted = block_after(&readme(), "`hwcal --help` lists the subcommands");
    let printed = help(&[]);
    for line in quoted.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            printed.contains(line),
            "README quotes a help line hwcal does not print: {line}"
        );
    }
}

#[test]
fn every_repository_path_named_exists() {
    let text = readme();
    let root = workspace();
    let mut checked = 0;
    // Inline code spans, line by line (fences would upset a whole-text split).
    for quoted in text
        .lines()
        .filter(|l| !l.starts_with("```"))
        .flat_map(|l| l.split('`').skip(1).step_by(2))
    {
        let top = ["crates/", "contrib/", "scripts/", "tools/", "schema/", ".ci/"];
        if top.iter().any(|t| quoted.starts_with(t)) && !quoted.contains(' ') {
            assert!(
                root.join(quoted).exists(),
                "README names {quoted}, which is not in the repository"
            );
            checked += 1;
        }
        // Shared reference files live beside the checkout, when it is there.
        if let Some(rest) = quoted
            .strip_prefix("shared/reference/")
            .or(quoted.strip_prefix("../shared/reference/"))
        {
            let shared = root.join("../shared/reference");
            if shared.is_dir() {
                assert!(
                    shared.join(rest).exists(),
                    "README names {quoted}, not in ../shared"
                );
            }
        }
    }
    assert!(checked >= 5, "only {checked} paths found: the scan is broken");
}

#[test]
fn the_stated_binary_size_matches_a_release_build() {
    let text = readme();
    let at = text
        .find("The release binary carries")
        .expect("the size sentence");
    let tail = &text[at..at + 200];
    let mb: f64 = tail
        .split("about ")
        .nth(1)
        .and_then(|t| t.split(" MB").next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no 'about N MB' in: {tail}"));
    let bin = workspace().join("target/release/hwcal");
    match std::fs::metadata(&bin) {
        Ok(m) => {
            let actual = m.len() as f64 / 1e6;
            assert!(
                (actual / mb - 1.0).abs() < 0.3,
                "README says about {mb} MB, target/release/hwcal is {actual:.1} MB"
            );
        }
        Err(_) => eprintln!(
            "no release build at {}: the size claim is not checked",
            bin.display()
        ),
    }
}

//! Helpers shared by the CLI's integration tests (one copy instead of one
//! per test file). Each test file uses what it needs.
#![allow(dead_code)]

use assert_cmd::Command;
use hwcal_model::sample::full_profile;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The `hwcal` binary under test.
pub fn hwcal() -> Command {
    Command::cargo_bin("hwcal").unwrap()
}

/// The `hwcal` binary as a plain `std::process::Command` (for tests that
/// spawn it and signal it), through cargo's target runner where one is set
/// (`qemu-aarch64` for the aarch64 build), as `hwcal()` is.
pub fn hwcal_process() -> std::process::Command {
    <std::process::Command as assert_cmd::cargo::CommandCargoExt>::cargo_bin("hwcal").unwrap()
}

/// True (with a message) where the tests run under emulation and a test
/// needs what emulation lacks: real timings, io_uring, NUMA policy.
pub fn emulated(test: &str) -> bool {
    hwcal_harness::platform::skip_if_emulated(test)
}

/// Run `c`, which must succeed; its stdout.
pub fn stdout_of(c: &mut Command) -> String {
    String::from_utf8(c.assert().success().get_output().stdout.clone()).unwrap()
}

/// Run `c`, which must succeed and print JSON on stdout; the JSON.
pub fn json_of(c: &mut Command) -> Value {
    serde_json::from_str(&stdout_of(c)).expect("valid JSON on stdout")
}

/// A temporary home for a test: its own results database (HWCAL_DB, with
/// HOME and XDG_DATA_HOME pointed at the temporary directory too), never
/// the user's.
pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("data/hwcal.db")
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    pub fn hwcal(&self) -> Command {
        let mut c = Command::cargo_bin("hwcal").unwrap();
        c.env("HWCAL_DB", self.db())
            .env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("xdg"));
        c
    }
    /// Write synthetic profile `variant` as JSON; returns its path.
    pub fn profile_file(&self, variant: u32) -> PathBuf {
        let f = self.path(&format!("p{variant}.json"));
        std::fs::write(&f, serde_json::to_vec_pretty(&full_profile(variant)).unwrap()).unwrap();
        f
    }
    pub fn import(&self, variant: u32) -> i64 {
        let f = self.profile_file(variant);
        let out = self
            .hwcal()
            .args(["db", "import", s(&f)])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let out = String::from_utf8(out).unwrap();
        let id = out
            .split("as run ")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        id.parse().unwrap()
    }
    pub fn list(&self) -> String {
        let out = self
            .hwcal()
            .args(["db", "list"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    }
    /// Ids in `db list`.
    pub fn ids(&self) -> Vec<i64> {
        self.list()
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect()
    }
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// Every profile a test gets from hwcal passes the same plausibility check
// `hwcal analyze` and `hwcal db import` apply (hwcal never writes what it
// would itself refuse to read).

/// Parse a JSON profile written by hwcal, failing (with the problems named)
/// if it does not pass `hwcal_report::parse_profile`'s checks.
pub fn profile_json(bytes: &[u8]) -> Result<serde_json::Value, String> {
    hwcal_report::parse_profile(bytes)
        .map_err(|e| format!("hwcal wrote a profile it refuses to read: {e}"))?;
    serde_json::from_slice(bytes).map_err(|e| e.to_string())
}

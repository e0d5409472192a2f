//! The published JSON Schema (schema/profile.schema.json) is the one the
//! model types generate, and real profiles validate against it: the
//! recorded fixtures, synthetic full profiles, `hwcal analyze` output and,
//! where shared/ is present, the recorded reference machines.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn committed_schema_path() -> PathBuf {
    workspace().join("schema/profile.schema.json")
}

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(committed_schema_path()).expect("schema/profile.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::draft202012::new(&schema).expect("a valid draft 2020-12 schema")
}

fn assert_valid(v: &jsonschema::Validator, what: &str, profile: &serde_json::Value) {
    let errors: Vec<String> = v
        .iter_errors(profile)
        .take(10)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match the schema:\n{}",
        errors.join("\n")
    );
}

#[test]
fn committed_schema_is_the_generated_one() {
    let generated = hwcal_model::schema::profile_schema_json();
    let path = committed_schema_path();
    if std::env::var_os("HWCAL_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schema/profile.schema.json is out of date with the model types: regenerate it with\n  \
         HWCAL_UPDATE_SCHEMA=1 cargo test -p hwcal --test schema\nor `hwcal schema > schema/profile.schema.json`"
    );
    let out = Command::cargo_bin("hwcal")
        .unwrap()
        .arg("schema")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        generated,
        "`hwcal schema` prints the same"
    );
}

#[test]
fn schema_documents_the_legacy_keys() {
    let s = hwcal_model::schema::profile_schema_json();
    assert!(s.contains("\"$schema\": \"https://json-schema.org/draft/2020-12/schema\""));
    for key in ["us_median", "clk_per_op", "overhead_us", "rwmix_read"] {
        assert!(s.contains(&format!("\"{key}\"")), "{key} missing");
    }
    assert!(s.contains("lat_ctx's naming, kept for compatibility"));
    assert!(s.contains("micbench-mem's key, kept for compatibility"));
    assert!(s.contains("`ovr`"));
}

#[test]
fn synthetic_profiles_validate_and_a_broken_one_does_not() {
    let v = validator();
    for variant in 0..3 {
        let p = serde_json::to_value(hwcal_model::sample::full_profile(variant)).unwrap();
        assert_valid(&v, &format!("sample::full_profile({variant})"), &p);
    }
    let mut bad = serde_json::to_value(hwcal_model::sample::full_profile(0)).unwrap();
    bad["schema_version"] = "1".into();
    assert!(!v.is_valid(&bad), "a string schema_version must not validate");
    let mut bad = serde_json::to_value(hwcal_model::sample::full_profile(0)).unwrap();
    bad["clock"]["verdict"] = "fine".into();
    assert!(!v.is_valid(&bad), "an unknown verdict must not validate");
    let mut bad = serde_json::to_value(hwcal_model::sample::full_profile(0)).unwrap();
    bad.as_object_mut().unwrap().remove("tool");
    assert!(!v.is_valid(&bad), "a profile without `tool` must not validate");
}

/// Every JSON file under crates/*/tests/data that is a profile (has
/// `schema_version`; the others are raw-curve fixtures of their own format).
#[test]
fn fixture_profiles_validate() {
    let v = validator();
    let mut checked = 0;
    for krate in std::fs::read_dir(workspace().join("crates")).unwrap() {
        let data = krate.unwrap().path().join("tests/data");
        let Ok(files) = std::fs::read_dir(&data) else {
            continue;
        };
        for f in files {
            let path = f.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let value: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            if value.get("schema_version").is_some() {
                assert_valid(&v, &path.display().to_string(), &value);
                checked += 1;
            }
        }
    }
    assert!(checked >= 1, "no profile fixture found");
}

/// The recorded profiles of shared/reference/machines (whole `hwcal run`
/// profiles from other CPUs), as written and as `hwcal analyze` re-writes
/// them. shared/ is beside the checkout (or inside it); without it the
/// test says so and checks a fixture's `analyze` output only.
#[test]
fn reference_and_analyzed_profiles_validate() {
    let v = validator();
    let dir = [
        std::env::var_os("HWCAL_REFERENCE_DIR").map(PathBuf::from),
        Some(workspace().join("../shared/reference/machines")),
        Some(workspace().join("shared/reference/machines")),
    ]
    .into_iter()
    .flatten()
    .find(|d| d.is_dir());
    let mut files: Vec<PathBuf> = match &dir {
        Some(d) => std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect(),
        None => {
            eprintln!("shared/reference/machines not found: checking the ctx fixture only");
            Vec::new()
        }
    };
    files.sort();
    files.push(workspace().join("crates/analysis/tests/data/ctx_s0_s64_sapphire_rapids_vm.json"));
    for path in &files {
        let recorded: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_valid(&v, &path.display().to_string(), &recorded);
        let out = Command::cargo_bin("hwcal")
            .unwrap()
            .arg("analyze")
            .arg(path)
            .args(["--json", "-"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "analyze {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let analyzed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_valid(&v, &format!("hwcal analyze {}", path.display()), &analyzed);
        // The detail reads in 100 columns too (tables fit, prose wraps).
        let out = Command::cargo_bin("hwcal")
            .unwrap()
            .arg("analyze")
            .arg(path)
            .arg("--detail")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "{}: {line}", path.display());
        }
    }
}

//! Loading the recorded fixtures of `tests/data`, shared by the analysis
//! tests: a whole profile, or (the cache and TLB fixtures) only the
//! machine and the raw curves.
#![allow(dead_code)] // each test binary uses part of it

use hwcal_model::{MachineInfo, Profile, RawCurve};
use std::path::{Path, PathBuf};

#[derive(serde::Deserialize)]
struct Partial {
    machine: Option<MachineInfo>,
    raw: Vec<RawCurve>,
}

/// A profile from JSON bytes: a whole profile, else machine + raw curves.
pub fn from_bytes(bytes: &[u8]) -> Profile {
    serde_json::from_slice(bytes).unwrap_or_else(|_| {
        let f: Partial = serde_json::from_slice(bytes).expect("a profile or machine + raw curves");
        Profile {
            machine: f.machine,
            raw: f.raw,
            ..Default::default()
        }
    })
}

/// The profile in the file at `path`.
pub fn load_path(path: &Path) -> Profile {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    from_bytes(&bytes)
}

/// The directory of the recorded fixtures.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The fixture `tests/data/NAME`.
pub fn load(name: &str) -> Profile {
    load_path(&data_dir().join(name))
}

//! Every recorded profile in `tests/data` — real runs on the reference
//! machine, including one taken while another job interfered — passes the
//! plausibility check that `db import`, `analyze` and `report` apply to
//! profiles from files: the bounds must never reject a real measurement.

use hwcal_model::{plausible::implausible, MachineInfo, Profile, RawCurve};

/// The cache and TLB fixtures keep only the machine and the raw curves.
#[derive(serde::Deserialize)]
struct Partial {
    machine: Option<MachineInfo>,
    raw: Vec<RawCurve>,
}

fn load(bytes: &[u8]) -> Profile {
    serde_json::from_slice(bytes).unwrap_or_else(|_| {
        let f: Partial = serde_json::from_slice(bytes).expect("a profile or machine + raw curves");
        Profile {
            machine: f.machine,
            raw: f.raw,
            ..Default::default()
        }
    })
}

#[test]
fn recorded_profiles_are_plausible() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "json") {
            let p = load(&std::fs::read(&path).unwrap());
            let bad = implausible(&p);
            assert!(bad.is_empty(), "{}: {bad:?}", path.display());
            n += 1;
        }
    }
    assert!(n >= 5, "fixtures found: {n}");
}

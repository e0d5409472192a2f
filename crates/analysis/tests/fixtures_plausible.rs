//! Every recorded profile in `tests/data` — real runs on the reference
//! machine, including one taken while another job interfered — passes the
//! plausibility check that `db import`, `analyze` and `report` apply to
//! profiles from files: the bounds must never reject a real measurement.

mod support;

use hwcal_model::plausible::implausible;

#[test]
fn recorded_profiles_are_plausible() {
    let dir = support::data_dir();
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "json") {
            let p = support::load_path(&path);
            let bad = implausible(&p);
            assert!(bad.is_empty(), "{}: {bad:?}", path.display());
            n += 1;
        }
    }
    assert!(n >= 5, "fixtures found: {n}");
}

//! Print a synthetic profile with every section filled (see `sample`), to
//! try the database and reports without measuring:
//! `cargo run -p hwcal-model --example synthetic_profile -- 3 > p.json`
//! (the argument picks the variant; variant v scales latencies by 1 + v/10).

fn main() {
    let v: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    println!(
        "{}",
        serde_json::to_string_pretty(&hwcal_model::sample::full_profile(v)).expect("serialisable")
    );
}

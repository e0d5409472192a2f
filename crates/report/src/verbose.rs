//! `hwcal mem -v`: micbench's verbose dump. After the summary, every key
//! the profile recorded for the run, one `key value` line each, under the
//! JSON names (so a script can read either): nested figures as
//! `core_mhz.median`, and one line of `key=value` pairs per thread, per NUMA
//! cell and per bandwidth point.

use hwcal_model::Profile;
use serde_json::Value;
use std::fmt::Write;

/// The dump of the `mem` and `bandwidth` sections, empty when neither was measured.
pub fn dump(p: &Profile) -> Result<String, serde_json::Error> {
    let mut s = String::new();
    if let Some(m) = &p.mem {
        s.push_str("mem (every recorded key):\n");
        section(&mut s, &serde_json::to_value(m)?);
    }
    if let Some(b) = &p.bandwidth {
        s.push_str("bandwidth (every recorded key):\n");
        section(&mut s, &serde_json::to_value(b)?);
    }
    Ok(s)
}

/// Scalars and nested objects first (`key value`), then each array of
/// objects as one line per element.
fn section(s: &mut String, v: &Value) {
    let Value::Object(map) = v else { return };
    let mut scalars = Vec::new();
    flatten("", v, &mut scalars);
    let width = scalars.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, val) in &scalars {
        let _ = writeln!(s, "  {k:<width$}  {val}");
    }
    for (key, val) in map {
        let Value::Array(items) = val else { continue };
        if !items.iter().any(Value::is_object) {
            continue;
        }
        let label = match key.as_str() {
            "per_thread" => "thread",
            "numa_matrix" => "numa",
            other => other,
        };
        for (i, item) in items.iter().enumerate() {
            let mut pairs = Vec::new();
            flatten("", item, &mut pairs);
            // The thread id first, as micbench prints it; the rest by name.
            pairs.sort_by_key(|(k, _)| k != "tid");
            let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(s, "  {label}[{i}] {}", body.join(" "));
        }
    }
}

/// Every scalar under `v` as (dotted key, text); arrays of scalars joined
/// with commas; arrays of objects left to the caller.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, val, out);
            }
        }
        Value::Array(items) if items.iter().any(Value::is_object) => {}
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(scalar).collect();
            out.push((prefix.to_string(), parts.join(",")));
        }
        other => out.push((prefix.to_string(), scalar(other))),
    }
}

/// A scalar as micbench would print it: numbers as recorded, strings bare
/// (quoted when empty or with spaces, so every line splits the same way),
/// `n/a` for a figure not determined (JSON null).
fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "n/a".into(),
        Value::String(t) if t.is_empty() || t.contains(char::is_whitespace) => format!("{t:?}"),
        Value::String(t) => t.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::dump;
    use hwcal_model::{MemResult, MemThread, Profile, Spread};

    #[test]
    fn every_key_and_one_line_per_thread() {
        let mut p = Profile::new("hwcal mem -v", 1);
        p.mem = Some(MemResult {
            access_pattern: "random".into(),
            op: "chase".into(),
            threads: 2,
            ns_per_op: 81.5,
            clk_per_op: f64::NAN,
            core_mhz: Some(Spread {
                n: 3,
                min: 2400.0,
                median: 2500.0,
                max: 2600.0,
                mad: 10.0,
            }),
            per_thread: (0..2)
                .map(|t| MemThread {
                    tid: t,
                    cpu: Some(t as usize),
                    ops: 1000 + t as u64,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        });
        let s = dump(&p).unwrap();
        for key in [
            "access_pattern",
            "total_exec_time_s",
            "oncpu_fraction",
            "huge_fraction",
            "core_mhz.median",
        ] {
            assert!(
                s.lines().any(|l| l.trim_start().starts_with(key)),
                "{key} missing:\n{s}"
            );
        }
        assert!(s.contains("clk_per_op") && s.contains("n/a"), "{s}");
        let t1 = s.lines().find(|l| l.contains("thread[1]")).unwrap();
        assert!(t1.trim_start().starts_with("thread[1] tid=1 "), "{s}");
        assert!(
            t1.contains(" cpu=1 ") && t1.contains(" ops=1001 ") && t1.contains(" work=\"\""),
            "{s}"
        );
        assert!(s.contains("thread[0] tid=0 "), "{s}");
        assert!(!s.contains("bandwidth"));
    }
}

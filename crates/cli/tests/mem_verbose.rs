//! `hwcal mem -v`: micbench's verbose dump after the summary. Short runs on
//! tiny buffers; only the structure of the output is asserted.

use assert_cmd::Command;

#[test]
fn verbose_dump_lists_every_key_and_each_thread() {
    let out = Command::cargo_bin("hwcal")
        .unwrap()
        .args(["mem", "-R", "-m", "2", "-s", "64K", "-t", "0.1", "-q", "-v"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let dump = &text[text.find("mem (every recorded key):").expect("no verbose dump")..];
    for key in [
        "access_pattern",
        "clk_per_op",
        "ns_per_op",
        "total_exec_time_s",
        "preemptions",
    ] {
        assert!(
            dump.lines().any(|l| l.trim_start().starts_with(key)),
            "{key} missing from\n{dump}"
        );
    }
    for t in 0..2 {
        let line = dump
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("thread[{t}] tid={t} ")))
            .unwrap_or_else(|| panic!("no line for thread {t} in\n{dump}"));
        assert!(line.contains(" ops=") && line.contains(" ns_per_op="), "{line}");
    }
}

#[test]
fn verbose_with_json_on_stdout_prints_only_json() {
    let out = Command::cargo_bin("hwcal")
        .unwrap()
        .args(["mem", "-R", "-s", "32K", "-t", "0.1", "-q", "-v", "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert!(v["mem"].is_object());
}

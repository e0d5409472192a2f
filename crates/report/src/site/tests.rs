use super::catalogue::machine_path;
use super::*;
use hwcal_model::{sample, MachineIdentity};

/// A sample profile without a machine id (as written before hwcal
/// recorded one).
fn full_profile(variant: u32) -> Profile {
    let mut p = sample::full_profile(variant);
    p.machine.as_mut().unwrap().identity = None;
    p
}

fn identified(variant: u32, id: &str, host: &str) -> Profile {
    let mut p = full_profile(variant);
    let m = p.machine.as_mut().unwrap();
    m.hostname = host.into();
    m.identity = Some(MachineIdentity {
        machine_id: id.into(),
        id_source: "machine-id".into(),
        core: String::new(),
        product: None,
    });
    p
}

/// Three machines: two guests both called `vm` (told apart by their ids)
/// and one older profile without an id; machine `aa` has two runs.
fn three_machines() -> Vec<(i64, Profile)> {
    let mut zen = identified(1, "bb", "vm");
    let m = zen.machine.as_mut().unwrap();
    (m.cpu_vendor, m.cpu_family, m.cpu_model) = ("AuthenticAMD".into(), Some(0x19), Some(0x01));
    vec![
        (1, identified(0, "aa", "vm")),
        (2, zen),
        (3, full_profile(2)),
        (4, identified(3, "aa", "vm")),
    ]
}

fn text(files: &[NamedFile], name: &str) -> String {
    let f = files
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no {name}"));
    String::from_utf8(f.bytes.clone()).unwrap()
}

fn build(runs: &[(i64, Profile)]) -> Vec<NamedFile> {
    site(
        &runs.iter().map(|(i, p)| (*i, p)).collect::<Vec<_>>(),
        1_790_000_000,
    )
}

#[test]
fn one_page_per_machine_and_run_and_the_marker_lists_them() {
    let files = build(&three_machines());
    let mut names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".hwcal-site",
            "compare.html",
            "index.html",
            machine_path(&machine_key(&full_profile(2)).key).as_str(),
            "machines/m-aa.html",
            "machines/m-bb.html",
            "runs/1.html",
            "runs/2.html",
            "runs/3.html",
            "runs/4.html",
        ]
    );
    assert!(names.iter().all(|n| is_site_file(n)), "{names:?}");
    let listed = parse_marker(&files.iter().find(|f| f.name == MARKER).unwrap().bytes).unwrap();
    let mut listed: Vec<&str> = listed.iter().map(String::as_str).collect();
    listed.sort();
    assert_eq!(listed, names);
}

#[test]
fn the_index_has_one_row_per_machine_with_its_latest_run() {
    let runs = three_machines();
    let files = build(&runs);
    let index = text(&files, "index.html");
    assert_eq!(index.matches("<tr class=\"machine\"").count(), 3, "{index}");
    // Machine aa's row shows its latest run (4, variant 3: L1 2.1 × 1.3 ns).
    let row = index.split("<tr class=\"machine\" id=\"m-aa\"").nth(1).unwrap();
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains("href=\"runs/4.html\""), "{row}");
    assert!(row.contains(">2.73<"), "{row}");
    assert!(row.contains("data-v=\"2\">2</td>"), "two runs: {row}");
    // The core generation, from the vendor's family/model.
    assert!(index.contains(">Sapphire Rapids</a>") && index.contains(">Zen 3</a>"));
    // The synthetic L3 is noisy: marked in its cell and the verdict column.
    assert!(row.contains("class=\"noisy\" title=\"noisy\">42.90<"), "{row}");
    assert!(row.contains("noisy: L3"), "{row}");
    // Sorting and filtering are in the page itself; nothing from the network.
    assert!(index.contains("id=\"filter\"") && index.contains("class=\"site sortable\""));
    for f in &files {
        let t = String::from_utf8_lossy(&f.bytes);
        // (Inline SVG names its namespace by URL; that loads nothing.)
        assert!(
            !t.contains("href=\"http") && !t.contains("url(http"),
            "{}",
            f.name
        );
        assert!(
            !t.contains("src=\"") && !t.contains("<link") && !t.contains("@import"),
            "{}",
            f.name
        );
    }
}

#[test]
fn machine_pages_hold_one_row_per_run_newest_first() {
    let files = build(&three_machines());
    let page = text(&files, "machines/m-aa.html");
    assert_eq!(page.matches("<tr class=\"run\">").count(), 2);
    let (i4, i1) = (
        page.find("href=\"../runs/4.html\"").unwrap(),
        page.find("href=\"../runs/1.html\"").unwrap(),
    );
    assert!(i4 < i1, "newest first");
    assert!(page.contains("aa (from machine-id)"));
    assert!(page.contains("href=\"../index.html\""));
    // The run report links back to its machine and the index.
    let run = text(&files, "runs/1.html");
    assert!(run.contains("<a href=\"../machines/m-aa.html\">Sapphire Rapids · 2 CPUs · vm: every run</a>"));
    assert!(run.contains("<section id=\"summary\"") || run.contains("id=\"summary\""));
}

#[test]
fn a_run_without_an_id_joins_its_identified_machine() {
    let mut runs = three_machines();
    let mut old = full_profile(0);
    old.machine.as_mut().unwrap().hostname = "vm".into();
    old.created_unix -= 86_400;
    runs.push((5, old));
    let s = Site::new(runs.iter().map(|(i, p)| RunFacts::of(*i, p)).collect(), 0);
    assert_eq!(s.machines.len(), 3);
    let aa = s.machines.iter().find(|m| m.key.key == "m-aa").unwrap();
    assert_eq!(aa.runs.iter().map(|r| r.id).collect::<Vec<_>>(), [4, 1, 5]);
    // Named by an identified run.
    assert_eq!(aa.key.machine_id.as_ref().unwrap().0, "aa");
}

#[test]
fn text_from_profiles_is_escaped_everywhere() {
    let mut runs = three_machines();
    // Run 2 is its machine's only run: its texts reach every page.
    let m = runs[1].1.machine.as_mut().unwrap();
    m.hostname = "<script>alert(1)</script>".into();
    m.cpu_model_name = "\"><img src=x onerror=alert(2)>".into();
    runs[1].1.command = "hwcal run </td><b>".into();
    let files = build(&runs);
    for f in &files {
        let t = String::from_utf8_lossy(&f.bytes);
        assert!(!t.contains("<script>alert"), "{}", f.name);
        assert!(!t.contains("<img src=x"), "{}", f.name);
        assert!(!t.contains("</td><b>"), "{}", f.name);
    }
    let index = text(&files, "index.html");
    assert!(index.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // The comparison data sits in an attribute, escaped; it parses back.
    let cmp = text(&files, "compare.html");
    let start = cmp.find("data-json=\"").unwrap() + "data-json=\"".len();
    let raw = &cmp[start..start + cmp[start..].find('"').unwrap()];
    let json = raw
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let machines = v["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 3);
    assert!(machines
        .iter()
        .any(|m| m["name"].as_str().unwrap().contains("<script>")));
    let aa = machines.iter().find(|m| m["key"] == "m-aa").unwrap();
    assert_eq!(aa["run"], 4);
    let labels: Vec<&str> = aa["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["l"].as_str().unwrap())
        .collect();
    for want in [
        "L1 latency",
        "L3 size",
        "memory latency",
        "read bandwidth",
        "context switch, 2 processes",
    ] {
        assert!(labels.contains(&want), "{want} in {labels:?}");
    }
    let read = aa["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["l"] == "read bandwidth")
        .unwrap();
    assert_eq!(read["q"], "2 threads");
}

#[test]
fn an_empty_database_makes_an_index_that_says_so() {
    let files = site(&[], 0);
    assert_eq!(files.len(), 3, "index, compare, marker");
    let index = text(&files, "index.html");
    assert!(index.contains("No runs stored yet"));
    assert!(!index.contains("<tr class=\"machine\""));
}

#[test]
fn markers_and_stale_files() {
    assert!(parse_marker(b"something else\nindex.html\n").is_none());
    assert!(parse_marker(b"\xff\xfe").is_none());
    let m = marker(&["index.html".into(), "runs/3.html".into()]);
    assert_eq!(parse_marker(&m.bytes).unwrap(), ["index.html", "runs/3.html"]);
    // A tampered marker cannot name files outside the site.
    let evil = b"hwcal site\n../x\n/etc/passwd\nruns/../../x.html\nmachines/a b.html\nruns/7.html\n";
    assert_eq!(parse_marker(evil).unwrap(), ["runs/7.html"]);
    for bad in [
        "",
        "runs/",
        "runs/.html",
        "runs/1.htm",
        "other.html",
        "machines/x/y.html",
        "runs/-1.html",
    ] {
        assert!(!is_site_file(bad), "{bad:?}");
    }
    let old: Vec<String> = ["index.html", "runs/1.html", "runs/2.html", "../x"]
        .map(String::from)
        .into();
    let new: Vec<String> = ["index.html", "runs/2.html"].map(String::from).into();
    assert_eq!(stale(&old, &new), ["runs/1.html"]);
}

/// Six runs of one machine, one of which has a memory latency far from the
/// others: the machine page plots each key figure with its usual range and
/// names that run; the index charts each machine's current figure (the
/// median of its last five runs).
#[test]
fn history_marks_the_run_that_left_the_usual_range_and_the_index_charts_machines() {
    let mut runs: Vec<(i64, Profile)> = (0..6)
        .map(|i| {
            let mut p = identified(0, "aa", "vm");
            p.created_unix += i as u64 * 3600;
            let m = p.memory.as_mut().unwrap();
            m.latency_ns = [145.0, 147.0, 144.0, 146.0, 210.0, 145.5][i];
            (i as i64 + 1, p)
        })
        .collect();
    runs.push((7, identified(1, "bb", "other")));
    let files = build(&runs);
    let key = machine_key(&runs[0].1).key;
    let page = text(&files, &machine_path(&key));
    assert!(page.contains("id=\"history\""), "{page}");
    assert!(page.contains("memory latency over the runs"));
    assert!(page.contains("outside the usual range"));
    assert!(
        page.contains("run 5: memory latency 210.00 ns"),
        "the run that left the band is named"
    );
    assert!(!page.contains("run 4: memory latency"), "the others are not");
    let index = text(&files, "index.html");
    assert!(index.contains("id=\"charts\"") && index.contains("median of its last 5 runs"));
    // The current memory latency of `aa` is the median of runs 2-6
    // (147, 144, 146, 210, 145.5): 146.
    assert!(index.contains("<td>146.00</td>"), "{index}");
    // A machine with a single run has no history section.
    let other = text(&files, &machine_path(&machine_key(&runs[6].1).key));
    assert!(!other.contains("id=\"history\""));
    assert_eq!(band(&[1.0, 1.0]), None, "too few runs for a band");
    let [lo, hi] = band(&[100.0, 100.0, 100.0]).unwrap();
    assert!(lo <= 95.0 && hi >= 105.0, "never narrower than the 5% threshold");
}

/// A busy host's noisy runs are drawn but make no band: only runs whose
/// figure was ok say what is usual, as in the comparisons.
#[test]
fn noisy_runs_do_not_widen_the_usual_range() {
    let runs: Vec<(i64, Profile)> = (0..6)
        .map(|i| {
            let mut p = identified(0, "aa", "vm");
            p.created_unix += i as u64 * 3600;
            let m = p.memory.as_mut().unwrap();
            m.latency_ns = [145.0, 147.0, 144.0, 146.0, 610.0, 450.0][i];
            m.verdict = if i >= 4 {
                hwcal_model::Verdict::Noisy
            } else {
                hwcal_model::Verdict::Ok
            };
            (i as i64 + 1, p)
        })
        .collect();
    let files = build(&runs);
    let page = text(&files, &machine_path(&machine_key(&runs[0].1).key));
    // Both noisy runs fall outside the band the four ok runs make.
    assert!(page.contains("run 5: memory latency 610.00 ns"), "{page}");
    assert!(page.contains("run 6: memory latency 450.00 ns"), "{page}");
}

/// One machine id over two CPUs (a cloned image's /etc/machine-id) is two
/// machines; a machine id with one CPU keeps its plain key.
#[test]
fn one_machine_id_on_two_cpus_is_two_machines() {
    let a = identified(0, "cc", "vm");
    let mut b = identified(1, "cc", "vm");
    b.machine.as_mut().unwrap().cpu_model_name = "Another CPU".into();
    let files = build(&[(1, a), (2, b), (3, identified(2, "dd", "x"))]);
    let pages: Vec<&str> = files
        .iter()
        .map(|f| f.name.as_str())
        .filter(|n| n.starts_with("machines/"))
        .collect();
    assert_eq!(pages.len(), 3, "{pages:?}");
    assert_eq!(
        pages.iter().filter(|n| n.starts_with("machines/m-cc-")).count(),
        2,
        "{pages:?}"
    );
    assert!(pages.contains(&"machines/m-dd.html"), "{pages:?}");
}

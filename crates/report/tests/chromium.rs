//! The HTML report renders in a real browser: headless Chromium (the
//! distribution's `chromium` package) loads the page, and the DOM it builds
//! must hold the report's tables and inline SVG plots. Skipped, with a
//! message, where Chromium is not installed.

use hwcal_model::sample::full_profile;
use hwcal_report::{html, Exporter};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "support/browser.rs"]
mod browser;
use browser::chromium;

/// Run headless Chromium on a local file with `extra` arguments; returns
/// stdout. Killed after 90 s so a wedged browser cannot hang the suite.
fn run_chromium(bin: &Path, profile_dir: &Path, page: &Path, extra: &[&str]) -> String {
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ])
    .arg(format!("--user-data-dir={}", profile_dir.display()))
    // Chromium also writes crash reports and dconf caches under $HOME and
    // the XDG dirs: keep them in the test's own directory.
    .env("HOME", profile_dir)
    .env("XDG_CONFIG_HOME", profile_dir.join("config"))
    .env("XDG_CACHE_HOME", profile_dir.join("cache"))
    .args(extra)
    .arg(format!("file://{}", page.display()))
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("start chromium");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(90) {
            child.kill().ok();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn report_and_comparison_render_in_headless_chromium() {
    let Some(bin) = chromium() else {
        println!("SKIPPED: Chromium not found (apt-get install chromium, or set HWCAL_CHROMIUM)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("report.html");
    let bytes = html::HtmlExporter::default().export(&full_profile(0)).unwrap();
    std::fs::write(&single, bytes).unwrap();
    let cmp = dir.path().join("compare.html");
    std::fs::write(
        &cmp,
        html::compare_report(&full_profile(0), "run 1", &full_profile(4), "run 2", &[]),
    )
    .unwrap();

    let dom = run_chromium(&bin, &dir.path().join("chrome"), &single, &["--dump-dom"]);
    // The DOM Chromium built (not our text echoed back): it has parsed the
    // page into elements, inline SVG included.
    assert!(dom.contains("<html"), "no DOM dumped: {:.300}", dom);
    assert_eq!(dom.matches("<svg").count(), 4, "four plots");
    assert!(dom.matches("<table").count() >= 8, "summary tables");
    assert!(dom.contains("<path d=\"M"), "curves drawn");
    for id in [
        "machine",
        "clock",
        "caches",
        "tlbs",
        "mem",
        "bandwidth",
        "ctx",
        "io",
    ] {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "section {id} missing from the DOM"
        );
    }
    assert!(
        dom.contains("Synthetic Xeon &lt;test&gt; &amp; Co"),
        "text escaped, not parsed as markup"
    );

    let dom = run_chromium(&bin, &dir.path().join("chrome"), &cmp, &["--dump-dom"]);
    assert_eq!(dom.matches("<svg").count(), 4);
    assert!(dom.contains("1.400×"), "ratio column (latency × 1.4)");

    // A screenshot proves the page paints; keep it when asked, for a human look.
    let shot = dir.path().join("report.png");
    run_chromium(
        &bin,
        &dir.path().join("chrome"),
        &single,
        &[
            "--screenshot=".to_string() + shot.to_str().unwrap(),
            "--window-size=1200,3000".into(),
        ]
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
    );
    browser::check_screenshot(&shot);
}

/// The page with a probe script appended (the report itself has none):
/// it writes, into the DOM Chromium dumps, the top of each element named
/// by id, as laid out in the window.
fn with_probe(html: &str, ids: &[&str]) -> String {
    let mut script = String::from("<script>\nvar r = [];\n");
    for id in ids {
        script += &format!(
            "var e = document.getElementById('{id}'); r.push('{id}=' + (e ? Math.round(e.getBoundingClientRect().top) : -1));\n"
        );
    }
    script += "document.body.setAttribute('data-tops', r.join(' '));\n</script>\n";
    html.replace("</body>", &format!("{script}</body>"))
}

/// `id=top` pairs from the probe's attribute.
fn tops(dom: &str) -> Vec<(String, i64)> {
    let start = dom.find("data-tops=\"").expect("probe ran") + "data-tops=\"".len();
    let end = start + dom[start..].find('"').unwrap();
    dom[start..end]
        .split(' ')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

fn top(t: &[(String, i64)], id: &str) -> i64 {
    t.iter().find(|(k, _)| k == id).map_or(-1, |(_, v)| *v)
}

/// At 1400×900 the summary card is on the first screen, with the notes
/// after it and the sections after them; a comparison opens with its B/A
/// table, before any plot. Screenshots of both first screens are kept
/// when `HWCAL_KEEP_SCREENSHOTS=DIR` is set (DIR/report-shot.png and
/// DIR/compare-shot.png).
#[test]
fn summary_and_comparison_table_on_the_first_screen() {
    let Some(bin) = chromium() else {
        println!("SKIPPED: Chromium not found (apt-get install chromium, or set HWCAL_CHROMIUM)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let chrome = dir.path().join("chrome");
    let window = "--window-size=1400,900";

    let single = String::from_utf8(html::HtmlExporter::default().export(&full_profile(0)).unwrap()).unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(
        &page,
        with_probe(&single, &["summary", "notes", "machine", "caches", "raw"]),
    )
    .unwrap();
    let t = tops(&run_chromium(&bin, &chrome, &page, &["--dump-dom", window]));
    let summary = top(&t, "summary");
    assert!((0..900).contains(&summary), "summary card at {summary}px: {t:?}");
    assert!(top(&t, "notes") > summary, "notes after the summary: {t:?}");
    assert!(
        top(&t, "machine") > top(&t, "notes"),
        "sections after the notes: {t:?}"
    );

    let cmp = html::compare_report(&full_profile(0), "run 1", &full_profile(4), "run 2", &[]);
    let page_cmp = dir.path().join("compare.html");
    std::fs::write(&page_cmp, with_probe(&cmp, &["figures", "plots", "machines"])).unwrap();
    let t = tops(&run_chromium(&bin, &chrome, &page_cmp, &["--dump-dom", window]));
    let table = top(&t, "figures");
    assert!((0..900).contains(&table), "B/A table at {table}px: {t:?}");
    assert!(top(&t, "plots") > table, "plots after the table: {t:?}");
    assert!(top(&t, "machines") > table, "machines after the table: {t:?}");

    // Screenshots of the pages as shipped (no probe).
    std::fs::write(&page, &single).unwrap();
    std::fs::write(&page_cmp, &cmp).unwrap();
    for (src, name) in [(&page, "report-shot.png"), (&page_cmp, "compare-shot.png")] {
        let shot = dir.path().join(name);
        let arg = format!("--screenshot={}", shot.display());
        run_chromium(&bin, &chrome, src, &[arg.as_str(), window]);
        let png = std::fs::read(&shot).expect("screenshot written");
        assert!(png.starts_with(b"\x89PNG"), "{name}");
        if let Some(keep) = std::env::var_os("HWCAL_KEEP_SCREENSHOTS") {
            std::fs::copy(&shot, PathBuf::from(keep).join(name)).unwrap();
        }
    }
}

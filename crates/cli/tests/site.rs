//! `hwcal db site DIR` end to end: a database with runs from three
//! machines (two guests both called `vm`, told apart by their machine ids,
//! and an older profile without one) becomes a static site, and the site
//! renders in headless Chromium (the distribution's `chromium`; the test
//! skips the browser part, with a message, where it is not installed):
//! one row per machine, sorting and filtering work, the comparison page
//! builds its table, no script error, and a screenshot is written
//! (kept at `$HWCAL_KEEP_SCREENSHOT` when set).

mod common;

use common::{s, Env};
use hwcal_model::{sample::full_profile, MachineIdentity, Profile};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../../report/tests/support/browser.rs"]
mod browser;
use browser::chromium;

fn identity(id: &str, core: &str, product: Option<&str>) -> Option<MachineIdentity> {
    Some(MachineIdentity {
        machine_id: id.into(),
        id_source: "dmi-product-uuid".into(),
        core: core.into(),
        product: product.map(str::to_string),
    })
}

/// Four runs of three machines: Sapphire Rapids `vm` twice, a Zen 3 `vm`,
/// an Emerald Rapids without a machine id.
fn profiles() -> Vec<Profile> {
    let mut spr = full_profile(0);
    let m = spr.machine.as_mut().unwrap();
    m.hostname = "vm".into();
    m.identity = identity("5f3a0c", "Sapphire Rapids", Some("Standard_D2s_v5"));
    let mut spr2 = full_profile(3);
    spr2.machine = spr.machine.clone();
    let mut zen = full_profile(1);
    let m = zen.machine.as_mut().unwrap();
    m.hostname = "vm".into();
    (m.cpu_vendor, m.cpu_family, m.cpu_model) = ("AuthenticAMD".into(), Some(0x19), Some(0x01));
    m.cpu_model_name = "AMD EPYC".into();
    m.identity = identity("9b71e2", "Zen 3", Some("m6a.large"));
    let mut emr = full_profile(2);
    let m = emr.machine.as_mut().unwrap();
    m.hostname = "old-box".into();
    (m.cpu_model, m.logical_cpus) = (Some(0xCF), 16);
    m.identity = None;
    vec![spr, zen, emr, spr2]
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_site_of_three_machines() {
    let env = Env::new();
    for (i, p) in profiles().iter().enumerate() {
        let f = env.path(&format!("m{i}.json"));
        std::fs::write(&f, serde_json::to_vec(p).unwrap()).unwrap();
        env.hwcal().args(["db", "import", s(&f)]).assert().success();
    }
    let site = env.path("site");
    let out = env.hwcal().args(["db", "site", s(&site)]).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("3 machines and 4 runs"), "{err}");

    assert_eq!(
        files_in(&site),
        [".hwcal-site", "compare.html", "index.html", "machines", "runs"]
    );
    assert_eq!(
        files_in(&site.join("runs")),
        ["1.html", "2.html", "3.html", "4.html"]
    );
    let machines = files_in(&site.join("machines"));
    assert_eq!(machines.len(), 3, "{machines:?}");
    assert!(machines.contains(&"m-5f3a0c.html".to_string()));
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert_eq!(index.matches("<tr class=\"machine\"").count(), 3);
    for core in ["Sapphire Rapids", "Zen 3", "Emerald Rapids"] {
        assert!(index.contains(&format!(">{core}</a>")), "{core}");
    }
    let spr = std::fs::read_to_string(site.join("machines/m-5f3a0c.html")).unwrap();
    assert_eq!(spr.matches("<tr class=\"run\">").count(), 2, "its two runs");

    // Built again over itself: fine. Into a directory of other files: refused, untouched.
    env.hwcal().args(["db", "site", s(&site)]).assert().success();
    let other = env.path("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    env.hwcal()
        .args(["db", "site", s(&other)])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not an hwcal site"));
    assert_eq!(files_in(&other), ["notes.txt"]);

    in_chromium(&env, &site);
}

/// Headless Chromium on `url` with `extra` arguments, its console logged
/// to stderr; returns (stdout, stderr). Killed after 90 s.
fn run_chromium(bin: &Path, home: &Path, url: &str, extra: &[&str]) -> (String, String) {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", home.join("profile").display()))
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            child.kill().ok();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (text(&out.stdout), text(&out.stderr))
}

/// The page loaded without a script error: the page's own error handler
/// marks none, its script finished, and the console logged no uncaught error.
fn no_script_error(what: &str, dom: &str, log: &str) {
    assert!(dom.contains("<html"), "{what}: no DOM dumped: {:.300}", dom);
    if let Some(i) = dom.find("data-js-error=\"") {
        panic!("{what}: {:.200}", &dom[i..]);
    }
    assert!(
        dom.contains("data-js=\"ready\""),
        "{what}: the script did not finish"
    );
    for line in log.lines().filter(|l| l.contains("CONSOLE")) {
        assert!(!line.contains("Uncaught"), "{what}: {line}");
    }
}

/// The ids of the index's rows that are shown, in order, as a probe
/// appended to the page records them after sorting and filtering.
fn probe(dom: &str, attr: &str) -> Vec<String> {
    let start = dom.find(&format!("{attr}=\"")).expect("probe ran") + attr.len() + 2;
    let end = start + dom[start..].find('"').unwrap();
    dom[start..end]
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn in_chromium(env: &Env, site: &Path) {
    let Some(bin) = chromium() else {
        println!("SKIPPED: Chromium not found (apt-get install chromium, or set HWCAL_CHROMIUM)");
        return;
    };
    let home = env.path("chrome");
    let url = |page: &str| format!("file://{}/{page}", site.display());
    let window = "--window-size=1400,700";

    let (dom, log) = run_chromium(&bin, &home, &url("index.html"), &["--dump-dom", window]);
    no_script_error("index", &dom, &log);
    assert_eq!(
        dom.matches("<tr class=\"machine\"").count(),
        3,
        "one row per machine"
    );
    assert!(dom.contains("3 of 3 machines shown"), "the filter's count");

    // Sorting by memory latency and filtering, done by the page's own
    // script in the browser (a probe appended to a copy of the index clicks
    // and types, then records the rows shown).
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    let script = "<script>\n\
        function shown() { return Array.prototype.filter.call(document.querySelectorAll('tr.machine'), \
        function (r) { return !r.hidden; }).map(function (r) { return r.id; }).join(' '); }\n\
        var th = Array.prototype.find.call(document.querySelectorAll('th'), function (t) { return t.textContent === 'memory ns'; });\n\
        th.click(); document.body.setAttribute('data-asc', shown());\n\
        th.click(); document.body.setAttribute('data-desc', shown());\n\
        var f = document.getElementById('filter'); f.value = 'zen'; f.dispatchEvent(new Event('input'));\n\
        document.body.setAttribute('data-zen', shown());\n</script>\n";
    std::fs::write(
        site.join("probe.html"),
        index.replace("</body>", &format!("{script}</body>")),
    )
    .unwrap();
    let (dom, log) = run_chromium(&bin, &home, &url("probe.html"), &["--dump-dom", window]);
    no_script_error("index with probe", &dom, &log);
    // Latest runs' memory latency: Zen 3 (variant 1) 159.5 ns, Emerald
    // Rapids (2) 174 ns, Sapphire Rapids (latest is variant 3) 188.5 ns.
    let asc = probe(&dom, "data-asc");
    assert_eq!(asc.len(), 3);
    assert_eq!(asc[0], "m-9b71e2", "{asc:?}");
    assert_eq!(asc[2], "m-5f3a0c", "{asc:?}");
    let mut desc = probe(&dom, "data-desc");
    desc.reverse();
    assert_eq!(desc, asc, "the second click reverses");
    assert_eq!(
        probe(&dom, "data-zen"),
        ["m-9b71e2"],
        "the filter keeps Zen 3 only"
    );
    std::fs::remove_file(site.join("probe.html")).unwrap();

    // The comparison page builds its table for the two machines asked for.
    let (dom, log) = run_chromium(
        &bin,
        &home,
        &url("compare.html#a=m-5f3a0c&b=m-9b71e2"),
        &["--dump-dom", window],
    );
    no_script_error("compare", &dom, &log);
    assert!(dom.contains("id=\"cmp-table\""), "comparison table built");
    assert!(dom.matches("<tr class=\"fig\"").count() >= 10, "figures compared");
    // The verdicts are the builder's (the rank test over recent runs):
    // Sapphire Rapids' two runs against Zen 3's one cannot be told apart
    // (p >= 2/3), whatever the ratio; L3 is noisy in the samples.
    let row = |label: &str| {
        let at = dom
            .find(&format!("<td class=\"l\">{label}</td>"))
            .unwrap_or_else(|| panic!("{label}"));
        dom[at..at + dom[at..].find("</tr>").unwrap()].to_string()
    };
    let l1 = row("L1 latency");
    assert!(
        l1.contains("×") && l1.contains("~ no significant change (p=1.00, 2:1 runs)"),
        "{l1}"
    );
    assert!(row("L3 latency").contains("noisy: no verdict"));
    assert!(!dom.contains("B better") && !dom.contains("B worse"));
    assert!(
        dom.contains("hwcal report 4 2 --html"),
        "the full comparison's command"
    );

    // A machine page and a run report load too.
    let (dom, log) = run_chromium(&bin, &home, &url("machines/m-5f3a0c.html"), &["--dump-dom"]);
    no_script_error("machine page", &dom, &log);
    let (dom, _) = run_chromium(&bin, &home, &url("runs/1.html"), &["--dump-dom"]);
    assert!(
        dom.contains("href=\"../machines/m-5f3a0c.html\""),
        "the report links back"
    );

    // The screenshot: the page paints.
    let shot = env.path("site.png");
    let arg = format!("--screenshot={}", shot.display());
    run_chromium(&bin, &home, &url("index.html"), &[arg.as_str(), window]);
    browser::check_screenshot(&shot);
}

/// Two machines of five runs each, B's memory latency 10% above A's (each
/// run jittered by up to ±2%): the comparison page, in the browser, says
/// "B worse" for memory latency with the rank test's p-value, and "~" for
/// the figures that did not move — the verdicts `db compare batch:...`
/// gives, computed by the site's builder, only rendered by the page.
#[test]
fn a_ten_percent_shift_across_five_runs_is_significant_on_the_site() {
    let env = Env::new();
    let jitter = [0.99, 1.015, 0.985, 1.0, 1.02];
    for (m, scale, id) in [("a", 1.0, "aa11"), ("b", 1.1, "bb22")] {
        for (i, j) in jitter.iter().enumerate() {
            let mut p = full_profile(0);
            p.created_unix += i as u64 * 600;
            let mach = p.machine.as_mut().unwrap();
            mach.hostname = format!("host-{m}");
            mach.identity = identity(id, "Sapphire Rapids", None);
            p.memory.as_mut().unwrap().latency_ns *= scale * j;
            let f = env.path(&format!("{m}{i}.json"));
            std::fs::write(&f, serde_json::to_vec(&p).unwrap()).unwrap();
            env.hwcal().args(["db", "import", s(&f)]).assert().success();
        }
    }
    let site = env.path("site");
    env.hwcal().args(["db", "site", s(&site)]).assert().success();
    // The verdicts are in the page's data whether or not a browser runs it.
    let page = std::fs::read_to_string(site.join("compare.html")).unwrap();
    assert!(
        page.contains("B worse (p=0.01, 5:5 runs)"),
        "the embedded verdict"
    );
    let Some(bin) = chromium() else {
        println!("SKIPPED: Chromium not found (apt-get install chromium, or set HWCAL_CHROMIUM)");
        return;
    };
    let url = format!("file://{}/compare.html#a=m-aa11&b=m-bb22", site.display());
    let (dom, log) = run_chromium(
        &bin,
        &env.path("chrome"),
        &url,
        &["--dump-dom", "--window-size=1400,700"],
    );
    no_script_error("compare", &dom, &log);
    let row = |label: &str| {
        let at = dom
            .find(&format!("<td class=\"l\">{label}</td>"))
            .unwrap_or_else(|| panic!("{label}: {dom:.2000}"));
        dom[at..at + dom[at..].find("</tr>").unwrap()].to_string()
    };
    let mem = row("memory latency");
    assert!(
        mem.contains("B worse (p=0.01, 5:5 runs)") && mem.contains("1.10"),
        "{mem}"
    );
    assert!(
        row("L1 latency").contains("~ no significant change"),
        "{}",
        row("L1 latency")
    );
}

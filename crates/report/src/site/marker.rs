//! The marker file `.hwcal-site` that says a directory is an hwcal site and
//! lists the files a build wrote, so a later build rewrites only those and
//! removes only the ones it no longer has.

use crate::export::NamedFile;

/// The marker file of a site directory.
pub const MARKER: &str = ".hwcal-site";
const MARKER_HEAD: &str = "hwcal site";

/// The marker file listing the site's files.
pub fn marker(names: &[String]) -> NamedFile {
    let mut s = format!(
        "{MARKER_HEAD}\n# Written by `hwcal db site`. hwcal writes into this directory again only because\n\
         # this file is here, and removes only files listed below that a new build no longer has.\n"
    );
    for n in names {
        s += n;
        s.push('\n');
    }
    NamedFile {
        name: MARKER.into(),
        bytes: s.into_bytes(),
    }
}

/// The files an earlier site's marker lists, or `None` when `bytes` is not
/// an hwcal site marker. Names that are not site files (a tampered marker
/// naming `../x` or `/etc/passwd`) are left out.
pub fn parse_marker(bytes: &[u8]) -> Option<Vec<String>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    if lines.next()? != MARKER_HEAD {
        return None;
    }
    Some(
        lines
            .filter(|l| !l.starts_with('#') && is_site_file(l))
            .map(str::to_string)
            .collect(),
    )
}

/// Whether `name` is a file name a site build writes: the marker, the two
/// top pages, `machines/<key>.html`, `runs/<id>.html`.
pub fn is_site_file(name: &str) -> bool {
    let plain = |s: &str, f: fn(u8) -> bool| !s.is_empty() && s.len() <= 80 && s.bytes().all(f);
    let key_char = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    match name.split_once('/') {
        None => [MARKER, "index.html", "compare.html"].contains(&name),
        Some(("machines", f)) => f.strip_suffix(".html").is_some_and(|k| plain(k, key_char)),
        Some(("runs", f)) => f
            .strip_suffix(".html")
            .is_some_and(|k| plain(k, |b| b.is_ascii_digit())),
        _ => false,
    }
}

/// Files an earlier build wrote that this one does not (runs removed since):
/// the ones to delete after writing the new site.
pub fn stale(old: &[String], new: &[String]) -> Vec<String> {
    let new: std::collections::BTreeSet<&String> = new.iter().collect();
    old.iter()
        .filter(|n| !new.contains(n) && is_site_file(n))
        .cloned()
        .collect()
}

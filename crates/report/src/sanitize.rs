//! Untrusted text made inert before it reaches a terminal or a script.
//!
//! A profile's strings (hostname, CPU model, command line, notes) come from
//! files anyone can write. Printed raw, an escape sequence in them can clear
//! the screen, retitle the window or forge output lines; a newline in a
//! path written into a gnuplot script runs commands. Everything hwcal prints
//! from a profile or the database passes through here.

use hwcal_model::Profile;
use std::borrow::Cow;

/// Whether `c` must not reach a terminal as it is: C0 controls, DEL, C1
/// controls (U+0080..=U+009F, which some terminals obey like ESC [), and
/// the bidirectional overrides and isolates that reorder what is shown.
fn dangerous(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

fn escape_into(out: &mut String, c: char) {
    use std::fmt::Write;
    let v = c as u32;
    if v < 0x100 {
        let _ = write!(out, "\\x{v:02x}");
    } else {
        let _ = write!(out, "\\u{{{v:04x}}}");
    }
}

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| dangerous(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if dangerous(c) && !keep(c) {
            escape_into(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text for a terminal: every control character shown as `\xHH` (or
/// `\u{HHHH}`) except newline and tab, which multi-line output needs.
pub fn inert(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\n' || c == '\t')
}

/// One field of one line (a hostname, a CPU model): newline, tab and
/// carriage return escaped too, so a value cannot start a line of its own.
pub fn inert_line(s: &str) -> Cow<'_, str> {
    escape(s, |_| false)
}

/// Bytes for a terminal: [`inert`] over UTF-8 text; bytes that are not
/// UTF-8 are shown as U+FFFD.
pub fn inert_bytes(b: &[u8]) -> Cow<'_, [u8]> {
    let s = String::from_utf8_lossy(b);
    match inert(&s) {
        Cow::Borrowed(_) if matches!(s, Cow::Borrowed(_)) => Cow::Borrowed(b),
        t => Cow::Owned(t.into_owned().into_bytes()),
    }
}

/// The profile with [`inert_line`] applied to every string in it, so that
/// any view rendered from it (the text summary, a comparison, `db show`)
/// shows each field on its own line, with no control sequences. Borrowed
/// when there was nothing to change.
pub fn inert_profile(p: &Profile) -> Cow<'_, Profile> {
    let Ok(mut v) = serde_json::to_value(p) else {
        return Cow::Borrowed(p);
    };
    if !walk(&mut v) {
        return Cow::Borrowed(p);
    }
    match serde_json::from_value(v) {
        Ok(q) => Cow::Owned(q),
        Err(_) => Cow::Borrowed(p),
    }
}

/// Make every string in `v` inert; whether anything changed.
fn walk(v: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::String(s) => match inert_line(s) {
            Cow::Borrowed(_) => false,
            Cow::Owned(t) => {
                *s = t;
                true
            }
        },
        Value::Array(a) => a.iter_mut().fold(false, |acc, x| walk(x) | acc),
        Value::Object(o) => o.values_mut().fold(false, |acc, x| walk(x) | acc),
        _ => false,
    }
}

/// Serialised JSON with the characters serde_json leaves raw but a
/// terminal may obey (DEL, C1 controls, bidi overrides) written as `\uXXXX`
/// escapes: the same JSON value, safe to print. (serde_json already escapes
/// C0 controls; outside strings JSON is ASCII, so only strings change.)
pub fn json_inert(json: Vec<u8>) -> Vec<u8> {
    let Ok(s) = std::str::from_utf8(&json) else {
        return json;
    };
    // C0 characters outside strings are JSON whitespace (newlines of the
    // pretty form); inside strings serde_json has escaped them already.
    let risky = |c: char| dangerous(c) && c as u32 >= 0x7f;
    if !s.chars().any(risky) {
        return json;
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if risky(c) {
            use std::fmt::Write;
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out.into_bytes()
}

/// Check a file prefix or path that hwcal writes into a script (gnuplot's
/// `set output '...'`): no control character (a newline would end the
/// string and start a command), no quote or backslash.
pub fn check_script_path(s: &str) -> Result<(), String> {
    if let Some(c) = s
        .chars()
        .find(|&c| dangerous(c) || matches!(c, '\'' | '"' | '\\' | '`'))
    {
        let shown = inert_line(&c.to_string()).into_owned();
        return Err(format!(
            "contains {}; use a plain file prefix (letters, digits, '/', '.', '-', '_', spaces)",
            match c {
                '\'' | '"' | '`' => format!("a quote ({c})"),
                '\\' => "a backslash".to_string(),
                _ => format!("a control character ({shown})"),
            }
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcal_model::sample::full_profile;

    #[test]
    fn escapes_are_shown_not_obeyed() {
        assert_eq!(inert("plain\ttext\n"), "plain\ttext\n");
        assert!(matches!(inert("plain"), Cow::Borrowed(_)));
        assert_eq!(inert("\x1b[2J\x1b]0;pwned\x07"), "\\x1b[2J\\x1b]0;pwned\\x07");
        assert_eq!(inert("a\rb"), "a\\x0db");
        assert_eq!(inert("\u{9b}31m"), "\\x9b31m");
        assert_eq!(inert("x\u{202E}y\u{7f}"), "x\\u{202e}y\\x7f");
        assert_eq!(inert_line("host\nforged line\t"), "host\\x0aforged line\\x09");
        assert_eq!(&*inert_bytes(b"ok\n"), b"ok\n");
        assert_eq!(&*inert_bytes(b"\x1bc"), b"\\x1bc");
        assert_eq!(&*inert_bytes(b"\xff"), "\u{fffd}".as_bytes());
    }

    #[test]
    fn every_string_of_a_profile_is_made_inert() {
        let p = full_profile(1);
        assert!(matches!(inert_profile(&p), Cow::Borrowed(_)));
        let mut q = full_profile(1);
        q.machine.as_mut().unwrap().hostname = "evil\x1b]0;title\x07\nfake".into();
        q.notes.push("\x1b[2Jcleared".into());
        q.command = "hwcal\rrun".into();
        let r = inert_profile(&q);
        let m = r.machine.as_ref().unwrap();
        assert_eq!(m.hostname, "evil\\x1b]0;title\\x07\\x0afake");
        assert_eq!(r.notes.last().unwrap(), "\\x1b[2Jcleared");
        assert_eq!(r.command, "hwcal\\x0drun");
        // Figures untouched.
        assert_eq!(r.caches, q.caches);
        let text = crate::text::summary(&r);
        assert!(!text.contains('\x1b') && !text.contains('\r'), "{text}");
    }

    #[test]
    fn json_stays_the_same_value() {
        let mut p = full_profile(0);
        p.machine.as_mut().unwrap().hostname = "a\u{9b}b\u{202e}c\u{7f}\x1b".into();
        let raw = serde_json::to_vec_pretty(&p).unwrap();
        let safe = json_inert(raw.clone());
        let t = String::from_utf8(safe.clone()).unwrap();
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "{t}");
        let back: hwcal_model::Profile = serde_json::from_slice(&safe).unwrap();
        assert_eq!(back, p);
        let plain = serde_json::to_vec_pretty(&full_profile(1)).unwrap();
        assert_eq!(json_inert(plain.clone()), plain);
    }

    #[test]
    fn script_paths() {
        assert!(check_script_path("out/my machine.v2").is_ok());
        for bad in ["a\nsystem('touch x')", "a'b", "a\"b", "a\\b", "a\x1bb", "a`b`"] {
            assert!(check_script_path(bad).is_err(), "{bad:?}");
        }
    }
}

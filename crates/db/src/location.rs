//! Where the database is: a file path (SQLite) or a `postgres://` URL, from
//! `--db`, `$HWCAL_DB` or the XDG data directory; and the URL as messages
//! show it (without its password).

use crate::DbError;
use std::path::{Path, PathBuf};

/// A database location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file.
    File(PathBuf),
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`).
    Postgres(String),
}

impl Location {
    /// A location as given (`--db`, `HWCAL_DB`): a URL of a supported
    /// scheme, else a file path. Other schemes are refused.
    pub fn of_path(path: &Path) -> Result<Location, DbError> {
        if path.as_os_str().is_empty() {
            return Err(DbError::EmptyPath);
        }
        let Some(s) = path.to_str() else {
            return Ok(Location::File(path.to_path_buf()));
        };
        match url_scheme(s).map(str::to_ascii_lowercase).as_deref() {
            None => Ok(Location::File(path.to_path_buf())),
            Some("postgres" | "postgresql") => Ok(Location::Postgres(s.to_string())),
            Some(_) => {
                check_location(s)?;
                unreachable!("check_location refuses every other scheme")
            }
        }
    }

    /// For messages: the path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Postgres(u) => redact(u),
        }
    }
}

/// The URL scheme of a `--db` location, if it has one (`postgres://h/db`
/// gives `postgres`). A Windows drive or a plain path has none.
pub fn url_scheme(location: &str) -> Option<&str> {
    let (scheme, _) = location.split_once("://")?;
    let ok = !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    ok.then_some(scheme)
}

/// Check a `--db` location: a file path, or a URL of a supported scheme
/// (`postgres://`, `postgresql://`).
pub fn check_location(location: &str) -> Result<(), DbError> {
    match url_scheme(location) {
        None => Ok(()),
        Some(s) if s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql") => Ok(()),
        Some(scheme) => Err(DbError::UnsupportedScheme(
            location.to_string(),
            scheme.to_string(),
        )),
    }
}

/// A URL as messages show it: the password in the user part and a
/// `password=` parameter replaced by `***` (a `ps` listing or a CI log must
/// not learn it from an error message). The URL is cut up as the driver
/// (tokio-postgres) reads it, so nothing it takes for a password shows:
/// the credentials run to the first `@` anywhere in the URL (a `/` or `?`
/// inside a password does not end them), the user to the first `:` in
/// them, and a parameter is a password when its key, percent-decoded, is
/// `password` (`pass%77ord=` too). A string without a scheme is taken as
/// libpq's `key=value` form, whose `password=` value is masked.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_key_values(url);
    };
    let (creds, after) = match rest.find('@') {
        Some(i) => (Some(&rest[..i]), &rest[i + 1..]),
        None => (None, rest),
    };
    let creds = match creds {
        Some(c) => match c.split_once(':') {
            Some((user, _)) => format!("{user}:***@"),
            None => format!("{c}@"),
        },
        None => String::new(),
    };
    let after = match after.split_once('?') {
        Some((host_path, query)) => format!("{host_path}?{}", redact_query(query)),
        None => after.to_string(),
    };
    format!("{scheme}://{creds}{after}")
}

/// A URL's query with every parameter whose decoded key is `password`
/// masked.
fn redact_query(query: &str) -> String {
    query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if percent_decode(k).eq_ignore_ascii_case("password") => format!("{k}=***"),
            _ => kv.to_string(),
        })
        .collect::<Vec<String>>()
        .join("&")
}

/// libpq's `key=value …` connection string with its `password=` value
/// masked (quoted or not); any other text unchanged.
fn redact_key_values(s: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(found) = lower[i..].find("password") {
        let key_start = i + found;
        let mut j = key_start + "password".len();
        // Spaces may stand around the `=`.
        while s[j..].starts_with(' ') {
            j += 1;
        }
        let at_word = key_start == 0 || !lower.as_bytes()[key_start - 1].is_ascii_alphanumeric();
        if !at_word || !s[j..].starts_with('=') {
            out.push_str(&s[i..j]);
            i = j;
            continue;
        }
        j += 1;
        while s[j..].starts_with(' ') {
            j += 1;
        }
        let end = if s[j..].starts_with('\'') {
            // A quoted value runs to the closing quote (\' escapes one).
            let b = s.as_bytes();
            let mut k = j + 1;
            while k < b.len() && b[k] != b'\'' {
                k += if b[k] == b'\\' { 2 } else { 1 };
            }
            (k + 1).min(s.len())
        } else {
            s[j..].find(char::is_whitespace).map_or(s.len(), |e| j + e)
        };
        out.push_str(&s[i..j]);
        out.push_str("***");
        i = end;
    }
    out.push_str(&s[i..]);
    out
}

/// `%XX` escapes decoded (invalid ones kept as they are), as text.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The default database file: `$HWCAL_DB`, else
/// `$XDG_DATA_HOME/hwcal/hwcal.db`, else `~/.local/share/hwcal/hwcal.db`.
/// Empty variables count as unset (as the XDG spec says).
pub fn default_path() -> Result<PathBuf, DbError> {
    default_path_from(|k| std::env::var_os(k))
}

/// [`default_path`] with the environment given as a lookup function.
pub fn default_path_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<PathBuf, DbError> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = var(crate::ENV_VAR) {
        return Ok(p);
    }
    // XDG: a relative XDG_DATA_HOME is invalid and must be ignored.
    if let Some(d) = var("XDG_DATA_HOME").filter(|d| d.is_absolute()) {
        return Ok(d.join("hwcal").join("hwcal.db"));
    }
    match var("HOME") {
        Some(h) => Ok(h.join(".local/share/hwcal/hwcal.db")),
        None => Err(DbError::NoPath),
    }
}

/// The database `--db` names, else the default ([`default_path`]).
pub fn default_location(given: Option<&Path>) -> Result<Location, DbError> {
    let path = match given {
        Some(p) => p.to_path_buf(),
        None => default_path()?,
    };
    Location::of_path(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        for (url, shown) in [
            ("postgres://u:secret@h:5432/db", "postgres://u:***@h:5432/db"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("postgres://h/db", "postgres://h/db"),
            (
                "postgresql://u:p%40ss@h/db?sslmode=disable",
                "postgresql://u:***@h/db?sslmode=disable",
            ),
            (
                "postgres://h/db?user=u&password=secret",
                "postgres://h/db?user=u&password=***",
            ),
            ("postgres://u:s@[::1]:5/db", "postgres://u:***@[::1]:5/db"),
            ("not a url", "not a url"),
            // The driver reads the password up to the first `@`, whatever
            // comes before it.
            ("postgres://slash:ab/secret@h/db", "postgres://slash:***@h/db"),
            ("postgres://q:ab?secret@h/db", "postgres://q:***@h/db"),
            ("postgres://q:a@b@h/db", "postgres://q:***@b@h/db"),
            // A percent-encoded key is still the password.
            (
                "postgres://h/db?pass%77ord=secret",
                "postgres://h/db?pass%77ord=***",
            ),
            (
                "postgres://h/db?PASSWORD=secret&x=1",
                "postgres://h/db?PASSWORD=***&x=1",
            ),
            ("--db=postgres://u:secret@h/db", "--db=postgres://u:***@h/db"),
            // libpq's key=value form.
            ("host=h password=secret dbname=x", "host=h password=*** dbname=x"),
            (
                "host=h password = 'se cret' dbname=x",
                "host=h password = *** dbname=x",
            ),
            ("host=h mypassword=1", "host=h mypassword=1"),
        ] {
            assert_eq!(redact(url), shown, "{url}");
            assert!(!redact(url).contains("secret"));
        }
    }

    #[test]
    fn locations_are_files_or_postgres_urls() {
        let of = |s: &str| Location::of_path(Path::new(s));
        assert_eq!(of("a/b.db").unwrap(), Location::File("a/b.db".into()));
        assert_eq!(
            of("./weird:name.db").unwrap(),
            Location::File("./weird:name.db".into())
        );
        assert!(matches!(of("postgres://h/db").unwrap(), Location::Postgres(_)));
        assert!(matches!(of("PostgreSQL://h/db").unwrap(), Location::Postgres(_)));
        for bad in ["x://y", "sqlite://a.db", "file:///tmp/x.db", "HTTP://h"] {
            let e = of(bad).unwrap_err();
            assert!(matches!(e, DbError::UnsupportedScheme(..)), "{bad}");
            assert!(e.to_string().contains("not supported"), "{e}");
            assert!(e.is_usage());
        }
        assert_eq!(
            Location::Postgres("postgres://u:pw@h/d".into()).display(),
            "postgres://u:***@h/d"
        );
        assert!(matches!(
            default_location(Some(Path::new(""))),
            Err(DbError::EmptyPath)
        ));
    }
}

//! Where the database is: a file path (SQLite), a `postgres://` URL or
//! libpq's `key=value` connection string, from `--db`, `$HWCAL_DB` or the
//! XDG data directory; and the URL as messages show it (without its
//! password).

use crate::defaults::ENV_VAR;
use crate::error::DbError;

use std::path::{Path, PathBuf};

/// A database location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file.
    File(PathBuf),
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`), or
    /// libpq's `key=value` connection string (`host=h user=u dbname=d`).
    Postgres(String),
}

impl Location {
    /// A location as given (`--db`, `HWCAL_DB`): a URL of a supported
    /// scheme, a libpq connection string, else a file path. Other schemes,
    /// and text that starts like a connection string but is not one the
    /// driver reads, are refused (see [`check_location`]).
    pub fn of_path(path: &Path) -> Result<Location, DbError> {
        if path.as_os_str().is_empty() {
            return Err(DbError::EmptyPath);
        }
        let Some(s) = path.to_str() else {
            return Ok(Location::File(path.to_path_buf()));
        };
        match url_scheme(s).map(str::to_ascii_lowercase).as_deref() {
            None if is_connection_string(s)? => Ok(Location::Postgres(s.to_string())),
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

/// Check a `--db` location: a file path, a URL of a supported scheme
/// (`postgres://`, `postgresql://`), or libpq's `key=value` connection
/// string. Text that starts like a connection string but does not parse
/// ([`DbError::BadUrl`]) is refused rather than taken for a file name.
pub fn check_location(location: &str) -> Result<(), DbError> {
    match url_scheme(location) {
        None => is_connection_string(location).map(|_| ()),
        Some(s) if s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql") => Ok(()),
        Some(scheme) => Err(DbError::UnsupportedScheme(
            location.to_string(),
            scheme.to_string(),
        )),
    }
}

/// One command-line argument with any secret masked: a URL's password
/// (however it is written, as the driver reads it) and a `password=` value.
pub fn redact_arg(a: &str) -> String {
    if a.contains("://") || a.to_ascii_lowercase().contains("password") {
        redact(a)
    } else {
        a.to_string()
    }
}

/// A command line for a profile, every secret masked ([`redact_arg`]): a
/// profile is stored, exported and published (`db site`), so a password in
/// `--db postgres://u:PW@h/db`, `--to`, their `=` forms or a libpq
/// `password=` string must not reach it. Arguments that are not UTF-8 are
/// shown lossily (never a panic); the program name is `hwcal`.
pub fn command_line_of(args: impl Iterator<Item = std::ffi::OsString>) -> String {
    let mut v = vec!["hwcal".to_string()];
    v.extend(args.map(|a| redact_arg(&a.to_string_lossy())));
    v.join(" ")
}

/// Mask any secret in a profile's recorded command line, as
/// [`command_line_of`] masks each argument (a profile imported from a file
/// or read from a database written by an hwcal that did not).
pub fn redact_profile(p: &mut hwcal_model::Profile) {
    p.command = redact_command(&p.command);
}

/// A recorded command line with every word masked as [`redact_arg`] masks
/// an argument (a profile written by an hwcal that did not mask them, or
/// by hand).
pub fn redact_command(command: &str) -> String {
    command.split(' ').map(redact_arg).collect::<Vec<_>>().join(" ")
}

/// A URL as messages show it: the password in the user part and a
/// `password=` parameter replaced by `***` (a `ps` listing or a CI log must
/// not learn it from an error message). The URL is cut up as the driver
/// (tokio-postgres) reads it, or further, so nothing it takes for a
/// password shows: the credentials run to the last `@` anywhere in the URL
/// (a `/` or `?` inside a password does not end them, and neither does an
/// `@` typed in it unencoded, which the driver would cut there but whose
/// rest is still the password), the user to the first `:` in
/// them, and a parameter is a password when its key, percent-decoded, is
/// `password` (`pass%77ord=` too). A string that does not start with a
/// scheme is taken as libpq's `key=value` form, whose `password=` value is
/// masked (quoted, or with `\`-escaped spaces, as the driver reads it);
/// a URL inside such text (`--db=postgres://...`) is then masked too.
pub fn redact(url: &str) -> String {
    if url_scheme(url).is_some() {
        return redact_url(url);
    }
    // Key-value first: a `://` inside a password value must not make the
    // text before it a "scheme" and leave the rest of the password shown.
    let s = redact_key_values(url);
    if s.contains("://") {
        redact_url(&s)
    } else {
        s
    }
}

/// [`redact`] of a string cut as a URL at its first `://`.
fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    // The credentials: up to the last `@`, where what precedes it is a
    // user (no `/` or `?`) or a user and a password (a `:` before any `/`
    // or `?`); else that `@` is in the path or the query, which are
    // masked below as such.
    let userinfo = |c: &str| {
        let end = c.find(['/', '?']).unwrap_or(c.len());
        c[..end].contains(':') || end == c.len()
    };
    let (creds, after) = match rest.rfind('@') {
        Some(i) if userinfo(&rest[..i]) => (Some(&rest[..i]), &rest[i + 1..]),
        _ => (None, rest),
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

/// A URL's query with every parameter whose decoded key ends in `password`
/// masked (`password`, and libpq's `sslpassword`, the client key's).
fn redact_query(query: &str) -> String {
    query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if percent_decode(k).to_ascii_lowercase().ends_with("password") => {
                format!("{k}=***")
            }
            _ => kv.to_string(),
        })
        .collect::<Vec<String>>()
        .join("&")
}

/// libpq's `key=value …` connection string with the value of every key
/// ending in `password` masked (`sslpassword=` is a secret too); any other
/// text unchanged. A value ends where the driver's parser ends it: a quoted
/// one at its closing quote (`\'` escapes one), a plain one at whitespace
/// that is not `\`-escaped. Words after a plain value up to the next
/// `key=` are masked as well: in a string the driver refuses
/// (`password=two words`) they are most likely the rest of the password.
fn redact_key_values(s: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(found) = lower[i..].find("password") {
        let key_start = i + found;
        let key_end = key_start + "password".len();
        let eq = skip_space(s, key_end);
        if !s[eq..].starts_with('=') {
            out.push_str(&s[i..key_end]);
            i = key_end;
            continue;
        }
        // The driver skips whitespace on both sides of the `=`.
        let value = skip_space(s, eq + 1);
        out.push_str(&s[i..value]);
        out.push_str("***");
        i = value_end(s, value);
    }
    out.push_str(&s[i..]);
    out
}

/// The first byte at or after `i` that is not whitespace (or the end).
fn skip_space(s: &str, i: usize) -> usize {
    s[i..]
        .find(|c: char| !c.is_whitespace())
        .map_or(s.len(), |k| i + k)
}

/// Where the `key=value` value starting at `start` ends, for masking.
fn value_end(s: &str, start: usize) -> usize {
    let b = s.as_bytes();
    if b.get(start) == Some(&b'\'') {
        let mut k = start + 1;
        while k < b.len() && b[k] != b'\'' {
            k += if b[k] == b'\\' { 2 } else { 1 };
        }
        // Past the closing quote; an unterminated value runs to the end.
        return (k + 1).min(b.len());
    }
    let mut k = start;
    loop {
        // One word: up to whitespace that is not escaped.
        let mut chars = s[k..].char_indices();
        k = loop {
            match chars.next() {
                None => break s.len(),
                Some((_, '\\')) => {
                    chars.next();
                }
                Some((o, c)) if c.is_whitespace() => break k + o,
                Some(_) => {}
            }
        };
        let next = skip_space(s, k);
        if next == s.len() || starts_with_key(&s[next..]) {
            return k;
        }
        k = next;
    }
}

/// Whether `s` starts with `key =` (a keyword as the driver's parser reads
/// one: characters other than whitespace and `=`).
fn starts_with_key(s: &str) -> bool {
    let key = s.find(|c: char| c.is_whitespace() || c == '=').unwrap_or(s.len());
    key > 0 && s[skip_space(s, key)..].starts_with('=')
}

/// The keywords of libpq's connection strings (PostgreSQL 17's list, not
/// only those the driver reads). A location whose first word is one of
/// them, followed by `=`, is meant as a connection string.
const LIBPQ_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
];

/// Whether a location without a URL scheme is libpq's `key=value`
/// connection string (`host=db1 user=u password=... dbname=fleet`) rather
/// than a file path. One the driver reads is PostgreSQL. One that starts
/// like a connection string (its first word a libpq keyword followed by
/// `=`, or any `word=` followed by more words) but does not parse is
/// refused: taken for a file path it would create a file named after the
/// password. A file whose name looks like that is given as `./NAME`.
fn is_connection_string(s: &str) -> Result<bool, DbError> {
    let t = s.trim_start();
    // The parser stops, content, at text that does not start with a
    // keyword (`=x` parses as no parameters at all): a connection string
    // must start with `key=`.
    if !starts_with_key(t) {
        return Ok(false);
    }
    if s.parse::<tokio_postgres::Config>().is_ok() {
        return Ok(true);
    }
    let key = &t[..t.find(|c: char| c.is_whitespace() || c == '=').unwrap_or(t.len())];
    let starts_like_one = key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (LIBPQ_KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(key))
            || t.trim_end().contains(char::is_whitespace));
    if !starts_like_one {
        return Ok(false);
    }
    // The parser's own message is left out: it can quote a piece of a
    // mistyped password ("expected `=` but got ...").
    Err(DbError::BadUrl {
        location: redact(s),
        why: "a `key=value` connection string the driver does not read (keywords are lower case: \
              host, port, user, password, dbname, ...; a value with spaces goes in single quotes); \
              for a file of that name write ./NAME"
            .into(),
    })
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
    if let Some(p) = var(ENV_VAR) {
        return Ok(p);
    }
    // XDG: a relative XDG_DATA_HOME is invalid and must be ignored.
    if let Some(d) = var("XDG_DATA_HOME").filter(|d| d.is_absolute()) {
        return Ok(d.join("hwcal").join("hwcal.db"));
    }
    // A relative HOME (a broken environment) would put the database
    // wherever the command happens to run: ignored, as a relative
    // XDG_DATA_HOME is.
    match var("HOME").filter(|h| h.is_absolute()) {
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
            // A `/`, `?` or `@` typed in a password: all of it masked.
            ("postgres://slash:ab/secret@h/db", "postgres://slash:***@h/db"),
            ("postgres://q:ab?secret@h/db", "postgres://q:***@h/db"),
            ("postgres://hw:SEC@RETPW@h/db", "postgres://hw:***@h/db"),
            // An `@` in a query's password is the query's to mask.
            ("postgres://h/db?password=x@y", "postgres://h/db?password=***"),
            ("postgres://u@h/db?password=x@y", "postgres://u@h/db?password=***"),
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
            // Any key ending in `password` is a secret (libpq's
            // `sslpassword` unlocks the client key); over-masking is harmless.
            ("host=h mypassword=1", "host=h mypassword=***"),
            ("sslpassword=secret host=h", "sslpassword=*** host=h"),
            (
                "postgres://h/db?sslpassword=secret",
                "postgres://h/db?sslpassword=***",
            ),
            // A whole connection string, as `--db` takes it.
            (
                "host=127.0.0.1 port=5432 user=u password=secret dbname=d",
                "host=127.0.0.1 port=5432 user=u password=*** dbname=d",
            ),
            ("password=secret", "password=***"),
            ("password=", "password=***"),
            // Whitespace of any kind around the `=`, as the driver skips it.
            ("host=h\tpassword\t=\tsecret", "host=h\tpassword\t=\t***"),
            // A `\`-escaped space does not end a plain value; nor does a
            // quote escaped inside a quoted one.
            (
                "host=h password=x\\ secret dbname=d",
                "host=h password=*** dbname=d",
            ),
            ("password='a\\'secret' host=h", "password=*** host=h"),
            ("password='unterminated secret", "password=***"),
            // After `password=` with nothing but spaces, the driver takes
            // the next word as the value.
            ("password= secret", "password= ***"),
            // `://` in a password does not make the text a URL.
            (
                "host=h password=ab://secret dbname=d",
                "host=h password=*** dbname=d",
            ),
            (
                "host=h password=ab://u:secret@h dbname=d",
                "host=h password=*** dbname=d",
            ),
            // An unquoted password with spaces (a string the driver
            // refuses): the stray words up to the next key are masked too.
            (
                "host=h password=my secret words dbname=d",
                "host=h password=*** dbname=d",
            ),
            ("host=h PASSWORD=secret", "host=h PASSWORD=***"),
            ("héllo password=sécret", "héllo password=***"),
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

    /// libpq's `key=value` connection string is PostgreSQL (the driver reads
    /// it), never a file named after its password.
    #[test]
    fn connection_strings_are_postgres_not_files() {
        let of = |s: &str| Location::of_path(Path::new(s));
        for s in [
            "host=127.0.0.1 port=5432 user=u password=secret dbname=d",
            "dbname=d",
            "  host = /run/postgresql   dbname = 'my db' ",
            "host=h password='se cret' connect_timeout=5",
        ] {
            assert_eq!(of(s).unwrap(), Location::Postgres(s.to_string()), "{s}");
            check_location(s).unwrap();
            assert!(!of(s).unwrap().display().contains("secret"), "{s}");
            assert!(!of(s).unwrap().display().contains("se cret"), "{s}");
        }
        assert_eq!(
            of("host=h user=u password=secret dbname=d").unwrap().display(),
            "host=h user=u password=*** dbname=d"
        );
        // Starts like a connection string but the driver does not read it:
        // refused as a usage error, never a file (whose name would hold the
        // password), and the message does not show the password.
        for s in [
            "host=h PASSWORD=secret",
            "host=h password=two secret",
            "Host=h",
            "service=fleet",
            "host=h sslpassword=secret",
            "user=u password='unterminated secret",
            "results=1 copy.db",
        ] {
            let e = of(s).unwrap_err();
            assert!(matches!(e, DbError::BadUrl { .. }) && e.is_usage(), "{s}: {e}");
            assert!(!e.to_string().contains("secret"), "{s}: {e}");
            assert!(!e.to_string().contains('\n'), "{s}: {e}");
            assert!(matches!(check_location(s), Err(DbError::BadUrl { .. })), "{s}");
            let e = crate::Db::open(s).err().expect(s);
            assert!(matches!(e, DbError::BadUrl { .. }), "{s}: {e}");
            assert!(!Path::new(s).exists(), "{s}: a file was created");
        }
        // Still files: no `key=` start, a name with `=` but no libpq keyword
        // and no spaces, or `./` in front of anything.
        for s in [
            "a/b.db",
            "run=1.db",
            "./host=h dbname=d",
            "my results.db",
            "/tmp/x=1 y.db",
            " ",
            "=x",
        ] {
            assert_eq!(of(s).unwrap(), Location::File(s.into()), "{s}");
            check_location(s).unwrap();
        }
    }
}

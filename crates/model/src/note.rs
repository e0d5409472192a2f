//! Structured notes: what a probe or the analysis has to say about a
//! profile's figures. A note is `{probe, code, severity, text}`; `code` is
//! a stable string a script can match (`mem.noisy`, `io.few_samples`),
//! `text` is the line as printed (`cache: L1: ...`, the probe's name first
//! where it always was).
//!
//! Profiles written before notes had codes store them as plain strings;
//! they still load: the probe is read from the `probe: ` prefix and the
//! code from the few texts whose meaning is known (see [`Note::legacy`]).

use serde::{Deserialize, Serialize};

/// How much a note matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Context for reading the figures (what was measured, how).
    Info,
    /// A figure may be off (noise, a disagreement with the nominal value).
    #[default]
    Warning,
}

/// One note on a profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Note {
    /// The registry id of the probe it is about, `machine` for the nominal
    /// description, `analyze` for the offline analysis.
    pub probe: String,
    /// Stable identifier of the kind of note, `{probe}.{what}`.
    pub code: String,
    pub severity: Severity,
    /// The note as printed.
    pub text: String,
}

/// Ids that prefix a note's text (`cache: ...`).
const PROBES: [&str; 7] = ["clock", "cache", "tlb", "mem", "ctx", "io", "analyze"];

/// Text prefixes of old plain-string notes whose code is known: notes a
/// re-analysis replaces must be recognised to be replaced.
const LEGACY_CODES: [(&str, &str); 3] = [
    ("mem: noisy:", "mem.noisy"),
    ("cache: ", "cache.analysis"),
    ("tlb: ", "tlb.analysis"),
];

impl Note {
    pub fn new(probe: &str, code: &str, severity: Severity, text: impl Into<String>) -> Note {
        Note {
            probe: probe.into(),
            code: code.into(),
            severity,
            text: text.into(),
        }
    }

    /// A warning of `probe` (code `{probe}.{what}`).
    pub fn warning(probe: &str, what: &str, text: impl Into<String>) -> Note {
        Note::new(probe, &format!("{probe}.{what}"), Severity::Warning, text)
    }

    /// Context of `probe` (code `{probe}.{what}`).
    pub fn info(probe: &str, what: &str, text: impl Into<String>) -> Note {
        Note::new(probe, &format!("{probe}.{what}"), Severity::Info, text)
    }

    /// A plain-string note of an old profile: the probe from its prefix
    /// (`machine` if none), the code from [`LEGACY_CODES`] or
    /// `{probe}.note`, a warning.
    pub fn legacy(text: impl Into<String>) -> Note {
        let text = text.into();
        let probe = text
            .split_once(": ")
            .map(|(head, _)| head)
            .filter(|head| PROBES.contains(head))
            .unwrap_or("machine")
            .to_string();
        let code = LEGACY_CODES
            .iter()
            .find(|(prefix, _)| text.starts_with(prefix))
            .map_or_else(|| format!("{probe}.note"), |(_, code)| code.to_string());
        Note {
            probe,
            code,
            severity: Severity::Warning,
            text,
        }
    }
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Note {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Plain(String),
            Full {
                probe: String,
                code: String,
                #[serde(default)]
                severity: Severity,
                text: String,
            },
        }
        Ok(match Stored::deserialize(d)? {
            Stored::Plain(text) => Note::legacy(text),
            Stored::Full {
                probe,
                code,
                severity,
                text,
            } => Note {
                probe,
                code,
                severity,
                text,
            },
        })
    }
}

/// Replace the notes of `probe` whose code is in `codes` by `fresh`
/// (appended at the end, as a re-analysis leaves them).
pub fn refresh(notes: &mut Vec<Note>, probe: &str, codes: &[&str], fresh: Vec<Note>) {
    notes.retain(|n| !(n.probe == probe && codes.contains(&n.code.as_str())));
    notes.extend(fresh);
}

/// A warning of a probe's analysis: code `{probe}.{what}`, text led by
/// `{probe}: ` where it is not already (the cache and TLB analyses word
/// their notes about a level as `L2: ...`; the profile prints them with
/// the probe's name first, as it always did).
pub fn analysis(probe: &str, what: &str, text: impl Into<String>) -> Note {
    let text = text.into();
    let text = if text.starts_with(&format!("{probe}:")) {
        text
    } else {
        format!("{probe}: {text}")
    };
    Note::warning(probe, what, text)
}

/// Whether `code` is one of the codes a documented pattern stands for:
/// `{N}` in the pattern matches a level number (one or more digits), every
/// other character itself (`cache.l{N}-no-plateau` matches
/// `cache.l3-no-plateau`).
pub fn code_matches(pattern: &str, code: &str) -> bool {
    match pattern.split_once("{N}") {
        None => pattern == code,
        Some((head, tail)) => {
            let Some(rest) = code.strip_prefix(head) else {
                return false;
            };
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            digits > 0 && code_matches(tail, &rest[digits..])
        }
    }
}

/// Replace a probe's analysis notes by the analysis's fresh ones: the
/// notes of `probe` whose code matches one of `patterns` (see
/// [`code_matches`]) and the generic `{probe}.analysis` of profiles
/// written before the codes were specific. Other notes of the probe (the
/// measuring run's own) stay.
pub fn refresh_analysis(notes: &mut Vec<Note>, probe: &str, patterns: &[&str], fresh: Vec<Note>) {
    let generic = format!("{probe}.analysis");
    notes.retain(|n| {
        !(n.probe == probe && (n.code == generic || patterns.iter().any(|p| code_matches(p, &n.code))))
    });
    notes.extend(fresh);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_string_notes_still_load() {
        let v: Vec<Note> = serde_json::from_str(
            r#"["cache: L1: x", "mem: noisy: y", "L3 Unified: sysfs says 1", "mem: 4 KiB pages",
                {"probe":"io","code":"io.few_samples","severity":"info","text":"io: only 3"}]"#,
        )
        .unwrap();
        let codes: Vec<&str> = v.iter().map(|n| n.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "cache.analysis",
                "mem.noisy",
                "machine.note",
                "mem.note",
                "io.few_samples"
            ]
        );
        assert_eq!(v[2].probe, "machine");
        assert_eq!(v[4].severity, Severity::Info);
        assert_eq!(v[0].to_string(), "cache: L1: x");
        let back: Vec<Note> = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn refresh_replaces_only_the_given_codes() {
        let mut v = vec![
            Note::legacy("mem: 4 KiB pages"),
            Note::legacy("mem: noisy: a"),
            Note::legacy("cache: b"),
        ];
        refresh(
            &mut v,
            "mem",
            &["mem.noisy"],
            vec![Note::warning("mem", "noisy", "mem: noisy: c")],
        );
        let t: Vec<String> = v.iter().map(|n| n.to_string()).collect();
        assert_eq!(t, ["mem: 4 KiB pages", "cache: b", "mem: noisy: c"]);
    }

    #[test]
    fn code_patterns_match_level_numbers_only() {
        assert!(code_matches("cache.l{N}-no-plateau", "cache.l3-no-plateau"));
        assert!(code_matches("cache.l{N}-no-plateau", "cache.l12-no-plateau"));
        assert!(!code_matches("cache.l{N}-no-plateau", "cache.l-no-plateau"));
        assert!(!code_matches("cache.l{N}-no-plateau", "cache.lx-no-plateau"));
        assert!(!code_matches("cache.l{N}-no-plateau", "cache.l3-no-plateau-x"));
        assert!(code_matches("cache.busy", "cache.busy"));
        assert!(!code_matches("cache.busy", "cache.busy2"));
    }

    #[test]
    fn analysis_refresh_replaces_coded_and_generic_notes() {
        let mut v = vec![
            Note::legacy("cache: old plain note"),
            Note::warning("cache", "l2-short-private", "cache: L2: short"),
            Note::warning("cache", "huge_pages", "cache: the run's own note"),
            Note::legacy("tlb: b"),
        ];
        let fresh = vec![analysis("cache", "l3-no-plateau", "L3 (nominal 32 MiB): none")];
        refresh_analysis(&mut v, "cache", &["cache.l{N}-short-private"], fresh);
        let t: Vec<&str> = v.iter().map(|n| n.text.as_str()).collect();
        assert_eq!(
            t,
            [
                "cache: the run's own note",
                "tlb: b",
                "cache: L3 (nominal 32 MiB): none"
            ]
        );
        assert_eq!(v[2].code, "cache.l3-no-plateau");
    }
}

/// The schema of a note as profiles hold it: the object hwcal writes now,
/// or the plain string of profiles written before notes had codes (both
/// load, see [`Note::legacy`]).
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum NoteSchema {
    /// A note of this hwcal.
    Note {
        /// The registry id of the probe it is about (`machine`, `analyze`, `profile` besides).
        probe: String,
        /// Stable identifier of the kind of note, `{probe}.{what}`.
        code: String,
        severity: Severity,
        /// The note as printed.
        text: String,
    },
    /// A note of a profile written before notes had codes: its text.
    Legacy(String),
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Note {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Note".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        NoteSchema::json_schema(generator)
    }
}

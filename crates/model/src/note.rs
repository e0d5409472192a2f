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

/// Replace a probe's analysis notes (code `{probe}.analysis`) by the
/// analysis's fresh texts, each led by `probe: ` where it is not already
/// (the cache and TLB analyses word their notes as plain text).
pub fn refresh_analysis(notes: &mut Vec<Note>, probe: &str, texts: Vec<String>) {
    let prefix = format!("{probe}:");
    let fresh = texts
        .into_iter()
        .map(|n| {
            let text = if n.starts_with(&prefix) {
                n
            } else {
                format!("{probe}: {n}")
            };
            Note::warning(probe, "analysis", text)
        })
        .collect();
    refresh(notes, probe, &[&format!("{probe}.analysis")], fresh);
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

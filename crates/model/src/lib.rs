//! The hwcal data model: every figure hwcal measures, as plain serde types.
//!
//! This is the JSON schema users' cost models read (`schema_version` 1). Field
//! names carry their unit (`latency_ns`, `size_bytes`, `core_mhz`) so a figure
//! can never be read in the wrong unit. Sections a command did not measure are
//! absent from the JSON (not `null`); figures inside a measured section that
//! could not be determined are `null`.
//!
//! One module per section of the profile ([`Profile`] and its reading
//! stay here for now): `machine` (what the machine says
//! about itself, the harness setup), `clock`, `cache`, `memory` (latency past
//! the last cache, parallelism), `tlb`, `mem`, `bandwidth`, `ctx`, `io`,
//! `raw` (the raw curves), and the shared pieces `verdict` (noise verdict,
//! order statistics) and `serde_nan` (NaN as JSON `null`). Every type is
//! re-exported here, so `hwcal_model::ClockResult` names it wherever it lives.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

mod bandwidth;
mod cache;
mod clock;
pub mod cores;
mod ctx;
pub mod curve;
pub mod figure;
mod io;
mod machine;
mod mem;
mod memory;
pub mod note;
pub mod plausible;
mod raw;
/// Synthetic profiles for tests (feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
pub mod sample;
#[cfg(feature = "schema")]
pub mod schema;
mod serde_nan;
mod tlb;
mod units;
mod verdict;

pub use bandwidth::{Bandwidth, BandwidthPoint, LoadedLatencyPoint};
pub use cache::CacheLevel;
pub use clock::{ClockBatch, ClockRaw, ClockResult, ExpressionCycles};
pub use cores::Midr;
pub use ctx::{ContextSwitch, CtxPoint, CtxSize, SwitchCount};
pub use figure::{Direction, Figure, FigureUnit};
pub use io::{IoResult, IoThread};
pub use machine::{HarnessInfo, MachineIdentity, MachineInfo, NominalCache, NominalTlb, NumaNode};
pub use mem::{MemResult, MemThread, NumaLatency};
pub use memory::{MemoryLatency, MemoryMeasure, MlpPoint};
pub use note::{Note, Severity};
pub use raw::{RawCurve, RawPoint};
pub use tlb::{TlbHugePageComparison, TlbLevel};
pub use units::{axis_bytes, human_bytes, measured_bytes, parse_size};
pub use verdict::{Spread, Verdict};

/// Version of the JSON profile layout. Bump on incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// One complete (or partial) calibration of a machine: what `hwcal ... --json`
/// writes and `hwcal analyze` / `hwcal db import` read.
///
/// Field names carry their unit (`latency_ns`, `size_bytes`, `core_mhz`,
/// `exec_time_s`). The exceptions are keys kept under the name the original
/// tool gave them, for compatibility with its output and scripts: lat_ctx's
/// `us_min` / `us_median` / `us_mad` / `us_max` (µs, unit as a prefix) and
/// micbench-mem's `clk_per_op` / `total_clk` (core clock cycles), `ops_per_sec`,
/// `total_ops`; lat_ctx's `ovr` is `overhead_us` here. Each says so in its
/// description. Sections a command did not measure are absent; figures that
/// could not be determined are `null`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Profile {
    /// Version of this layout (1); bumped on an incompatible change.
    pub schema_version: u32,
    pub tool: String,
    pub tool_version: String,
    /// Seconds since the Unix epoch at the start of the run.
    pub created_unix: u64,
    /// The command line that produced the profile (e.g. `hwcal clock`).
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<HarnessInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches: Option<Vec<CacheLevel>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryLatency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlbs: Option<Vec<TlbLevel>>,
    /// The PS3 TLB note's comparison: the same page walk with 4 KiB pages
    /// and with huge pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb_huge_pages: Option<Vec<TlbHugePageComparison>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem: Option<MemResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Bandwidth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_switch: Option<ContextSwitch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoResult>,
    /// Notes the probes and the analysis attached (disagreements with
    /// nominal figures, noise warnings): `{probe, code, severity, text}`;
    /// older profiles hold plain strings, which still load (see `note`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// Named figures of probes without a typed section of their own (see
    /// `figure`): rendered and compared generically.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
    /// Raw measured curves; analysis is a pure function of these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw: Vec<RawCurve>,
    /// Raw timings of the clock probe (per batch, per expression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_clock: Option<ClockRaw>,
}

impl Profile {
    /// An empty profile stamped with schema and tool version.
    pub fn new(command: impl Into<String>, created_unix: u64) -> Self {
        Profile {
            schema_version: SCHEMA_VERSION,
            tool: "hwcal".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            created_unix,
            command: command.into(),
            ..Default::default()
        }
    }

    /// The raw curve with the given id, if recorded.
    pub fn raw_curve(&self, id: &str) -> Option<&RawCurve> {
        self.raw.iter().find(|c| c.id == id)
    }
}

/// Parse a profile from JSON bytes, checking the schema version and that
/// every figure is one a machine can have measured.
pub fn parse_profile(bytes: &[u8]) -> Result<Profile, String> {
    let p = parse_profile_unchecked(bytes)?;
    let bad = plausible::implausible(&p);
    if !bad.is_empty() {
        const SHOWN: usize = 3;
        let more = if bad.len() > SHOWN {
            format!(" (and {} more)", bad.len() - SHOWN)
        } else {
            String::new()
        };
        return Err(format!(
            "values no machine can have measured: {}{more}",
            bad[..bad.len().min(SHOWN)].join("; ")
        ));
    }
    Ok(p)
}

/// Parse a profile from JSON bytes, checking the schema version only: for
/// `hwcal analyze`, which re-derives the figures from the raw curves and
/// so replaces a stored figure that fails the plausibility check (an older
/// analysis's negative miss latency) instead of refusing the file (see
/// [`plausible::leave_out`]).
pub fn parse_profile_unchecked(bytes: &[u8]) -> Result<Profile, String> {
    // The version is read first without building the whole document (a
    // value tree of a 60 MB file costs several times its size), then the
    // profile itself straight from the bytes.
    #[derive(Deserialize)]
    struct Head {
        // Present (null included) or absent: `null` is a wrong type to
        // name, not a missing field.
        #[serde(default, deserialize_with = "present")]
        schema_version: Option<serde_json::Value>,
    }
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
        serde_json::Value::deserialize(d).map(Some)
    }
    let head: Option<serde_json::Value> = match serde_json::from_slice::<Head>(bytes) {
        Ok(h) => h.schema_version,
        Err(e) if e.classify() == serde_json::error::Category::Data => None,
        Err(e) => return Err(format!("not valid JSON: {e}")),
    };
    match head.as_ref().map(|s| (s, s.as_u64())) {
        Some((_, Some(n))) if n == SCHEMA_VERSION as u64 => {}
        Some((_, Some(n))) => {
            return Err(format!(
                "schema_version {n} is not supported (this hwcal reads {})",
                SCHEMA_VERSION
            ))
        }
        Some((s, None)) => {
            let kind = match s {
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "not a whole number",
                serde_json::Value::Null => "null",
                serde_json::Value::Bool(_) => "a boolean",
                _ => "not a number",
            };
            // Shown inert: the value comes from a file anyone can write.
            let shown: String = s
                .to_string()
                .chars()
                .take(40)
                .flat_map(|c| {
                    if c.is_control() {
                        c.escape_default().collect::<Vec<char>>()
                    } else {
                        vec![c]
                    }
                })
                .collect();
            return Err(format!(
                "schema_version {shown} is {kind}; expected the number {SCHEMA_VERSION}"
            ));
        }
        None => return Err("not an hwcal profile: no schema_version".into()),
    }
    // serde refuses a repeated field of a struct, but a map (the raw
    // curves by name) would silently keep the last of two equal keys: a
    // file that says one thing twice is refused, whichever it is.
    serde_json::from_slice::<unique_keys::UniqueKeys>(bytes)
        .map_err(|e| format!("not an hwcal profile: {e}"))?;
    let p: Profile = serde_json::from_slice(bytes).map_err(|e| format!("not an hwcal profile: {e}"))?;
    if p.tool != "hwcal" {
        let shown: String = p.tool.chars().take(40).flat_map(char::escape_default).collect();
        return Err(format!(
            "not an hwcal profile: its tool is \"{shown}\", not \"hwcal\""
        ));
    }
    Ok(p)
}

/// A pass over a JSON document that fails on an object with the same key
/// twice, at any depth, holding only the keys of the objects being read
/// (no value tree).
mod unique_keys {
    use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
    use std::collections::HashSet;

    pub struct UniqueKeys;

    impl<'de> Deserialize<'de> for UniqueKeys {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(UniqueKeys)
        }
    }

    impl<'de> Visitor<'de> for UniqueKeys {
        type Value = UniqueKeys;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
            Ok(UniqueKeys)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
            Ok(UniqueKeys)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
            Ok(UniqueKeys)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
            Ok(UniqueKeys)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self, E> {
            Ok(UniqueKeys)
        }
        fn visit_unit<E>(self) -> Result<Self, E> {
            Ok(UniqueKeys)
        }
        fn visit_none<E>(self) -> Result<Self, E> {
            Ok(UniqueKeys)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
            while seq.next_element::<UniqueKeys>()?.is_some() {}
            Ok(UniqueKeys)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
            let mut seen = HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if seen.contains(&key) {
                    let shown: String = key.chars().take(40).flat_map(char::escape_default).collect();
                    return Err(A::Error::custom(format_args!(
                        "the key \"{shown}\" appears twice in one object (which was meant?)"
                    )));
                }
                seen.insert(key);
                map.next_value::<UniqueKeys>()?;
            }
            Ok(UniqueKeys)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_sections_are_omitted_and_roundtrip() {
        let mut p = Profile::new("hwcal clock", 1);
        p.clock = Some(ClockResult {
            core_mhz: 2500.0,
            verdict: Verdict::Noisy,
            ..Default::default()
        });
        let s = serde_json::to_string(&p).unwrap();
        assert!(s.contains("\"schema_version\":1"));
        assert!(s.contains("\"verdict\":\"noisy\""));
        assert!(!s.contains("\"caches\""));
        let back: Profile = serde_json::from_str(&s).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn a_repeated_key_at_any_depth_and_another_tool_are_refused() {
        let p = Profile::new("hwcal clock", 1);
        let good = serde_json::to_string(&p).unwrap();
        assert!(parse_profile_unchecked(good.as_bytes()).is_ok());
        // A key repeated deep inside (a nested object), not only at the top.
        let v = serde_json::json!({"a": [1, {"b": 2}]}).to_string();
        let nested = v.replace("{\"b\":2}", "{\"b\":2,\"b\":3}");
        let deep = good.replacen('{', &format!("{{\"extra\":{nested},"), 1);
        let e = parse_profile_unchecked(deep.as_bytes()).unwrap_err();
        assert!(e.contains("\"b\" appears twice"), "{e}");
        let top = good.replacen('{', "{\"command\":\"x\",", 1);
        assert!(parse_profile_unchecked(top.as_bytes())
            .unwrap_err()
            .contains("twice"));
        let other = good.replace("\"tool\":\"hwcal\"", "\"tool\":\"nothwcal\"");
        assert_ne!(other, good);
        let e = parse_profile_unchecked(other.as_bytes()).unwrap_err();
        assert!(e.contains("\"nothwcal\""), "{e}");
    }

    #[test]
    fn undefined_figures_survive_a_json_roundtrip() {
        let mut p = Profile::new("hwcal mem", 1);
        p.mem = Some(MemResult {
            clk_per_op: f64::NAN,
            total_clk: f64::NAN,
            per_thread: vec![MemThread {
                clk_per_op: f64::NAN,
                ..Default::default()
            }],
            ..Default::default()
        });
        p.clock = Some(ClockResult {
            expression_cycles: vec![ExpressionCycles {
                expression: "p=*p".into(),
                ns: f64::INFINITY,
                cycles: f64::NAN,
            }],
            ..Default::default()
        });
        p.memory = Some(MemoryLatency {
            mlp: vec![MlpPoint {
                chains: 2,
                ns_per_load: f64::NAN,
                speedup: f64::NAN,
            }],
            ..Default::default()
        });
        let s = serde_json::to_string(&p).unwrap();
        let back: Profile = serde_json::from_str(&s).unwrap();
        assert!(back.mem.unwrap().clk_per_op.is_nan());
        assert!(back.clock.unwrap().expression_cycles[0].ns.is_nan());
    }
}

//! The hwcal data model: every figure hwcal measures, as plain serde types.
//!
//! This is the JSON schema users' cost models read (`schema_version` 1). Field
//! names carry their unit (`latency_ns`, `size_bytes`, `core_mhz`) so a figure
//! can never be read in the wrong unit. Sections a command did not measure are
//! absent from the JSON (not `null`); figures inside a measured section that
//! could not be determined are `null`.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

pub mod cores;
pub mod curve;
pub mod figure;
pub mod note;
pub mod plausible;
/// Synthetic profiles for tests (feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
pub mod sample;
mod units;

pub use cores::Midr;
pub use figure::{Direction, Figure, FigureUnit};
pub use note::{Note, Severity};
pub use units::{axis_bytes, human_bytes, measured_bytes, parse_size};
#[cfg(feature = "schema")]
pub mod schema;

/// Figures that can be undefined (no sample, a clock not measured) are NaN
/// in memory. JSON has no NaN: serde_json writes it as `null`, and these
/// fields read `null` back as NaN, so every profile hwcal writes can be read
/// again (by `hwcal analyze`, `hwcal db import`, the database).
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A list of figures whose NaN members were written as `null`.
fn nan_vec<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    Ok(Vec::<Option<f64>>::deserialize(d)?
        .into_iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

/// [`nan_vec`] for a list of lists.
fn nan_vec_vec<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Vec<f64>>, D::Error> {
    Ok(Vec::<Vec<Option<f64>>>::deserialize(d)?
        .into_iter()
        .map(|r| r.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
        .collect())
}

/// The schema of a field read with [`nan_if_null`]: a number, or `null`
/// where the figure is undefined (NaN in memory). Unlike `Option<f64>` the
/// key itself stays required, as serde requires it.
#[cfg(feature = "schema")]
struct NanOrNumber;

#[cfg(feature = "schema")]
impl schemars::JsonSchema for NanOrNumber {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NanOrNumber".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": ["number", "null"],
            "format": "double",
        })
    }
}

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

/// Noise verdict attached to a measured figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Repetitions agreed within the tolerance.
    #[default]
    Ok,
    /// Repetitions did not agree even after retries: the figure is unreliable.
    Noisy,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Noisy => "noisy",
        }
    }
    /// `Noisy` if either is noisy.
    pub fn and(self, other: Verdict) -> Verdict {
        if self == Verdict::Noisy || other == Verdict::Noisy {
            Verdict::Noisy
        } else {
            Verdict::Ok
        }
    }
}

/// Order statistics of a set of samples, in the samples' own unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Spread {
    /// Number of samples.
    pub n: usize,
    /// Smallest sample, in the unit the field holding this spread names.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub min: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub median: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub max: f64,
    /// Median absolute deviation from the median (unscaled).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub mad: f64,
}

impl Spread {
    /// MAD relative to the median, in percent (0 when the median is 0).
    pub fn rel_mad_pct(&self) -> f64 {
        if self.median.abs() > 0.0 {
            100.0 * self.mad / self.median.abs()
        } else {
            0.0
        }
    }
}

/// What the machine says about itself (OS, CPUID, sysfs). Nothing here is measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MachineInfo {
    pub hostname: String,
    pub arch: String,
    pub cpu_vendor: String,
    pub cpu_model_name: String,
    pub cpu_family: Option<u32>,
    pub cpu_model: Option<u32>,
    pub cpu_stepping: Option<u32>,
    pub logical_cpus: usize,
    pub online_cpus: Vec<usize>,
    pub kernel: String,
    pub hypervisor: Option<String>,
    /// Transparent huge pages mode: `always`, `madvise` or `never`.
    pub thp_mode: Option<String>,
    pub hugepages_reserved: u64,
    pub hugepage_size_bytes: Option<u64>,
    pub numa_nodes: Vec<NumaNode>,
    pub memory_total_bytes: u64,
    pub memory_available_bytes: u64,
    pub invariant_tsc: bool,
    pub cpu_flags: Vec<String>,
    pub nominal_caches: Vec<NominalCache>,
    /// Data TLBs as CPUID describes them (absent in older profiles).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nominal_tlbs: Vec<NominalTlb>,
    /// Which machine this is, for telling machines apart in a fleet (absent
    /// in older profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<MachineIdentity>,
    /// Arm: the MIDR_EL1 fields (implementer, variant, part, revision) that
    /// name the core; absent on x86 and in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub midr: Option<Midr>,
    /// Base page size, bytes (`sysconf(_SC_PAGESIZE)`: 4 KiB on x86, 4, 16
    /// or 64 KiB on Arm); absent in older profiles (which were 4 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_bytes: Option<u64>,
    /// Huge page sizes the kernel offers (`/sys/kernel/mm/hugepages/`),
    /// ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hugepage_sizes: Vec<u64>,
    /// Arm: the smallest data cache line of the hierarchy, from CTR_EL0's
    /// DminLine field (4 << DminLine bytes); the nominal line size where
    /// sysfs states none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dminline_bytes: Option<u64>,
    /// Set when hwcal runs under an emulator (QEMU user mode): what was
    /// detected. Timing figures of such a run describe the emulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<String>,
}

/// A machine's identity: a stable id and what the platform says it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MachineIdentity {
    /// A stable, non-reversible id (hex digest), the same on every run on
    /// this machine.
    pub machine_id: String,
    /// What the id was derived from: `dmi-product-uuid`, `machine-id` or
    /// `hostname` (the last is not unique across a fleet).
    pub id_source: String,
    /// The core generation (`Zen 3`, `Emerald Rapids`, `Neoverse N1`, ...;
    /// `unknown` where hwcal's table does not know the core).
    pub core: String,
    /// The platform's product name where it states one (DMI product name:
    /// a cloud instance type, a server model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
}

impl MachineInfo {
    /// Whether the machine is an Arm one (its x86-only fields, the
    /// invariant TSC and CPUID family/model, mean nothing there).
    pub fn is_arm(&self) -> bool {
        self.arch == "aarch64" || self.arch == "arm" || self.midr.is_some()
    }

    /// The core generation from MIDR_EL1 on Arm, from vendor/family/model
    /// on x86; `None` where the tables do not know it.
    pub fn core_name(&self) -> Option<&'static str> {
        match &self.midr {
            Some(m) => m.core(),
            None => cores::x86_core(&self.cpu_vendor, self.cpu_family?, self.cpu_model?),
        }
    }

    /// Nominal data (or unified) cache at a level, as sysfs/CPUID state it.
    pub fn nominal_data_cache(&self, level: u32) -> Option<&NominalCache> {
        self.nominal_caches
            .iter()
            .find(|c| c.level == level && (c.cache_type == "Data" || c.cache_type == "Unified"))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NumaNode {
    pub node: u32,
    pub cpus: Vec<usize>,
    pub memory_bytes: Option<u64>,
}

/// A cache as the OS (sysfs) or CPUID leaf 4 describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NominalCache {
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    #[serde(rename = "type")]
    pub cache_type: String,
    pub size_bytes: u64,
    pub line_bytes: Option<u64>,
    pub ways: Option<u64>,
    pub sets: Option<u64>,
    /// CPUs sharing this cache (from `shared_cpu_list`).
    pub shared_cpus: Vec<usize>,
    /// `sysfs` or `cpuid`.
    pub source: String,
}

/// A data TLB as CPUID describes it (Intel leaf 0x18, AMD leaves
/// 0x8000_0005/6), or as a per-core table corrects it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NominalTlb {
    pub level: u32,
    pub page_bytes: u64,
    pub entries: u64,
    /// Associativity; `None` for fully associative or unknown.
    pub ways: Option<u64>,
    /// `cpuid`, or `table` where a known core's CPUID understates.
    pub source: String,
}

/// How the timing harness was set up for this run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HarnessInfo {
    /// `tsc`, `cntvct` or `clock_monotonic_raw`.
    pub timer: String,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub timer_resolution_ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub timer_overhead_ns: f64,
    pub tsc_mhz: Option<f64>,
    /// Arm: the generic counter's frequency in use, MHz (CNTFRQ_EL0, or
    /// the rate measured against `CLOCK_MONOTONIC_RAW` where the register
    /// disagrees with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_mhz: Option<f64>,
    /// Arm: what CNTFRQ_EL0 stated, recorded only where it disagreed with
    /// the measured rate by more than 1% (and was therefore not used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_stated_mhz: Option<f64>,
    /// CPU the measuring thread was pinned to, if any.
    pub pinned_cpu: Option<usize>,
    /// Timing interval the harness considered long enough (lmbench's `enough`).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub enough_ns: f64,
}

/// `hwcal clock`: the core clock, by two methods, and the TSC.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClockResult {
    /// Best estimate of the core clock (median of the chain over all batches).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub core_mhz: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub core_mhz_min: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub core_mhz_max: f64,
    /// Dependent chain of 1-cycle adds (median over the batches the GCD
    /// method accepted, so it compares with `gcd_mhz`).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub chain_mhz: f64,
    /// The mhz paper's GCD of nine expressions (median over accepted batches).
    pub gcd_mhz: Option<f64>,
    /// Relative difference between the methods, measured round by round (median, %).
    pub agreement_pct: Option<f64>,
    pub tsc_mhz: Option<f64>,
    pub verdict: Verdict,
    /// Rounds of the GCD method accepted by the min/next-min test, out of attempted.
    pub gcd_rounds_accepted: u32,
    pub gcd_rounds_attempted: u32,
    /// Cycles of each of the nine expressions, as the GCD fit assigns them.
    #[serde(default)]
    pub expression_cycles: Vec<ExpressionCycles>,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub duration_ms: f64,
    /// A 95% interval of `core_mhz` (distribution-free, from the order
    /// statistics of the batches' chain clocks). Absent under 6 batches
    /// and in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_mhz_ci95: Option<[f64; 2]>,
}

/// Raw data of `hwcal clock`: batches of interleaved rounds. In each round
/// every expression and the add chain (at N and 2N iterations) was timed once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClockRaw {
    /// The expressions' text, in column order.
    pub expressions: Vec<String>,
    /// Dependent adds in the chain's N block.
    pub chain_adds: u64,
    pub batches: Vec<ClockBatch>,
    pub tsc_mhz: Option<f64>,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub duration_ms: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClockBatch {
    /// `expr_ns[e][r]`: ns per expression instance of expression `e` in round `r`.
    #[serde(deserialize_with = "nan_vec_vec")]
    pub expr_ns: Vec<Vec<f64>>,
    /// ns for the chain's N and 2N blocks, per round.
    #[serde(deserialize_with = "nan_vec")]
    pub chain_n_ns: Vec<f64>,
    #[serde(deserialize_with = "nan_vec")]
    pub chain_2n_ns: Vec<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExpressionCycles {
    pub expression: String,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub cycles: f64,
}

/// One detected cache level (Calibrator meaning of every figure).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CacheLevel {
    pub level: u32,
    /// Effective capacity: where this level's latency plateau ends.
    pub size_bytes: u64,
    pub line_bytes: Option<u64>,
    /// Load-to-use latency of a hit in this level.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub latency_ns: f64,
    pub latency_cycles: Option<f64>,
    /// Extra cost of missing this level (plateau(i+1) - plateau(i)).
    pub miss_latency_ns: Option<f64>,
    pub miss_latency_cycles: Option<f64>,
    /// Cost per miss when misses come back to back.
    pub replace_time_ns: Option<f64>,
    pub replace_time_cycles: Option<f64>,
    /// What sysfs/CPUID says, `null` if unknown.
    pub nominal_size_bytes: Option<u64>,
    pub nominal_line_bytes: Option<u64>,
    pub verdict: Verdict,
    /// The working sets at which 10% and 90% of the loads miss this level:
    /// how wide its edge is (page colouring on 4 KiB pages, a shared
    /// level's varying share). Absent in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge_start_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge_end_bytes: Option<u64>,
    /// How the line size was measured: `clflush` (the granule a flush
    /// evicts) or `pairs` (dependent pairs of loads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_method: Option<String>,
    /// A 95% interval of `latency_ns`: the level re-derived from the
    /// sweep with its own point-to-point scatter resampled (a residual
    /// bootstrap, see `hwcal_analysis::cache`). Absent in older profiles
    /// and where no plateau of the sweep shows any scatter to resample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns_ci95: Option<[f64; 2]>,
    /// A 95% interval of `size_bytes`, by the same bootstrap (on base
    /// pages the page placements of the colour edge are resampled too, and
    /// a colour-fitted size's interval spans at least one colour). It
    /// says how well this run pinned the size down; a shared level's share
    /// can still move between runs. Absent where the size is a lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes_ci95: Option<[u64; 2]>,
}

/// Latency of main memory (the plateau past the last cache).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MemoryLatency {
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub latency_ns: f64,
    pub latency_cycles: Option<f64>,
    /// Whether the buffer was backed by huge pages (verified).
    pub huge_pages: bool,
    /// Smallest working set whose latency is within 10% of memory's: what
    /// all caches together hold for this CPU, i.e. the effective reach of
    /// the last level (compare with its nominal size; on a VM sharing a
    /// large L3 it is often a small fraction). `null` if not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_reach_bytes: Option<u64>,
    /// Memory-level parallelism: speed-up of k independent chases over one.
    #[serde(default)]
    pub mlp: Vec<MlpPoint>,
    pub verdict: Verdict,
    /// On 4 KiB pages: the part of `latency_ns` that is TLB misses (from
    /// the measured TLB levels at the same page count), so that
    /// `latency_ns - tlb_share_ns` is the memory's own latency. Absent with
    /// huge pages the TLB sees, and in older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb_share_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb_share_cycles: Option<f64>,
    /// A 95% interval of `latency_ns` (the residual bootstrap of the
    /// cache levels', or the `mem` chase's slices). Absent in older
    /// profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns_ci95: Option<[f64; 2]>,
    /// Which measurement the figure is (the consistency stage picks one
    /// per run): `cache sweep` (the memory plateau of the cache probe's
    /// sweep) or `mem chase` (the `mem` section's dedicated chase). Absent
    /// in older profiles (the cache sweep's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The working set the figure was measured over, bytes (for the cache
    /// sweep, the largest size on its memory plateau). Absent in older
    /// profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// Memory latency without page walks, measured: the same buffer chased
    /// window by window, each window's pages few enough for the
    /// second-level TLB to hold them (`hwcal run`'s `mem` section). Where
    /// present, `tlb_share_ns` is `latency_ns` minus this (measured, not
    /// modelled). Absent in older profiles and where the chase did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_no_walks_ns: Option<f64>,
    /// Every measurement of memory latency the run made, the reported one
    /// among them (the consistency stage compares them). Empty in older
    /// profiles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<MemoryMeasure>,
}

/// One measurement of memory latency (see [`MemoryLatency::measures`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MemoryMeasure {
    /// `cache sweep` or `mem chase` (as [`MemoryLatency::source`]).
    pub source: String,
    /// The working set, bytes (the largest on the sweep's plateau).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub latency_ns: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns_ci95: Option<[f64; 2]>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MlpPoint {
    pub chains: u32,
    /// Average time per load across all chains.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ns_per_load: f64,
    /// Speed-up over one chain.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub speedup: f64,
}

/// One detected TLB level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TlbLevel {
    pub level: u32,
    pub page_bytes: u64,
    /// Pages the level maps: where a quarter (first level) or half (later
    /// levels) of the accesses miss it; see `hwcal_analysis::tlb::levels`.
    pub entries: u64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub miss_latency_ns: f64,
    pub miss_latency_cycles: Option<f64>,
    pub verdict: Verdict,
    /// The page counts where the step is 10% and 75% of the way up (how
    /// wide the transition is; absent in older profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries_low: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries_high: Option<u64>,
    /// Which baseline the step was measured against: `huge_pages` (the
    /// same lines in 2 MiB pages the TLB sees) or `dense` (as many lines
    /// packed side by side). Absent in older profiles (huge pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// What CPUID (or the per-core table) says this level holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominal_entries: Option<u64>,
}

/// One access per page over `pages` pages in random order, timed with 4 KiB
/// pages and with the same lines in huge pages (no TLB misses): the
/// difference is what the TLB costs at that working set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TlbHugePageComparison {
    pub pages: u64,
    /// Address range the pages span with 4 KiB pages.
    pub span_bytes: u64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub small_pages_ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub huge_pages_ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub penalty_ns: f64,
    pub penalty_cycles: Option<f64>,
}

/// `hwcal mem` (micbench-mem): one memory access benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MemResult {
    /// `random` (dependent chase) or `sequential`.
    pub access_pattern: String,
    /// `read`, `write` or `copy` for sequential; `chase` for random.
    pub op: String,
    /// Threads (micbench's multiplicity, `-m`).
    pub threads: u32,
    /// One buffer per thread (micbench's `local`).
    pub local: bool,
    pub size_bytes: u64,
    pub page_size_bytes: u64,
    /// Whether huge pages were asked for (micbench's key).
    pub use_hugepages: bool,
    /// Loads or stores of one cache line, all threads (micbench's key, a count).
    pub total_ops: u64,
    /// Core cycles (from the clock measured alongside), all threads.
    /// micbench's key name, kept for compatibility (its unit is core clock
    /// cycles, `clk`); `null` when the clock was not measured.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub total_clk: f64,
    /// TSC ticks, all threads (what micbench calls clk).
    pub total_tsc: Option<f64>,
    /// Timed wall time, seconds (micbench's `exec_time`).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub exec_time_s: f64,
    /// Ops per second, all threads (micbench's key).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ops_per_sec: f64,
    /// Wall time per op, ns (mean; `null` if undefined).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ns_per_op: f64,
    /// Core clock cycles per op. micbench-mem's key, kept for compatibility
    /// with micbench output and scripts (`clk` is the unit: core cycles);
    /// micbench itself counted TSC ticks here, which hwcal reports as
    /// `tsc_per_op`. `null` when the clock was not measured.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub clk_per_op: f64,
    /// TSC ticks per op (micbench's own `clk_per_op`); `null` without a TSC.
    pub tsc_per_op: Option<f64>,
    /// Bytes moved per second, all threads (micbench's key).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub bytes_per_sec: f64,
    #[serde(default)]
    pub per_thread: Vec<MemThread>,
    pub verdict: Verdict,
    /// Streaming kernel used: `avx512`, `avx2` or `scalar` (random: `chase`).
    #[serde(default)]
    pub kernel: String,
    /// Sequential write/copy with non-temporal (streaming) stores.
    #[serde(default)]
    pub nontemporal: bool,
    /// Bytes one op moves (one cache line).
    #[serde(default)]
    pub bytes_per_op: u64,
    /// Share of the buffer(s) verified to be on huge pages (smaps), 0..1.
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub huge_fraction: f64,
    /// The TSC rate used for `total_tsc`, MHz.
    #[serde(default)]
    pub tsc_mhz: Option<f64>,
    /// Core clock readings taken between slices, MHz.
    #[serde(default)]
    pub core_mhz: Option<Spread>,
    /// ns per op of each ~20 ms slice, over all threads: a wide spread means
    /// the machine was busy (the mean above includes the disturbed slices).
    #[serde(default)]
    pub slice_ns_per_op: Option<Spread>,
    /// Involuntary context switches of the measuring threads while timed.
    #[serde(default)]
    pub preemptions: Option<u64>,
    /// ns per op counting only the time the threads were on their CPUs
    /// (thread CPU clock): what the memory costs when other processes
    /// time-slice the CPU.
    #[serde(default)]
    pub oncpu_ns_per_op: Option<f64>,
    #[serde(default)]
    pub oncpu_clk_per_op: Option<f64>,
    /// Share of the timed wall time the threads were on their CPUs, 0..1.
    #[serde(default)]
    pub oncpu_fraction: Option<f64>,
    /// Buffer setup (map, touch, link), wall seconds.
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub setup_s: f64,
    /// Whole command, wall seconds (micbench's total_exec_time).
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub total_exec_time_s: f64,
    /// NUMA nodes with memory on this machine.
    #[serde(default)]
    pub numa_nodes: u32,
    /// Independent chases per thread (random); 1 = pure latency.
    #[serde(default)]
    pub chains: u32,
    /// Latency from each CPU node to each memory node (random chase).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa_matrix: Vec<NumaLatency>,
}

/// One cell of the NUMA latency matrix.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NumaLatency {
    pub cpu_node: u32,
    pub cpu: usize,
    pub mem_node: u32,
    /// Latency, ns per load (`null` if undefined).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ns_per_op: f64,
    /// Core cycles per load (micbench's key name, kept for compatibility).
    pub clk_per_op: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MemThread {
    pub tid: u32,
    pub cpu: Option<usize>,
    pub node: Option<u32>,
    /// This thread's ops (a count).
    pub ops: u64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub exec_time_s: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ops_per_sec: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub ns_per_op: f64,
    /// Core cycles per op (micbench's key name, kept for compatibility;
    /// `null` when the clock was not measured).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub clk_per_op: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub bytes_per_sec: f64,
    /// TSC ticks per op (micbench's clk_per_op).
    #[serde(default)]
    pub tsc_per_op: Option<f64>,
    /// Median core clock of this thread's slices, MHz.
    #[serde(default)]
    pub core_mhz: Option<f64>,
    /// What the thread did: `chase`, `read`, `write` or `copy`.
    #[serde(default)]
    pub work: String,
    #[serde(default)]
    pub preemptions: Option<u64>,
    #[serde(default)]
    pub oncpu_ns_per_op: Option<f64>,
}

/// Sequential bandwidth summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Bandwidth {
    pub read_bytes_per_sec: Option<f64>,
    pub write_bytes_per_sec: Option<f64>,
    pub copy_bytes_per_sec: Option<f64>,
    /// Threads used for the figures above.
    pub threads: u32,
    pub size_bytes: u64,
    /// Read bandwidth by thread count (1..N).
    #[serde(default)]
    pub scaling: Vec<BandwidthPoint>,
    /// Latency of a chasing thread while the others stream.
    #[serde(default)]
    pub loaded_latency: Vec<LoadedLatencyPoint>,
    /// Streaming kernel: `avx512`, `avx2` or `scalar`.
    #[serde(default)]
    pub kernel: String,
    /// Stores used by write and copy: `regular` (read-for-ownership, then
    /// write-back) or `non-temporal` (streaming, bypassing the caches).
    #[serde(default)]
    pub stores: String,
    /// Memory-level parallelism: one thread following k independent chases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mlp: Vec<MlpPoint>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BandwidthPoint {
    pub threads: u32,
    pub op: String,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub bytes_per_sec: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LoadedLatencyPoint {
    pub streaming_threads: u32,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub latency_ns: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub stream_bytes_per_sec: f64,
    #[serde(default)]
    pub latency_cycles: Option<f64>,
}

/// `hwcal ctx` (lmbench lat_ctx).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextSwitch {
    /// `same`, `spread` or `none`.
    pub placement: String,
    /// `processes` or `threads`.
    pub kind: String,
    /// KB of array each member sums per hop (lat_ctx's `-s`, in KB as lat_ctx has it).
    pub size_kb: u64,
    /// Rings running at once (lat_ctx's `-P`).
    pub parallel: u32,
    /// Per-hop overhead subtracted from every sample (passing the token and
    /// summing the array without switching), µs: what lat_ctx prints as
    /// `ovr` in its xgraph titles (`size=0k ovr=0.58`); the JSON key carries
    /// the unit, the text output keeps lat_ctx's `ovr`.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub overhead_us: f64,
    /// One point per ring size, for `size_kb`.
    pub points: Vec<CtxPoint>,
    /// Further sizes, when more than one `-s` was measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<CtxSize>,
    /// CPUs the ring members were placed on (ring member `i` on
    /// `cpus[i % cpus.len()]`); empty when unpinned.
    #[serde(default)]
    pub cpus: Vec<usize>,
    /// Discarded warm-up rounds (`-W`).
    #[serde(default)]
    pub warmups: u32,
    /// Timed samples per point (`-N`).
    #[serde(default)]
    pub repetitions: u32,
    /// Wall time of the whole measurement.
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub duration_ms: f64,
    /// The overhead in core cycles (each sample converted with the clock
    /// measured alongside it), when the clock was tracked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_cycles: Option<f64>,
}

impl ContextSwitch {
    /// Every measured size, the first (top-level) one included.
    pub fn all_sizes(&self) -> Vec<CtxSize> {
        let mut v = vec![CtxSize {
            size_kb: self.size_kb,
            overhead_us: self.overhead_us,
            overhead_cycles: self.overhead_cycles,
            points: self.points.clone(),
        }];
        v.extend(self.sizes.iter().cloned());
        v
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CtxSize {
    /// KB of array per member (lat_ctx's `-s`).
    pub size_kb: u64,
    /// Overhead subtracted, µs (lat_ctx's `ovr`).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub overhead_us: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_cycles: Option<f64>,
    pub points: Vec<CtxPoint>,
}

/// Context switches per ring member per round trip, counted by the kernel
/// (`voluntary_ctxt_switches` / `nonvoluntary_ctxt_switches` in
/// `/proc/<pid>/status`) over the timed samples. A member that blocks in
/// `read` switches out once per trip (voluntary). When waking the next
/// member preempts the writer before it reaches its own `read`, the writer
/// switches out once more (involuntary) and later runs again only to block:
/// that hop costs two switches where lat_ctx assumes one. The probe counts
/// them; the analysis turns them into [`CtxPoint::switches_per_hop`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwitchCount {
    pub voluntary: f64,
    pub involuntary: f64,
}

impl SwitchCount {
    /// Switches per hop: every hop enters one member, and each member
    /// leaves the CPU this many times per trip.
    pub fn per_hop(&self) -> f64 {
        self.voluntary + self.involuntary
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CtxPoint {
    /// Processes (or threads) in the ring, the timing one included.
    pub nprocs: u32,
    /// Fastest sample's time per hop, µs. The `us_` prefix instead of a
    /// `_us` suffix is lat_ctx's naming, kept for compatibility with
    /// lat_ctx-based tooling (as are `us_median`, `us_mad`, `us_max`).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub us_min: f64,
    /// Median time per hop, µs: lat_ctx's "context switch" figure (what its
    /// xgraph lines print). Legacy lat_ctx name, kept for compatibility.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub us_median: f64,
    /// Median absolute deviation of the per-hop samples, µs (unscaled).
    /// Legacy lat_ctx-style name, kept for compatibility.
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub us_mad: f64,
    pub verdict: Verdict,
    /// Slowest sample's time per hop, µs. Legacy lat_ctx-style name, kept
    /// for compatibility.
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub us_max: f64,
    /// Samples behind the figures.
    #[serde(default)]
    pub samples: usize,
    /// True when, in at least one sample, the overhead was at least the
    /// measured time per hop: such samples count as 0, never negative. If
    /// even `us_median` is 0, the switch cost is below what the run resolved.
    #[serde(default)]
    pub overhead_exceeds: bool,
    /// Median switch time in core cycles: each sample converted with the
    /// core clock measured alongside it, so the figure does not move with
    /// the clock drift that moves the µs figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_median: Option<f64>,
    /// Context switches per hop, counted by the kernel over the timed
    /// samples (members' voluntary + involuntary switches per round trip).
    /// 1.0 when every hop is one switch; more when waking the next member
    /// preempts the writer, which then has to run again just to block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switches_per_hop: Option<f64>,
    /// Of those, the involuntary ones (the writer preempted by the member
    /// it woke).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempted_per_hop: Option<f64>,
    /// `us_median / switches_per_hop`: the cost of one switch, where
    /// lat_ctx's figure is the cost of one hop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_per_switch: Option<f64>,
    /// A 95% confidence interval of `us_median` (distribution-free, from
    /// the order statistics of the samples); absent under 6 samples and in
    /// older profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_median_ci95: Option<[f64; 2]>,
}

/// `hwcal io` (micbench-io / fio).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IoResult {
    /// Access pattern, fio's `rw=` values (`read`, `randread`, `randrw`, ...).
    pub rw: String,
    /// Percentage of reads in a mixed pattern (fio's `rwmixread`, kept
    /// under fio's name; a percentage, 0..100); `null` for pure patterns.
    pub rwmix_read: Option<u32>,
    pub bs_bytes: u64,
    pub size_bytes: u64,
    /// fio's `ioengine=` value: `sync`, `psync` or `io_uring`.
    pub engine: String,
    /// I/Os in flight per thread (fio's `iodepth`, a count).
    pub iodepth: u32,
    pub threads: u32,
    pub direct: bool,
    pub path: String,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub runtime_s: f64,
    /// I/Os per second (fio's name; the unit is in the name).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub iops: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub bytes_per_sec: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_min_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p50_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p99_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p999_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_max_us: f64,
    #[serde(default)]
    pub per_thread: Vec<IoThread>,
    /// Completed I/Os, all threads (reads + writes).
    #[serde(default)]
    pub ios: u64,
    #[serde(default)]
    pub read_ios: u64,
    #[serde(default)]
    pub write_ios: u64,
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_mean_us: f64,
    /// `-t` if time-bound; absent when size-bound (one pass over the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_s: Option<f64>,
    /// Whether hwcal created (and removed) the test file, or used an
    /// existing file or device.
    #[serde(default)]
    pub created_file: bool,
    /// IOPS of each 1-second interval of the run (all threads), to show how
    /// steady the device was; empty for runs shorter than a second.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "nan_vec")]
    pub iops_intervals: Vec<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IoThread {
    pub tid: u32,
    pub ios: u64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub iops: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub bytes_per_sec: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p50_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p99_us: f64,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_min_us: f64,
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_p999_us: f64,
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub lat_max_us: f64,
}

/// A raw measured curve: x values (e.g. working-set bytes) and y values
/// (e.g. ns per load), kept so the analysis can be re-run offline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RawCurve {
    /// Stable identifier, e.g. `cache.latency`, `tlb.4k`, `tlb.4k.baseline`.
    pub id: String,
    pub x_label: String,
    pub y_label: String,
    pub points: Vec<RawPoint>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RawPoint {
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub x: f64,
    /// The figure of record for this point (minimum or median, per probe).
    #[serde(deserialize_with = "nan_if_null")]
    #[cfg_attr(feature = "schema", schemars(with = "NanOrNumber"))]
    pub y: f64,
    /// Every repetition, in the same unit as `y`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "nan_vec")]
    pub samples: Vec<f64>,
    /// Core MHz measured alongside each sample, when recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "nan_vec")]
    pub mhz: Vec<f64>,
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

    #[test]
    fn nominal_cache_type_field_is_named_type() {
        let c = NominalCache {
            level: 1,
            cache_type: "Data".into(),
            size_bytes: 49152,
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["type"], "Data");
    }
}

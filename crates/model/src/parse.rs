//! Reading a profile from JSON bytes: the schema version checked first
//! (without building a value tree), a key repeated in any object refused,
//! the tool checked, and (in [`parse_profile`]) every figure checked for
//! plausibility.

use crate::plausible;
use crate::profile::{Profile, SCHEMA_VERSION};
use serde::Deserialize;

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
}

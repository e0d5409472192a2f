//! Named figures: a probe's results as `{probe, id, name, value, unit,
//! better, verdict}`, for a probe whose figures have no typed section of
//! their own in the profile. The text summary, the HTML report and the
//! comparison of two runs render them generically (hyperfine's exporters
//! likewise render any benchmark's results from one list), so a new probe
//! needs no edit in any of them. `id` is stable (`{probe}.{what}`, like a
//! note's code): the comparison matches figures of two runs by it.

use crate::Verdict;
use serde::{Deserialize, Serialize};

/// The unit of a figure (decides how it is printed and compared).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FigureUnit {
    Ns,
    Cycles,
    Us,
    Mhz,
    Bytes,
    BytesPerSec,
    Count,
    Iops,
    /// A plain factor (a speed-up, a ratio).
    Factor,
}

/// Which direction of a figure is the faster machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Higher,
    Lower,
    /// Descriptive: neither direction is better.
    #[default]
    Neither,
}

/// One named figure of a probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Figure {
    /// The registry id of the probe that measured it.
    pub probe: String,
    /// Stable identifier, `{probe}.{what}`.
    pub id: String,
    /// What it is, as printed (e.g. `mispredict cost`).
    pub name: String,
    /// `null` where not measured.
    pub value: Option<f64>,
    pub unit: FigureUnit,
    #[serde(default)]
    pub better: Direction,
    #[serde(default)]
    pub verdict: Verdict,
    /// The 95% interval of `value` from this run's own repetitions (the
    /// median's order-statistic interval over its batches), where there
    /// were enough of them; comparisons judge a difference by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
}

impl Figure {
    /// A figure of `probe` (id `{probe}.{what}`), verdict ok.
    pub fn new(
        probe: &str,
        what: &str,
        name: &str,
        value: f64,
        unit: FigureUnit,
        better: Direction,
    ) -> Figure {
        Figure {
            probe: probe.into(),
            id: format!("{probe}.{what}"),
            name: name.into(),
            value: value.is_finite().then_some(value),
            unit,
            better,
            verdict: Verdict::Ok,
            ci95: None,
        }
    }
}

/// Replace every figure of `probe` by `fresh` (a re-analysis recomputes
/// them all).
pub fn refresh(figures: &mut Vec<Figure>, probe: &str, fresh: Vec<Figure>) {
    figures.retain(|f| f.probe != probe);
    figures.extend(fresh);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_round_trip_and_refresh() {
        let f = Figure::new(
            "branch",
            "cost",
            "mispredict cost",
            15.0,
            FigureUnit::Ns,
            Direction::Lower,
        );
        let json = serde_json::to_string(&f).unwrap();
        assert!(json.contains("\"id\":\"branch.cost\"") && json.contains("\"unit\":\"ns\""));
        assert_eq!(serde_json::from_str::<Figure>(&json).unwrap(), f);
        let nan = Figure::new("x", "y", "y", f64::NAN, FigureUnit::Count, Direction::Neither);
        assert_eq!(nan.value, None);
        let mut v = vec![f.clone(), nan.clone()];
        refresh(&mut v, "branch", vec![]);
        assert_eq!(v, [nan]);
    }
}

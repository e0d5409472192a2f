//! One compared figure ([`Row`]): its two sides, B / A, and the verdict on
//! B against A (better, worse, or no verdict where either side is noisy or
//! the ratio is within [`VERDICT_THRESHOLD`]); and the whole
//! [`Comparison`] of two runs.

use hwcal_model::{Direction, FigureUnit};

/// One compared figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `clock`, `caches`, `memory`, `tlbs`, `mem`, `bandwidth`, `ctx`, `io`.
    pub section: &'static str,
    /// What is compared, e.g. `L2 latency`.
    pub figure: String,
    pub unit: FigureUnit,
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub better: Direction,
    /// The figure carries a noisy verdict on either side: its ratio is
    /// shown, but no better/worse.
    pub noisy: bool,
    /// The two figures were measured under different conditions (e.g.
    /// bandwidth at different thread counts, said in `figure`): no ratio.
    pub unlike: bool,
    /// Each side's 95% interval, where its figure carries one.
    pub a_ci: Option<[f64; 2]>,
    pub b_ci: Option<[f64; 2]>,
    /// Batches compared ([`super::compare_batches`]): how many runs each
    /// side's median is over, and the two-sided p-value of the
    /// Mann–Whitney U test between the two sides' runs. `None` for two
    /// single runs.
    pub runs: Option<[usize; 2]>,
    pub p_value: Option<f64>,
    /// Two runs of one machine ([`super::with_history`]): the range the
    /// figure spans over that machine's stored runs, and how many.
    pub usual: Option<([f64; 2], usize)>,
}

/// The verdict on one row, B against A.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Better,
    Worse,
    /// A noisy figure on either side: no verdict either way.
    Noisy,
    /// Both sides carry an interval and the intervals overlap: no
    /// significant change (benchstat's `~`), whatever the ratio.
    Same,
}

impl Row {
    /// A row of `figure` with nothing measured yet: no values, intervals,
    /// batch counts or history (the comparisons fill in what they have).
    pub fn new(section: &'static str, figure: impl Into<String>, unit: FigureUnit, better: Direction) -> Row {
        Row {
            section,
            figure: figure.into(),
            unit,
            a: None,
            b: None,
            better,
            noisy: false,
            unlike: false,
            a_ci: None,
            b_ci: None,
            runs: None,
            p_value: None,
            usual: None,
        }
    }

    /// B / A when both are finite, A is not zero and the two were measured
    /// alike.
    pub fn ratio(&self) -> Option<f64> {
        match (self.a, self.b) {
            (Some(a), Some(b)) if !self.unlike && a.is_finite() && b.is_finite() && a != 0.0 => Some(b / a),
            _ => None,
        }
    }

    /// The row's verdict: [`Mark::Noisy`] where either side is noisy and
    /// both were measured (and the figure has a better direction at all);
    /// else, where both sides carry a 95% interval, [`Mark::Same`] when
    /// they overlap and better/worse ([`Row::b_is_better`]) when they do
    /// not; no verdict where a side has no interval (nothing says the
    /// difference is more than one run's scatter). Batches: [`SIGNIFICANCE`]
    /// of a rank test instead.
    pub fn mark(&self, threshold: f64) -> Option<Mark> {
        if let Some(p) = self.p_value {
            return self.batch_mark(p, threshold);
        }
        if self.noisy && self.ratio().is_some() && self.better != Direction::Neither {
            return Some(Mark::Noisy);
        }
        // Both inside the range the machine's own runs span: its usual
        // run-to-run variation (another draw of pages, a vCPU placed on
        // another core), which one run's interval cannot know.
        if let (Some(([lo, hi], _)), Some(a), Some(b)) = (self.usual, self.a, self.b) {
            if self.better != Direction::Neither && [a, b].iter().all(|v| (lo..=hi).contains(v)) {
                return Some(Mark::Same);
            }
        }
        match self.overlap() {
            Some(true) if self.better != Direction::Neither => Some(Mark::Same),
            // Intervals apart: better/worse where the ratio is past the
            // practical threshold as well.
            Some(false) => self
                .b_is_better(threshold)
                .map(|b| if b { Mark::Better } else { Mark::Worse }),
            // A side without an interval: one run of each cannot tell a
            // change from that run's own scatter, so no verdict (batches
            // decide by a rank test over their runs instead).
            _ => None,
        }
    }

    /// The verdict on batches: a rank test the runs could have produced
    /// by chance (p ≥ [`SIGNIFICANCE`]) is "no significant change";
    /// better/worse needs both significance and a ratio past `threshold`
    /// (a real but negligible shift gets no verdict). Most runs noisy on
    /// either side: noisy.
    fn batch_mark(&self, p: f64, threshold: f64) -> Option<Mark> {
        if self.ratio().is_none() || self.better == Direction::Neither {
            return None;
        }
        if self.noisy {
            return Some(Mark::Noisy);
        }
        if p >= SIGNIFICANCE {
            return Some(Mark::Same);
        }
        self.b_is_better(threshold)
            .map(|b| if b { Mark::Better } else { Mark::Worse })
    }

    /// Whether the two sides' 95% intervals overlap (`None` unless both
    /// carry one and the figures are comparable).
    pub fn overlap(&self) -> Option<bool> {
        let ([a0, a1], [b0, b1]) = (self.a_ci?, self.b_ci?);
        self.ratio()?;
        Some(a0 <= b1 && b0 <= a1)
    }

    /// The half-width of the ratio's 95% interval, from the two sides'
    /// (relative half-widths added in quadrature): `0.97 ± 0.03×`.
    pub fn ratio_pm(&self) -> Option<f64> {
        let r = self.ratio()?;
        let rel = |v: Option<f64>, ci: Option<[f64; 2]>| -> Option<f64> {
            let (v, [lo, hi]) = (v?, ci?);
            (v != 0.0).then(|| (hi - lo).abs() / 2.0 / v.abs())
        };
        let (ra, rb) = (rel(self.a, self.a_ci)?, rel(self.b, self.b_ci)?);
        Some(r.abs() * (ra * ra + rb * rb).sqrt())
    }

    /// `Some(true)` when B is better than A by more than `threshold`
    /// (relative, e.g. 0.05), `Some(false)` when worse by more than that,
    /// `None` when within it, not comparable, noisy on either side, or
    /// neither direction is better.
    pub fn b_is_better(&self, threshold: f64) -> Option<bool> {
        if self.noisy {
            return None;
        }
        let r = self.ratio()?;
        let (better, worse) = match self.better {
            Direction::Higher => (r > 1.0 + threshold, r < 1.0 / (1.0 + threshold)),
            Direction::Lower => (r < 1.0 / (1.0 + threshold), r > 1.0 + threshold),
            Direction::Neither => return None,
        };
        if better {
            Some(true)
        } else if worse {
            Some(false)
        } else {
            None
        }
    }
}

/// Everything two profiles have in common, figure by figure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    pub rows: Vec<Row>,
    /// Why some figures are not compared (different settings) and which
    /// sections only one side has.
    pub notes: Vec<String>,
}

/// How far B / A must be from 1 for a better/worse verdict.
pub const VERDICT_THRESHOLD: f64 = 0.05;

/// The rank test's level: a p-value below it is a significant difference
/// between two batches.
pub const SIGNIFICANCE: f64 = 0.05;

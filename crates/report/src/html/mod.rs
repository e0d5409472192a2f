//! The HTML report: one self-contained page (inline CSS, inline SVG plots,
//! no script, no external resource) that can be mailed or archived and
//! opened anywhere. A single run shows machine info, every measured
//! section's table and the curves behind them (the cache latency curve with
//! the detected levels marked, as The Calibrator's gnuplot output did; the
//! TLB curves; context switch vs processes; bandwidth vs threads). A
//! comparison overlays two runs on the same plots and tabulates B / A.
//!
//! One module per part: `widgets` (page frame, tables, figures), the
//! section tables, the plots, the summary cards, the single-run page and
//! the comparison page.

use crate::compare::machine_label;
use crate::export::{Exporter, NamedFile, ReportError};
use hwcal_model::Profile;

mod cards;
mod comparison;
mod page;
mod plots;
mod tables;
mod widgets;

pub use crate::format::esc;
pub use comparison::compare_report;
pub use page::report;
pub use plots::is_diagnostic;

pub(crate) use widgets::CSS;
/// Renders one profile as an HTML page.
#[derive(Debug, Clone, Default)]
pub struct HtmlExporter {
    /// Page title; default "hwcal report — <machine>".
    pub title: Option<String>,
}

impl Exporter for HtmlExporter {
    fn name(&self) -> &'static str {
        "html"
    }
    fn files(&self, profile: &Profile) -> Result<Vec<NamedFile>, ReportError> {
        let title = self
            .title
            .clone()
            .unwrap_or_else(|| format!("hwcal report — {}", machine_label(profile)));
        Ok(NamedFile::single(report(profile, &title).into_bytes()))
    }
}

#[cfg(test)]
mod tests;

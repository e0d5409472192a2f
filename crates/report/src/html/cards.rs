//! The summary card at the top of a report (the key figures of a run, in
//! the order a reader asks for them), the page subtitle and the notes
//! listed by severity.

use crate::format::{esc, format_utc};
use hwcal_model::*;
use std::fmt::Write;

pub(super) fn subtitle(p: &Profile) -> String {
    format!(
        "{} · measured {} · hwcal {}",
        p.command,
        format_utc(p.created_unix),
        p.tool_version
    )
}

/// One figure of the summary card: what, the value, a detail line, the
/// verdict (None where the probe gives none).
struct Card {
    key: String,
    value: String,
    detail: String,
    verdict: Option<Verdict>,
}

fn card(
    key: impl Into<String>,
    value: impl Into<String>,
    detail: impl Into<String>,
    verdict: Option<Verdict>,
) -> Card {
    Card {
        key: key.into(),
        value: value.into(),
        detail: detail.into(),
        verdict,
    }
}

/// The key figures of a run: the terminal digest's lines
/// (`text::digest_lines`), one card each, so the page and the terminal say
/// the same; a card's value is its line up to the first ` · `, the rest its
/// detail.
fn summary_cards(p: &Profile) -> Vec<Card> {
    crate::text::digest_lines(p)
        .into_iter()
        .map(|l| {
            let (value, detail) = l.text.split_once(" · ").unwrap_or((&l.text, ""));
            card(l.label, value.trim(), detail.trim(), l.verdict)
        })
        .collect()
}

pub(super) fn summary_card(p: &Profile) -> String {
    let cards = summary_cards(p);
    if cards.is_empty() {
        return String::new();
    }
    let mut s = String::from("<div class=\"cards\">\n");
    for c in cards {
        let verdict = match c.verdict {
            Some(Verdict::Ok) => " <span class=\"ok\">ok</span>".to_string(),
            Some(Verdict::Noisy) => " <span class=\"noisy\">noisy</span>".to_string(),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "<div class=\"card\"><div class=\"k\">{}{verdict}</div><div class=\"v\">{}</div><div class=\"d\">{}</div></div>",
            esc(&c.key),
            esc(&c.value),
            esc(&c.detail)
        );
    }
    s.push_str("</div>\n");
    s
}

/// Notes with their severity, warnings first (each group keeps its order).
pub(super) fn notes_with_severity(notes: &[(&str, &Note)]) -> String {
    let mut s = String::from("<ul class=\"notes\">\n");
    for want in [Severity::Warning, Severity::Info] {
        for (tag, n) in notes.iter().filter(|(_, n)| n.severity == want) {
            let (class, word) = match n.severity {
                Severity::Warning => ("warning", "warning"),
                Severity::Info => ("info", "info"),
            };
            let _ = writeln!(
                s,
                "<li class=\"{class}\"><span class=\"sev {class}\">{word}</span>{}{}</li>",
                if tag.is_empty() {
                    String::new()
                } else {
                    format!("<b>{}:</b> ", esc(tag))
                },
                esc(&n.text)
            );
        }
    }
    s.push_str("</ul>\n");
    s
}

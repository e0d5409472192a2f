//! What a buffer's pages were, said one way everywhere: what was asked
//! (huge pages or not), what the kernel granted (smaps' share of the buffer
//! in huge pages) and what the TLB saw (the TLB check: a chase that would
//! miss the TLB on 4 KiB pages and not on huge ones). The three differ on a
//! guest whose host backs its memory with 4 KiB pages: the kernel grants
//! every huge page and the TLB sees none. Every section and note that
//! speaks of a buffer's pages quotes [`statement`].

/// The one sentence for a buffer's pages. `granted`: smaps' fraction of the
/// buffer in huge pages, where read; `tlb_huge`: the TLB check's answer,
/// where made.
pub fn statement(asked: bool, granted: Option<f64>, tlb_huge: Option<bool>) -> String {
    sized(asked, granted, tlb_huge, None)
}

/// [`statement`] naming the huge page size where known (`2 MiB pages`,
/// `1 GiB pages` from hugetlbfs) instead of "huge pages".
pub fn sized(asked: bool, granted: Option<f64>, tlb_huge: Option<bool>, size: Option<u64>) -> String {
    let s = statement_of(asked, granted, tlb_huge);
    match size {
        Some(b) if s.starts_with("huge pages") => {
            s.replacen("huge pages", &format!("{} pages", crate::human_bytes(b)), 1)
        }
        _ => s,
    }
}

/// `s` (a statement above) with its "4 KiB pages" said in the machine's
/// base page where that is another (16 KiB on Apple's kernels, 64 KiB on
/// some Arm distributions'): the statements name the common case.
pub fn on_base(s: &str, base_page: Option<u64>) -> String {
    match base_page {
        Some(b) if b != 4096 => s.replace("4 KiB pages", &format!("{} pages", crate::human_bytes(b))),
        _ => s.to_string(),
    }
}

/// The same decision in a few words, for the one-line digest: `huge pages`
/// (seen by the TLB), `4 KiB pages to the TLB` (asked, but the TLB sees
/// 4 KiB pages, whatever the kernel granted), `4 KiB pages` (not asked).
pub fn brief(asked: bool, tlb_huge: Option<bool>) -> &'static str {
    match (asked, tlb_huge) {
        (true, Some(true)) => "huge pages",
        (true, Some(false)) => "4 KiB pages to the TLB",
        (true, None) => "huge pages asked",
        (false, _) => "4 KiB pages",
    }
}

fn statement_of(asked: bool, granted: Option<f64>, tlb_huge: Option<bool>) -> String {
    let share = |g: f64| format!("{:.0}% of the buffer", g * 100.0);
    match (asked, granted, tlb_huge) {
        (false, Some(g), _) if g > 0.0 => {
            format!("huge pages not asked, yet {} in them (THP always)", share(g))
        }
        (false, ..) => "4 KiB pages (huge pages not asked)".into(),
        (true, g, Some(true)) => format!(
            "huge pages, granted{} and seen by the TLB",
            g.map_or(String::new(), |g| format!(" ({} in smaps)", share(g)))
        ),
        (true, Some(g), _) if g < 0.9 => format!(
            "huge pages asked, the kernel granted {}: 4 KiB pages and their TLB misses in the rest",
            share(g)
        ),
        (true, Some(g), Some(false)) => format!(
            "huge pages asked and granted ({} in smaps), but the TLB sees 4 KiB pages (a host backing \
             this guest with 4 KiB pages): TLB misses included",
            share(g)
        ),
        (true, None, Some(false)) => {
            "huge pages asked, but the TLB sees 4 KiB pages (not granted, or a host \
                                      backing this guest with 4 KiB pages): TLB misses included"
                .into()
        }
        (true, Some(g), None) => format!("huge pages asked and granted ({} in smaps)", share(g)),
        (true, None, None) => "huge pages asked".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::{brief, sized, statement};

    #[test]
    fn a_kernel_of_other_base_pages_is_named_so() {
        let s = statement(true, None, Some(false));
        assert_eq!(super::on_base(&s, Some(4096)), s);
        let big = super::on_base(&s, Some(64 << 10));
        assert!(
            big.contains("TLB sees 64 KiB pages") && !big.contains(" 4 KiB"),
            "{big}"
        );
        assert_eq!(
            super::on_base("4 KiB pages to the TLB", None),
            "4 KiB pages to the TLB"
        );
    }

    #[test]
    fn asked_granted_and_seen_are_told_apart() {
        let host_4k = statement(true, Some(1.0), Some(false));
        assert!(
            host_4k.contains("granted (100% of the buffer in smaps)") && host_4k.contains("TLB sees 4 KiB")
        );
        assert!(statement(true, Some(1.0), Some(true)).starts_with("huge pages, granted"));
        assert!(statement(true, Some(0.4), Some(false)).contains("granted 40% of the buffer"));
        assert!(statement(true, None, Some(false)).contains("not granted, or a host"));
        assert_eq!(
            statement(false, Some(0.0), None),
            "4 KiB pages (huge pages not asked)"
        );
        assert!(statement(false, Some(1.0), None).contains("THP always"));
        assert!(sized(true, Some(1.0), Some(true), Some(2 << 20)).starts_with("2 MiB pages, granted"));
        // The brief form follows the TLB check as the sentence does.
        for (tlb, want) in [(true, "huge pages"), (false, "4 KiB pages to the TLB")] {
            assert_eq!(brief(true, Some(tlb)), want);
            assert_eq!(
                statement(true, Some(1.0), Some(tlb)).contains("TLB sees 4 KiB"),
                !tlb
            );
        }
    }
}

//! Fitting text into a terminal's columns, for every crate that prints a
//! table or a digest: cut a line at a word, wrap a sentence at words.
//! Widths count characters, not bytes: `µ`, `×`, `·` and `…` take one
//! column each on a terminal but two or three bytes in UTF-8.

/// Characters left at the end of a cut line before the `…`: a separator
/// or an opening bracket alone would read as a sentence broken off twice.
const TRAILING: [char; 6] = [' ', '·', ',', ';', ':', '('];

/// `text` in at most `width` columns: as it is where it fits, else cut at
/// the last word boundary that leaves room for `…` (never inside a word,
/// so that what is shown can be trusted as written). A single word wider
/// than `width` is cut where it must be: there is no boundary to cut at.
pub fn cut_at_word(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let chars: Vec<char> = text.chars().collect();
    let keep = width - 1; // one column for the `…`
                          // The prefix ends a word where the next character is a space;
                          // otherwise back off to the last space inside it.
    let end = if chars[keep].is_whitespace() {
        keep
    } else {
        chars[..keep]
            .iter()
            .rposition(|c| c.is_whitespace())
            .unwrap_or(keep)
    };
    let mut s: String = chars[..end].iter().collect();
    let trimmed = s.trim_end_matches(TRAILING).len();
    s.truncate(trimmed);
    if s.is_empty() {
        // One word wider than the column (a long host name): a hard cut.
        s = chars[..keep].iter().collect();
    }
    s.push('…');
    s
}

/// `text` wrapped at words into lines of at most `width` columns, every
/// line after the first led by `indent` (counted in the width). A word
/// wider than a line is cut ([`cut_at_word`]) rather than overflowing.
pub fn wrap_words(text: &str, width: usize, indent: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in text.split_whitespace() {
        let lead = if lines.is_empty() {
            0
        } else {
            indent.chars().count()
        };
        let room = width.saturating_sub(lead);
        let n = word.chars().count();
        if used > 0 && used + 1 + n <= room {
            line.push(' ');
            line.push_str(word);
            used += 1 + n;
            continue;
        }
        if used > 0 {
            lines.push(std::mem::take(&mut line));
        }
        let lead = if lines.is_empty() {
            0
        } else {
            indent.chars().count()
        };
        let room = width.saturating_sub(lead);
        line = if lines.is_empty() {
            String::new()
        } else {
            indent.to_string()
        };
        let word = cut_at_word(word, room);
        used = word.chars().count();
        line.push_str(&word);
    }
    if used > 0 || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(s: &str) -> usize {
        s.chars().count()
    }

    #[test]
    fn a_cut_ends_at_a_word_with_an_ellipsis() {
        let t = "huge pages asked, but the TLB sees 4 KiB pages (not granted)";
        assert_eq!(cut_at_word(t, 100), t);
        let c = cut_at_word(t, 30);
        assert!(cols(&c) <= 30, "{c}");
        assert_eq!(c, "huge pages asked, but the TLB…");
        // A separator before the cut is not left dangling.
        assert_eq!(cut_at_word("1.08 ns · 4.0 cy · line 64 B", 12), "1.08 ns…");
        // Multi-byte characters count one column each.
        let u = "µµµµ ××××";
        assert_eq!(cut_at_word(u, 8), "µµµµ…");
        // One word wider than the column is cut where it must be.
        assert_eq!(cut_at_word("abcdefghij", 5), "abcd…");
        assert_eq!(cut_at_word("abc", 0), "");
    }

    #[test]
    fn wrapping_keeps_every_word_within_the_width() {
        let t = "the cache sweep reads 134.9 ns over 128 MiB, 20% below the 168.8 ns of the mem chase";
        let lines = wrap_words(t, 30, "    ");
        assert!(lines.len() > 2);
        for l in &lines {
            assert!(cols(l) <= 30, "{l}");
        }
        assert!(lines[1].starts_with("    ") && !lines[0].starts_with(' '));
        let back: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
        assert_eq!(back.join(" "), t);
        assert_eq!(wrap_words("", 10, "  "), vec![String::new()]);
    }
}

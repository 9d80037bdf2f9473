//! Text from inputs made safe to show: CloudTrail fields (user agents, tag values, request
//! values) and file contents can hold terminal escape sequences, control characters and
//! invisible or direction-changing characters that would rewrite a terminal or hide what a
//! line really says. Text output escapes them; HCL strings written into the code escape them
//! too (see `terraform::quoted`); JSON output is left exact.

use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether a character must not reach a terminal or a file raw: C0 and C1 controls and DEL
/// (newline and tab aside), and the invisible formatting characters that change how text
/// around them reads (bidirectional overrides and isolates, zero-width characters, the byte
/// order mark).
pub fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// The longest value a text line shows in full; longer ones are cut with `…` (JSON output
/// always carries them whole).
pub const VALUE_WIDTH: usize = 60;

/// A value as a line of text shows it: strings quoted, other values as compact JSON, cut at
/// [`VALUE_WIDTH`] characters.
pub fn value(v: &Value) -> String {
    elide(&v.to_string(), VALUE_WIDTH)
}

/// `text` cut to at most `width` characters, ending in `…` when cut.
pub fn elide(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}…")
}

/// The text with every unsafe character written as `\u{…}`; unchanged (borrowed) when it
/// holds none.
pub fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_controls_and_direction_overrides_are_written_out() {
        assert_eq!(
            escaped("\u{1b}[31mred\u{1b}[0m"),
            "\\u{1b}[31mred\\u{1b}[0m"
        );
        assert_eq!(
            escaped("a\u{202E}b\u{200B}c\u{7f}\u{85}"),
            "a\\u{202e}b\\u{200b}c\\u{7f}\\u{85}"
        );
        assert!(matches!(
            escaped("plain text, émigré\n\tok"),
            Cow::Borrowed(_)
        ));
    }
}

//! Byte positions in file text: lines, indents and line ends.

use std::ops::Range;

/// The line end a file uses: `"\r\n"` when its first line ends so, `"\n"` otherwise.
pub fn newline_of(text: &str) -> &'static str {
    match text.find('\n') {
        Some(at) if at > 0 && text.as_bytes()[at - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// The start of the line holding `pos`.
pub fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |at| at + 1)
}

/// The end of the line holding `pos`, before its `\r\n` or `\n`.
pub fn line_end(text: &str, pos: usize) -> usize {
    let nl = text[pos..].find('\n').map_or(text.len(), |at| pos + at);
    if nl > pos && text.as_bytes()[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    }
}

/// The position just after the line end of the line holding `pos` (or the end of the text).
pub fn after_line(text: &str, pos: usize) -> usize {
    text[pos..].find('\n').map_or(text.len(), |at| pos + at + 1)
}

/// The spaces and tabs that start the line holding `pos`.
pub fn indent_at(text: &str, pos: usize) -> &str {
    let start = line_start(text, pos);
    let rest = &text[start..];
    &rest[..rest.len() - rest.trim_start_matches([' ', '\t']).len()]
}

/// The text of the line starting at `start`, without its line end.
fn line_at(text: &str, start: usize) -> &str {
    &text[start..line_end(text, start)]
}

/// The start of the line before the one starting at `start`.
fn previous_line(text: &str, start: usize) -> Option<usize> {
    (start > 0).then(|| line_start(text, start - 1))
}

/// Whether the line is a comment and nothing else.
fn is_comment_line(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with('#') || line.starts_with("//")
}

/// The whole lines that hold `span`, with the comment lines right above it when `comments` is
/// set. No blank lines are included.
pub fn whole_lines(text: &str, span: &Range<usize>, comments: bool) -> Range<usize> {
    let mut start = line_start(text, span.start);
    while let Some(prev) = previous_line(text, start).filter(|_| comments) {
        if !is_comment_line(line_at(text, prev)) {
            break;
        }
        start = prev;
    }
    start..after_line(text, span.end.saturating_sub(1).max(span.start))
}

/// The range to delete to remove the lines `lines`, with one neighbouring blank line when the
/// removal would otherwise leave two blank lines together or a blank line against a brace.
pub fn removal(text: &str, lines: Range<usize>) -> Range<usize> {
    let Range { mut start, mut end } = lines;
    let prev = previous_line(text, start).map(|p| line_at(text, p).trim());
    let next = (end < text.len()).then(|| line_at(text, end).trim());
    let prev_blank = prev == Some("");
    if next == Some("") && (prev.is_none() || prev_blank || prev.is_some_and(|p| p.ends_with('{')))
    {
        end = after_line(text, end);
    } else if prev_blank && next.is_none_or(|n| n.starts_with('}')) {
        start = previous_line(text, start).unwrap_or(start);
    }
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remove_line(text: &str, needle: &str) -> String {
        let at = text.rfind(needle).unwrap_or(0);
        let range = removal(text, whole_lines(text, &(at..at + needle.len()), true));
        format!("{}{}", &text[..range.start], &text[range.end..])
    }

    #[test]
    fn removal_keeps_one_blank_line_between_neighbours() {
        assert_eq!(remove_line("a\n\nx\n\nb\n", "x"), "a\n\nb\n");
        assert_eq!(remove_line("a\nx\n\nb\n", "x"), "a\n\nb\n");
        assert_eq!(remove_line("{\n  x\n\n  b\n}\n", "x"), "{\n  b\n}\n");
        assert_eq!(remove_line("a\n\n  x\n}\n", "x"), "a\n}\n");
        assert_eq!(remove_line("a\n\n# about x\nx\n", "x"), "a\n");
    }

    #[test]
    fn crlf_is_detected() {
        assert_eq!(newline_of("a\r\nb"), "\r\n");
        assert_eq!(newline_of("a\nb"), "\n");
    }
}

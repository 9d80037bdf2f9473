//! Re-aligning `=` signs and trailing comments the way `terraform fmt` does.
//!
//! `terraform fmt` splits a file into lines (a heredoc or a multi-line `/* */` comment belongs to
//! the line it starts on), and in every run of consecutive lines that assign a whole expression
//! (`key = value` with balanced brackets) it puts one space after the longest key. Separately, in
//! every run of consecutive lines that end in a comment after other tokens, it puts the comments
//! one space after the longest content. [`realign`] redoes exactly that for the runs that touch a
//! given byte range and leaves every other byte as it was.

use std::collections::BTreeSet;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Comment,
    Equal,
    Open,
    Close,
    Heredoc,
    Other,
}

#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

#[derive(Debug, Default)]
struct Line {
    start: usize,
    end: usize,
    tokens: Vec<Token>,
}

impl Line {
    /// The index of the `=` token when the line assigns a whole expression.
    fn assign(&self) -> Option<usize> {
        let lead = self.content_len();
        let eq = self.tokens[..lead]
            .iter()
            .position(|t| t.kind == Kind::Equal)?;
        if eq == 0 {
            return None;
        }
        let mut depth = 0i32;
        for token in &self.tokens[eq..lead] {
            match token.kind {
                Kind::Open => depth += 1,
                Kind::Close => depth -= 1,
                Kind::Heredoc => break,
                _ => {}
            }
        }
        (depth == 0).then_some(eq)
    }

    /// The index of a trailing comment that follows other tokens.
    fn comment(&self) -> Option<usize> {
        let last = self.tokens.len().checked_sub(1)?;
        (last > 0 && self.tokens[last].kind == Kind::Comment).then_some(last)
    }

    /// How many tokens come before the trailing comment.
    fn content_len(&self) -> usize {
        self.comment().unwrap_or(self.tokens.len())
    }
}

/// Re-aligns the runs of assignments and trailing comments that touch `touched` (a byte range of
/// `text`; the lines just before and after it count as touched too).
pub fn realign(text: &str, touched: Range<usize>) -> String {
    let lines = lex(text);
    let near = touched.start.saturating_sub(1)..touched.end.saturating_add(1);
    let inside: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.start <= near.end && l.end >= near.start)
        .map(|(i, _)| i)
        .collect();
    let (Some(&first), Some(&last)) = (inside.first(), inside.last()) else {
        return text.to_owned();
    };
    // A neighbouring run may have lost or gained a line, so its lines count as touched too.
    let hit: BTreeSet<usize> = (first.saturating_sub(1)..=last + 1).collect();
    let text = single_space_before_open_assign(text, &lines, &hit);
    let lines = lex(&text);
    let (text, mut changed) = align_runs(&text, &lines, &hit, Cell::Assign);
    changed.extend(hit);
    let lines = lex(&text);
    align_runs(&text, &lines, &changed, Cell::Comment).0
}

/// Puts one space before the `=` of touched lines that start a multi-line value, which belong
/// to no run.
fn single_space_before_open_assign(text: &str, lines: &[Line], hit: &BTreeSet<usize>) -> String {
    let edits = hit
        .iter()
        .filter_map(|&i| lines.get(i))
        .filter(|line| line.assign().is_none())
        .filter_map(|line| {
            let eq = line.tokens[..line.content_len()]
                .iter()
                .position(|t| t.kind == Kind::Equal)?;
            let before = line.tokens[eq.checked_sub(1)?].end;
            let at = line.tokens[eq].start;
            (text[before..at] != *" ").then(|| (before..at, " ".to_owned()))
        })
        .collect();
    apply(text, edits)
}

#[derive(Clone, Copy)]
enum Cell {
    Assign,
    Comment,
}

/// Aligns `cell` in every run that contains a line of `hit`; returns the text and the lines of
/// the runs it aligned.
fn align_runs(
    text: &str,
    lines: &[Line],
    hit: &BTreeSet<usize>,
    cell: Cell,
) -> (String, BTreeSet<usize>) {
    let position = |line: &Line| match cell {
        Cell::Assign => line.assign(),
        Cell::Comment => line.comment(),
    };
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut runs_lines = BTreeSet::new();
    let mut i = 0;
    while i < lines.len() {
        let run_end = (i..lines.len())
            .find(|&j| position(&lines[j]).is_none())
            .unwrap_or(lines.len());
        if run_end == i {
            i += 1;
            continue;
        }
        if (i..run_end).any(|j| hit.contains(&j)) {
            let widths: Vec<(usize, usize, usize)> = (i..run_end)
                .filter_map(|j| {
                    let line = &lines[j];
                    let at = position(line)?;
                    let before = line.tokens[at - 1].end;
                    Some((
                        columns(text, line.start, before),
                        before,
                        line.tokens[at].start,
                    ))
                })
                .collect();
            let widest = widths.iter().map(|w| w.0).max().unwrap_or(0);
            for (width, before, at) in widths {
                let spaces = " ".repeat(widest - width + 1);
                if text[before..at] != spaces {
                    edits.push((before..at, spaces));
                }
            }
            runs_lines.extend(i..run_end);
        }
        i = run_end;
    }
    (apply(text, edits), runs_lines)
}

fn columns(text: &str, from: usize, to: usize) -> usize {
    text[from..to].chars().count()
}

fn apply(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|e| std::cmp::Reverse(e.0.start));
    let mut out = text.to_owned();
    for (range, with) in edits {
        out.replace_range(range, &with);
    }
    out
}

/// Splits `text` into formatting lines with their tokens.
fn lex(text: &str) -> Vec<Line> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut line = Line::default();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let (kind, end) = match c {
            b'\n' => {
                line.end = if i > line.start && bytes[i - 1] == b'\r' {
                    i - 1
                } else {
                    i
                };
                lines.push(std::mem::take(&mut line));
                line.start = i + 1;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'#' => (Kind::Comment, line_end(bytes, i)),
            b'/' if bytes.get(i + 1) == Some(&b'/') => (Kind::Comment, line_end(bytes, i)),
            b'/' if bytes.get(i + 1) == Some(&b'*') => (Kind::Comment, block_comment_end(text, i)),
            b'"' => (Kind::Other, string_end(bytes, i + 1)),
            b'<' if bytes.get(i + 1) == Some(&b'<') => match heredoc_end(text, i) {
                Some(end) => (Kind::Heredoc, end),
                None => (Kind::Other, i + 2),
            },
            b'=' if matches!(bytes.get(i + 1), Some(b'=' | b'>')) => (Kind::Other, i + 2),
            b'!' | b'<' | b'>' if bytes.get(i + 1) == Some(&b'=') => (Kind::Other, i + 2),
            b'=' => (Kind::Equal, i + 1),
            b'{' | b'[' | b'(' => (Kind::Open, i + 1),
            b'}' | b']' | b')' => (Kind::Close, i + 1),
            c if is_word(c) => (Kind::Other, word_end(bytes, i)),
            _ => (Kind::Other, i + 1 + utf8_extra(c)),
        };
        line.tokens.push(Token {
            kind,
            start: i,
            end,
        });
        i = end;
    }
    line.end = bytes.len();
    lines.push(line);
    lines
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.' || c >= 0x80
}

fn word_end(bytes: &[u8], from: usize) -> usize {
    (from..bytes.len())
        .find(|&j| !is_word(bytes[j]))
        .unwrap_or(bytes.len())
}

fn utf8_extra(c: u8) -> usize {
    match c {
        0xF0.. => 3,
        0xE0.. => 2,
        0xC0.. => 1,
        _ => 0,
    }
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    let nl = (from..bytes.len())
        .find(|&j| bytes[j] == b'\n')
        .unwrap_or(bytes.len());
    if nl > from && bytes[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    }
}

fn block_comment_end(text: &str, from: usize) -> usize {
    text[from + 2..]
        .find("*/")
        .map_or(text.len(), |at| from + 2 + at + 2)
}

/// The end of a quoted string whose body starts at `from`, skipping nested interpolations.
fn string_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            b'\n' => return i,
            b'$' | b'%'
                if bytes.get(i + 1) == Some(&bytes[i]) && bytes.get(i + 2) == Some(&b'{') =>
            {
                i += 3
            }
            b'$' | b'%' if bytes.get(i + 1) == Some(&b'{') => i = interpolation_end(bytes, i + 2),
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The end of an interpolation whose body starts at `from` (just after `${`).
fn interpolation_end(bytes: &[u8], from: usize) -> usize {
    let mut depth = 1;
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i + 1);
                continue;
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b'\n' => return i,
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// The end of a heredoc starting at `from` (at `<<`): the end of its closing marker's line.
fn heredoc_end(text: &str, from: usize) -> Option<usize> {
    let rest = &text[from + 2..];
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    let marker_len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    let marker = &rest[..marker_len];
    let after = &rest[marker_len..];
    if marker.is_empty() || !(after.starts_with('\n') || after.starts_with("\r\n")) {
        return None;
    }
    let mut pos = text.len() - after.len();
    while let Some(nl) = text[pos..].find('\n') {
        let start = pos + nl + 1;
        let end = line_end(text.as_bytes(), start);
        if text[start..end].trim() == marker {
            return Some(end);
        }
        pos = start;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_the_run_around_an_edit() {
        let text = "a = 1\nlong_name = 2\n\nb = 3\n";
        assert_eq!(
            realign(text, 6..7),
            "a         = 1\nlong_name = 2\n\nb = 3\n"
        );
    }

    #[test]
    fn heredoc_joins_the_line_it_starts_on() {
        let text = "user_data = <<EOT\nx = 1\nEOT\nami = 1\n";
        assert_eq!(
            realign(text, 30..31),
            "user_data = <<EOT\nx = 1\nEOT\nami       = 1\n"
        );
    }

    #[test]
    fn multi_line_values_break_runs_and_comments_align() {
        let text = "a = 1 # x\nbbb = \"${\"}\"}\" # y\ntags = {\n  k = 1\n}\n";
        assert_eq!(
            realign(text, 0..1),
            "a   = 1        # x\nbbb = \"${\"}\"}\" # y\ntags = {\n  k = 1\n}\n"
        );
    }
}

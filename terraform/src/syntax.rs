//! Parsing HCL files as Terraform does, where `hcl::edit` is stricter.
//!
//! Terraform's parser ignores newlines inside a `for` expression (`[for ...]`, `{for ...}`),
//! so a conditional may continue on the next line:
//!
//! ```hcl
//! labels = { for k in local.names : k => local.case == "none" ? local.raw[k] :
//!   upper(local.raw[k])
//! }
//! ```
//!
//! `hcl::edit` 0.10 refuses this (the Cloud Posse label module, included by every Cloud Posse
//! module, has it). [`parse_body`] parses the text as it is and, only when that fails, again
//! with each such newline read as a space. A newline and a space are one byte each, so every
//! span of the tree is still an offset into the original text: the edit tools, which splice
//! the original text at those spans, keep every untouched byte.

use hcl::edit::parser::Error;
use hcl::edit::structure::Body;

/// Parses an HCL body, accepting newlines inside `for` expressions as Terraform does; the
/// error is the one for the text as written.
pub fn parse_body(text: &str) -> Result<Body, Error> {
    hcl::edit::parser::parse_body(text).or_else(|error| {
        for_newlines_as_spaces(text)
            .and_then(|relaxed| hcl::edit::parser::parse_body(&relaxed).ok())
            .ok_or(error)
    })
}

/// What an open bracket starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// `[for ...]` or `{for ...}`: newlines inside are spaces.
    For,
    /// An object or block body `{`: newlines inside separate items.
    Object,
    /// `(` or a tuple `[`: newlines inside are already free.
    Free,
    /// `${` or `%{` inside a quoted string.
    Template,
}

/// The text with each newline that sits directly inside a `for` expression (not inside an
/// object, string, heredoc or comment within it) replaced by a space; `None` when there is
/// none.
fn for_newlines_as_spaces(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut stack: Vec<Open> = Vec::new();
    let mut changed = false;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => at = skip_string(bytes, at + 1, &mut stack),
            b'#' => at = line_end(bytes, at),
            b'/' if bytes.get(at + 1) == Some(&b'/') => at = line_end(bytes, at),
            b'/' if bytes.get(at + 1) == Some(&b'*') => at = block_comment_end(bytes, at),
            b'<' if bytes.get(at + 1) == Some(&b'<') => at = heredoc_end(bytes, at),
            b'{' | b'[' => {
                stack.push(opening(bytes, at));
                at += 1;
            }
            b'(' => {
                stack.push(Open::Free);
                at += 1;
            }
            b'}' if stack.last() == Some(&Open::Template) => {
                stack.pop();
                at = skip_string(bytes, at + 1, &mut stack);
            }
            b'}' | b']' | b')' => {
                stack.pop();
                at += 1;
            }
            b'\r' | b'\n' if inside_for(&stack) => {
                out[at] = b' ';
                changed = true;
                at += 1;
            }
            _ => at += 1,
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes, so the text is still UTF-8.
    changed.then(|| String::from_utf8(out).ok()).flatten()
}

/// Whether a newline here is inside a `for` expression with no object between.
fn inside_for(stack: &[Open]) -> bool {
    for open in stack.iter().rev() {
        match open {
            Open::For => return true,
            Open::Object | Open::Template => return false,
            Open::Free => {}
        }
    }
    false
}

/// What the bracket at `at` opens: a `for` expression when the keyword `for` follows it.
fn opening(bytes: &[u8], at: usize) -> Open {
    let rest = &bytes[at + 1..];
    let start = rest
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    let word = &rest[start..];
    let is_for = word.starts_with(b"for")
        && word
            .get(3)
            .is_some_and(|b| b.is_ascii_whitespace() || *b == b'(');
    match (is_for, bytes[at]) {
        (true, _) => Open::For,
        (false, b'{') => Open::Object,
        (false, _) => Open::Free,
    }
}

/// Skips a quoted string from just after its opening quote; returns the index after its
/// closing quote, or just after a `${`/`%{` that opens a template (pushed on `stack`).
fn skip_string(bytes: &[u8], mut at: usize, stack: &mut Vec<Open>) -> usize {
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            b'$' | b'%' if bytes.get(at + 1) == Some(&bytes[at]) => at += 2,
            b'$' | b'%' if bytes.get(at + 1) == Some(&b'{') => {
                stack.push(Open::Template);
                return at + 2;
            }
            b'\n' => return at,
            _ => at += 1,
        }
    }
    at
}

/// The index of the newline that ends the line comment at `at` (the newline is kept).
fn line_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |n| at + n)
}

/// The index after the `*/` closing the block comment at `at`.
fn block_comment_end(bytes: &[u8], at: usize) -> usize {
    bytes[at + 2..]
        .windows(2)
        .position(|w| w == b"*/")
        .map_or(bytes.len(), |n| at + 2 + n + 2)
}

/// The index after the heredoc starting at `at` (`<<EOF` or `<<-EOF`), or after `<<` when no
/// heredoc marker follows.
fn heredoc_end(bytes: &[u8], at: usize) -> usize {
    let mut start = at + 2;
    if bytes.get(start) == Some(&b'-') {
        start += 1;
    }
    let marker_len = bytes[start..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    let marker = &bytes[start..start + marker_len];
    let after_marker = start + marker_len;
    let opens = marker_len > 0 && matches!(bytes.get(after_marker), Some(b'\n' | b'\r'));
    if !opens {
        return at + 2;
    }
    let mut line = line_end(bytes, after_marker) + 1;
    while line < bytes.len() {
        let end = line_end(bytes, line);
        let content = bytes[line..end].trim_ascii();
        if content == marker {
            return end;
        }
        line = end + 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Cloud Posse label module's own construct.
    const CONTINUED: &str = "locals {\n  labels = { for k in local.names : k => local.case == \"none\" ? local.raw[k] :\n    local.case == \"title\" ? title(local.raw[k]) : lower(local.raw[k])\n  }\n}\n";

    #[test]
    fn a_conditional_continued_inside_a_for_expression_parses_with_spans_into_the_text() {
        assert!(hcl::edit::parser::parse_body(CONTINUED).is_err());
        let body = parse_body(CONTINUED).expect("parses");
        let locals = body.get_blocks("locals").next().expect("locals");
        let labels = locals.body.get_attribute("labels").expect("labels");
        let span = hcl::edit::Span::span(&labels.value).expect("span");
        let written = &CONTINUED[span];
        assert!(written.starts_with("{ for k"), "{written}");
        assert!(written.contains("lower(local.raw[k])\n  }"), "{written}");
    }

    #[test]
    fn newlines_inside_objects_strings_heredocs_and_comments_are_kept() {
        let text = "x = [for v in var.l : {\n  a = v # c\n  b = \"${v}\"\n} if v != \"\"\n]\ny = <<EOT\n[for\nEOT\n";
        let relaxed = for_newlines_as_spaces(text).expect("changed");
        assert_eq!(relaxed.len(), text.len());
        // The object's newlines, the comment's end and the heredoc stay; the one before `]`
        // (directly inside the `for`) goes.
        assert!(
            relaxed.contains("a = v # c\n  b = \"${v}\"\n} if v != \"\" ]\ny = <<EOT\n[for\nEOT\n")
        );
    }

    #[test]
    fn a_real_syntax_error_is_reported_for_the_text_as_written() {
        let error = parse_body("a = [for v in x : v\nb = 1\n").expect_err("unclosed");
        assert_eq!(error.location().line(), 2);
    }
}

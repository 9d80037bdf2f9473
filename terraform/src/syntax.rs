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
//! module, has it). It also refuses an object constructor that repeats a key, which Terraform
//! accepts, the last item winning (`{ port = 80, port = 8080 }` is `{ port = 8080 }`).
//! [`parse_body`] parses the text as it is and, only when that fails, again with each such
//! newline read as a space and each item whose key a later item of its object repeats blanked
//! out. Each replaced byte is one ASCII byte for another and newlines stay, so every span of
//! the tree is still an offset into the original text: the edit tools, which splice the
//! original text at those spans, keep every untouched byte.

use hcl::edit::parser::Error;
use hcl::edit::structure::Body;

/// Parses an HCL body as Terraform does: newlines inside `for` expressions are accepted and
/// an object's repeated key keeps its last value; the error is the one for the text as
/// written.
pub fn parse_body(text: &str) -> Result<Body, Error> {
    hcl::edit::parser::parse_body(text).or_else(|error| {
        let relaxed = for_newlines_as_spaces(text).unwrap_or_else(|| text.to_owned());
        parse_keeping_last_keys(relaxed).ok_or(error)
    })
}

/// Parses `text`, blanking out, one at a time, each object item whose key `hcl::edit`
/// reports a later item repeats; `None` when another error remains.
fn parse_keeping_last_keys(mut text: String) -> Option<Body> {
    loop {
        match hcl::edit::parser::parse_body(&text) {
            Ok(body) => return Some(body),
            Err(error) if error.message().contains("redefined object key") => {
                if !blank_earlier_item(&mut text, error.location().offset()) {
                    return None;
                }
            }
            Err(_) => return None,
        }
    }
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

/// An open bracket: what it starts and its offset in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bracket {
    open: Open,
    at: usize,
}

/// Walks the text, skipping strings, comments and heredocs, and calls `visit` with the offset
/// of every other byte and the brackets open around it (a bracket is on the stack from the
/// byte after it opens up to and including the byte that closes it).
fn scan(bytes: &[u8], mut visit: impl FnMut(usize, &[Bracket])) {
    let mut stack: Vec<Bracket> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => at = skip_string(bytes, at + 1, &mut stack),
            b'#' => at = line_end(bytes, at),
            b'/' if bytes.get(at + 1) == Some(&b'/') => at = line_end(bytes, at),
            b'/' if bytes.get(at + 1) == Some(&b'*') => at = block_comment_end(bytes, at),
            b'<' if bytes.get(at + 1) == Some(&b'<') => at = heredoc_end(bytes, at),
            byte => {
                visit(at, &stack);
                at += 1;
                match byte {
                    b'{' | b'[' => stack.push(Bracket {
                        open: opening(bytes, at - 1),
                        at: at - 1,
                    }),
                    b'(' => stack.push(Bracket {
                        open: Open::Free,
                        at: at - 1,
                    }),
                    b'}' if stack.last().map(|b| b.open) == Some(Open::Template) => {
                        stack.pop();
                        at = skip_string(bytes, at, &mut stack);
                    }
                    b'}' | b']' | b')' => {
                        stack.pop();
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The text with each newline that sits directly inside a `for` expression (not inside an
/// object, string, heredoc or comment within it) replaced by a space; `None` when there is
/// none.
fn for_newlines_as_spaces(text: &str) -> Option<String> {
    let mut out = text.as_bytes().to_vec();
    let mut changed = false;
    scan(text.as_bytes(), |at, stack| {
        if matches!(out[at], b'\r' | b'\n') && inside_for(stack) {
            out[at] = b' ';
            changed = true;
        }
    });
    // Only ASCII bytes were replaced by ASCII bytes, so the text is still UTF-8.
    changed.then(|| String::from_utf8(out).ok()).flatten()
}

/// Whether a newline here is inside a `for` expression with no object between.
fn inside_for(stack: &[Bracket]) -> bool {
    for bracket in stack.iter().rev() {
        match bracket.open {
            Open::For => return true,
            Open::Object | Open::Template => return false,
            Open::Free => {}
        }
    }
    false
}

/// Blanks out the earlier item of the object around `repeat` (the offset of a key that
/// repeats an earlier item's key), with the comma after it, keeping its newlines; whether
/// there was one.
fn blank_earlier_item(text: &mut String, repeat: usize) -> bool {
    let bytes = text.as_bytes();
    let Some(key) = key_at(bytes, repeat) else {
        return false;
    };
    let mut around = None;
    scan(bytes, |at, stack| {
        if at == repeat {
            around = stack.last().copied();
        }
    });
    let Some(Bracket {
        open: Open::Object,
        at: object,
    }) = around
    else {
        return false;
    };
    let Some((start, end)) =
        object_items(bytes, object, repeat)
            .into_iter()
            .rfind(|&(start, _)| {
                key_at(bytes, start) == Some(key) && assigns(bytes, start + key.len())
            })
    else {
        return false;
    };
    let mut out = bytes.to_vec();
    let end = if out[end] == b',' { end + 1 } else { end };
    for byte in &mut out[start..end] {
        if !matches!(byte, b'\r' | b'\n') {
            *byte = b' ';
        }
    }
    // Whole characters became spaces, so the text is still UTF-8.
    String::from_utf8(out).map(|out| *text = out).is_ok()
}

/// The items of the object opening at `object` that start before `until`: the offset of
/// each item's first byte and of the newline or comma that ends it.
fn object_items(bytes: &[u8], object: usize, until: usize) -> Vec<(usize, usize)> {
    let mut items = Vec::new();
    let mut open_item = None;
    scan(&bytes[..until], |at, stack| {
        if at <= object || stack.last().map(|b| b.at) != Some(object) {
            return;
        }
        match (bytes[at], open_item) {
            (b'\n' | b',', Some(start)) => {
                items.push((start, at));
                open_item = None;
            }
            (b' ' | b'\t' | b'\r' | b'\n' | b',', _) | (_, Some(_)) => {}
            (_, None) => open_item = Some(at),
        }
    });
    items
}

/// The object key written at `at`: an identifier or a quoted string without template.
fn key_at(bytes: &[u8], at: usize) -> Option<&[u8]> {
    let rest = bytes.get(at..)?;
    let len = if rest.first() == Some(&b'"') {
        rest[1..]
            .iter()
            .position(|b| matches!(b, b'"' | b'\\' | b'$' | b'%' | b'\n'))
            .filter(|&n| rest[1 + n] == b'"')?
            + 2
    } else {
        rest.iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
            .count()
    };
    (len > 0).then(|| &rest[..len])
}

/// Whether the text at `at`, after spaces, assigns an object item (`=` or `:`, not `==`).
fn assigns(bytes: &[u8], at: usize) -> bool {
    let rest = &bytes[at.min(bytes.len())..];
    let start = rest
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    match &rest[start..] {
        [b'=', b'=', ..] => false,
        [b'=' | b':', ..] => true,
        _ => false,
    }
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
fn skip_string(bytes: &[u8], mut at: usize, stack: &mut Vec<Bracket>) -> usize {
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            b'$' | b'%' if bytes.get(at + 1) == Some(&bytes[at]) => at += 2,
            b'$' | b'%' if bytes.get(at + 1) == Some(&b'{') => {
                stack.push(Bracket {
                    open: Open::Template,
                    at,
                });
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
    use hcl::edit::Span;

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

    /// The items (key and value as written) of the object attribute `name` of `text` holds.
    fn items<'t>(text: &'t str, name: &str) -> Vec<(&'t str, &'t str)> {
        let body = parse_body(text).expect("parses");
        let attribute = body.get_attribute(name).expect("attribute");
        let hcl::edit::expr::Expression::Object(object) = &attribute.value else {
            panic!("not an object");
        };
        let written = |span: Option<std::ops::Range<usize>>| &text[span.expect("span")];
        object
            .iter()
            .map(|(k, v)| (written(k.span()), written(v.expr().span())))
            .collect()
    }

    #[test]
    fn a_repeated_object_key_keeps_the_last_item_as_terraform_does() {
        let text = "x = {\n  port = 80 # first\n  name = {\n    a = 1\n  }\n  port = 8080\n}\n";
        assert!(hcl::edit::parser::parse_body(text).is_err());
        assert_eq!(
            items(text, "x"),
            vec![("name", "{\n    a = 1\n  }"), ("port", "8080")]
        );
    }

    #[test]
    fn repeated_keys_separated_by_commas_and_a_multi_line_first_item_are_dropped() {
        // `a` three times on one line, and `b` first written over three lines.
        let text = "x = { a = 1, a = \"two\", a = 3 }\ny = {\n  b = [\n    1,\n  ]\n  b = 2\n}\n";
        assert_eq!(items(text, "x"), vec![("a", "3")]);
        assert_eq!(items(text, "y"), vec![("b", "2")]);
    }

    #[test]
    fn repeated_keys_inside_a_for_expression_continued_on_the_next_line() {
        let text = "x = [for v in l : v == 1 ?\n  { k = v, k = 2 } : {}]\n";
        let body = parse_body(text).expect("parses");
        let attribute = body.get_attribute("x").expect("x");
        let written = &text[hcl::edit::Span::span(&attribute.value).expect("span")];
        assert_eq!(written, "[for v in l : v == 1 ?\n  { k = v, k = 2 } : {}]");
    }

    #[test]
    fn a_real_syntax_error_is_reported_for_the_text_as_written() {
        let error = parse_body("a = [for v in x : v\nb = 1\n").expect_err("unclosed");
        assert_eq!(error.location().line(), 2);
    }
}

//! Rendering values and blocks as idiomatic HCL text.
//!
//! Text is rendered with `\n` line ends and no alignment; the caller converts line ends to the
//! file's style and [`super::align`] lines up the `=` signs afterwards, so alignment has a single
//! implementation.

use super::value::{Value, json_document};

/// The widest one-line list of scalars, in characters, before a list is split over lines.
const ONE_LINE_LIST_WIDTH: usize = 80;

/// A new block: type, labels, attributes and nested blocks, rendered in that order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlockText<'a> {
    /// The block type, such as `ingress` or `resource`.
    pub kind: &'a str,
    /// The labels, rendered quoted.
    pub labels: &'a [String],
    /// Attributes in order; keys must be identifiers.
    pub attributes: &'a [(String, Value)],
    /// Nested blocks, each after a blank line.
    pub blocks: Vec<BlockText<'a>>,
}

/// Renders `value` as an HCL expression whose first line starts at `indent`.
pub fn value(value: &Value, indent: &str) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => match (reference(s), json_document(s)) {
            (Some(reference), _) => reference.to_owned(),
            (None, Some(document)) => format!("jsonencode({})", self::value(&document, indent)),
            (None, None) => idiom(s).unwrap_or_else(|| quoted(s)),
        },
        Value::List(items) => list(items, indent),
        Value::Object(entries) => object(entries, indent),
    }
}

pub use crate::quoted;

/// The reference inside a string written `${a.b.c}` or `${a.b["k"].c}`, as Terraform's JSON
/// syntax writes an expression: the edit tools render it as the bare reference
/// (`vpc_id = aws_vpc.main.id`) rather than a quoted literal. Only plain traversals qualify,
/// so no other expression can be smuggled in through a value.
pub fn reference(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("${")?.strip_suffix('}')?;
    is_traversal(inner).then_some(inner)
}

/// The two shapes the planner writes to reuse a project's own values, rendered as written:
/// a tag map over a shared one, `${merge(local.common_tags, { Team = "x" })}` (a reference
/// and an object of string literals), and a name on a shared prefix,
/// `${local.prefix}-refunds` (a `local.` or `var.` reference and a plain suffix, written
/// as the quoted template). Nothing else is read as an expression.
fn idiom(s: &str) -> Option<String> {
    if let Some(inner) = s
        .strip_prefix("${merge(")
        .and_then(|r| r.strip_suffix(")}"))
    {
        let (base, object) = inner.split_once(", ")?;
        let entries = object.strip_prefix("{ ")?.strip_suffix(" }")?;
        let literal_entries = entries.split(", ").all(|entry| {
            entry
                .split_once(" = ")
                .is_some_and(|(k, v)| (is_identifier(k) || plain_quoted(k)) && plain_quoted(v))
        });
        return (is_traversal(base) && literal_entries).then(|| format!("merge({inner})"));
    }
    let rest = s.strip_prefix("${")?;
    let (base, suffix) = rest.split_once('}')?;
    let rooted = base.starts_with("local.") || base.starts_with("var.");
    let plain = !suffix.is_empty()
        && suffix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    (rooted && is_traversal(base) && plain).then(|| format!("\"${{{base}}}{suffix}\""))
}

/// A quoted string with nothing to escape or interpolate.
fn plain_quoted(text: &str) -> bool {
    text.len() >= 2
        && text.starts_with('"')
        && text.ends_with('"')
        && !text[1..text.len() - 1].contains(['"', '\\', '$', '%', ',', '{', '}', '\n'])
}

fn is_traversal(text: &str) -> bool {
    let mut rest = text;
    let mut first = true;
    while !rest.is_empty() {
        if !first {
            if let Some(after) = rest.strip_prefix('.') {
                rest = after;
            } else if let Some(after) = rest.strip_prefix('[') {
                let Some(end) = after.find(']') else {
                    return false;
                };
                if !is_index(&after[..end]) {
                    return false;
                }
                rest = &after[end + 1..];
                continue;
            } else {
                return false;
            }
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        if !is_identifier(&rest[..end]) {
            return false;
        }
        rest = &rest[end..];
        first = false;
    }
    !first
}

fn is_index(text: &str) -> bool {
    let quoted_key = text.len() >= 2
        && text.starts_with('"')
        && text.ends_with('"')
        && !text[1..text.len() - 1].contains(['"', '\\', '$', '%']);
    quoted_key || (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
}

/// Renders an object key: bare when it is an identifier, quoted otherwise.
pub fn key(name: &str) -> String {
    if is_identifier(name) {
        name.to_owned()
    } else {
        quoted(name)
    }
}

/// Whether `name` is a valid HCL identifier.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// Renders `name = value` at `indent` (the indent is not included in the output).
pub fn attribute(name: &str, v: &Value, indent: &str) -> String {
    format!("{name} = {}", value(v, indent))
}

/// Renders a whole block whose first line starts at `indent` (not included in the output).
pub fn block(b: &BlockText, indent: &str) -> String {
    let mut head = b.kind.to_owned();
    for label in b.labels {
        head.push(' ');
        head.push_str(&quoted(label));
    }
    if b.attributes.is_empty() && b.blocks.is_empty() {
        return format!("{head} {{}}");
    }
    let inner = format!("{indent}  ");
    let mut parts: Vec<String> = Vec::new();
    let attrs: Vec<String> = b
        .attributes
        .iter()
        .map(|(k, v)| format!("{inner}{}", attribute(k, v, &inner)))
        .collect();
    if !attrs.is_empty() {
        parts.push(attrs.join("\n"));
    }
    parts.extend(
        b.blocks
            .iter()
            .map(|nested| format!("{inner}{}", block(nested, &inner))),
    );
    format!("{head} {{\n{}\n{indent}}}", parts.join("\n\n"))
}

fn list(items: &[Value], indent: &str) -> String {
    if items.is_empty() {
        return "[]".to_owned();
    }
    if items.iter().all(Value::is_scalar) {
        let rendered: Vec<String> = items.iter().map(|v| value(v, indent)).collect();
        let line = format!("[{}]", rendered.join(", "));
        if indent.len() + line.chars().count() <= ONE_LINE_LIST_WIDTH {
            return line;
        }
    }
    let inner = format!("{indent}  ");
    let lines: Vec<String> = items
        .iter()
        .map(|v| format!("{inner}{},\n", value(v, &inner)))
        .collect();
    format!("[\n{}{indent}]", lines.concat())
}

fn object(entries: &[(String, Value)], indent: &str) -> String {
    if entries.is_empty() {
        return "{}".to_owned();
    }
    let inner = format!("{indent}  ");
    let lines: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{inner}{} = {}\n", key(k), value(v, &inner)))
        .collect();
    format!("{{\n{}{indent}}}", lines.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_templates_and_quotes() {
        assert_eq!(
            quoted("a\"b\\c ${x} %{y} $z\n"),
            r#""a\"b\\c $${x} %%{y} $z\n""#
        );
    }

    #[test]
    fn json_documents_are_written_with_jsonencode() {
        let policy = Value::String(r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}"#.to_owned());
        assert_eq!(
            value(&policy, ""),
            "jsonencode({\n  Version = \"2012-10-17\"\n  Statement = [\n    {\n      Effect = \"Allow\"\n      Action = \"s3:GetObject\"\n      Resource = \"*\"\n    },\n  ]\n})"
        );
        assert_eq!(value(&Value::String("[x]".to_owned()), ""), "\"[x]\"");
        assert_eq!(value(&Value::String("{}".to_owned()), ""), "\"{}\"");
    }

    #[test]
    fn short_scalar_lists_stay_on_one_line() {
        let v = Value::List(vec![Value::String("a".into()), Value::Bool(true)]);
        assert_eq!(value(&v, "  "), r#"["a", true]"#);
    }

    #[test]
    fn objects_are_multi_line() {
        let v = Value::Object(vec![
            ("Name".into(), Value::String("x".into())),
            ("a.b".into(), Value::Null),
        ]);
        assert_eq!(
            value(&v, "  "),
            "{\n    Name = \"x\"\n    \"a.b\" = null\n  }"
        );
    }

    #[test]
    fn whole_string_references_render_bare() {
        let cases = [
            ("${aws_vpc.main.id}", "aws_vpc.main.id"),
            (
                "${aws_subnet.private[\"a\"].id}",
                "aws_subnet.private[\"a\"].id",
            ),
            (
                "${module.net.aws_subnet.x[0].arn}",
                "module.net.aws_subnet.x[0].arn",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(value(&Value::String(input.into()), ""), want, "{input}");
        }
    }

    #[test]
    fn the_planners_idioms_are_written_as_expressions() {
        for (input, want) in [
            (
                "${merge(local.common_tags, { Team = \"payments\" })}",
                "merge(local.common_tags, { Team = \"payments\" })",
            ),
            ("${local.prefix}-refunds", "\"${local.prefix}-refunds\""),
            ("${var.env}/app", "\"${var.env}/app\""),
        ] {
            assert_eq!(value(&Value::String(input.into()), ""), want, "{input}");
        }
        for literal in [
            "${merge(local.a, { K = upper(\"x\") })}",
            "${merge(file(\"x\"), { K = \"v\" })}",
            "${aws_s3_bucket.b.id}-x",
            "${local.prefix} x",
            "${aws:username}-x",
        ] {
            assert!(
                value(&Value::String(literal.into()), "").starts_with("\"$${"),
                "{literal}"
            );
        }
    }

    #[test]
    fn anything_but_a_plain_reference_stays_a_quoted_string() {
        for input in [
            "${}",
            "${a.b} x",
            "${upper(a)}",
            "${a[b]}",
            "${a..b}",
            "${a[\"${x}\"]}",
            "x${a.b}",
            "${1a.b}",
        ] {
            assert!(
                value(&Value::String(input.into()), "").starts_with('"'),
                "{input}"
            );
        }
    }
}

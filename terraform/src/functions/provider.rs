//! The functions of Terraform's built-in provider (`terraform.io/builtin/terraform`, 1.8+),
//! called as `provider::terraform::NAME`: `encode_tfvars`, `encode_expr` and `decode_tfvars`.
//!
//! The encoders write values the way `terraform console` prints them: an object one attribute
//! a line, sorted by name, with the `=` of consecutive one-line attributes aligned and two
//! spaces of indent per line that leaves brackets open; a list on one line.

use std::collections::BTreeMap;

use super::value::format_number;
use super::{Builtin, Call, EvalError, Value};

/// The namespace these functions are called in.
pub(super) const NAMESPACE: &str = "provider::terraform::";

/// The built-in provider's functions, by their namespaced names.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("provider::terraform::decode_tfvars", 1, decode_tfvars),
    Builtin::fixed("provider::terraform::encode_expr", 1, encode_expr),
    Builtin::fixed("provider::terraform::encode_tfvars", 1, encode_tfvars),
];

/// `encode_tfvars`: an object as the content of a `.tfvars` file, one variable a line.
fn encode_tfvars(call: &Call) -> Result<Value, EvalError> {
    let Value::Object(variables) = non_null(call)? else {
        return Err(call.error("the value must be an object whose attributes are variable names"));
    };
    if let Some(bad) = variables.keys().find(|name| !is_identifier(name)) {
        return Err(call.error(format!("invalid variable name `{bad}`")));
    }
    let mut lines = Lines::default();
    for (name, value) in variables {
        lines.attribute(name, value);
    }
    Ok(Value::String(lines.render()))
}

/// `encode_expr`: any value in Terraform's expression syntax.
fn encode_expr(call: &Call) -> Result<Value, EvalError> {
    let mut lines = Lines::default();
    lines.value(non_null(call)?);
    Ok(Value::String(
        lines.render().trim_end_matches('\n').to_owned(),
    ))
}

/// `decode_tfvars`: the variables a `.tfvars` file's content defines, as an object. Like
/// Terraform, its expressions may use operators but neither variables nor functions.
fn decode_tfvars(call: &Call) -> Result<Value, EvalError> {
    let source = call.string(0)?;
    let body =
        hcl::parse(&source).map_err(|error| call.error(format!("invalid tfvars: {error}")))?;
    if let Some(block) = body.blocks().next() {
        return Err(call.error(format!("unexpected `{}` block", block.identifier())));
    }
    let context = hcl::eval::Context::new();
    let variables = body
        .attributes()
        .map(|attribute| {
            let value =
                hcl::eval::Evaluate::evaluate(&attribute.expr, &context).map_err(|error| {
                    call.error(format!(
                        "invalid expression for `{}`: {error}",
                        attribute.key()
                    ))
                })?;
            Ok((attribute.key().to_owned(), Value::from(&value)))
        })
        .collect::<Result<BTreeMap<_, _>, EvalError>>()?;
    Ok(Value::Object(variables))
}

/// The one argument, which Terraform does not accept null.
fn non_null<'a>(call: &'a Call) -> Result<&'a Value, EvalError> {
    match call.arg(0)? {
        Value::Null => Err(call.error("the argument must not be null")),
        value => Ok(value),
    }
}

/// One line of output before indenting: the text left of an attribute's `=` and, for an
/// attribute whose value ends on the same line, the text from its `=` on (kept apart so the
/// `=` of neighbouring attributes can be aligned); `opened` counts the brackets it leaves open
/// (negative when it closes more than it opens).
#[derive(Debug, Default)]
struct Line {
    lead: String,
    assign: Option<String>,
    opened: i32,
}

/// Encoded lines, written left to right.
#[derive(Debug, Default)]
struct Lines {
    lines: Vec<Line>,
}

impl Lines {
    fn current(&mut self) -> &mut Line {
        if self.lines.is_empty() {
            self.lines.push(Line::default());
        }
        self.lines.last_mut().expect("a line was pushed")
    }

    /// Appends text to the current line, on the right of its `=` when it has one.
    fn push(&mut self, text: &str, opened: i32) {
        let line = self.current();
        line.opened += opened;
        match &mut line.assign {
            Some(assign) => assign.push_str(text),
            None => line.lead.push_str(text),
        }
    }

    /// Ends the current line. An attribute whose value left brackets open is not aligned.
    fn newline(&mut self) {
        let line = self.current();
        if line.opened != 0
            && let Some(assign) = line.assign.take()
        {
            line.lead = format!("{} {assign}", line.lead);
        }
        self.lines.push(Line::default());
    }

    /// `name = value` on a line of its own.
    fn attribute(&mut self, name: &str, value: &Value) {
        let key = if is_identifier(name) {
            name.to_owned()
        } else {
            quoted(name)
        };
        self.push(&key, 0);
        self.current().assign = Some("= ".to_owned());
        self.value(value);
        self.newline();
    }

    fn value(&mut self, value: &Value) {
        match value {
            // An unknown argument makes the call unknown before it runs.
            Value::Null | Value::Unknown => self.push("null", 0),
            Value::Bool(flag) => self.push(if *flag { "true" } else { "false" }, 0),
            Value::Number(number) => self.push(&format_number(*number), 0),
            Value::String(text) => self.push(&quoted(text), 0),
            Value::List(items) | Value::Set(items) => {
                self.push("[", 1);
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        self.push(", ", 0);
                    }
                    self.value(item);
                }
                self.push("]", -1);
            }
            Value::Object(map) if map.is_empty() => self.push("{}", 0),
            Value::Object(map) => {
                self.push("{", 1);
                self.newline();
                for (name, value) in map {
                    self.attribute(name, value);
                }
                self.push("}", -1);
            }
        }
    }

    /// The lines indented and aligned, each ending in a newline.
    fn render(mut self) -> String {
        if self.lines.last().is_some_and(|line| line.lead.is_empty()) {
            self.lines.pop();
        }
        let indents = indents(&self.lines);
        let widths = lead_widths(&self.lines, &indents);
        let mut out = String::new();
        for ((line, indent), width) in self.lines.iter().zip(indents).zip(widths) {
            out.push_str(&" ".repeat(indent));
            out.push_str(&line.lead);
            if let Some(assign) = &line.assign {
                let lead = indent + line.lead.chars().count();
                out.push_str(&" ".repeat(width - lead + 1));
                out.push_str(assign);
            }
            out.push('\n');
        }
        out
    }
}

/// Each line's indent: two spaces for each earlier line that left brackets open and whose
/// brackets are still open, however many it opened.
fn indents(lines: &[Line]) -> Vec<usize> {
    let mut open: Vec<i32> = Vec::new();
    lines
        .iter()
        .map(|line| {
            if line.opened > 0 {
                let indent = 2 * open.len();
                open.push(line.opened);
                return indent;
            }
            let mut closed = -line.opened;
            while closed > 0 {
                let Some(last) = open.last_mut() else { break };
                if closed < *last {
                    *last -= closed;
                    closed = 0;
                } else {
                    closed -= *last;
                    open.pop();
                }
            }
            2 * open.len()
        })
        .collect()
}

/// The column each line's `=` aligns to: the widest indent and name among the consecutive
/// one-line attributes it belongs to (0 for a line that is not one).
fn lead_widths(lines: &[Line], indents: &[usize]) -> Vec<usize> {
    let mut widths = vec![0; lines.len()];
    let mut start = 0;
    while start < lines.len() {
        let run = lines[start..]
            .iter()
            .take_while(|line| line.assign.is_some())
            .count();
        let width = (start..start + run)
            .map(|i| indents[i] + lines[i].lead.chars().count())
            .max()
            .unwrap_or(0);
        widths[start..start + run].fill(width);
        start += run.max(1);
    }
    widths
}

/// Whether `name` is a valid identifier (a letter or `_`, then letters, digits, `_` and `-`).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_alphabetic() || first == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A quoted string literal: quotes, backslashes and control characters escaped, and `${` and
/// `%{` doubled so they are not read as template sequences.
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c if !printable(c) && (c as u32) < 0x10000 => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if !printable(c) => out.push_str(&format!("\\U{:08x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether Terraform writes `c` as itself: not a control character, a space other than
/// U+0020, or an invisible formatting character.
fn printable(c: char) -> bool {
    let formatting = matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}');
    !(c.is_control() || (c.is_whitespace() && c != ' ') || formatting)
}

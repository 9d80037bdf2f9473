//! Finding blocks, nested blocks and attributes in a parsed file by address and content.

use super::EditError;
use super::render;
use super::text::{indent_at, line_end};
use super::value::{Ordered, Value};
use hcl::edit::Span;
use hcl::edit::expr::Expression;
use hcl::edit::structure::{Block, Body};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// A block chosen by type and labels, then by a path of nested blocks.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// The file to edit; when absent every `.tf` file is searched and exactly one must hold the
    /// block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The top-level block type: `resource`, `data`, `module`, `variable`, ...
    pub block_type: String,
    /// The block's labels, such as `["aws_instance", "web"]`.
    pub labels: Vec<String>,
    /// Nested blocks to descend into, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<Step>,
}

/// One nested block on a path: its type, optional labels and attribute values it must have.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The nested block type, such as `ingress`, `dynamic` or `content`.
    pub block: String,
    /// Labels the block must have (for `dynamic "ingress"`); empty matches unlabelled blocks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// Attribute values the block must have; Terraform treats repeated blocks as sets, so blocks
    /// are told apart by content.
    #[serde(default, rename = "match", skip_serializing_if = "Ordered::is_empty")]
    pub matches: Ordered,
}

impl Target {
    /// The address as Terraform writes the block header, e.g. `resource "aws_instance" "web"`.
    pub fn address(&self) -> String {
        header(&self.block_type, &self.labels)
    }

    /// The nested path for messages, e.g. ` > ingress[from_port = 443]`.
    pub fn path_text(&self) -> String {
        self.path
            .iter()
            .map(|s| format!(" > {}", step_text(s)))
            .collect()
    }
}

/// A block header as Terraform writes it.
pub fn header(kind: &str, labels: &[String]) -> String {
    let mut out = kind.to_owned();
    for label in labels {
        out.push(' ');
        out.push_str(&render::quoted(label));
    }
    out
}

/// A nested step for messages.
pub fn step_text(step: &Step) -> String {
    let mut out = header(&step.block, &step.labels);
    if !step.matches.0.is_empty() {
        let conditions: Vec<String> = step
            .matches
            .0
            .iter()
            .map(|(k, v)| format!("{k} = {}", render::value(v, "")))
            .collect();
        out.push_str(&format!("[{}]", conditions.join(", ")));
    }
    out
}

/// A located block: the block and where its braces and first line sit.
#[derive(Debug, Clone)]
pub struct Located {
    /// The block as parsed.
    pub block: Block,
    /// The byte offset of its `{`.
    pub open: usize,
    /// The byte offset of its `}`.
    pub close: usize,
    /// The indent of the block's first line.
    pub indent: String,
}

impl Located {
    /// The indent of the block's contents.
    pub fn inner_indent(&self) -> String {
        format!("{}  ", self.indent)
    }

    /// Whether the body is written on the block's first line (`{}` or `{ a = 1 }`).
    pub fn is_one_line(&self, text: &str) -> bool {
        !text[self.open..self.close].contains('\n')
    }

    /// The end of the block's first line, after which the first item goes.
    pub fn first_line_end(&self, text: &str) -> usize {
        line_end(text, self.open)
    }
}

/// Where an error happened: file, block address and nested path.
#[derive(Debug, Clone)]
pub struct Place {
    /// The file.
    pub file: String,
    /// The block address.
    pub address: String,
    /// The nested path, or empty.
    pub path: String,
}

impl Place {
    /// The place of `target` in `file`.
    pub fn of(file: &str, target: &Target) -> Place {
        Place {
            file: file.to_owned(),
            address: target.address(),
            path: target.path_text(),
        }
    }

    /// The refusal of an edit at this place, with why.
    pub fn impossible(&self, message: String) -> super::EditError {
        super::EditError::Impossible {
            file: self.file.clone(),
            address: self.address.clone(),
            path: self.path.clone(),
            message,
        }
    }

    /// The same place one nested step further.
    pub fn nested(&self, step: &str) -> Place {
        Place {
            path: format!("{} > {step}", self.path),
            ..self.clone()
        }
    }
}

/// The span of any parsed item, or an error naming the place.
pub fn span_of(item: &impl Span, place: &Place) -> Result<Range<usize>, EditError> {
    item.span().ok_or_else(|| EditError::Internal {
        file: place.file.clone(),
        message: "a parsed item has no position".to_owned(),
    })
}

/// Top-level blocks of `body` with the given type and exact labels.
pub fn top_blocks<'b>(body: &'b Body, kind: &str, labels: &[String]) -> Vec<&'b Block> {
    body.blocks()
        .filter(|b| b.has_ident(kind) && b.has_exact_labels(labels))
        .collect()
}

/// Finds the block `target` names in the parsed `body` of `text`.
pub fn locate(
    text: &str,
    body: &Body,
    target: &Target,
    place: &Place,
) -> Result<Located, EditError> {
    let mut block = single(top_blocks(body, &target.block_type, &target.labels), place)?;
    let mut here = Place {
        path: String::new(),
        ..place.clone()
    };
    for step in &target.path {
        here = here.nested(&step_text(step));
        let found: Vec<&Block> = block
            .body
            .blocks()
            .filter(|b| b.has_ident(&step.block) && b.has_exact_labels(&step.labels))
            .filter(|b| matches_all(text, &b.body, &step.matches))
            .collect();
        block = single(found, &here)?;
    }
    located(text, block, place)
}

/// The one block in `found`, or a not-found or ambiguity error.
pub fn single<'b>(found: Vec<&'b Block>, place: &Place) -> Result<&'b Block, EditError> {
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(EditError::NotFound {
            file: place.file.clone(),
            address: place.address.clone(),
            path: place.path.clone(),
        }),
        many => Err(EditError::Ambiguous {
            file: place.file.clone(),
            address: place.address.clone(),
            path: place.path.clone(),
            count: many.len(),
        }),
    }
}

/// The braces and indent of `block`.
pub fn located(text: &str, block: &Block, place: &Place) -> Result<Located, EditError> {
    let span = span_of(block, place)?;
    let head_end = block
        .labels
        .last()
        .map_or_else(|| span_of(&block.ident, place), |l| span_of(l, place))?
        .end;
    let open = text[head_end..span.end].find('{').map(|at| head_end + at);
    match open {
        Some(open) if span.end > open + 1 => Ok(Located {
            block: block.clone(),
            open,
            close: span.end - 1,
            indent: indent_at(text, span.start).to_owned(),
        }),
        _ => Err(EditError::Internal {
            file: place.file.clone(),
            message: "block without braces".to_owned(),
        }),
    }
}

/// Whether every attribute in `matches` has the given value in `body`.
pub fn matches_all(text: &str, body: &Body, matches: &Ordered) -> bool {
    matches.0.iter().all(|(name, want)| {
        body.get_attribute(name)
            .is_some_and(|attr| same_value(text, &attr.value, want))
    })
}

/// Whether the expression `expr` (in `text`) has the value `want`: literals are compared by
/// value (numbers and strings loosely, as Terraform converts them); any other expression by its
/// source text, so `{"cidr_blocks": "var.allowed"}` matches `cidr_blocks = var.allowed`.
pub fn same_value(text: &str, expr: &Expression, want: &Value) -> bool {
    match literal(expr) {
        Some(have) => loosely_equal(&have, want),
        None => match (want, expr.span()) {
            (Value::String(s), Some(span)) => text[span].trim() == s.trim(),
            _ => false,
        },
    }
}

fn loosely_equal(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Number(n), Value::String(s)) | (Value::String(s), Value::Number(n)) => {
            s.parse::<f64>().ok() == n.as_f64()
        }
        (Value::Bool(b), Value::String(s)) | (Value::String(s), Value::Bool(b)) => {
            s == &b.to_string()
        }
        (Value::List(a), Value::List(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| loosely_equal(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, v)| b.iter().any(|(k2, v2)| k == k2 && loosely_equal(v, v2)))
        }
        _ => have == want,
    }
}

/// The value of a literal expression (no variables, calls or interpolations), if it is one.
pub fn literal(expr: &Expression) -> Option<Value> {
    Some(match expr {
        Expression::Null(_) => Value::Null,
        Expression::Bool(b) => Value::Bool(*b.value()),
        Expression::Number(n) => Value::Number(serde_json::from_str(&n.value().to_string()).ok()?),
        Expression::String(s) => Value::String(s.value().clone()),
        Expression::Array(items) => Value::List(items.iter().map(literal).collect::<Option<_>>()?),
        Expression::Object(object) => Value::Object(
            object
                .iter()
                .map(|(k, v)| Some((key_name(k)?, literal(v.expr())?)))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// The name an object key stands for: an identifier or a literal string.
pub fn key_name(key: &hcl::edit::expr::ObjectKey) -> Option<String> {
    match key {
        hcl::edit::expr::ObjectKey::Ident(ident) => Some(ident.as_str().to_owned()),
        hcl::edit::expr::ObjectKey::Expression(Expression::String(s)) => Some(s.value().clone()),
        hcl::edit::expr::ObjectKey::Expression(_) => None,
    }
}

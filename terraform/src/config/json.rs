//! Terraform's JSON configuration syntax (`.tf.json`), read through its native equivalent.
//!
//! Each JSON file is translated into the HCL that means the same, following Terraform's
//! documentation ("JSON Configuration Syntax"): property names are block types and labels
//! down to the block's body; in a body, a string is a template (`"${var.x}"`) except where
//! the native syntax takes a bare expression or type (`depends_on`, `provider`, `providers`,
//! `ignore_changes`, `replace_triggered_by`, a variable's `type`, the `from`/`to` of
//! `moved`, `removed` and `import`), and a variable's `default` is a literal; `"//"`
//! properties are comments. A property is a nested block where the native syntax has a block:
//! the meta-blocks (`lifecycle`, `dynamic` and its `content`, `provisioner`, `connection`,
//! `validation`, pre- and postconditions), the provider's own (`default_tags`,
//! `assume_role`), and, for resources, what the AWS provider's schema declares as a block.
//!
//! Every item is written on the line of the JSON that holds it, so the HCL has the JSON
//! file's line numbers: diagnostics and provenance name the right lines. The translation
//! stands in for the file's text in the loaded project; the edit tools do not edit it.

use knowledge::schema::{Block, ProviderSchema};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::{LoadError, line_of};

/// Whether a file name is a configuration file: `.tf`, `.tf.json`, `.tofu`, `.tofu.json`.
pub fn is_configuration(name: &str) -> bool {
    [".tf", ".tofu"].iter().any(|ext| name.ends_with(ext)) || is_json(name)
}

/// Whether a file name is JSON configuration (`.tf.json`, `.tofu.json`).
pub fn is_json(name: &str) -> bool {
    name.ends_with(".tf.json") || name.ends_with(".tofu.json")
}

/// The native translation of a JSON configuration file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Native {
    /// The native text.
    pub text: String,
    /// The JSON text it was translated from.
    pub source: String,
    /// For each line of the native text (from 1; index 0 unused), the JSON line it came
    /// from: the same but where a compact JSON line holds several items.
    lines: Vec<usize>,
}

impl Native {
    /// The JSON line of line `line` of the native text.
    pub fn json_line(&self, line: usize) -> usize {
        self.lines.get(line).copied().unwrap_or(line)
    }
}

/// The native-syntax equivalent of the JSON configuration `text` of `file`, line for line.
pub(super) fn to_native(file: &str, text: &str) -> Result<Native, LoadError> {
    let invalid = |message: String, at: usize| LoadError::Invalid {
        file: file.to_string(),
        line: line_of(text, at),
        message,
    };
    let root: &RawValue = serde_json::from_str(text).map_err(|e| LoadError::Invalid {
        file: file.to_string(),
        line: e.line(),
        message: e.to_string(),
    })?;
    let mut out = Writer::new(text);
    let Some(entries) = entries(root) else {
        return Err(invalid(
            "a JSON configuration file holds one object".to_string(),
            0,
        ));
    };
    for (key, value) in entries {
        let (labels, kind) = match key.as_str() {
            "//" => continue,
            "resource" | "data" => (2, Kind::Resource),
            "module" => (1, Kind::Module),
            "variable" => (1, Kind::Variable),
            "output" => (1, Kind::Output),
            "provider" => (1, Kind::Provider),
            "locals" | "terraform" => (0, Kind::Plain),
            "moved" | "removed" | "import" => (0, Kind::Refactor),
            "check" => (1, Kind::Plain),
            other => {
                return Err(invalid(
                    format!("`{other}` is not a top-level block type"),
                    offset(text, value),
                ));
            }
        };
        out.labelled_blocks(&key, Vec::new(), labels, value, kind, None)
            .map_err(|(message, at)| invalid(message, at))?;
    }
    Ok(out.finish())
}

/// What a body belongs to, which decides how its properties read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Resource,
    Module,
    Variable,
    Output,
    Provider,
    Refactor,
    Lifecycle,
    Plain,
}

/// How a JSON value reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Strings are templates.
    Template,
    /// Strings are bare expressions (references, types).
    Expression,
    /// Strings are literal text.
    Literal,
}

/// An error message and the byte offset it concerns.
type Failure = (String, usize);

/// The HCL text being written, tracking its line so each item lands on its JSON line.
struct Writer<'a> {
    json: &'a str,
    out: String,
    line: usize,
    fresh: bool,
    lines: Vec<usize>,
}

impl<'a> Writer<'a> {
    fn new(json: &'a str) -> Self {
        Writer {
            json,
            out: String::with_capacity(json.len()),
            line: 1,
            fresh: true,
            lines: vec![0, 1],
        }
    }

    fn finish(mut self) -> Native {
        if !self.fresh {
            self.out.push('\n');
        }
        Native {
            text: self.out,
            source: self.json.to_owned(),
            lines: self.lines,
        }
    }

    /// Starts a new line at the JSON line of `at` (or the next line when already past it).
    fn start(&mut self, at: usize) {
        let target = line_of(self.json, at);
        if !self.fresh {
            self.out.push('\n');
            self.line += 1;
        }
        while self.line < target {
            self.out.push('\n');
            self.line += 1;
        }
        self.lines.resize(self.line + 1, target);
        self.lines[self.line] = target;
        self.fresh = false;
    }

    /// Blocks of type `ident` under `depth` more levels of labels: an object per level, and
    /// an array anywhere for several.
    fn labelled_blocks(
        &mut self,
        ident: &str,
        labels: Vec<String>,
        depth: usize,
        value: &RawValue,
        kind: Kind,
        schema: Option<&Block>,
    ) -> Result<(), Failure> {
        if let Some(items) = items(value) {
            for item in items {
                self.labelled_blocks(ident, labels.clone(), depth, item, kind, schema)?;
            }
            return Ok(());
        }
        if depth == 0 {
            return self.block(ident, &labels, value, kind, schema);
        }
        let Some(entries) = entries(value) else {
            return Err(self.failure(format!("`{ident}` expects an object of labels"), value));
        };
        for (label, inner) in entries {
            if label == "//" {
                continue;
            }
            let mut labels = labels.clone();
            labels.push(label);
            self.labelled_blocks(ident, labels, depth - 1, inner, kind, schema)?;
        }
        Ok(())
    }

    /// One block: header on the body's line, each property, the closing brace on the line
    /// the body ends. `schema` is the provider schema of a resource body, when known.
    fn block(
        &mut self,
        ident: &str,
        labels: &[String],
        body: &RawValue,
        kind: Kind,
        schema: Option<&Block>,
    ) -> Result<(), Failure> {
        let schema = match (kind, ident, labels.first()) {
            (Kind::Resource, "resource", Some(resource_type)) => ProviderSchema::bundled()
                .ok()
                .and_then(|provider| provider.resource(resource_type))
                .map(|resource| &resource.block),
            (Kind::Resource, "dynamic", Some(name)) => {
                schema.and_then(|s| s.blocks.get(name)).map(|b| &b.block)
            }
            _ => schema,
        };
        let Some(entries) = entries(body) else {
            return Err(self.failure(format!("a `{ident}` block's body is an object"), body));
        };
        self.start(offset(self.json, body));
        self.out.push_str(ident);
        for label in labels {
            self.out.push(' ');
            self.out.push_str(&quoted(label, Mode::Literal));
        }
        self.out.push_str(" {");
        for (key, value) in entries {
            self.property(ident, kind, &key, value, schema)?;
        }
        let end = offset(self.json, body) + body.get().len().saturating_sub(1);
        self.start(end);
        self.out.push('}');
        Ok(())
    }

    /// One property of a body: a nested block or an argument.
    fn property(
        &mut self,
        ident: &str,
        kind: Kind,
        key: &str,
        value: &RawValue,
        schema: Option<&Block>,
    ) -> Result<(), Failure> {
        if key == "//" {
            return Ok(());
        }
        if let Some((labels, inner)) = nested(ident, kind, key) {
            // A dynamic block and its content keep the schema they stand for.
            let inner_schema = match key {
                "dynamic" | "content" => schema,
                _ => schema.and_then(|s| s.blocks.get(key)).map(|b| &b.block),
            };
            return self.labelled_blocks(key, Vec::new(), labels, value, inner, inner_schema);
        }
        if let Some(block) = schema.and_then(|s| s.blocks.get(key)) {
            let inner = Some(&block.block);
            return self.labelled_blocks(key, Vec::new(), 0, value, Kind::Resource, inner);
        }
        self.start(offset(self.json, value));
        self.out.push_str(&quoted_key(key));
        self.out.push_str(" = ");
        let text = self.value(value, mode(ident, kind, key))?;
        self.out.push_str(&text);
        Ok(())
    }

    /// A JSON value as a one-line native expression.
    fn value(&self, value: &RawValue, mode: Mode) -> Result<String, Failure> {
        if let Some(items) = items(value) {
            let parts: Result<Vec<String>, Failure> =
                items.into_iter().map(|v| self.value(v, mode)).collect();
            return Ok(format!("[{}]", parts?.join(", ")));
        }
        if let Some(entries) = entries(value) {
            let parts: Result<Vec<String>, Failure> = entries
                .into_iter()
                .filter(|(key, _)| key != "//")
                .map(|(key, v)| Ok(format!("{} = {}", quoted_key(&key), self.value(v, mode)?)))
                .collect();
            return Ok(match parts?.as_slice() {
                [] => "{}".to_string(),
                parts => format!("{{ {} }}", parts.join(", ")),
            });
        }
        let raw = value.get();
        if raw.starts_with('"') {
            let text: String =
                serde_json::from_str(raw).map_err(|e| self.failure(e.to_string(), value))?;
            return Ok(match mode {
                Mode::Expression => text,
                Mode::Template => sole_interpolation(&text).unwrap_or_else(|| quoted(&text, mode)),
                Mode::Literal => quoted(&text, mode),
            });
        }
        Ok(raw.to_string())
    }

    fn failure(&self, message: String, at: &RawValue) -> Failure {
        (message, offset(self.json, at))
    }
}

/// Whether property `key` of a `kind` body of block type `ident` is a nested block: how many
/// labels it takes and what its body is.
fn nested(ident: &str, kind: Kind, key: &str) -> Option<(usize, Kind)> {
    match (kind, ident, key) {
        (Kind::Resource, _, "lifecycle") => Some((0, Kind::Lifecycle)),
        (Kind::Resource, _, "provisioner") => Some((1, Kind::Plain)),
        (Kind::Resource, _, "connection") => Some((0, Kind::Plain)),
        (Kind::Resource, _, "dynamic") => Some((1, Kind::Resource)),
        (Kind::Resource, "dynamic", "content") => Some((0, Kind::Resource)),
        (Kind::Lifecycle, _, "precondition" | "postcondition") => Some((0, Kind::Plain)),
        (Kind::Output, _, "precondition") => Some((0, Kind::Plain)),
        (Kind::Variable, _, "validation") => Some((0, Kind::Plain)),
        (Kind::Provider, _, "default_tags" | "assume_role" | "ignore_tags" | "endpoints") => {
            Some((0, Kind::Plain))
        }
        (Kind::Plain, "terraform", "required_providers") => Some((0, Kind::Plain)),
        (Kind::Plain, "terraform", "backend") => Some((1, Kind::Plain)),
        (Kind::Plain, "terraform", "cloud") => Some((0, Kind::Plain)),
        (Kind::Plain, "check", "assert") => Some((0, Kind::Plain)),
        (Kind::Plain, "check", "data") => Some((2, Kind::Resource)),
        _ => None,
    }
}

/// How the value of property `key` reads.
fn mode(ident: &str, kind: Kind, key: &str) -> Mode {
    match (kind, ident, key) {
        (_, _, "depends_on") => Mode::Expression,
        (Kind::Resource, _, "provider") => Mode::Expression,
        (Kind::Module, _, "providers") => Mode::Expression,
        (Kind::Lifecycle, _, "ignore_changes" | "replace_triggered_by") => Mode::Expression,
        (Kind::Variable, _, "type") => Mode::Expression,
        (Kind::Variable, _, "default") => Mode::Literal,
        (Kind::Refactor, _, "from" | "to") => Mode::Expression,
        _ => Mode::Template,
    }
}

/// A string as a quoted native string: literal text as [`crate::quoted`] writes
/// it; in a template, `${...}` and `%{...}` stay as written, their expressions (nested strings
/// included) copied as they are.
fn quoted(text: &str, mode: Mode) -> String {
    if mode == Mode::Literal {
        return crate::quoted(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let opens = matches!(c, '$' | '%') && chars.get(at + 1) == Some(&'{');
        let escaped = opens && at > 0 && chars[at - 1] == c;
        if opens && !escaped {
            out.push(c);
            out.push('{');
            at = copy_expression(&chars, at + 2, &mut out);
        } else {
            crate::push_escaped(&mut out, c);
            at += 1;
        }
    }
    out.push('"');
    out
}

/// The expression of a template that is one interpolation and nothing else (`"${var.tags}"`),
/// which has that expression's value: written bare, as native code writes it.
fn sole_interpolation(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    if !text.starts_with("${") {
        return None;
    }
    let mut copied = String::new();
    let end = copy_expression(&chars, 2, &mut copied);
    let inner = copied.strip_suffix('}')?;
    (end == chars.len() && !inner.contains('\n')).then(|| inner.trim().to_owned())
}

/// Copies an interpolation's expression from just after its `{` through its closing `}`;
/// returns the index after it.
fn copy_expression(chars: &[char], mut at: usize, out: &mut String) -> usize {
    let mut depth = 1;
    while at < chars.len() {
        let c = chars[at];
        out.push(c);
        at += 1;
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            '"' => at = copy_string(chars, at, out),
            _ => {}
        }
    }
    at
}

/// Copies a string inside an expression from just after its opening quote through its
/// closing quote, interpolations included; returns the index after it.
fn copy_string(chars: &[char], mut at: usize, out: &mut String) -> usize {
    while at < chars.len() {
        let c = chars[at];
        out.push(c);
        at += 1;
        match c {
            '\\' => {
                if let Some(&next) = chars.get(at) {
                    out.push(next);
                    at += 1;
                }
            }
            '"' => return at,
            '$' | '%' if chars.get(at) == Some(&'{') => {
                out.push('{');
                at = copy_expression(chars, at + 1, out);
            }
            _ => {}
        }
    }
    at
}

/// An argument or object key: bare when it is an identifier, else quoted.
fn quoted_key(key: &str) -> String {
    let identifier = key
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    match identifier {
        true => key.to_string(),
        false => quoted(key, Mode::Literal),
    }
}

/// The byte offset of a raw value within the text it borrows from.
fn offset(text: &str, value: &RawValue) -> usize {
    (value.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// The properties of a JSON object, in order; `None` when the value is not an object.
fn entries(value: &RawValue) -> Option<Vec<(String, &RawValue)>> {
    value
        .get()
        .starts_with('{')
        .then(|| serde_json::from_str::<Entries>(value.get()).ok())
        .flatten()
        .map(|entries| entries.0)
}

/// The elements of a JSON array; `None` when the value is not an array.
fn items(value: &RawValue) -> Option<Vec<&RawValue>> {
    value
        .get()
        .starts_with('[')
        .then(|| serde_json::from_str::<Vec<&RawValue>>(value.get()).ok())
        .flatten()
}

/// A JSON object's properties in document order, values borrowed from the text.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut out = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    out.push((key, value));
                }
                Ok(Entries(out))
            }
        }
        deserializer.deserialize_map(Ordered)
    }
}

/// The JSON file `json` with the change that turned its translation `old` into `new`
/// written in: each argument of a top-level block whose value changed is replaced in place
/// and each new one added after the block's last, at its indentation; every other byte stays.
/// A change to nested blocks, or one that adds or removes a block or an argument, is refused
/// with the reason.
pub(super) fn rewrite(json: &str, old: &str, new: &str) -> Result<String, String> {
    let parse = |text: &str| crate::syntax::parse_body(text).map_err(|e| e.to_string());
    let (old_body, new_body) = (parse(old)?, parse(new)?);
    let root: &RawValue = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let old_blocks: Vec<_> = old_body.blocks().collect();
    let new_blocks: Vec<_> = new_body.blocks().collect();
    if old_blocks.len() != new_blocks.len() {
        return Err("the change adds or removes a block".to_owned());
    }
    let written = |text: &str, item: &dyn hcl::edit::Span| {
        item.span()
            .and_then(|span| text.get(span))
            .unwrap_or_default()
            .to_owned()
    };
    for (before, after) in old_blocks.iter().zip(&new_blocks) {
        let nested = |text: &str, b: &hcl::edit::structure::Block| {
            b.body
                .blocks()
                .map(|n| written(text, n))
                .collect::<Vec<_>>()
        };
        if before.ident.as_str() != after.ident.as_str()
            || nested(old, before) != nested(new, after)
        {
            return Err("the change is inside a nested block".to_owned());
        }
        let labels: Vec<&str> = after.labels.iter().map(|l| l.as_str()).collect();
        for attr in after.body.attributes() {
            let key = attr.key.as_str();
            let was = before.body.get_attribute(key);
            if was.is_some_and(|w| written(old, &w.value) == written(new, &attr.value)) {
                continue;
            }
            let body = find_body(root, after.ident.as_str(), &labels).ok_or_else(|| {
                format!(
                    "no `{}` block {} in the JSON",
                    after.ident,
                    labels.join(".")
                )
            })?;
            let value = to_json(&attr.value, new);
            edits.push(match property(json, body, key) {
                Some(range) => {
                    let indent = indent_of(json, range.start);
                    (range, pretty(&value, &indent))
                }
                None => insertion(json, body, key, &value)?,
            });
        }
        if before
            .body
            .attributes()
            .any(|a| !after.body.has_attribute(a.key.as_str()))
        {
            return Err("the change removes an argument".to_owned());
        }
    }
    let mut out = json.to_owned();
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    for (range, text) in edits {
        out.replace_range(range, &text);
    }
    Ok(out)
}

/// The body object of the block `ident` with `labels` in the JSON document.
fn find_body<'a>(root: &'a RawValue, ident: &str, labels: &[&str]) -> Option<&'a RawValue> {
    let mut candidates: Vec<&RawValue> = entries(root)?
        .into_iter()
        .filter(|(k, _)| k == ident)
        .map(|(_, v)| v)
        .collect();
    for label in labels {
        candidates = candidates
            .into_iter()
            .flat_map(|v| items(v).unwrap_or_else(|| vec![v]))
            .filter_map(entries)
            .flatten()
            .filter(|(k, _)| k == label)
            .map(|(_, v)| v)
            .collect();
    }
    let mut bodies = candidates
        .into_iter()
        .flat_map(|v| items(v).unwrap_or_else(|| vec![v]));
    let body = bodies.next()?;
    bodies.next().is_none().then_some(body)
}

/// The byte range of property `key`'s value in the object `body`.
fn property(json: &str, body: &RawValue, key: &str) -> Option<std::ops::Range<usize>> {
    let (_, value) = entries(body)?.into_iter().find(|(k, _)| k == key)?;
    let start = offset(json, value);
    Some(start..start + value.get().len())
}

/// An insertion of `"key": value` after the object's last property, on its own line at that
/// property's indentation.
fn insertion(
    json: &str,
    body: &RawValue,
    key: &str,
    value: &serde_json::Value,
) -> Result<(std::ops::Range<usize>, String), String> {
    let properties = entries(body).ok_or("the block's body is not an object")?;
    let Some((_, last)) = properties.last() else {
        let start = offset(json, body);
        let text = format!("{{ {}: {} }}", quote(key), pretty(value, ""));
        return Ok((start..start + body.get().len(), text));
    };
    let end = offset(json, last) + last.get().len();
    let indent = indent_of(json, offset(json, last));
    let text = format!(",\n{indent}{}: {}", quote(key), pretty(value, &indent));
    Ok((end..end, text))
}

/// The whitespace that starts the line holding byte `at`.
fn indent_of(json: &str, at: usize) -> String {
    let line_start = json[..at].rfind('\n').map_or(0, |n| n + 1);
    json[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// A JSON value written as the file writes them: pretty, continuation lines at `indent`.
fn pretty(value: &serde_json::Value, indent: &str) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.replace('\n', &format!("\n{indent}"))
}

fn quote(key: &str) -> String {
    serde_json::to_string(key).unwrap_or_default()
}

/// A native expression as Terraform's JSON syntax writes it: literals as JSON, anything
/// else as a `${...}` template string.
fn to_json(expr: &hcl::edit::expr::Expression, text: &str) -> serde_json::Value {
    use hcl::edit::Span;
    use hcl::edit::expr::{Expression, ObjectKey};
    use serde_json::Value as J;
    let source = |item: &dyn Span| {
        item.span()
            .and_then(|span| text.get(span))
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    match expr {
        Expression::Null(_) => J::Null,
        Expression::Bool(b) => J::Bool(*b.value()),
        Expression::Number(n) => serde_json::from_str(&n.value().to_string()).unwrap_or(J::Null),
        Expression::String(s) => J::String(s.value().replace("${", "$${").replace("%{", "%%{")),
        Expression::Array(items) => J::Array(items.iter().map(|i| to_json(i, text)).collect()),
        Expression::Object(object) => J::Object(
            object
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        ObjectKey::Ident(id) => id.as_str().to_owned(),
                        ObjectKey::Expression(Expression::String(s)) => s.value().to_string(),
                        ObjectKey::Expression(other) => format!("${{{}}}", source(other)),
                    };
                    (key, to_json(v.expr(), text))
                })
                .collect(),
        ),
        Expression::StringTemplate(_) => {
            let written = source(expr);
            let inner = written.trim_start_matches('"').trim_end_matches('"');
            J::String(inner.replace("\\\"", "\"").replace("\\\\", "\\"))
        }
        other => J::String(format!("${{{}}}", one_line(&source(other)))),
    }
}

/// A multi-line native expression on one line: items a newline separated get a comma.
fn one_line(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !out.is_empty() {
            let open = out.ends_with(['{', '[', '(', ',']);
            let close = line.starts_with(['}', ']', ')']);
            out.push_str(if open || close { " " } else { ", " });
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn native(json: &str) -> String {
        to_native("main.tf.json", json).expect("translates").text
    }

    /// The example of Terraform's "JSON Configuration Syntax" page, pretty-printed: each
    /// item on its JSON line, strings as templates.
    #[test]
    fn the_documentation_example_reads_line_for_line() {
        let json = r#"{
  "resource": {
    "aws_instance": {
      "example": {
        "instance_type": "t2.micro",
        "ami": "ami-abc123"
      }
    }
  }
}
"#;
        let text = native(json);
        assert_eq!(
            text.lines().nth(3),
            Some("resource \"aws_instance\" \"example\" {")
        );
        assert_eq!(text.lines().nth(4), Some("instance_type = \"t2.micro\""));
        assert_eq!(text.lines().nth(5), Some("ami = \"ami-abc123\""));
        assert_eq!(text.lines().nth(6), Some("}"));
        assert!(crate::syntax::parse_body(&text).is_ok(), "{text}");
    }

    #[test]
    fn templates_keep_their_expressions_and_literals_are_escaped() {
        let text = native(
            r#"{"variable": {"name": {"type": "list(string)", "default": ["${x}", "a\"b"]}},
 "output": {"o": {"value": "${contains(var.l, \"s3\") ? 1 : 0}", "depends_on": ["aws_vpc.main"]}}}"#,
        );
        assert!(text.contains("type = list(string)"), "{text}");
        assert!(text.contains(r#"default = ["$${x}", "a\"b"]"#), "{text}");
        // A template that is one interpolation is that expression, written bare.
        assert!(
            text.contains(r#"value = contains(var.l, "s3") ? 1 : 0"#),
            "{text}"
        );
        assert!(text.contains("depends_on = [aws_vpc.main]"), "{text}");
        assert!(crate::syntax::parse_body(&text).is_ok(), "{text}");
    }

    #[test]
    fn blocks_are_read_as_blocks_by_the_schema_and_meta_arguments() {
        let text = native(
            r#"{"resource": {"aws_instance": {"web": {
  "root_block_device": {"volume_size": 20},
  "lifecycle": {"ignore_changes": ["tags"]},
  "dynamic": {"ebs_block_device": {"for_each": "${var.disks}", "content": {"device_name": "${ebs_block_device.value}"}}},
  "tags": {"Name": "web"}
}}}}"#,
        );
        let body = crate::syntax::parse_body(&text).expect("parses");
        let web = body.get_blocks("resource").next().expect("resource");
        assert!(web.body.has_blocks("root_block_device"), "{text}");
        assert!(web.body.has_blocks("lifecycle"), "{text}");
        let dynamic = web.body.get_blocks("dynamic").next().expect("dynamic");
        assert!(dynamic.body.has_blocks("content"), "{text}");
        assert!(web.body.has_attribute("tags"), "{text}");
        assert!(text.contains("ignore_changes = [tags]"), "{text}");
    }

    #[test]
    fn a_change_is_written_into_the_json_in_place() {
        let json = "{\n  \"resource\": {\n    \"aws_sqs_queue\": {\n      \"q\": {\n        \"name\": \"jobs\",\n        \"tags\": \"${var.tags}\"\n      }\n    }\n  }\n}\n";
        let old = native(json);
        assert!(old.contains("tags = var.tags"), "{old}");
        let new = old.replace("name = \"jobs\"", "name = \"jobs-2\"").replace(
            "tags = var.tags",
            "tags = merge(var.tags, {\n  Team = \"x\"\n  Env  = \"y\"\n})\ndelay_seconds = 5",
        );
        let written = rewrite(json, &old, &new).expect("writable");
        assert_eq!(
            written,
            "{\n  \"resource\": {\n    \"aws_sqs_queue\": {\n      \"q\": {\n        \"name\": \"jobs-2\",\n        \"tags\": \"${merge(var.tags, { Team = \\\"x\\\", Env  = \\\"y\\\" })}\",\n        \"delay_seconds\": 5\n      }\n    }\n  }\n}\n"
        );
        let nested = old.replace(
            "}\n",
            "\n  lifecycle {\n    ignore_changes = [tags]\n  }\n}\n",
        );
        assert!(rewrite(json, &old, &nested).is_err());
    }

    #[test]
    fn bad_json_names_the_file_and_line() {
        let error =
            to_native("main.tf.json", "{\n  \"resource\": {\n    x\n}").expect_err("invalid");
        assert!(error.to_string().starts_with("main.tf.json:3:"), "{error}");
        let error = to_native("main.tf.json", "{\n  \"nonsense\": {}\n}").expect_err("invalid");
        assert_eq!(
            error.to_string(),
            "main.tf.json:2: `nonsense` is not a top-level block type"
        );
    }
}

//! The edits themselves, as splices of file text.

use super::EditError;
use super::align::realign;
use super::locate::{Located, Place, Target, literal, locate, same_value, span_of};
use super::render;
use super::text::{indent_at, line_end, newline_of, removal, whole_lines};
use super::value::Value;
use hcl::edit::Span;
use hcl::edit::expr::{Array, Expression, Object};
use hcl::edit::structure::Body;
use std::ops::Range;

/// One file being edited, or one top-level block of it.
#[derive(Debug, Clone)]
pub struct Doc {
    /// The file's path.
    pub path: String,
    /// Its current text, or the block's when `window` is set.
    pub text: String,
    pub(super) newline: &'static str,
    /// The range of the file's text that `text` replaces, for a part opened alone.
    pub(super) window: Option<Range<usize>>,
}

impl Doc {
    /// The whole of `text`, the file `path`.
    pub(super) fn new(path: &str, text: &str) -> Doc {
        Doc {
            path: path.to_owned(),
            text: text.to_owned(),
            newline: newline_of(text),
            window: None,
        }
    }

    /// Parses the current text.
    pub fn parse(&self) -> Result<Body, EditError> {
        crate::syntax::parse_body(&self.text).map_err(|e| EditError::Parse {
            file: self.path.clone(),
            message: e.to_string(),
        })
    }

    /// Replaces `range` with `with` (written with `\n` line ends) and re-aligns what it touched.
    pub fn splice(&mut self, range: Range<usize>, with: &str) {
        let with = with.replace('\n', self.newline);
        let touched = range.start..range.start + with.len();
        self.text.replace_range(range, &with);
        self.text = realign(&self.text, touched);
    }

    /// Replaces several non-overlapping ranges of the current text at once, then re-aligns what
    /// they touched: aligning after each one would move the ranges still to come.
    pub fn splice_all(&mut self, mut edits: Vec<(Range<usize>, String)>) {
        edits.sort_by_key(|e| std::cmp::Reverse(e.0.start));
        let (Some(first), Some(last)) = (
            edits.iter().map(|e| e.0.start).min(),
            edits.iter().map(|e| e.0.end).max(),
        ) else {
            return;
        };
        let mut end = last;
        for (range, with) in edits {
            let with = with.replace('\n', self.newline);
            end = end + with.len() - range.len();
            self.text.replace_range(range, &with);
        }
        self.text = realign(&self.text, first..end);
    }

    /// The part `window` of `file`, the text of `path`, opened alone.
    pub(super) fn part(path: &str, file: &str, window: Range<usize>) -> Doc {
        Doc {
            path: path.to_owned(),
            text: file[window.clone()].to_owned(),
            newline: newline_of(file),
            window: Some(window),
        }
    }

    /// Finds `target` in this file.
    pub fn locate(&self, target: &Target) -> Result<Located, EditError> {
        locate(&self.text, &self.parse()?, target, &self.place(target))
    }

    /// The place of `target` in this file, for errors.
    pub fn place(&self, target: &Target) -> Place {
        Place::of(&self.path, target)
    }
}

/// Sets attribute `name` of the located block to `v`; false when it already had that value.
pub fn set_attribute(
    doc: &mut Doc,
    loc: &Located,
    place: &Place,
    name: &str,
    v: &Value,
) -> Result<bool, EditError> {
    match loc.block.body.get_attribute(name) {
        Some(attr) if literal(&attr.value).as_ref() == Some(v) => Ok(false),
        Some(attr) => {
            let span = span_of(&attr.value, place)?;
            let indent = indent_at(&doc.text, span.start).to_owned();
            doc.splice(span, &render::value(v, &indent));
            Ok(true)
        }
        None => {
            insert_attribute(doc, loc, &render::attribute(name, v, &loc.inner_indent()));
            Ok(true)
        }
    }
}

/// Adds the line `line` (an attribute) where a person would: after the last one-line argument
/// that comes before any multi-line argument or nested block (meta-arguments such as
/// `for_each` aside), or else (and always in `variable` and `output` blocks) after the block's
/// last attribute.
pub fn insert_attribute(doc: &mut Doc, loc: &Located, line: &str) {
    let inner = loc.inner_indent();
    if loc.is_one_line(&doc.text) {
        return expand_one_line(doc, loc, &[line]);
    }
    // A variable's or output's arguments keep their conventional order: the new one goes last.
    let leading = !["variable", "output"].contains(&loc.block.ident.as_str());
    let last = leading
        .then(|| leading_argument_end(&doc.text, &loc.block.body))
        .flatten()
        .or_else(|| {
            loc.block
                .body
                .attributes()
                .filter_map(Span::span)
                .map(|s| s.end)
                .max()
        });
    match last {
        Some(end) => {
            let at = line_end(&doc.text, end - 1);
            doc.splice(at..at, &format!("\n{inner}{line}"));
        }
        None => {
            let at = loc.first_line_end(&doc.text);
            let gap = if loc.block.body.is_empty() { "" } else { "\n" };
            doc.splice(at..at, &format!("\n{inner}{line}{gap}"));
        }
    }
}

/// The end of the last one-line, non-meta argument before the body's first multi-line
/// argument or nested block.
fn leading_argument_end(text: &str, body: &Body) -> Option<usize> {
    const META: [&str; 4] = ["count", "for_each", "provider", "depends_on"];
    let mut end = None;
    for structure in body.iter() {
        let Some(attr) = structure.as_attribute() else {
            break;
        };
        let span = attr.span()?;
        if text[span.clone()].contains('\n') {
            break;
        }
        if !META.contains(&attr.key.as_str()) {
            end = Some(span.end);
        }
    }
    end
}

/// Adds `block` (rendered text) after the last nested block of the same type, or at the end.
pub fn insert_block(doc: &mut Doc, loc: &Located, kind: &str, block: &str) {
    let inner = loc.inner_indent();
    if loc.is_one_line(&doc.text) {
        return expand_one_line(doc, loc, &["", block]);
    }
    let body = &loc.block.body;
    let same_kind = body
        .blocks()
        .filter(|b| b.has_ident(kind))
        .filter_map(Span::span)
        .last();
    let anchor = same_kind.or_else(|| body.iter().filter_map(Span::span).last());
    match anchor {
        Some(span) => {
            let at = line_end(&doc.text, span.end - 1);
            doc.splice(at..at, &format!("\n\n{inner}{block}"));
        }
        None => {
            let at = loc.first_line_end(&doc.text);
            doc.splice(at..at, &format!("\n{inner}{block}"));
        }
    }
}

/// Rewrites a one-line body over several lines with `extra` lines after its contents; an empty
/// string in `extra` is a blank line, which is left out when nothing comes before it.
fn expand_one_line(doc: &mut Doc, loc: &Located, extra: &[&str]) {
    let inner = loc.inner_indent();
    let existing = doc.text[loc.open + 1..loc.close].trim();
    let mut lines: Vec<String> = Vec::new();
    if !existing.is_empty() {
        lines.push(format!("{inner}{existing}"));
    }
    for line in extra {
        match (line.is_empty(), lines.is_empty()) {
            (true, true) => {}
            (true, false) => lines.push(String::new()),
            (false, _) => lines.push(format!("{inner}{line}")),
        }
    }
    let text = format!("{{\n{}\n{}}}", lines.join("\n"), loc.indent);
    doc.splice(loc.open..loc.close + 1, &text);
}

/// Removes the structure at `span` in the located parent block: its whole lines, and the comment
/// lines right above it when `comments` is set. A one-line parent becomes `{}`.
pub fn remove_structure(
    doc: &mut Doc,
    parent: Option<&Located>,
    span: &Range<usize>,
    comments: bool,
) {
    if let Some(loc) = parent.filter(|l| l.is_one_line(&doc.text)) {
        return doc.splice(loc.open..loc.close + 1, "{}");
    }
    let range = removal(&doc.text, whole_lines(&doc.text, span, comments));
    doc.splice(range, "");
}

/// Replaces the structure at `span` and its attached comment lines by `with` at the same indent;
/// `with` holds no indent on its first line and no line end.
pub fn replace_lines(doc: &mut Doc, span: &Range<usize>, comments: bool, with: &str) {
    let range = whole_lines(&doc.text, span, comments);
    let indent = indent_at(&doc.text, span.start).to_owned();
    let ends_with_newline = doc.text[..range.end].ends_with('\n');
    let tail = if ends_with_newline { "\n" } else { "" };
    doc.splice(range, &format!("{indent}{with}{tail}"));
}

/// Appends top-level `blocks` at the end of the file, each after a blank line.
pub fn append_blocks(doc: &mut Doc, blocks: &[String]) {
    let body = blocks.join("\n\n");
    // A blank line sets the new blocks apart, so they are aligned on their own.
    let body = realign(&body, 0..body.len());
    let kept = doc.text.trim_end_matches([' ', '\t', '\r', '\n']).len();
    let empty = kept == 0 && doc.window.as_ref().is_none_or(|w| w.start == 0);
    let text = if empty {
        format!("{body}\n")
    } else {
        format!("\n\n{body}\n")
    };
    let text = text.replace('\n', doc.newline);
    doc.text.replace_range(kept.., &text);
}

/// Sets a top-level attribute (a `.tfvars` value), appending it when missing.
pub fn set_top_attribute(
    doc: &mut Doc,
    place: &Place,
    name: &str,
    v: &Value,
) -> Result<bool, EditError> {
    let body = doc.parse()?;
    if let Some(attr) = body.get_attribute(name) {
        if literal(&attr.value).as_ref() == Some(v) {
            return Ok(false);
        }
        let span = span_of(&attr.value, place)?;
        doc.splice(span, &render::value(v, ""));
        return Ok(true);
    }
    let line = render::attribute(name, v, "");
    let end = doc.text.len();
    let lead = if doc.text.is_empty() || doc.text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    doc.splice(end..end, &format!("{lead}{line}\n"));
    Ok(true)
}

/// Merges `tags` into the literal object at `object` (the value of attribute `name`): existing
/// keys keep their place and comments, new keys are added after the last one, `remove` keys go.
pub fn merge_object(
    doc: &mut Doc,
    object: &Object,
    place: &Place,
    tags: &[(String, Value)],
    remove: &[String],
) -> Result<bool, EditError> {
    let span = span_of(object, place)?;
    if !doc.text[span.clone()].contains('\n') {
        return rewrite_one_line_object(doc, object, &span, place, tags, remove);
    }
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut last_end = None;
    for (key, item) in object.iter() {
        let name = super::locate::key_name(key);
        let key_span = span_of(key, place)?;
        let value_span = span_of(item.expr(), place)?;
        last_end = Some(value_span.end);
        if name.as_ref().is_some_and(|n| remove.contains(n)) {
            let lines = whole_lines(&doc.text, &(key_span.start..value_span.end), false);
            edits.push((removal(&doc.text, lines), String::new()));
        } else if let Some((_, v)) = tags.iter().find(|(k, _)| Some(k) == name.as_ref())
            && !same_value(&doc.text, item.expr(), v)
        {
            let indent = indent_at(&doc.text, key_span.start).to_owned();
            edits.push((value_span, render::value(v, &indent)));
        }
    }
    let existing: Vec<String> = object
        .iter()
        .filter_map(|(k, _)| super::locate::key_name(k))
        .collect();
    let added: Vec<&(String, Value)> = tags.iter().filter(|(k, _)| !existing.contains(k)).collect();
    if !added.is_empty() {
        let item_indent = match object.iter().next() {
            Some((key, _)) => indent_at(&doc.text, span_of(key, place)?.start).to_owned(),
            None => format!("{}  ", indent_at(&doc.text, span.start)),
        };
        let at = line_end(&doc.text, last_end.map_or(span.start, |e| e - 1));
        let lines: String = added
            .iter()
            .map(|(k, v)| {
                format!(
                    "\n{item_indent}{} = {}",
                    render::key(k),
                    render::value(v, &item_indent)
                )
            })
            .collect();
        edits.push((at..at, lines));
    }
    let changed = !edits.is_empty();
    doc.splice_all(edits);
    Ok(changed)
}

/// Rewrites a one-line object over several lines with the merge applied, keeping the source
/// text of the values it keeps.
fn rewrite_one_line_object(
    doc: &mut Doc,
    object: &Object,
    span: &Range<usize>,
    place: &Place,
    tags: &[(String, Value)],
    remove: &[String],
) -> Result<bool, EditError> {
    let indent = indent_at(&doc.text, span.start).to_owned();
    let inner = format!("{indent}  ");
    let mut items: Vec<(String, String)> = Vec::new();
    let mut changed = false;
    for (key, item) in object.iter() {
        let name = super::locate::key_name(key);
        if name.as_ref().is_some_and(|n| remove.contains(n)) {
            changed = true;
            continue;
        }
        let key_text = doc.text[span_of(key, place)?].to_owned();
        let value_text = match tags.iter().find(|(k, _)| Some(k) == name.as_ref()) {
            Some((_, v)) if !same_value(&doc.text, item.expr(), v) => {
                changed = true;
                render::value(v, &inner)
            }
            _ => doc.text[span_of(item.expr(), place)?].to_owned(),
        };
        items.push((key_text, value_text));
    }
    let existing: Vec<String> = object
        .iter()
        .filter_map(|(k, _)| super::locate::key_name(k))
        .collect();
    for (k, v) in tags.iter().filter(|(k, _)| !existing.contains(k)) {
        changed = true;
        items.push((render::key(k), render::value(v, &inner)));
    }
    if !changed {
        return Ok(false);
    }
    let text = if items.is_empty() {
        "{}".to_owned()
    } else {
        let lines: String = items
            .iter()
            .map(|(k, v)| format!("{inner}{k} = {v}\n"))
            .collect();
        format!("{{\n{lines}{indent}}}")
    };
    doc.splice(span.clone(), &text);
    Ok(true)
}

/// Adds `entries` (traversal source texts) to a literal list, skipping ones already present.
pub fn append_to_list(
    doc: &mut Doc,
    list: &Array,
    place: &Place,
    entries: &[String],
) -> Result<bool, EditError> {
    let span = span_of(list, place)?;
    let have: Vec<String> = list.iter().map(|e| entry_key(&doc.text, e)).collect();
    let mut new: Vec<&String> = Vec::new();
    for entry in entries {
        if !have.contains(&squeeze(entry)) && !new.iter().any(|n| squeeze(n) == squeeze(entry)) {
            new.push(entry);
        }
    }
    if new.is_empty() {
        return Ok(false);
    }
    let last = list.iter().last().map(|e| span_of(e, place)).transpose()?;
    match last {
        Some(last) if doc.text[span.clone()].contains('\n') => {
            let indent = indent_at(&doc.text, last.start).to_owned();
            let rest = &doc.text[last.end..span.end];
            let comma = rest
                .trim_start()
                .starts_with(',')
                .then(|| rest.find(','))
                .flatten();
            let (at, lines): (usize, String) = match comma {
                Some(offset) => (
                    last.end + offset + 1,
                    new.iter().map(|e| format!("\n{indent}{e},")).collect(),
                ),
                None => (
                    last.end,
                    new.iter().map(|e| format!(",\n{indent}{e}")).collect(),
                ),
            };
            doc.splice(at..at, &lines);
        }
        _ => {
            let mut all: Vec<String> = list
                .iter()
                .map(|e| span_of(e, place).map(|s| doc.text[s].trim().to_owned()))
                .collect::<Result<_, _>>()?;
            all.extend(new.iter().map(|e| e.to_string()));
            doc.splice(span, &format!("[{}]", all.join(", ")));
        }
    }
    Ok(true)
}

/// How a list entry is compared: its source text without spaces, or a string's value.
fn entry_key(text: &str, entry: &Expression) -> String {
    match (entry.as_str(), entry.span()) {
        (Some(s), _) => squeeze(s),
        (None, Some(span)) => squeeze(&text[span]),
        (None, None) => String::new(),
    }
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

//! Collection tools: `set_collection_entry`, `add_collection_entry`, `remove_collection_entry`
//! and `filter_for_each`.

use super::*;

/// The literal collection an entry is edited in.
/// Where a literal collection is written.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Container {
    /// `variable "NAME" { default = ... }`.
    VariableDefault {
        /// The variable.
        name: String,
    },
    /// `NAME = ...` in a .tfvars file.
    Tfvar {
        /// The variable.
        name: String,
    },
    /// `NAME = ...` in a `locals` block.
    Local {
        /// The local.
        name: String,
    },
    /// The `for_each` argument of a block.
    ForEach {
        /// The block.
        target: Target,
    },
    /// An argument of a block, e.g. a list a module call passes to its module.
    Argument {
        /// The block.
        target: Target,
        /// The argument.
        name: String,
    },
}

/// One step into a collection: an object key or a list position.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum EntryStep {
    /// An object key (or a set's string element).
    Key(String),
    /// A list position.
    Index(usize),
}

/// The input of `set_collection_entry`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetCollectionEntry {
    /// The file holding the collection.
    pub file: String,
    #[serde(rename = "in")]
    /// Where the collection is written.
    pub container: Container,
    /// Object keys and list positions from the collection to the entry.
    pub path: Vec<EntryStep>,
    /// The entry's new value.
    pub value: Value,
}

impl Tool for SetCollectionEntry {
    const NAME: &'static str = "set_collection_entry";
    const DESCRIPTION: &'static str = "Set the value at `path` (object keys and list positions) inside a literal map or list: a variable's default, a .tfvars assignment, a local, or a block's for_each. The last key is added to its object when missing; refuses when the path meets an expression.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let SetCollectionEntry {
            file,
            container,
            path,
            value,
        } = self;
        let mut doc = ws.open(&file)?;
        let body = doc.parse()?;
        let (root, place) = collection_root(&doc, &body, &file, &container)?;
        let Some((last, inner)) = path.split_last() else {
            return Err(bad_input(Self::NAME, "the path is empty"));
        };
        let mut expr = root;
        let mut here = place.clone();
        for step in inner {
            here = here.nested(&entry_text(step));
            expr = entry(expr, step)
                .ok_or_else(|| impossible(&here, "no such literal entry".into()))?;
        }
        let what = format!("set {}{} in {file}", place.address, path_text(&path));
        let did = match (expr, last) {
            (Expression::Object(object), EntryStep::Key(key)) => {
                let found = object.iter().find(|(k, _)| {
                    super::super::locate::key_name(k).as_deref() == Some(key.as_str())
                });
                match found {
                    Some((_, item)) => splice_value(&mut doc, item.expr(), &here, &value)?,
                    None => {
                        let tags = [(key.clone(), value.clone())];
                        ops::merge_object(&mut doc, object, &here, &tags, &[])?
                    }
                }
            }
            (Expression::Array(list), EntryStep::Index(i)) => match list.iter().nth(*i) {
                Some(item) => splice_value(&mut doc, item, &here, &value)?,
                None => return Err(impossible(&here, format!("the list has no element {i}"))),
            },
            _ => {
                return Err(impossible(
                    &here,
                    format!("{} is not in a literal map or list", entry_text(last)),
                ));
            }
        };
        ws.save(doc)?;
        Ok(changed(did, what))
    }
}

/// The input of `add_collection_entry`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddCollectionEntry {
    /// The file holding the collection.
    pub file: String,
    #[serde(rename = "in")]
    /// Where the collection is written.
    pub container: Container,
    /// Object keys and list positions from the collection to the list the element joins;
    /// empty when the collection is that list.
    #[serde(default)]
    pub path: Vec<EntryStep>,
    /// The new element.
    pub value: Value,
}

impl Tool for AddCollectionEntry {
    const NAME: &'static str = "add_collection_entry";
    const DESCRIPTION: &'static str = "Add an element at the end of a literal list (`toset([...])` included): a variable's default, a .tfvars assignment, a local, or a block's for_each, or a list inside one of them that `path` (object keys and list positions) leads to. The element is written in the list's layout: on a line of its own when the list spans lines, and an object on one line when the list's other objects are. No change when the list already holds it; refuses when the path meets an expression or does not end at a list.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let AddCollectionEntry {
            file,
            container,
            path,
            value,
        } = self;
        let mut doc = ws.open(&file)?;
        let body = doc.parse()?;
        let (root, place) = collection_root(&doc, &body, &file, &container)?;
        let (expr, here) = walk(root, &place, &path)?;
        let Expression::Array(list) = expr else {
            return Err(impossible(&here, "not a literal list".into()));
        };
        let what = format!(
            "added an element to {}{} in {file}",
            place.address,
            path_text(&path)
        );
        let element = element_text(&doc.text, list, &value, &here)?;
        let did = ops::append_to_list(&mut doc, list, &here, &[element])?;
        ws.save(doc)?;
        Ok(changed(did, what))
    }
}

/// A new list element as the list's other elements are written: an object on one line
/// (`{ port = 443, cidr = "10.0.0.0/8" }`) when they are objects on one line and its values
/// fit on one, otherwise as [`render::value`] writes it at the elements' indentation.
fn element_text(
    text: &str,
    list: &hcl::edit::expr::Array,
    value: &Value,
    place: &Place,
) -> Result<String, EditError> {
    let mut spans = Vec::new();
    for item in list.iter() {
        spans.push((matches!(item, Expression::Object(_)), span_of(item, place)?));
    }
    let indent = spans
        .first()
        .map_or("", |(_, span)| {
            super::super::text::indent_at(text, span.start)
        })
        .to_owned();
    let one_line_objects = !spans.is_empty()
        && spans
            .iter()
            .all(|(object, span)| *object && !text[span.clone()].contains('\n'));
    // The keys in the order the first element writes them, then the rest.
    let written: Vec<String> = match list.iter().next() {
        Some(Expression::Object(first)) => first
            .iter()
            .filter_map(|(k, _)| super::super::locate::key_name(k))
            .collect(),
        _ => Vec::new(),
    };
    let rank = |key: &str| {
        written
            .iter()
            .position(|k| k == key)
            .unwrap_or(written.len())
    };
    let value = match value {
        Value::Object(entries) => {
            let mut entries = entries.clone();
            entries.sort_by_key(|(key, _)| rank(key));
            Value::Object(entries)
        }
        other => other.clone(),
    };
    let inline = match &value {
        Value::Object(entries) if one_line_objects => entries
            .iter()
            .map(|(key, v)| {
                let v = render::value(v, "");
                (!v.contains('\n')).then(|| format!("{} = {v}", render::key(key)))
            })
            .collect::<Option<Vec<_>>>()
            .map(|fields| format!("{{ {} }}", fields.join(", "))),
        _ => None,
    };
    Ok(inline.unwrap_or_else(|| render::value(&value, &indent)))
}

/// The input of `remove_collection_entry`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveCollectionEntry {
    /// The file holding the collection.
    pub file: String,
    #[serde(rename = "in")]
    /// Where the collection is written.
    pub container: Container,
    /// Object keys, list positions or a set's string element, down to the entry.
    pub path: Vec<EntryStep>,
}

impl Tool for RemoveCollectionEntry {
    const NAME: &'static str = "remove_collection_entry";
    const DESCRIPTION: &'static str = "Remove the entry at `path` (object keys, list positions, or a set's string element) from a literal map or list: a variable's default, a .tfvars assignment, a local, or a block's for_each (`toset([...])` included). Refuses when the path meets an expression or the entry is missing.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let RemoveCollectionEntry {
            file,
            container,
            path,
        } = self;
        let mut doc = ws.open(&file)?;
        let body = doc.parse()?;
        let (root, place) = collection_root(&doc, &body, &file, &container)?;
        let Some((last, inner)) = path.split_last() else {
            return Err(bad_input(Self::NAME, "the path is empty"));
        };
        let (expr, here) = walk(root, &place, inner)?;
        let what = format!("removed {}{} in {file}", place.address, path_text(&path));
        let missing = || impossible(&here, format!("no entry {}", entry_text(last)));
        match (expr, last) {
            (Expression::Object(object), EntryStep::Key(key)) => {
                if entry(expr, last).is_none() {
                    return Err(missing());
                }
                ops::merge_object(&mut doc, object, &here, &[], std::slice::from_ref(key))?;
            }
            (Expression::Array(list), step) => {
                let position = match step {
                    EntryStep::Index(i) => (*i < list.len()).then_some(*i),
                    // a set's element: a string, or a number named by its text (as a
                    // `dynamic` block over a set of ports keys its blocks)
                    EntryStep::Key(key) => list.iter().position(|item| match item {
                        Expression::String(s) => s.value() == key,
                        Expression::Number(n) => n.value().to_string() == *key,
                        _ => false,
                    }),
                };
                let items: Vec<&Expression> = list.iter().collect();
                let range = position
                    .map(|i| element_removal(&doc.text, &items, i, &here))
                    .transpose()?
                    .ok_or_else(missing)?;
                doc.splice(range, "");
            }
            _ => return Err(missing()),
        }
        ws.save(doc)?;
        Ok(what)
    }
}

/// The literal entry `steps` lead to from a collection's expression (through `toset(...)`
/// calls), with its place for messages.
fn walk<'e>(
    root: &'e Expression,
    place: &Place,
    steps: &[EntryStep],
) -> Result<(&'e Expression, Place), EditError> {
    let mut expr = unwrap_toset(root);
    let mut here = place.clone();
    for step in steps {
        here = here.nested(&entry_text(step));
        expr = entry(expr, step)
            .map(unwrap_toset)
            .ok_or_else(|| impossible(&here, "no such literal entry".into()))?;
    }
    Ok((expr, here))
}

/// The argument of a `toset(...)` call, or the expression itself.
pub(super) fn unwrap_toset(expr: &Expression) -> &Expression {
    match expr {
        Expression::FuncCall(call)
            if call.name.name.as_str() == "toset" && call.args.len() == 1 =>
        {
            call.args.iter().next().map_or(expr, unwrap_toset)
        }
        Expression::Parenthesis(inner) => unwrap_toset(inner.inner()),
        _ => expr,
    }
}

/// The text to delete to remove element `i` of a list: its whole line (with its comma) when
/// it stands alone on it, otherwise the element with the separator after it (before it, for
/// the last element).
pub(super) fn element_removal(
    text: &str,
    items: &[&Expression],
    i: usize,
    place: &Place,
) -> Result<Range<usize>, EditError> {
    let span = span_of(items[i], place)?;
    let rest = &text[span.end..];
    let comma = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    let end = if rest[comma..].starts_with(',') {
        span.end + comma + 1
    } else {
        span.end
    };
    let line_start = super::super::text::line_start(text, span.start);
    let line_end = super::super::text::line_end(text, end);
    if text[line_start..span.start].trim().is_empty() && text[end..line_end].trim().is_empty() {
        let lines = super::super::text::whole_lines(text, &(span.start..end), false);
        return Ok(super::super::text::removal(text, lines));
    }
    match (
        items.get(i + 1),
        i.checked_sub(1).and_then(|p| items.get(p)),
    ) {
        (Some(next), _) => Ok(span.start..span_of(*next, place)?.start),
        (None, Some(previous)) => Ok(span_of(*previous, place)?.end..end),
        (None, None) => Ok(span.start..end),
    }
}

/// The expression holding the collection, and its place for messages.
pub(super) fn collection_root<'b>(
    doc: &Doc,
    body: &'b hcl::edit::structure::Body,
    file: &str,
    container: &Container,
) -> Result<(&'b Expression, Place), EditError> {
    let top = |address: String| Place {
        file: file.to_owned(),
        address,
        path: String::new(),
    };
    let (attr, place) = match container {
        Container::VariableDefault { name } => {
            let place = top(header("variable", std::slice::from_ref(name)));
            let blocks =
                super::super::locate::top_blocks(body, "variable", std::slice::from_ref(name));
            let block = super::super::locate::single(blocks, &place)?;
            (block.body.get_attribute("default"), place.nested("default"))
        }
        Container::Tfvar { name } => (body.get_attribute(name), top(name.clone())),
        Container::Local { name } => {
            let found: Vec<_> = body
                .blocks()
                .filter(|b| b.has_ident("locals"))
                .filter_map(|b| b.body.get_attribute(name))
                .collect();
            (found.first().copied(), top(format!("local.{name}")))
        }
        Container::ForEach { target } => argument_of(doc, body, target, "for_each")?,
        Container::Argument { target, name } => argument_of(doc, body, target, name)?,
    };
    let attr = attr.ok_or_else(|| impossible(&place, "not set in this file".to_owned()))?;
    Ok((&attr.value, place))
}

/// The argument `name` of the top-level block `target`, and its place for messages.
fn argument_of<'b>(
    doc: &Doc,
    body: &'b hcl::edit::structure::Body,
    target: &Target,
    name: &str,
) -> Result<(Option<&'b hcl::edit::structure::Attribute>, Place), EditError> {
    let place = doc.place(target);
    let blocks = super::super::locate::top_blocks(body, &target.block_type, &target.labels);
    let block = super::super::locate::single(blocks, &place)?;
    Ok((block.body.get_attribute(name), place.nested(name)))
}

/// The element a step leads to in a literal object or list.
pub(super) fn entry<'e>(expr: &'e Expression, step: &EntryStep) -> Option<&'e Expression> {
    match (expr, step) {
        (Expression::Object(object), EntryStep::Key(key)) => object
            .iter()
            .find(|(k, _)| super::super::locate::key_name(k).as_deref() == Some(key.as_str()))
            .map(|(_, v)| v.expr()),
        (Expression::Array(list), EntryStep::Index(i)) => list.iter().nth(*i),
        (Expression::Parenthesis(inner), _) => entry(inner.inner(), step),
        _ => None,
    }
}

/// Replaces a value where it stands; false when it already has this value.
pub(super) fn splice_value(
    doc: &mut Doc,
    expr: &Expression,
    place: &Place,
    value: &Value,
) -> Result<bool, EditError> {
    if super::super::locate::same_value(&doc.text, expr, value) && literal(expr).is_some() {
        return Ok(false);
    }
    let span = span_of(expr, place)?;
    let indent = super::super::text::indent_at(&doc.text, span.start).to_owned();
    doc.splice(span, &render::value(value, &indent));
    Ok(true)
}

pub(super) fn entry_text(step: &EntryStep) -> String {
    match step {
        EntryStep::Key(k) => format!("[{}]", render::quoted(k)),
        EntryStep::Index(i) => format!("[{i}]"),
    }
}

pub(super) fn path_text(path: &[EntryStep]) -> String {
    path.iter().map(entry_text).collect()
}

/// The input of `filter_for_each`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterForEach {
    /// The block whose `for_each` drops keys.
    pub target: Target,
    /// The instance keys to drop.
    pub keys: Vec<String>,
}

impl Tool for FilterForEach {
    const NAME: &'static str = "filter_for_each";
    const DESCRIPTION: &'static str = "Drop instance keys from a block's for_each without editing the collection it iterates (which other blocks may share): for_each = { for k, v in EXPR : k => v if k != \"key\" }, or setsubtract(toset(...), [\"key\"]) for a set; a filter written this way before gets the keys added.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let FilterForEach { target, keys } = self;
        if keys.is_empty() {
            return Err(bad_input(Self::NAME, "`keys` is empty"));
        }
        let mut doc = ws.open_block(&target)?;
        let (loc, place) = found(&doc, &target)?;
        let Some(attr) = loc.block.body.get_attribute("for_each") else {
            return Err(no_attribute(&place, "for_each"));
        };
        let did = filter::drop_keys(&mut doc, &attr.value, &place, &keys)?;
        ws.save(doc)?;
        Ok(changed(
            did,
            format!(
                "dropped {} from the for_each of {}",
                keys.iter()
                    .map(|k| render::quoted(k))
                    .collect::<Vec<_>>()
                    .join(", "),
                place.address
            ),
        ))
    }
}

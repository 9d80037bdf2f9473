//! Whole-resource tools: `import_resource`, `add_resource`, `add_import`, `remove_resource` and
//! `ignore_changes`.

use super::*;

/// The input of `import_resource`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportResource {
    /// The file to append the blocks to.
    pub file: String,
    /// The resource type, e.g. `aws_sqs_queue`.
    pub resource_type: String,
    /// The new resource's name.
    pub name: String,
    /// The import id of the cloud object.
    pub id: String,
    #[serde(default, skip_serializing_if = "Ordered::is_empty")]
    /// The resource's arguments, in the order to write them.
    pub attributes: Ordered,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// Its nested blocks.
    pub blocks: Vec<NewBlock>,
}

impl Tool for ImportResource {
    const NAME: &'static str = "import_resource";
    const DESCRIPTION: &'static str = "Append a resource block and an `import { to = TYPE.NAME  id = \"...\" }` block to a file, for a resource created outside Terraform.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let ImportResource {
            file,
            resource_type,
            name,
            id,
            attributes,
            blocks,
        } = self;
        let resource = NewResource {
            file: &file,
            resource_type: &resource_type,
            name: &name,
            attributes,
            blocks,
        };
        let import = import_block(&format!("{resource_type}.{name}"), &id);
        append_resource(Self::NAME, ws, resource, Some(import))?;
        Ok(format!(
            "added resource {resource_type}.{name} and its import block to {file}"
        ))
    }
}

/// The input of `add_resource`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddResource {
    /// The file to append the block to.
    pub file: String,
    /// The resource type, e.g. `aws_lb_target_group_attachment`.
    pub resource_type: String,
    /// The new resource's name.
    pub name: String,
    #[serde(default, skip_serializing_if = "Ordered::is_empty")]
    /// The resource's arguments, in the order to write them.
    pub attributes: Ordered,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// Its nested blocks.
    pub blocks: Vec<NewBlock>,
}

impl Tool for AddResource {
    const NAME: &'static str = "add_resource";
    const DESCRIPTION: &'static str = "Append a resource block, without an import block, to a file: for an object created outside Terraform whose type the provider cannot import (`terraform plan` says \"resource TYPE doesn't support import\"); the next apply creates it.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let AddResource {
            file,
            resource_type,
            name,
            attributes,
            blocks,
        } = self;
        let resource = NewResource {
            file: &file,
            resource_type: &resource_type,
            name: &name,
            attributes,
            blocks,
        };
        append_resource(Self::NAME, ws, resource, None)?;
        Ok(format!(
            "added resource {resource_type}.{name} to {file}, with no import block"
        ))
    }
}

/// A resource block to append.
struct NewResource<'a> {
    file: &'a str,
    resource_type: &'a str,
    name: &'a str,
    attributes: Ordered,
    blocks: Vec<NewBlock>,
}

/// Appends a resource block, and `import` after it when given, to the end of its file; `tool`
/// names the caller in errors. A resource of that type and name already in the file is an
/// error.
fn append_resource(
    tool: &str,
    ws: &mut Workspace,
    new: NewResource<'_>,
    import: Option<String>,
) -> Result<(), EditError> {
    check_identifier(tool, new.resource_type)?;
    check_identifier(tool, new.name)?;
    let labels = [new.resource_type.to_owned(), new.name.to_owned()];
    let resource = NewBlock {
        block: "resource".to_owned(),
        labels: labels.to_vec(),
        attributes: new.attributes,
        blocks: new.blocks,
    };
    resource.check(tool)?;
    if ws.has_block(new.file, "resource", &labels)? {
        let place = Place {
            file: new.file.to_owned(),
            address: header("resource", &labels),
            path: String::new(),
        };
        return Err(impossible(&place, "the resource already exists".to_owned()));
    }
    let mut doc = ws.open_end(new.file)?;
    let blocks: Vec<String> = std::iter::once(render::block(&resource.text(), ""))
        .chain(import)
        .collect();
    ops::append_blocks(&mut doc, &blocks);
    ws.save(doc)
}

/// `import { to = ADDRESS  id = "..." }`.
fn import_block(to: &str, id: &str) -> String {
    format!("import {{\n  to = {to}\n  id = {}\n}}", render::quoted(id))
}

/// The input of `add_import`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddImport {
    /// The root module's file to append the block to.
    pub file: String,
    /// The resource instance address the object is imported to, e.g.
    /// `module.web.aws_security_group_rule.ingress[2]`.
    pub to: String,
    /// The import id of the cloud object.
    pub id: String,
}

impl Tool for AddImport {
    const NAME: &'static str = "add_import";
    const DESCRIPTION: &'static str = "Append an `import { to = ADDRESS  id = \"...\" }` block to a root module file, for an object created outside Terraform that the code declares by another edit (a new entry of the list a module's resources are made from): ADDRESS is a resource instance address, in a child module too. No change when the file already imports that id to that address.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let AddImport { file, to, id } = self;
        if !is_instance_address(&to) {
            return Err(bad_input(
                Self::NAME,
                format!("`{to}` is not a resource instance address"),
            ));
        }
        let block = import_block(&to, &id);
        let mut doc = ws.open_end(&file)?;
        let what = format!("added an import of {id} to {to} in {file}");
        if doc.text.contains(&block) {
            return Ok(changed(false, what));
        }
        ops::append_blocks(&mut doc, &[block]);
        ws.save(doc)?;
        Ok(what)
    }
}

/// Whether `text` is a resource instance address: `module.NAME[KEY].` steps, then
/// `TYPE.NAME[KEY]`, each key a whole number or a quoted string.
fn is_instance_address(text: &str) -> bool {
    use hcl::edit::expr::{Expression, TraversalOperator};
    let Ok(Expression::Traversal(traversal)) = text.parse::<Expression>() else {
        return false;
    };
    let Expression::Variable(first) = &traversal.expr else {
        return false;
    };
    // The names in order, each with whether a key follows it.
    let mut steps: Vec<(String, bool)> = vec![(first.to_string(), false)];
    for operator in traversal.operators.iter() {
        match operator.value() {
            TraversalOperator::GetAttr(name) => steps.push((name.to_string(), false)),
            TraversalOperator::Index(key)
                if matches!(key, Expression::String(_))
                    || matches!(key, Expression::Number(n) if n.as_u64().is_some()) =>
            {
                match steps.last_mut() {
                    Some((_, keyed @ false)) => *keyed = true,
                    _ => return false,
                }
            }
            _ => return false,
        }
    }
    let mut rest = steps.as_slice();
    while let [(module, false), (_, _), tail @ ..] = rest
        && module == "module"
        && tail.len() >= 2
    {
        rest = tail;
    }
    text.trim() == text && matches!(rest, [(kind, false), (_, _)] if kind != "module")
}

/// The input of `remove_resource`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveResource {
    /// The resource, module or output block to remove.
    pub target: Target,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    /// Whether Terraform forgets the object without destroying it (a `removed` block).
    pub keep_in_state: bool,
}

impl Tool for RemoveResource {
    const NAME: &'static str = "remove_resource";
    const DESCRIPTION: &'static str = "Remove a resource or module block (with the comment lines right above it), or an output block that reads a resource being removed. With keep_in_state, leave `removed { from = ADDR  lifecycle { destroy = false } }` so Terraform forgets a resource or module without destroying it.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let RemoveResource {
            target,
            keep_in_state,
        } = self;
        let mut doc = ws.open_for(&target)?;
        let (loc, place) = found(&doc, &target)?;
        let address = match (
            target.block_type.as_str(),
            target.labels.as_slice(),
            target.path.is_empty(),
        ) {
            ("resource", [kind, name], true) => format!("{kind}.{name}"),
            ("module", [name], true) => format!("module.{name}"),
            ("output", _, true) if keep_in_state => {
                return Err(impossible(
                    &place,
                    "an output is not kept in state: a `removed` block names resources and modules"
                        .to_owned(),
                ));
            }
            ("output", [name], true) => format!("output.{name}"),
            _ => {
                return Err(impossible(
                    &place,
                    "only a top-level resource, module or output block can be removed".to_owned(),
                ));
            }
        };
        let span = span_of(&loc.block, &place)?;
        if keep_in_state {
            let removed = format!(
                "removed {{\n  from = {address}\n\n  lifecycle {{\n    destroy = false\n  }}\n}}"
            );
            ops::replace_lines(&mut doc, &span, true, &removed);
        } else {
            ops::remove_structure(&mut doc, None, &span, true);
        }
        let dir = parent_dir(&doc.path).to_owned();
        ws.save(doc)?;
        let pointers = remove_pointers(ws, &dir, &address)?;
        let kept = if keep_in_state {
            " (kept in state by a removed block)"
        } else {
            ""
        };
        let dangling = match pointers {
            0 => String::new(),
            n => format!(" and {n} import or moved block(s) that pointed at it"),
        };
        Ok(format!("removed {address}{kept}{dangling}"))
    }
}

/// The directory of a project-relative path (empty for the root).
pub(super) fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Removes, from the `.tf` files of `dir`, the `import` and `moved` blocks whose `to` is
/// `address` or one of its instances: they would dangle once the resource block is gone.
pub(super) fn remove_pointers(
    ws: &mut Workspace,
    dir: &str,
    address: &str,
) -> Result<usize, EditError> {
    let mut removed = 0;
    let paths: Vec<String> = ws
        .paths()
        .filter(|p| p.ends_with(".tf") && parent_dir(p) == dir)
        .map(str::to_owned)
        .collect();
    for path in paths {
        let mut doc = ws.open(&path)?;
        while let Some(span) = pointer_at(&doc, address)? {
            ops::remove_structure(&mut doc, None, &span, true);
            removed += 1;
        }
        ws.save(doc)?;
    }
    Ok(removed)
}

/// The span of the first `import` or `moved` block of a file whose `to` is `address` or one of
/// its instances.
pub(super) fn pointer_at(doc: &Doc, address: &str) -> Result<Option<Range<usize>>, EditError> {
    let body = doc.parse()?;
    let to_text = |block: &Block| -> Option<String> {
        let to = block.body.get_attribute("to")?;
        let span = to.value.span()?;
        Some(
            doc.text[span]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect(),
        )
    };
    let found = body
        .blocks()
        .filter(|b| b.has_ident("import") || b.has_ident("moved"))
        .find(|b| {
            to_text(b).is_some_and(|to| {
                to == address || to.strip_prefix(address).is_some_and(|r| r.starts_with('['))
            })
        });
    Ok(found.and_then(|b| b.span()))
}

/// The input of `ignore_changes`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IgnoreChanges {
    /// The resource block.
    pub target: Target,
    /// Attribute references to add, e.g. `tags["Owner"]`.
    pub attributes: Vec<String>,
}

impl Tool for IgnoreChanges {
    const NAME: &'static str = "ignore_changes";
    const DESCRIPTION: &'static str = "Add attribute references (e.g. tags, tags[\"Owner\"]) to lifecycle.ignore_changes, creating the lifecycle block or attribute when missing and skipping ones already listed.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let IgnoreChanges { target, attributes } = self;
        for reference in &attributes {
            let parsed = hcl::edit::parser::parse_expr(reference);
            if !matches!(
                parsed,
                Ok(Expression::Variable(_) | Expression::Traversal(_))
            ) {
                return Err(bad_input(
                    Self::NAME,
                    format!("`{reference}` is not an attribute reference"),
                ));
            }
        }
        let mut doc = ws.open_block(&target)?;
        let (loc, place) = found(&doc, &target)?;
        let what = format!("ignore_changes of {}{}", place.address, place.path);
        let lifecycle = Step {
            block: "lifecycle".to_owned(),
            labels: Vec::new(),
            matches: Ordered::default(),
        };
        let list = format!("[{}]", attributes.join(", "));
        if loc.block.body.get_blocks("lifecycle").next().is_none() {
            let text = format!(
                "lifecycle {{\n{0}  ignore_changes = {list}\n{0}}}",
                loc.inner_indent()
            );
            ops::insert_block(&mut doc, &loc, "lifecycle", &text);
            ws.save(doc)?;
            return Ok(format!("added {what}"));
        }
        let inner = super::super::locate::located(
            &doc.text,
            pick(&loc, &doc.text, &lifecycle, &place)?,
            &place,
        )?;
        let place = place.nested("lifecycle");
        let did = match inner.block.body.get_attribute(Self::NAME).map(|a| &a.value) {
            None => {
                ops::insert_attribute(&mut doc, &inner, &format!("ignore_changes = {list}"));
                true
            }
            Some(Expression::Variable(v)) if v.as_str() == "all" => false,
            Some(Expression::Array(array)) => {
                ops::append_to_list(&mut doc, array, &place, &attributes)?
            }
            Some(_) => return Err(not_literal(&place, Self::NAME, "list")),
        };
        ws.save(doc)?;
        Ok(changed(did, format!("extended {what}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_addresses_are_told_from_other_text() {
        for good in [
            "aws_sqs_queue.q",
            "aws_sqs_queue.q[2]",
            "aws_sqs_queue.q[\"a\"]",
            "module.web.aws_security_group_rule.ingress[1]",
            "module.web[\"x\"].module.inner[0].aws_s3_bucket.b",
        ] {
            assert!(is_instance_address(good), "{good}");
        }
        for bad in [
            "aws_sqs_queue",
            "module.web",
            "module.web.aws_sqs_queue",
            "aws_sqs_queue.q[1][2]",
            "aws_sqs_queue.q[var.n]",
            "aws_sqs_queue.q.extra",
            "aws_sqs_queue.q\n}\nresource \"x\" \"y\" {",
            " aws_sqs_queue.q",
        ] {
            assert!(!is_instance_address(bad), "{bad}");
        }
    }
}

//! Nested-block tools: `add_block`, `remove_block`, `replace_block` and `update_block`.

use super::*;

/// The input of `add_block`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddBlock {
    /// The block to add the nested block to.
    pub target: Target,
    /// The nested block to write.
    pub block: NewBlock,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `each.key` (a string) or `count.index` (a number) of the one instance to give the block.
    pub instance: Option<Instance>,
}

impl Tool for AddBlock {
    const NAME: &'static str = "add_block";
    const DESCRIPTION: &'static str = "Add a nested block (for example an ingress rule) inside a block, after the last block of its type; refuses when an identical block exists. With `instance` (the each.key string or count.index number of one instance of a block with for_each/count) only that instance gets it: it is written as a `dynamic` block whose for_each is contains([key], each.key) ? [1] : [] and whose content is the block.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let AddBlock {
            target,
            block,
            instance,
        } = self;
        block.check(Self::NAME)?;
        let mut doc = ws.open_block(&target)?;
        let (loc, place) = found(&doc, &target)?;
        if let Some(instance) = instance {
            instance::add_block(&mut doc, &loc, &place, &block.text(), &instance)?;
            ws.save(doc)?;
            return Ok(format!(
                "added a `{}` block to {}{} for {} alone",
                block.block,
                place.address,
                place.path,
                instance.named()
            ));
        }
        let duplicate = loc.block.body.blocks().any(|b| {
            b.has_ident(&block.block)
                && b.has_exact_labels(&block.labels)
                && b.body.attributes().count() == block.attributes.0.len()
                && b.body.blocks().next().is_none()
                && block.blocks.is_empty()
                && matches_all(&doc.text, &b.body, &block.attributes)
        });
        if duplicate {
            return Err(impossible(
                &place,
                format!("an identical `{}` block already exists", block.block),
            ));
        }
        let text = render::block(&block.text(), &loc.inner_indent());
        ops::insert_block(&mut doc, &loc, &block.block, &text);
        ws.save(doc)?;
        Ok(format!(
            "added a `{}` block to {}{}",
            block.block, place.address, place.path
        ))
    }
}

pub(super) fn impossible(place: &Place, message: String) -> EditError {
    place.impossible(message)
}

/// The nested block picked by type, labels and match inside a located block.
pub(super) fn pick<'b>(
    parent: &'b Located,
    text: &str,
    step: &Step,
    place: &Place,
) -> Result<&'b Block, EditError> {
    let found = parent
        .block
        .body
        .blocks()
        .filter(|b| b.has_ident(&step.block) && b.has_exact_labels(&step.labels))
        .filter(|b| matches_all(text, &b.body, &step.matches))
        .collect();
    super::super::locate::single(found, &place.nested(&step_text(step)))
}

/// The input of `remove_block`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveBlock {
    /// The block holding the nested block.
    pub target: Target,
    /// The nested block type.
    pub block: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// The nested block's labels.
    pub labels: Vec<String>,
    #[serde(default, rename = "match", skip_serializing_if = "Ordered::is_empty")]
    /// Attribute values the nested block must have (blocks are sets, matched by content).
    pub matches: Ordered,
}

impl Tool for RemoveBlock {
    const NAME: &'static str = "remove_block";
    const DESCRIPTION: &'static str = "Remove the one nested block of a type whose attributes match `match` (with the comment lines right above it); refuses when none or several match.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let RemoveBlock {
            target,
            block,
            labels,
            matches,
        } = self;
        let step = Step {
            block,
            labels,
            matches,
        };
        let mut doc = ws.open_block(&target)?;
        let (loc, place) = found(&doc, &target)?;
        let span = span_of(pick(&loc, &doc.text, &step, &place)?, &place)?;
        ops::remove_structure(&mut doc, Some(&loc), &span, true);
        ws.save(doc)?;
        Ok(format!(
            "removed {} from {}{}",
            step_text(&step),
            place.address,
            place.path
        ))
    }
}

/// The input of `replace_block`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceBlock {
    /// The block holding the nested block.
    pub target: Target,
    /// The nested block type.
    pub block: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// The nested block's labels.
    pub labels: Vec<String>,
    #[serde(default, rename = "match", skip_serializing_if = "Ordered::is_empty")]
    /// Attribute values the nested block must have (blocks are sets, matched by content).
    pub matches: Ordered,
    /// The block written in its place.
    pub with: NewBlock,
}

impl Tool for ReplaceBlock {
    const NAME: &'static str = "replace_block";
    const DESCRIPTION: &'static str = "Replace the one nested block of a type whose attributes match `match` by a new block, keeping the comments above it.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let ReplaceBlock {
            target,
            block,
            labels,
            matches,
            with,
        } = self;
        let step = Step {
            block,
            labels,
            matches,
        };
        with.check(Self::NAME)?;
        let mut doc = ws.open_block(&target)?;
        let (loc, place) = found(&doc, &target)?;
        let span = span_of(pick(&loc, &doc.text, &step, &place)?, &place)?;
        let text = render::block(&with.text(), &loc.inner_indent());
        ops::replace_lines(&mut doc, &span, false, &text);
        ws.save(doc)?;
        Ok(format!(
            "replaced {} in {}{}",
            step_text(&step),
            place.address,
            place.path
        ))
    }
}

/// The input of `update_block`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateBlock {
    /// The block holding the nested block.
    pub target: Target,
    /// The nested block type.
    pub block: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// The nested block's labels.
    pub labels: Vec<String>,
    #[serde(default, rename = "match", skip_serializing_if = "Ordered::is_empty")]
    /// Attribute values the nested block has now (blocks are sets, matched by content).
    pub matches: Ordered,
    /// Every attribute the nested block holds after the edit.
    pub attributes: Ordered,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    /// Whether the comment lines right above the block go too (they described the old block).
    pub drop_comments: bool,
}

impl Tool for UpdateBlock {
    const NAME: &'static str = "update_block";
    const DESCRIPTION: &'static str = "Edit the one nested block of a type whose attributes match `match` in place, so it holds exactly `attributes`: changed values are rewritten where they stand, missing ones added, others removed (unset-like values such as false or [] are left). Use it for a rule replaced by another (a revoke plus an authorize).";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let UpdateBlock {
            target,
            block,
            labels,
            matches,
            attributes,
            drop_comments,
        } = self;
        for (name, _) in &attributes.0 {
            check_identifier(Self::NAME, name)?;
        }
        let step = Step {
            block,
            labels,
            matches,
        };
        let mut doc = ws.open_block(&target)?;
        let (parent, place) = found(&doc, &target)?;
        let chosen = pick(&parent, &doc.text, &step, &place)?;
        let span = span_of(chosen, &place)?;
        let position = same_kind(&parent, &step)
            .position(|b| b.span() == Some(span.clone()))
            .unwrap_or_default();
        let stale: Vec<String> = chosen
            .body
            .attributes()
            .filter(|a| !attributes.0.iter().any(|(k, _)| k == a.key.as_str()))
            .filter(|a| !literal(&a.value).is_some_and(|v| is_unset_like(&v)))
            .map(|a| a.key.as_str().to_owned())
            .collect();
        let mut did = false;
        let with = super::super::text::whole_lines(&doc.text, &span, true);
        let without = super::super::text::whole_lines(&doc.text, &span, false);
        if drop_comments && with.start < without.start {
            doc.splice(with.start..without.start, "");
            did = true;
        }
        for (name, value) in &attributes.0 {
            let (loc, here) = nth_block(&doc, &target, &step, position)?;
            did |= ops::set_attribute(&mut doc, &loc, &here, name, value)?;
        }
        for name in &stale {
            let (loc, here) = nth_block(&doc, &target, &step, position)?;
            let attr = loc
                .block
                .body
                .get_attribute(name)
                .ok_or_else(|| no_attribute(&here, name))?;
            let attr_span = span_of(attr, &here)?;
            ops::remove_structure(&mut doc, Some(&loc), &attr_span, false);
            did = true;
        }
        ws.save(doc)?;
        Ok(changed(
            did,
            format!(
                "updated {} in {}{}",
                step_text(&step),
                place.address,
                place.path
            ),
        ))
    }
}

/// The nested blocks of the step's type and labels, in order.
pub(super) fn same_kind<'b>(
    parent: &'b Located,
    step: &'b Step,
) -> impl Iterator<Item = &'b Block> {
    parent
        .block
        .body
        .blocks()
        .filter(|b| b.has_ident(&step.block) && b.has_exact_labels(&step.labels))
}

/// The `position`-th nested block of the step's type, located afresh in the current text.
pub(super) fn nth_block(
    doc: &Doc,
    target: &Target,
    step: &Step,
    position: usize,
) -> Result<(Located, Place), EditError> {
    let (parent, place) = found(doc, target)?;
    let here = place.nested(&step.block);
    let block = same_kind(&parent, step)
        .nth(position)
        .ok_or_else(|| EditError::Internal {
            file: place.file.clone(),
            message: format!("the `{}` block moved while it was edited", step.block),
        })?;
    Ok((
        super::super::locate::located(&doc.text, block, &here)?,
        here,
    ))
}

/// Values an optional attribute has when it is not set: left alone when the new block omits them.
pub(super) fn is_unset_like(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::List(items) => items.is_empty(),
        Value::Object(entries) => entries.is_empty(),
        Value::Number(_) | Value::Bool(true) => false,
    }
}

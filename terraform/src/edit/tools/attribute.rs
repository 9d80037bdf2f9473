//! Attribute tools: `set_attribute` and `remove_attribute`.

use super::*;

/// The input of `set_attribute`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAttribute {
    /// The block (or nested block on its `path`) to edit.
    pub target: Target,
    /// The attribute.
    pub name: String,
    /// The new value.
    pub value: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `each.key` (a string) or `count.index` (a number) of the one instance to change.
    pub instance: Option<Instance>,
}

impl Tool for SetAttribute {
    const NAME: &'static str = "set_attribute";
    const DESCRIPTION: &'static str = "Set an attribute of a block (or of a nested block on `path`) to a JSON value, rendered as HCL; adds it when missing. With `instance` (the each.key string or count.index number of one instance of a block with for_each/count) only that instance's value changes: the attribute becomes lookup({ key = value }, each.key, <its old expression, or null when unset>), or gets the entry in such a lookup it already is.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let SetAttribute {
            target,
            name,
            value,
            instance,
        } = self;
        check_identifier(Self::NAME, &name)?;
        match instance {
            Some(instance) => set_for_instance(ws, &target, &name, &instance, &value),
            None => set_in_block(ws, &target, &name, &value),
        }
    }
}

pub(super) fn set_for_instance(
    ws: &mut Workspace,
    target: &Target,
    name: &str,
    instance: &Instance,
    value: &Value,
) -> Result<String, EditError> {
    let mut doc = ws.open_block(target)?;
    let (loc, place) = found(&doc, target)?;
    let did = instance::set_attribute(&mut doc, &loc, &place, name, instance, value, "null")?;
    ws.save(doc)?;
    Ok(changed(
        did,
        format!(
            "set `{name}` in {}{} for {} alone",
            place.address,
            place.path,
            instance.named()
        ),
    ))
}

pub(super) fn set_in_block(
    ws: &mut Workspace,
    target: &Target,
    name: &str,
    value: &Value,
) -> Result<String, EditError> {
    let mut doc = ws.open_block(target)?;
    let (loc, place) = found(&doc, target)?;
    let did = ops::set_attribute(&mut doc, &loc, &place, name, value)?;
    ws.save(doc)?;
    Ok(changed(
        did,
        format!("set `{name}` in {}{}", place.address, place.path),
    ))
}

/// The input of `remove_attribute`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveAttribute {
    /// The block (or nested block on its `path`) to edit.
    pub target: Target,
    /// The attribute.
    pub name: String,
}

impl Tool for RemoveAttribute {
    const NAME: &'static str = "remove_attribute";
    const DESCRIPTION: &'static str =
        "Remove an attribute from a block (or nested block); refuses when it is absent.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let RemoveAttribute { target, name } = self;
        let mut doc = ws.open_block(&target)?;
        let (loc, place) = found(&doc, &target)?;
        let attr = loc
            .block
            .body
            .get_attribute(&name)
            .ok_or_else(|| no_attribute(&place, &name))?;
        let span = span_of(attr, &place)?;
        ops::remove_structure(&mut doc, Some(&loc), &span, false);
        ws.save(doc)?;
        Ok(format!(
            "removed `{name}` from {}{}",
            place.address, place.path
        ))
    }
}

pub(super) fn no_attribute(place: &Place, name: &str) -> EditError {
    EditError::NoAttribute {
        file: place.file.clone(),
        address: place.address.clone(),
        path: place.path.clone(),
        name: name.to_owned(),
    }
}

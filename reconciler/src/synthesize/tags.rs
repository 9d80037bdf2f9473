//! Where an instance's out-of-band tag changes are written.
//!
//! Tags are edited in the resource block (`set_tags` keeps a shared `local.common_tags` and
//! wraps it in `merge(...)`), except in a module whose `tags` input feeds only this block:
//! there the module call's argument is edited, so the module stays generic. When the block (or
//! the module call) stands for several instances, the edit names the one instance
//! (`each.key`/`count.index`) so the others keep their tags; the planner drops the instance
//! when every instance got the same change.

use super::edit::{Instance, Target};
use crate::terraform::config::{Project, Provenance, ResourceInstance};
use crate::terraform::state::{IndexKey, PathStep};

/// The block and attribute an instance's tags are written in.
#[derive(Debug, Clone, PartialEq)]
pub struct TagSite {
    /// The edit-tool target: the resource block or the module call.
    pub target: Target,
    /// `tags`, or the module call's argument.
    pub attribute: String,
    /// The `each.key` (string) or `count.index` (number) of this instance when the site stands
    /// for several.
    pub instance: Option<Instance>,
    /// Every instance whose tags this site writes, this one included.
    pub sharers: Vec<String>,
    /// Why this place.
    pub why: String,
}

/// The site of `instance`'s tags, or why no edit changes its tags alone.
pub fn site(project: &Project, instance: &ResourceInstance) -> Result<TagSite, String> {
    let siblings: Vec<&ResourceInstance> = project
        .instances()
        .filter(|i| {
            i.file == instance.file
                && i.resource_type == instance.resource_type
                && i.name == instance.name
                && i.mode == instance.mode
        })
        .collect();
    let path = [PathStep::Key("tags".to_owned())];
    // The only instance of its block in its module instance (`count = 1` counts too).
    let alone = siblings
        .iter()
        .filter(|s| s.module == instance.module)
        .count()
        == 1;
    if let Some(Provenance::ModuleInput {
        call,
        argument,
        file,
        ..
    }) = project.provenance(&instance.address, &path)
        && alone
        && project
            .variable(instance.module.as_deref(), &argument)
            .is_some_and(|v| v.uses == 1)
    {
        return Ok(module_site(instance, &siblings, &call, &argument, &file));
    }
    if alone && let Some(site) = merged_input_site(project, instance, &siblings) {
        return Ok(site);
    }
    if siblings.iter().any(|s| s.module != instance.module) {
        return Err(format!(
            "{} is written in a module used {} times and its tags come from inputs shared with other arguments; tags for this module instance alone need a new module input",
            instance.address,
            siblings.len()
        ));
    }
    let several = siblings.len() > 1;
    Ok(TagSite {
        target: block_target(
            &instance.file,
            "resource",
            &[&instance.resource_type, &instance.name],
        ),
        attribute: "tags".to_owned(),
        instance: if several {
            instance.index.as_ref().map(key_json)
        } else {
            None
        },
        sharers: siblings.iter().map(|s| s.address.clone()).collect(),
        why: if several {
            format!(
                "tags changed outside Terraform on one of the {} instances of the block; only this instance's tags change",
                siblings.len()
            )
        } else {
            "tags changed outside Terraform".to_owned()
        },
    })
}

/// Tags written `merge(..., var.NAME)` in a module whose input `NAME` feeds only these tags
/// (a per-resource tags input such as `vpc_tags`): the last argument wins in `merge`, so the
/// module call's argument `NAME` takes the tag (added to the call when it is not set there)
/// and the module's other resources keep theirs.
fn merged_input_site(
    project: &Project,
    instance: &ResourceInstance,
    siblings: &[&ResourceInstance],
) -> Option<TagSite> {
    let module = instance.module.as_deref()?;
    let path = [PathStep::Key("tags".to_owned())];
    let Some(Provenance::Expression { file, span, .. }) =
        project.provenance(&instance.address, &path)
    else {
        return None;
    };
    let text = project.files().get(&file)?.get(span)?;
    let argument = last_merged_variable(text)?;
    let used_once = project
        .variable(Some(module), &argument)
        .is_some_and(|v| v.uses == 1);
    let call = project.call_of(module)?;
    used_once.then(|| {
        let path = format!("module.{}", call.name);
        module_site(instance, siblings, &path, &argument, &call.file)
    })
}

/// `NAME` when `text` is `merge(..., var.NAME)`, or has only object literals after
/// `var.NAME` (`merge(var.tags, var.log_tags, { Name = local.name })`): later literal keys
/// still win, other tags set through the input stay.
fn last_merged_variable(text: &str) -> Option<String> {
    use hcl::edit::expr::{Expression, TraversalOperator};
    let Ok(Expression::FuncCall(call)) = hcl::edit::parser::parse_expr(text) else {
        return None;
    };
    if call.name.name.as_str() != "merge" || !call.name.namespace.is_empty() {
        return None;
    }
    let last = call
        .args
        .iter()
        .filter(|arg| !matches!(arg, Expression::Object(_)))
        .last()?;
    let Expression::Traversal(last) = last else {
        return None;
    };
    let Expression::Variable(root) = &last.expr else {
        return None;
    };
    match last.operators.as_slice() {
        [only] if root.as_str() == "var" => match only.value() {
            TraversalOperator::GetAttr(name) => Some(name.as_str().to_owned()),
            _ => None,
        },
        _ => None,
    }
}

/// The module call's argument feeding the tags: `var.<argument>` is used only here.
fn module_site(
    instance: &ResourceInstance,
    siblings: &[&ResourceInstance],
    call: &str,
    argument: &str,
    file: &str,
) -> TagSite {
    let module = instance.module.as_deref().unwrap_or_default();
    let (prefix, key) = split_last_key(module);
    let sharers: Vec<String> = siblings
        .iter()
        .filter(|s| s.module.as_deref().map(|m| split_last_key(m).0) == Some(prefix))
        .map(|s| s.address.clone())
        .collect();
    let name = call.rsplit("module.").next().unwrap_or(call);
    let name = name.split('[').next().unwrap_or(name).trim_end_matches('.');
    TagSite {
        target: block_target(file, "module", &[name]),
        attribute: argument.to_owned(),
        instance: key.filter(|_| sharers.len() > 1).map(|k| key_json(&k)),
        sharers,
        why: format!(
            "tags changed outside Terraform; var.{argument} feeds only these tags in module {name}, so the call's argument is edited"
        ),
    }
}

/// An instance key as the edit tools take it: `each.key` a string, `count.index` a number.
pub(super) fn key_json(key: &IndexKey) -> Instance {
    match key {
        IndexKey::Int(n) => Instance::Index(n.unsigned_abs()),
        IndexKey::Str(s) => Instance::Key(s.clone()),
    }
}

/// A top-level block of a file as an edit-tool target.
pub(super) fn block_target(file: &str, block_type: &str, labels: &[&str]) -> Target {
    Target {
        file: Some(file.to_owned()),
        block_type: block_type.to_owned(),
        labels: labels.iter().map(|l| (*l).to_owned()).collect(),
        path: Vec::new(),
    }
}

/// `module.a.module.b["x"]` → (`module.a.module.b`, key `x`); no key when the last call has
/// neither `count` nor `for_each`.
pub(super) fn split_last_key(module: &str) -> (&str, Option<IndexKey>) {
    let Some(inner) = module.strip_suffix(']') else {
        return (module, None);
    };
    let last_call = module.rfind("module.").unwrap_or(0);
    let Some(open) = module[last_call..].find('[').map(|i| i + last_call) else {
        return (module, None);
    };
    let text = &inner[open + 1..];
    let key = match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(s) => IndexKey::Str(s.to_owned()),
        None => match text.parse() {
            Ok(n) => IndexKey::Int(n),
            Err(_) => return (module, None),
        },
    };
    (&module[..open], Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_module_key_is_split_off() {
        assert_eq!(
            split_last_key("module.function[\"get-order\"]"),
            (
                "module.function",
                Some(IndexKey::Str("get-order".to_owned()))
            )
        );
        assert_eq!(
            split_last_key("module.a[0].module.b[2]"),
            ("module.a[0].module.b", Some(IndexKey::Int(2)))
        );
        assert_eq!(split_last_key("module.kms"), ("module.kms", None));
        assert_eq!(
            split_last_key("module.a[0].module.b"),
            ("module.a[0].module.b", None)
        );
    }
}

//! Security groups whose rules are written as separate `aws_security_group_rule` resources
//! (the legacy form many modules use): a rule added outside Terraform becomes one more such
//! resource, or one more entry of the list a module's rule resources are made from, imported;
//! never an inline `ingress`/`egress` block, which the provider's documentation warns
//! conflicts with separate rule resources.

use serde_json::{Map, Value};

use crate::intents::BlockDelta;
use crate::synthesize::edit::Container;
use crate::synthesize::place::same_block;
use crate::synthesize::settled::is_empty;
use crate::synthesize::tags::block_target;
use crate::terraform::config::{Project, Provenance, ResourceInstance, VariableSource};
use crate::terraform::functions::Value as Evaluated;
use crate::terraform::state::{IndexKey, Mode, PathStep, StateIndex};
use crate::terraform::values::same_value;

/// How a rule added outside Terraform is written.
#[derive(Debug, Clone, PartialEq)]
pub enum NewRule {
    /// One more rule resource beside the group's others.
    Resource(RuleResource),
    /// One more entry in the list the group's rule resources are made from by `count`.
    Entry(RuleEntry),
}

impl NewRule {
    /// The new rule's import id.
    pub fn id(&self) -> &str {
        match self {
            NewRule::Resource(rule) => &rule.id,
            NewRule::Entry(entry) => &entry.id,
        }
    }
}

/// A new entry of the list a module's (or the root's) `aws_security_group_rule` resources are
/// made from, and the import of the rule instance it makes.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleEntry {
    /// The file holding the list.
    pub file: String,
    /// Where the list is written there.
    pub container: Container,
    /// The entry, its fields in the order the existing entry writes them.
    pub value: Vec<(String, Value)>,
    /// The list, in words: `the ingress_with_cidr_blocks argument of module.web_sg`.
    pub list: String,
    /// The root module file the import block goes to.
    pub import_file: String,
    /// The address of the rule instance the entry makes.
    pub address: String,
    /// Its import id.
    pub id: String,
}

/// The arguments of `aws_security_group_rule` a rule's entry can set.
const RULE_ARGUMENTS: [&str; 10] = [
    "type",
    "from_port",
    "to_port",
    "protocol",
    "cidr_blocks",
    "ipv6_cidr_blocks",
    "prefix_list_ids",
    "source_security_group_id",
    "self",
    "description",
];

/// A new `aws_security_group_rule` for a rule added outside Terraform.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleResource {
    /// The file of the group's other rule resources.
    pub file: String,
    /// The new resource's name.
    pub name: String,
    /// Its import id, `sg-1_ingress_tcp_443_443_10.0.0.0/8` as the provider documents it.
    pub id: String,
    /// Its arguments, the group's id as a plain value (the planner makes it a reference).
    pub attributes: Map<String, Value>,
}

/// For a block added to `group` (an `aws_security_group` whose rules are separate resources),
/// the rule to write, or why none can be written; `None` when the group's rules are not
/// separate resources (an inline block is right then).
pub fn separate_rule(
    project: &Project,
    state: &StateIndex,
    group: &ResourceInstance,
    block: &BlockDelta,
) -> Option<Result<NewRule, String>> {
    if group.resource_type != "aws_security_group"
        || !matches!(block.block.as_str(), "ingress" | "egress")
    {
        return None;
    }
    let Evaluated::Object(config) = &group.attributes else {
        return None;
    };
    let inline = ["ingress", "egress"]
        .iter()
        .any(|kind| match config.get(*kind) {
            Some(Evaluated::List(blocks) | Evaluated::Set(blocks)) => !blocks.is_empty(),
            Some(Evaluated::Unknown) => true,
            _ => false,
        });
    if inline {
        return None;
    }
    let group_id = state
        .instance(&group.address)?
        .attributes
        .get("id")?
        .as_str()?
        .to_owned();
    let rules: Vec<&str> = state
        .iter()
        .filter(|r| r.mode == Mode::Managed && r.resource_type == "aws_security_group_rule")
        .filter(|r| {
            r.attributes
                .get("security_group_id")
                .and_then(Value::as_str)
                == Some(&group_id)
        })
        .map(|r| r.address.as_str())
        .collect();
    let first = *rules.first()?;
    Some(new_rule(project, group, block, &group_id, &rules).map_err(|why| {
        format!(
            "the rules of {} are separate aws_security_group_rule resources ({first} among them), so an inline `{}` block would conflict with them; {why}",
            group.address, block.block
        )
    }))
}

/// The rule to write for `block`: a resource beside a root rule resource written alone, else
/// an entry of the first list (one per rule block of the right `type`) that can take it.
fn new_rule(
    project: &Project,
    group: &ResourceInstance,
    block: &BlockDelta,
    group_id: &str,
    rules: &[&str],
) -> Result<NewRule, String> {
    let (attributes, id) = rule_attributes(block, group_id)?;
    let configured: Vec<&ResourceInstance> = rules
        .iter()
        .map(|address| {
            project
                .instance(address)
                .ok_or_else(|| format!("{address} is in the state but not in the configuration"))
        })
        .collect::<Result<_, _>>()?;
    if let Some(alone) = configured
        .iter()
        .find(|r| r.module.is_none() && r.index.is_none())
    {
        return Ok(NewRule::Resource(RuleResource {
            file: alone.file.clone(),
            name: free_name(project, &resource_name(group, block, &attributes)),
            id,
            attributes,
        }));
    }
    // Each rule block's first reason: its instances are tried in turn, since one entry may
    // name a predefined rule where another spells its ports out.
    let mut reasons: Vec<(&ResourceInstance, String)> = Vec::new();
    for sibling in configured {
        if evaluated(sibling, "type") != Value::String(block.block.clone()) {
            continue;
        }
        match rule_entry(project, sibling, &attributes) {
            Ok((value, home)) => return Ok(NewRule::Entry(home.finish(value, id))),
            Err(why) => {
                if !reasons
                    .iter()
                    .any(|(r, _)| same_block(r, sibling) && r.module == sibling.module)
                {
                    reasons.push((sibling, why));
                }
            }
        }
    }
    let mut reasons: Vec<String> = reasons.into_iter().map(|(_, why)| why).collect();
    if reasons.is_empty() {
        reasons.push(format!("none of them is an `{}` rule", block.block));
    }
    Err(reasons.join("; "))
}

/// The new rule's arguments as an `aws_security_group_rule` sets them (`type` first, one
/// source group as `source_security_group_id`), and its import id,
/// `sg-1_ingress_tcp_443_443_10.0.0.0/8` as the provider documents it.
fn rule_attributes(
    block: &BlockDelta,
    group_id: &str,
) -> Result<(Map<String, Value>, String), String> {
    let mut attributes = Map::new();
    attributes.insert("type".to_owned(), Value::String(block.block.clone()));
    attributes.insert(
        "security_group_id".to_owned(),
        Value::String(group_id.to_owned()),
    );
    for (name, value) in &block.fields {
        match (name.as_str(), value) {
            ("security_groups", Value::Array(groups)) if groups.len() == 1 => {
                attributes.insert("source_security_group_id".to_owned(), groups[0].clone());
            }
            ("security_groups", Value::Array(groups)) if groups.is_empty() => {}
            ("security_groups", _) => {
                return Err(
                    "a rule resource takes one source security group; the rule names several"
                        .to_owned(),
                );
            }
            (_, Value::Null) => {}
            (_, Value::Array(items)) if items.is_empty() => {}
            _ => {
                attributes.insert(name.clone(), value.clone());
            }
        }
    }
    let mut sources = Vec::new();
    for source in ["cidr_blocks", "ipv6_cidr_blocks", "prefix_list_ids"] {
        if let Some(Value::Array(items)) = attributes.get(source) {
            sources.extend(items.iter().filter_map(|v| v.as_str().map(str::to_owned)));
        }
    }
    if let Some(Value::String(source)) = attributes.get("source_security_group_id") {
        sources.push(source.clone());
    }
    let text = |name: &str| text_of(attributes.get(name));
    let (protocol, from, to) = (text("protocol"), text("from_port"), text("to_port"));
    if protocol.is_empty() || from.is_empty() || to.is_empty() || sources.is_empty() {
        return Err(
            "the added rule lacks a protocol, ports or a source; no rule resource can name it"
                .to_owned(),
        );
    }
    let id = format!(
        "{group_id}_{}_{protocol}_{from}_{to}_{}",
        block.block,
        sources.join("_")
    );
    Ok((attributes, id))
}

/// A scalar as text (a string without quotes); empty when absent.
fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// The name of a new rule resource: the group's name, the rule's type and its first port.
fn resource_name(
    group: &ResourceInstance,
    block: &BlockDelta,
    attributes: &Map<String, Value>,
) -> String {
    format!(
        "{}_{}_{}",
        group.name,
        block.block,
        text_of(attributes.get("from_port")).replace('-', "all")
    )
}

/// The evaluated configuration value of an instance's argument, as JSON (null when unset or
/// unknown).
fn evaluated(instance: &ResourceInstance, argument: &str) -> Value {
    match &instance.attributes {
        Evaluated::Object(config) => config
            .get(argument)
            .and_then(Evaluated::to_json)
            .unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// A list entry for the new rule, learnt from the entry that made `sibling` (instance `n` of
/// a rule block whose `count` is the length of one list variable): every field of that entry
/// is an argument of the same name, which the block writes as the field holds it, and every
/// other argument has the new rule's value already.
fn rule_entry(
    project: &Project,
    sibling: &ResourceInstance,
    attributes: &Map<String, Value>,
) -> Result<(Vec<(String, Value)>, ListHome), String> {
    let refuse = |why: String| Err(format!("{} {why}", sibling.address));
    let Some(IndexKey::Int(n)) = sibling.index else {
        return refuse(
            "is not made by `count` over a list, so a new rule needs a key a person should name"
                .to_owned(),
        );
    };
    let module = sibling.module.as_deref();
    if module.is_some_and(|m| m.contains('[')) {
        return refuse("is in a module called several times, which share its inputs".to_owned());
    }
    let (name, entries) = counted_list(project, sibling)?;
    let entry = match entries.get(n as usize) {
        Some(Value::Object(entry)) => entry,
        Some(other) => {
            return refuse(format!(
                "is made from var.{name}, whose entries are not objects but values like {other}: names of rules the module defines, and which name a new rule takes is for a person to choose"
            ));
        }
        None => {
            return refuse(format!(
                "has no entry {n} in var.{name} to learn fields from"
            ));
        }
    };
    let home = list_home(project, sibling, &name)?;
    let written = home.written.as_ref().and_then(|list| list.get(n as usize));
    let wanted = |argument: &str| attributes.get(argument).cloned().unwrap_or(Value::Null);
    let mut value = Vec::new();
    for (field, have) in entry {
        if !RULE_ARGUMENTS.contains(&field.as_str()) {
            return refuse(format!(
                "is made from entries with `{field}`, which is not a rule argument retrace can write"
            ));
        }
        if !written_as(have, &evaluated(sibling, field)) {
            return refuse(format!(
                "does not take `{field}` as its entry holds it ({have} against {})",
                evaluated(sibling, field)
            ));
        }
        let like = written.and_then(|w| w.get(field)).unwrap_or(have);
        value.push((field.clone(), typed_like(&wanted(field), like)));
    }
    for argument in RULE_ARGUMENTS {
        let (have, want) = (evaluated(sibling, argument), wanted(argument));
        let equal = same_value(&have, &want) || (is_empty(&have) && is_empty(&want));
        if !entry.contains_key(argument) && !equal {
            return refuse(format!(
                "writes `{argument}` without its entry, as {have}, and the new rule has {want}"
            ));
        }
    }
    let address = format!(
        "{}aws_security_group_rule.{}[{}]",
        module.map(|m| format!("{m}.")).unwrap_or_default(),
        sibling.name,
        entries.len()
    );
    Ok((value, ListHome { address, ..home }))
}

/// Where a rule block's list variable is written, the list as written there (before the
/// variable's type converts it), the root file an import block can go to, and the address
/// of the instance a new entry makes.
struct ListHome {
    file: String,
    container: Container,
    list: String,
    written: Option<Value>,
    import_file: String,
    address: String,
}

impl ListHome {
    fn finish(self, value: Vec<(String, Value)>, id: String) -> RuleEntry {
        RuleEntry {
            file: self.file,
            container: self.container,
            value,
            list: self.list,
            import_file: self.import_file,
            address: self.address,
            id,
        }
    }
}
/// The list variable of `sibling`'s module whose length is the `count` of its block: the one
/// list its `count` reads with as many entries as the block has instances.
fn counted_list(
    project: &Project,
    sibling: &ResourceInstance,
) -> Result<(String, Vec<Value>), String> {
    let module = sibling.module.as_deref();
    let block = format!("{}.{}", sibling.resource_type, sibling.name);
    let instances = project
        .instances()
        .filter(|i| same_block(i, sibling) && i.module == sibling.module)
        .count();
    let lists: Vec<(String, Vec<Value>)> = project
        .variables()
        .into_iter()
        .filter(|v| v.module.as_deref() == module)
        .filter(|v| {
            project
                .blocks_iterating(module, "var", &v.name)
                .contains(&block)
        })
        .filter_map(|v| match v.value.to_json() {
            Some(Value::Array(entries)) if entries.len() == instances => Some((v.name, entries)),
            _ => None,
        })
        .collect();
    match <[_; 1]>::try_from(lists) {
        Ok([list]) => Ok(list),
        Err(lists) => Err(format!(
            "{} has a count that reads {} list variables of its length, not one",
            sibling.address,
            lists.len()
        )),
    }
}

/// Where `var.NAME` of the rule block's module is written: the root variable's default or
/// tfvars assignment, or the module call's argument (a literal list, a root variable or a
/// root local), when nothing else reads it on the way.
fn list_home(
    project: &Project,
    sibling: &ResourceInstance,
    name: &str,
) -> Result<ListHome, String> {
    let block = format!("{}.{}", sibling.resource_type, sibling.name);
    let read_only_by = |module: Option<&str>, root: &str, name: &str, reader: &str| {
        let others: Vec<String> = project
            .readers(module, root, name)
            .into_iter()
            .filter(|r| r != reader)
            .collect();
        match others.as_slice() {
            [] => Ok(()),
            _ => Err(format!(
                "{root}.{name} is also read by {}, which a new entry would change too",
                others.join(", ")
            )),
        }
    };
    let Some(module) = sibling.module.as_deref() else {
        read_only_by(None, "var", name, &block)?;
        let variable = project
            .variable(None, name)
            .ok_or_else(|| format!("var.{name} is not declared"))?;
        return root_list(project, name, &variable.source, &sibling.file);
    };
    read_only_by(Some(module), "var", name, &block)?;
    let call = project
        .call_of(module)
        .ok_or_else(|| format!("{module} has no module block"))?;
    if call.parent.is_some() || call.repeated {
        return Err(format!(
            "{module} is called from another module or several times, so its var.{name} is not written for it alone"
        ));
    }
    let caller = format!("module.{}", call.name);
    let argument = [PathStep::Key(name.to_owned())];
    match project.call_provenance(module, &argument) {
        Some(Provenance::Literal { file, span }) => Ok(ListHome {
            written: literal(project, &file, &span),
            container: Container::Argument {
                target: block_target(&call.file, "module", &[&call.name]),
                name: name.to_owned(),
            },
            list: format!("the `{name}` list of {caller} in {file}"),
            import_file: call.file.clone(),
            address: String::new(),
            file,
        }),
        Some(Provenance::Variable {
            module: None,
            name: root,
            source,
            path,
        }) if path.is_empty() => {
            read_only_by(None, "var", &root, &caller)?;
            root_list(project, &root, &source, &call.file)
        }
        Some(Provenance::Local {
            module: None,
            name: local,
            file,
            span,
            ..
        }) => {
            read_only_by(None, "local", &local, &caller)?;
            Ok(ListHome {
                written: literal(project, &file, &span),
                container: Container::Local {
                    name: local.clone(),
                },
                list: format!("local.{local} in {file}"),
                import_file: call.file.clone(),
                address: String::new(),
                file,
            })
        }
        _ => Err(format!(
            "{caller} passes its `{name}` from an expression, not a list the code writes"
        )),
    }
}

/// A root variable's list where its value is written: its default or a tfvars assignment.
fn root_list(
    project: &Project,
    name: &str,
    source: &VariableSource,
    import_file: &str,
) -> Result<ListHome, String> {
    let (file, span, container) = match source {
        VariableSource::Default { file, span } => (
            file,
            span,
            Container::VariableDefault {
                name: name.to_owned(),
            },
        ),
        VariableSource::Tfvars { file, span, .. } => (
            file,
            span,
            Container::Tfvar {
                name: name.to_owned(),
            },
        ),
        _ => return Err(format!("var.{name} has no value the code writes")),
    };
    Ok(ListHome {
        written: literal(project, file, span),
        container,
        list: format!("var.{name} in {file}"),
        file: file.clone(),
        import_file: import_file.to_owned(),
        address: String::new(),
    })
}

/// The value of the literal written at `span` of `file`, as written (no type conversion).
fn literal(project: &Project, file: &str, span: &std::ops::Range<usize>) -> Option<Value> {
    let text = project.source(file)?.get(span.clone())?;
    let expr: hcl::Expression = text.parse().ok()?;
    project.evaluate_in_root(&expr).to_json()
}

/// Whether an entry's field `have` is what the argument `argument` holds: the same value, or
/// a comma-separated string of the list the argument holds (`split(",", ...)`).
fn written_as(have: &Value, argument: &Value) -> bool {
    if same_value(have, argument) || (is_empty(have) && is_empty(argument)) {
        return true;
    }
    match (have, argument) {
        (Value::String(joined), Value::Array(items)) => {
            let parts: Vec<Value> = joined
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| Value::String(p.to_owned()))
                .collect();
            same_value(&Value::Array(parts), argument) && !items.is_empty()
        }
        _ => false,
    }
}

/// `want` written in the type of `like`, the same field of an existing entry: a list joined
/// with commas and a number or bool as text where that entry has a string, a number's text as
/// a number where it has a number, nothing as the empty form of its type.
fn typed_like(want: &Value, like: &Value) -> Value {
    match (like, want) {
        (Value::String(_), Value::Array(items)) => Value::String(
            items
                .iter()
                .map(|item| text_of(Some(item)))
                .collect::<Vec<_>>()
                .join(","),
        ),
        (Value::String(_), Value::Number(_) | Value::Bool(_)) => Value::String(text_of(Some(want))),
        (Value::String(_), Value::Null) => Value::String(String::new()),
        (Value::Number(_), Value::String(text)) => text
            .parse::<serde_json::Number>()
            .map_or_else(|_| want.clone(), Value::Number),
        (Value::Bool(_), Value::Null) => Value::Bool(false),
        (Value::Array(_), Value::Null) => Value::Array(Vec::new()),
        _ => want.clone(),
    }
}

/// `base`, or `base_2`, `base_3`... when the root module has a rule resource of that name.
fn free_name(project: &Project, base: &str) -> String {
    let taken = |name: &str| {
        project.instances().any(|i| {
            i.module.is_none() && i.resource_type == "aws_security_group_rule" && i.name == name
        })
    };
    (1..)
        .map(|n| {
            if n == 1 {
                base.to_owned()
            } else {
                format!("{base}_{n}")
            }
        })
        .find(|name| !taken(name))
        .unwrap_or_else(|| base.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_entry_field_is_read_as_the_argument_holds_it() {
        // What list(map(string)) makes of a number, and a comma-separated CIDR list split.
        assert!(written_as(&json!("443"), &json!(443)));
        assert!(written_as(
            &json!("10.0.0.0/16, 10.1.0.0/16"),
            &json!(["10.0.0.0/16", "10.1.0.0/16"])
        ));
        assert!(written_as(&json!(""), &json!([])));
        assert!(!written_as(&json!("10.0.0.0/16"), &json!(["10.1.0.0/16"])));
        assert!(!written_as(&json!("https-443-tcp"), &json!(443)));
    }

    #[test]
    fn a_new_entrys_fields_take_the_written_entrys_types() {
        let cases = [
            (
                json!(["10.2.0.0/16", "10.3.0.0/16"]),
                json!("10.0.0.0/16"),
                json!("10.2.0.0/16,10.3.0.0/16"),
            ),
            (json!(8443), json!("443"), json!("8443")),
            (json!(8443), json!(443), json!(8443)),
            (json!("8443"), json!(443), json!(8443)),
            (Value::Null, json!("HTTPS"), json!("")),
            (Value::Null, json!(["::/0"]), json!([])),
            (json!("tcp"), json!("udp"), json!("tcp")),
        ];
        for (want, like, written) in cases {
            assert_eq!(typed_like(&want, &like), written, "{want} like {like}");
        }
    }
}

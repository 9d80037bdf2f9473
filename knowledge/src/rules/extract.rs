//! Applying a rule to one call's payloads: identities, attribute values, blocks, tags, flags.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::error::RuleError;
use super::model::{
    BlockSpec, FlagLevel, FlagSpec, Kind, Members, Missing, Paths, Payload, Risk, Rule, TagOp,
    TagSpec, ValueSource, When,
};
use super::path::JsonPath;
use super::transform::Transform;

/// What a rule read from one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Extraction {
    /// The rule's id, e.g. `ec2:ModifyInstanceAttribute`.
    pub rule_id: String,
    /// The resource types the rule may change.
    pub resource_types: Vec<String>,
    /// The kind of change.
    pub kind: Kind,
    /// The rule's risk tier.
    pub risk: Risk,
    /// The rule's plain-language fragment.
    pub summary: String,
    /// What to do when no state instance has the identity.
    pub missing: Option<Missing>,
    /// The resources changed, each with its identity.
    pub targets: Vec<Target>,
    /// Attribute path → value, in rule order; paths the record lacks are left out.
    pub sets: Vec<(String, Value)>,
    /// Values added to or removed from set attributes, in rule order.
    pub members: Vec<MemberChange>,
    /// The nested blocks added or removed, one change per kind of block.
    pub blocks: Vec<BlockChange>,
    /// The tag change.
    pub tags: Option<TagChange>,
    /// The rule's flags that fired.
    pub flags: Vec<FiredFlag>,
    /// What the call changed that CloudTrail does not record (the `what` of each `hidden`
    /// entry whose path the request has).
    pub hidden: Vec<String>,
}

impl Extraction {
    /// The identities of the targets, in order.
    pub fn identities(&self) -> Vec<&str> {
        self.targets.iter().map(|t| t.identity.as_str()).collect()
    }

    /// The value extracted for an attribute, when the record had it.
    pub fn value(&self, attribute: &str) -> Option<&Value> {
        self.sets
            .iter()
            .find(|(name, _)| name == attribute)
            .map(|(_, v)| v)
    }
}

/// One resource a call changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The identity: an id, a name, or composite parts joined with `/`.
    pub identity: String,
    /// The types it may be, when the rule narrows them for this target (a single type, or
    /// those of an id prefix), in the order to try; empty: any of the rule's types.
    pub resource_types: Vec<String>,
    /// Attribute path → value read for this target alone (a `set` with `each`), in rule
    /// order, besides the extraction's `sets`.
    pub sets: Vec<(String, Value)>,
}

/// Values a call added to or removed from a set attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberChange {
    /// The attribute, `enabled_cluster_log_types`.
    pub attribute: String,
    /// Whether the values join or leave the set.
    pub op: Members,
    /// The values.
    pub values: Vec<Value>,
}

/// Nested blocks added or removed, one map of fields per block.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockChange {
    /// The block name, e.g. `ingress`.
    pub name: String,
    /// The blocks' fields.
    pub items: Vec<Map<String, Value>>,
    /// When the call replaces the whole set of blocks, the field that matches a block to the
    /// state's (`id` for lifecycle rules).
    pub key: Option<String>,
}

/// A change to the `tags` attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagChange {
    /// Merge, remove or replace.
    pub op: TagOp,
    /// Tags set (for merge and replace).
    pub added: BTreeMap<String, String>,
    /// Keys removed (for remove).
    pub removed: Vec<String>,
}

/// A flag that fired, with its reason.
#[derive(Debug, Clone, PartialEq)]
pub struct FiredFlag {
    /// The attribute or block field.
    pub field: String,
    /// The value that fired it.
    pub value: Value,
    /// Why it is risky.
    pub reason: String,
    /// The text the field's current value must hold for the flag to stand (`FlagSpec::replaces`).
    pub replaces: Option<String>,
    /// Whether the change is held or written with a warning.
    pub level: FlagLevel,
}

impl FiredFlag {
    /// Whether the flag stands given the field's current value in the state (`None` when the
    /// state does not hold the resource or the field): always without a `replaces` condition,
    /// otherwise only when the current value holds that text.
    pub fn fires_against(&self, current: Option<&Value>) -> bool {
        match &self.replaces {
            None => true,
            Some(text) => current.is_some_and(|v| any_string(v, &|s| s.contains(text.as_str()))),
        }
    }
}

impl Rule {
    /// Reads a call's `requestParameters` and `responseElements` by this rule.
    ///
    /// Optional values the record lacks are left out; a missing identity, or a value that does
    /// not fit its transform, is an error naming the rule.
    pub fn extract(
        &self,
        request: Option<&Value>,
        response: Option<&Value>,
    ) -> Result<Extraction, RuleError> {
        let reader = Reader {
            rule: self,
            request,
            response,
        };
        let mut targets = reader.targets()?;
        let per_target = reader.target_sets(targets.len())?;
        for (target, sets) in targets.iter_mut().zip(per_target) {
            target.sets = sets;
        }
        let sets = reader.sets()?;
        let members = reader.members()?;
        let blocks = self
            .spec
            .blocks
            .iter()
            .map(|b| reader.blocks(b))
            .collect::<Result<Vec<_>, _>>()?;
        let tags = self
            .spec
            .tags
            .as_ref()
            .map(|t| reader.tags(t))
            .transpose()?;
        let mut flags = fired_flags(&self.spec.flags, &sets, &blocks);
        if let Some(reason) = &self.spec.hold {
            flags.push(FiredFlag {
                field: String::new(),
                value: Value::Null,
                reason: reason.clone(),
                replaces: None,
                level: FlagLevel::Hold,
            });
        }
        let removes = self.spec.delete_unless.as_ref().is_some_and(|paths| {
            reader
                .payload(Payload::Request)
                .and_then(|r| select_first(r, paths))
                .is_none_or(|(values, _)| values.iter().all(Value::is_null))
        });
        let deletes = self.spec.delete_when.as_ref().is_some_and(|when| {
            reader
                .payload(when.from)
                .and_then(|r| select_first(r, &Paths::One(when.path.clone())))
                .is_some_and(|(values, _)| values.iter().all(|v| *v == when.equals))
        });
        let removes = removes || deletes;
        let hidden = self
            .spec
            .hidden
            .iter()
            .filter(|h| {
                reader
                    .payload(Payload::Request)
                    .is_some_and(|r| select_first(r, &h.path).is_some())
            })
            .map(|h| h.what.clone())
            .collect();
        Ok(Extraction {
            rule_id: self.id(),
            resource_types: self
                .resource_types()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            kind: if removes {
                Kind::Delete
            } else {
                self.spec.kind
            },
            risk: self.spec.risk,
            summary: self.spec.summary.clone(),
            missing: self.spec.missing,
            targets,
            sets,
            members,
            blocks,
            tags,
            flags,
            hidden,
        })
    }
}

struct Reader<'a> {
    rule: &'a Rule,
    request: Option<&'a Value>,
    response: Option<&'a Value>,
}

impl Reader<'_> {
    fn payload(&self, from: Payload) -> Option<&Value> {
        match from {
            Payload::Request => self.request,
            Payload::Response => self.response,
        }
    }

    fn value_error(&self, field: &str, message: String) -> RuleError {
        RuleError::Value {
            rule: self.rule.id(),
            field: field.to_owned(),
            message,
        }
    }

    /// Reads `paths` from a root and transforms the result; `None` when nothing is there.
    fn read(
        &self,
        root: Option<&Value>,
        paths: &Paths,
        transform: Option<Transform>,
        field: &str,
    ) -> Result<Option<Value>, RuleError> {
        let Some((values, iterated)) = root.and_then(|r| select_first(r, paths)) else {
            let absent = transform == Some(Transform::Present) && root.is_some();
            return Ok(absent.then_some(Value::Bool(false)));
        };
        transform
            .unwrap_or(Transform::Raw)
            .apply(values, iterated)
            .map(Some)
            .map_err(|m| self.value_error(field, m))
    }

    fn identity_part(&self, part: &ValueSource) -> Result<Vec<String>, RuleError> {
        let missing = || RuleError::MissingIdentity {
            rule: self.rule.id(),
            payload: part.from.to_string(),
            path: part.path.as_slice().join(" | "),
        };
        let root = self.payload(part.from);
        let (values, _) = root
            .and_then(|r| select_first(r, &part.path))
            .ok_or_else(missing)?;
        let transform = part.transform.unwrap_or(Transform::String);
        values
            .into_iter()
            .map(|v| {
                let v = transform
                    .apply_one(v)
                    .map_err(|m| self.value_error("identity", m))?;
                Transform::String
                    .apply_one(v)
                    .map(|s| s.as_str().unwrap_or_default().to_owned())
                    .map_err(|m| self.value_error("identity", m))
            })
            .filter(|r| r.as_ref().map_or(true, |s| !s.is_empty()))
            .collect::<Result<Vec<_>, _>>()
            .and_then(|ids| {
                if ids.is_empty() {
                    Err(missing())
                } else {
                    Ok(ids)
                }
            })
    }

    fn targets(&self) -> Result<Vec<Target>, RuleError> {
        let parts = self
            .rule
            .spec
            .identity
            .iter()
            .map(|p| self.identity_part(p))
            .collect::<Result<Vec<_>, _>>()?;
        let count = parts.iter().map(Vec::len).max().unwrap_or(0);
        if let Some(odd) = parts.iter().find(|p| p.len() != 1 && p.len() != count) {
            return Err(self.value_error(
                "identity",
                format!("identity parts have {} and {count} values", odd.len()),
            ));
        }
        let separator = self.rule.spec.separator.as_deref().unwrap_or("/");
        let types = self.rule.resource_types();
        Ok((0..count)
            .map(|i| {
                let identity = parts
                    .iter()
                    .map(|p| p[i.min(p.len() - 1)].as_str())
                    .collect::<Vec<_>>()
                    .join(separator);
                let resource_types = if self.rule.by_id_prefix() {
                    self.rule.id_prefix_types(&identity).to_vec()
                } else if types.len() == 1 {
                    vec![types[0].to_owned()]
                } else {
                    Vec::new()
                };
                Target {
                    identity,
                    resource_types,
                    sets: Vec::new(),
                }
            })
            .collect())
    }

    fn members(&self) -> Result<Vec<MemberChange>, RuleError> {
        let mut out = Vec::new();
        for set in &self.rule.spec.sets {
            let (Some(op), Some(paths)) = (set.members, &set.path) else {
                continue;
            };
            if !self.applies(set.when.as_ref()) {
                continue;
            }
            let transform = set.transform.or(Some(Transform::Set));
            let values =
                match self.read(self.payload(set.from), paths, transform, &set.attribute)? {
                    Some(Value::Array(values)) => values,
                    Some(Value::Null) | None => Vec::new(),
                    Some(one) => vec![one],
                };
            if !values.is_empty() {
                out.push(MemberChange {
                    attribute: set.attribute.clone(),
                    op,
                    values,
                });
            }
        }
        Ok(out)
    }

    fn applies(&self, when: Option<&When>) -> bool {
        when.is_none_or(|w| {
            let found = self
                .payload(w.from)
                .and_then(|r| select_first(r, &Paths::One(w.path.clone())));
            found.is_some_and(|(values, _)| values.first() == Some(&w.equals))
        })
    }

    fn sets(&self) -> Result<Vec<(String, Value)>, RuleError> {
        let mut sets = Vec::new();
        for set in &self.rule.spec.sets {
            if set.members.is_some() || set.each.is_some() || !self.applies(set.when.as_ref()) {
                continue;
            }
            let value = match (&set.value, &set.path) {
                (Some(constant), _) => Some(constant.clone()),
                (None, Some(paths)) => {
                    self.read(self.payload(set.from), paths, set.transform, &set.attribute)?
                }
                (None, None) => None,
            };
            if let Some(value) = value {
                sets.push((set.attribute.clone(), value));
            }
        }
        Ok(sets)
    }

    /// The values of the `set`s with `each`, one list per element: as many as the call has
    /// targets, or an error naming the set.
    fn target_sets(&self, targets: usize) -> Result<Vec<Vec<(String, Value)>>, RuleError> {
        let mut out = vec![Vec::new(); targets];
        for set in &self.rule.spec.sets {
            let (Some(each), Some(paths)) = (&set.each, &set.path) else {
                continue;
            };
            if !self.applies(set.when.as_ref()) {
                continue;
            }
            let elements = self
                .payload(set.from)
                .and_then(|r| select_first(r, each))
                .map(|(values, _)| values)
                .unwrap_or_default();
            if elements.len() != targets {
                return Err(self.value_error(
                    &set.attribute,
                    format!("{} elements for {targets} targets", elements.len()),
                ));
            }
            for (element, sets) in elements.iter().zip(&mut out) {
                if let Some(value) =
                    self.read(Some(element), paths, set.transform, &set.attribute)?
                {
                    sets.push((set.attribute.clone(), value));
                }
            }
        }
        Ok(out)
    }

    fn blocks(&self, spec: &BlockSpec) -> Result<BlockChange, RuleError> {
        let elements = self
            .payload(spec.from)
            .and_then(|r| select_first(r, &spec.each))
            .map(|(values, _)| values)
            .unwrap_or_default();
        let mut items = Vec::new();
        for element in &elements {
            let mut item = Map::new();
            for (name, field) in &spec.fields {
                let (paths, transform) = field.parts();
                let label = format!("{}.{name}", spec.name);
                if let Some(value) = self.read(Some(element), paths, transform, &label)? {
                    item.insert(name.clone(), value);
                }
            }
            if !item.is_empty() {
                items.push(item);
            }
        }
        Ok(BlockChange {
            name: spec.name.clone(),
            items,
            key: spec.key.clone(),
        })
    }

    fn tags(&self, spec: &TagSpec) -> Result<TagChange, RuleError> {
        let values = self
            .payload(spec.from)
            .and_then(|r| select_first(r, &spec.path))
            .map(|(values, _)| values)
            .unwrap_or_default();
        let mut change = TagChange {
            op: spec.op,
            added: BTreeMap::new(),
            removed: Vec::new(),
        };
        for value in values {
            match (spec.op, value) {
                (TagOp::Remove, Value::String(key)) => change.removed.push(key),
                (TagOp::Remove, Value::Array(keys)) => change
                    .removed
                    .extend(keys.iter().filter_map(Value::as_str).map(str::to_owned)),
                (op, value) => {
                    let pairs = Transform::TagMap
                        .apply_one(value)
                        .map_err(|m| self.value_error("tags", m))?;
                    let Value::Object(pairs) = pairs else {
                        continue;
                    };
                    for (key, value) in pairs {
                        if op == TagOp::Remove {
                            change.removed.push(key);
                        } else {
                            change.added.insert(key, scalar_text(&value));
                        }
                    }
                }
            }
        }
        Ok(change)
    }
}

/// The values of the first alternative path that finds any, and whether it iterates.
fn select_first(root: &Value, paths: &Paths) -> Option<(Vec<Value>, bool)> {
    paths.as_slice().iter().find_map(|text| {
        let path = JsonPath::parse(text).ok()?;
        let values: Vec<Value> = path.select(root).into_iter().cloned().collect();
        (!values.is_empty()).then(|| (values, path.iterates()))
    })
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn fired_flags(
    flags: &[FlagSpec],
    sets: &[(String, Value)],
    blocks: &[BlockChange],
) -> Vec<FiredFlag> {
    let mut fired = Vec::new();
    for flag in flags {
        let from_sets = sets
            .iter()
            .filter(|(name, _)| *name == flag.field)
            .map(|(_, v)| v);
        let from_blocks = blocks
            .iter()
            .flat_map(|b| b.items.iter())
            .filter_map(|item| item.get(&flag.field));
        let values: Vec<Value> = from_sets
            .chain(from_blocks)
            .map(|v| as_document(v, flag))
            .collect();
        let hit = if flag.absent == Some(true) {
            values.is_empty().then_some(&Value::Null)
        } else {
            values
                .iter()
                .flat_map(|v| statements(v, flag.effect.as_deref()))
                .flat_map(|v| scoped(v, flag.key.as_deref()))
                .find(|v| fires(flag, v))
        };
        if let Some(value) = hit {
            fired.push(FiredFlag {
                field: flag.field.clone(),
                value: value.clone(),
                reason: flag.reason.clone(),
                replaces: flag.replaces.clone(),
                level: flag.level,
            });
        }
    }
    fired
}

/// The value a flag about a document's statements or keys tests: a document written as a
/// JSON string (a rule that reads a policy without the `json` transform) is read as the
/// document it holds, so its statements are checked all the same.
fn as_document(value: &Value, flag: &FlagSpec) -> Value {
    match value {
        Value::String(text) if flag.effect.is_some() || flag.key.is_some() => {
            match serde_json::from_str::<Value>(text) {
                Ok(document @ (Value::Object(_) | Value::Array(_))) => document,
                _ => value.clone(),
            }
        }
        other => other.clone(),
    }
}

/// The parts of a value a flag looks at: the value itself, or with an `effect` the statements
/// of the policy document whose `Effect` is that (a lone statement object counts as a
/// one-element `Statement` list, as IAM accepts it).
fn statements<'v>(value: &'v Value, effect: Option<&str>) -> Vec<&'v Value> {
    let Some(effect) = effect else {
        return vec![value];
    };
    let all: Vec<&Value> = match value.get("Statement") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(one) => vec![one],
        None => Vec::new(),
    };
    all.into_iter()
        .filter(|s| s.get("Effect").and_then(Value::as_str) == Some(effect))
        .collect()
}

/// The values a flag tests: the value itself, or with a `key` every value under that key
/// anywhere inside it.
fn scoped<'v>(value: &'v Value, key: Option<&str>) -> Vec<&'v Value> {
    let Some(key) = key else {
        return vec![value];
    };
    let mut out = Vec::new();
    collect_under(value, key, &mut out);
    out
}

fn collect_under<'v>(value: &'v Value, key: &str, out: &mut Vec<&'v Value>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == key {
                    out.push(v);
                } else {
                    collect_under(v, key, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_under(v, key, out)),
        _ => {}
    }
}

fn fires(flag: &FlagSpec, value: &Value) -> bool {
    if let Some(expected) = &flag.equals {
        return value == expected;
    }
    if let Some(needle) = &flag.contains {
        return match (value, needle) {
            (Value::String(s), Value::String(n)) => s.contains(n.as_str()),
            _ => holds(value, needle),
        };
    }
    if let Some(suffix) = &flag.ends_with {
        return any_string(value, &|s| s.ends_with(suffix.as_str()));
    }
    flag.present == Some(true)
}

/// Whether the value is, or holds somewhere inside, a string meeting the test.
fn any_string(value: &Value, test: &dyn Fn(&str) -> bool) -> bool {
    match value {
        Value::String(s) => test(s),
        Value::Array(items) => items.iter().any(|v| any_string(v, test)),
        Value::Object(map) => map.values().any(|v| any_string(v, test)),
        _ => false,
    }
}

/// Whether a value is, or holds somewhere inside, the needle.
fn holds(value: &Value, needle: &Value) -> bool {
    value == needle
        || match value {
            Value::Array(items) => items.iter().any(|v| holds(v, needle)),
            Value::Object(map) => map.values().any(|v| holds(v, needle)),
            _ => false,
        }
}

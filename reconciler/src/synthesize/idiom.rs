//! New code in the project's own idiom: when a resource is written for the first time (an
//! import), its values reuse what the project already names, and it goes beside its kind.
//!
//! - Tags the provider's `default_tags` already give are left out (Terraform adds them to
//!   `tags_all`); the rest is the root local or variable holding exactly that map
//!   (`local.common_tags`), or `merge(local.common_tags, { ... })` over the largest one it
//!   contains, or the literal map.
//! - A string that starts with the value of a root local or variable and a separator
//!   (`shop-prod-refunds` beside `local.prefix = "shop-prod"`) is written on it:
//!   `"${local.prefix}-refunds"`.
//! - The block goes into the root file holding other resources of its type, else of its
//!   service (`aws_sqs_*`), else the default file.
//! - Arguments come identity first (the catalog's natural keys), then the rest by name,
//!   tags last; nested blocks follow them (the renderer puts blocks after arguments).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::terraform::config::Project;
use crate::terraform::state::{Mode, StateIndex};

/// What the project names, for writing new code in its idiom.
#[derive(Debug, Clone, Default)]
pub struct Idiom {
    /// Root locals, then root variables, with known values: (`local.NAME`, value).
    named: Vec<(String, Value)>,
    /// Tags every managed resource gets from the provider (`tags_all` beyond `tags`).
    default_tags: Map<String, Value>,
    /// The root file of each resource type's first block.
    files: BTreeMap<String, String>,
}

impl Idiom {
    /// What `project` and its state name.
    pub fn new(project: &Project, state: &StateIndex) -> Idiom {
        let locals = project
            .locals()
            .into_iter()
            .filter(|l| l.module.is_none())
            .filter_map(|l| Some((format!("local.{}", l.name), l.value.to_json()?)));
        let variables = project
            .variables()
            .into_iter()
            .filter(|v| v.module.is_none())
            .filter_map(|v| Some((format!("var.{}", v.name), v.value.to_json()?)));
        let mut files = BTreeMap::new();
        for instance in project.instances() {
            if instance.module.is_none() && instance.mode == Mode::Managed {
                files
                    .entry(instance.resource_type.clone())
                    .or_insert_with(|| instance.file.clone());
            }
        }
        Idiom {
            named: locals.chain(variables).collect(),
            default_tags: default_tags(state),
            files,
        }
    }

    /// The tags to write for a new resource, `None` when the provider's default tags already
    /// give them all.
    pub fn tags(&self, tags: &Map<String, Value>) -> Option<Value> {
        let extra: Map<String, Value> = tags
            .iter()
            .filter(|(k, v)| self.default_tags.get(*k) != Some(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if extra.is_empty() {
            return None;
        }
        let maps = self.named.iter().filter_map(|(name, value)| {
            let map = value.as_object().filter(|m| !m.is_empty())?;
            let contained = map.iter().all(|(k, v)| extra.get(k) == Some(v));
            (contained && map.values().all(Value::is_string)).then_some((name, map))
        });
        let Some((name, map)) = maps.max_by_key(|(_, map)| map.len()) else {
            return Some(Value::Object(extra));
        };
        if map.len() == extra.len() {
            return Some(Value::String(format!("${{{name}}}")));
        }
        let rest: Option<Vec<String>> = extra
            .iter()
            .filter(|(k, _)| !map.contains_key(*k))
            .map(|(k, v)| {
                let v = v.as_str().filter(|v| plain(v))?;
                Some(format!("{} = \"{v}\"", Some(k).filter(|k| identifier(k))?))
            })
            .collect();
        let Some(rest) = rest else {
            return Some(Value::Object(extra));
        };
        Some(Value::String(format!(
            "${{merge({name}, {{ {} }})}}",
            rest.join(", ")
        )))
    }

    /// `text` written on the longest root local or variable string it starts with, followed
    /// by a separator: `"${local.prefix}-refunds"`.
    pub fn string(&self, text: &str) -> Option<String> {
        let (name, prefix) = self
            .named
            .iter()
            .filter_map(|(name, value)| Some((name, value.as_str()?)))
            .filter(|(_, prefix)| prefix.len() >= 3)
            .filter(|(_, prefix)| {
                text.strip_prefix(*prefix)
                    .is_some_and(|rest| rest.len() > 1 && rest.starts_with(['-', '_', '/', '.']))
            })
            .max_by_key(|(_, prefix)| prefix.len())?;
        let rest = &text[prefix.len()..];
        let simple = rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
        simple.then(|| format!("${{{name}}}{rest}"))
    }

    /// The root file for a new block of `resource_type`: where its kind, else its service,
    /// is written; else `default`.
    pub fn file_for(&self, resource_type: &str, default: &str) -> String {
        let service = |t: &str| t.split('_').take(2).collect::<Vec<_>>().join("_");
        self.files
            .get(resource_type)
            .or_else(|| {
                self.files
                    .iter()
                    .find(|(t, _)| service(t) == service(resource_type))
                    .map(|(_, file)| file)
            })
            .cloned()
            .unwrap_or_else(|| default.to_owned())
    }
}

/// Orders a new block's arguments: `identity` keys first (a name before what scopes it, as
/// the provider's examples write `name` before `vpc_id`), then the rest by name, `tags` last.
pub fn order(attributes: Map<String, Value>, identity: &[String]) -> Vec<(String, Value)> {
    let naming = |k: &str| k == "name" || k.ends_with("_name") || k == "bucket";
    let mut identity = identity.to_vec();
    identity.sort_by_key(|k| !naming(k));
    let rank = |k: &str| match identity.iter().position(|i| i == k) {
        Some(at) => (0, at),
        None if k == "tags" => (2, 0),
        None => (1, 0),
    };
    let mut entries: Vec<(String, Value)> = attributes.into_iter().collect();
    entries.sort_by(|(a, _), (b, _)| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    entries
}

/// Whether a tag key can be written bare in an object (the renderer reads `merge(...)` only
/// with such keys).
fn identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// Text that needs no escape inside a quoted string, nor confuses the renderer's reading
/// of `merge(...)`.
fn plain(text: &str) -> bool {
    !text.contains(['"', '\\', '$', '%', ',', '{', '}', '\n', '='])
}

/// The tag pairs every tagged managed instance has in `tags_all` but not in `tags`: what
/// the provider's `default_tags` add.
fn default_tags(state: &StateIndex) -> Map<String, Value> {
    let mut common: Option<Map<String, Value>> = None;
    for instance in state.iter().filter(|i| i.mode == Mode::Managed) {
        let Some(all) = instance
            .attributes
            .get("tags_all")
            .and_then(Value::as_object)
        else {
            continue;
        };
        let own = instance.attributes.get("tags").and_then(Value::as_object);
        let added: Map<String, Value> = all
            .iter()
            .filter(|(k, _)| own.is_none_or(|own| !own.contains_key(*k)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        common = Some(match common {
            None => added,
            Some(so_far) => so_far
                .into_iter()
                .filter(|(k, v)| added.get(k) == Some(v))
                .collect(),
        });
    }
    common.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn idiom() -> Idiom {
        Idiom {
            named: vec![
                (
                    "local.common_tags".into(),
                    json!({"Env": "prod", "Project": "shop"}),
                ),
                ("local.prefix".into(), json!("shop-prod")),
                ("var.env".into(), json!("prod")),
            ],
            default_tags: Map::new(),
            files: BTreeMap::from([("aws_sqs_queue".into(), "queues.tf".into())]),
        }
    }

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn tags_reuse_the_projects_common_tags() {
        let idiom = idiom();
        assert_eq!(
            idiom.tags(&map(json!({"Env": "prod", "Project": "shop"}))),
            Some(json!("${local.common_tags}"))
        );
        assert_eq!(
            idiom.tags(&map(
                json!({"Env": "prod", "Project": "shop", "Team": "pay"})
            )),
            Some(json!("${merge(local.common_tags, { Team = \"pay\" })}"))
        );
        assert_eq!(
            idiom.tags(&map(json!({"Env": "dev"}))),
            Some(json!({"Env": "dev"}))
        );
    }

    #[test]
    fn tags_the_provider_adds_are_left_out() {
        let mut idiom = idiom();
        idiom.default_tags = map(json!({"Env": "prod", "Project": "shop"}));
        assert_eq!(
            idiom.tags(&map(json!({"Env": "prod", "Project": "shop"}))),
            None
        );
        assert_eq!(
            idiom.tags(&map(json!({"Env": "prod", "Team": "pay"}))),
            Some(json!({"Team": "pay"}))
        );
    }

    #[test]
    fn names_are_written_on_the_projects_prefix() {
        let idiom = idiom();
        assert_eq!(
            idiom.string("shop-prod-refunds").as_deref(),
            Some("${local.prefix}-refunds")
        );
        assert_eq!(idiom.string("shop-prodx"), None);
        assert_eq!(idiom.string("other-refunds"), None);
        assert_eq!(idiom.string("prod/app").as_deref(), Some("${var.env}/app"));
    }

    #[test]
    fn new_blocks_go_beside_their_kind_and_order_identity_first_tags_last() {
        let idiom = idiom();
        assert_eq!(idiom.file_for("aws_sqs_queue", "main.tf"), "queues.tf");
        assert_eq!(
            idiom.file_for("aws_sqs_queue_policy", "main.tf"),
            "queues.tf"
        );
        assert_eq!(idiom.file_for("aws_s3_bucket", "main.tf"), "main.tf");
        let ordered = order(
            map(json!({"tags": {}, "delay_seconds": 0, "name": "q", "fifo_queue": false})),
            &["name".to_owned()],
        );
        let keys: Vec<&str> = ordered.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["name", "delay_seconds", "fifo_queue", "tags"]);
    }
}

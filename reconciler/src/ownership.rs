//! Which resources created out of band belong to this workspace.
//!
//! An account is often shared by several workspaces and teams, so a resource somebody created
//! is proposed for import only when it belongs here:
//! - a link: the calls that created it also changed a managed resource (causality joined them
//!   into one intent), or one of its arguments names a managed resource (a rule in a managed
//!   security group, a policy attached to a managed role, a record in a managed zone);
//! - or the workspace's ownership rules match it: `[ownership]` in `retrace.toml` (tags, name
//!   patterns, accounts and regions), else what the project itself shows: the tags all its
//!   tagged resources carry (provider `default_tags` reach the state as `tags_all`) and the
//!   name prefix all its named resources share.
//!
//! Anything else is a finding, "created outside any workspace": listed, not imported, and not
//! this workspace's drift.

use crate::intents::{Delta, Intent, IntentKind, Lifecycle};
use crate::resolve::{Finding, FindingKind, Reach, Touched};
use crate::terraform::state::{Mode, StateIndex};
use crate::terraform::values::string_map;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// `[ownership]` in `retrace.toml`: what marks a resource as this workspace's. Empty tags and
/// patterns mean "as the project shows".
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OwnershipConfig {
    /// Tags a resource of this workspace carries, every one of them.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Glob patterns of this workspace's resource names (`shop-prod-*`).
    #[serde(default)]
    pub name_patterns: Vec<String>,
    /// Accounts this workspace creates resources in (empty: any).
    #[serde(default)]
    pub accounts: Vec<String>,
    /// Regions this workspace creates resources in (empty: any).
    #[serde(default)]
    pub regions: Vec<String>,
}

/// A bad `[ownership]` pattern.
#[derive(Debug, thiserror::Error)]
#[error("[ownership] name pattern `{pattern}`: {message}")]
pub struct OwnershipError {
    /// The pattern.
    pub pattern: String,
    /// What is wrong with it.
    pub message: String,
}

/// Attributes that hold a resource's name, in the order they are tried.
const NAME_ATTRIBUTES: &[&str] = &[
    "name",
    "bucket",
    "function_name",
    "identifier",
    "cluster_identifier",
    "role_name",
    "queue_name",
    "topic_name",
    "table_name",
];

/// The shortest name stem the project's names must share to count as a convention.
const MIN_PREFIX: usize = 3;

/// The ownership rules of one workspace, stated or inferred.
#[derive(Debug, Clone)]
pub struct Ownership {
    tags: BTreeMap<String, String>,
    names: Option<GlobSet>,
    prefix: Option<String>,
    accounts: Vec<String>,
    regions: Vec<String>,
}

impl Ownership {
    /// The rules `config` states, or where it states neither tags nor name patterns, those the
    /// managed resources of `index` show.
    pub fn new(config: &OwnershipConfig, index: &StateIndex) -> Result<Ownership, OwnershipError> {
        let stated = !config.tags.is_empty() || !config.name_patterns.is_empty();
        let names = if config.name_patterns.is_empty() {
            None
        } else {
            Some(globs(&config.name_patterns)?)
        };
        Ok(Ownership {
            tags: if stated {
                config.tags.clone()
            } else {
                common_tags(index)
            },
            names,
            prefix: (!stated).then(|| common_prefix(index)).flatten(),
            accounts: config.accounts.clone(),
            regions: config.regions.clone(),
        })
    }

    /// Why the resource `delta` created belongs here, or `None`.
    pub fn claims(&self, delta: &Delta, intent: &Intent, index: &StateIndex) -> Option<String> {
        if let Some(link) = link(delta, intent, index) {
            return Some(link);
        }
        if !self.in_place(intent) {
            return None;
        }
        let tags = created_tags(delta);
        if !self.tags.is_empty() && self.tags.iter().all(|(k, v)| tags.get(k) == Some(v)) {
            let list: Vec<String> = self.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
            return Some(format!(
                "it carries the workspace's tags {}",
                list.join(", ")
            ));
        }
        let name = created_name(delta)?;
        if self.names.as_ref().is_some_and(|g| g.is_match(&name)) {
            return Some(format!(
                "its name {name} matches the workspace's name patterns"
            ));
        }
        let stem = self.prefix.as_deref()?;
        has_stem(&name, stem)
            .then(|| format!("its name {name} follows the project's naming ({stem}...)"))
    }

    /// Whether the intent's calls were made in the stated accounts and regions.
    fn in_place(&self, intent: &Intent) -> bool {
        intent.evidence.iter().all(|e| {
            let account = e.account.as_deref().unwrap_or_default();
            (self.accounts.is_empty() || self.accounts.iter().any(|a| a == account))
                && (self.regions.is_empty() || self.regions.contains(&e.region))
        })
    }
}

/// Takes the creations no rule claims out of the intents, as findings. An intent left with
/// nothing stays listed (its calls and the stories of other intents name it), saying where its
/// creations went.
pub fn sort_creations(
    intents: Vec<Intent>,
    ownership: &Ownership,
    index: &StateIndex,
) -> (Vec<Intent>, Vec<Finding>) {
    let mut kept = Vec::new();
    let mut findings = Vec::new();
    for mut intent in intents {
        let owned: Vec<bool> = intent
            .deltas
            .iter()
            .map(|d| {
                d.lifecycle != Lifecycle::Created || ownership.claims(d, &intent, index).is_some()
            })
            .collect();
        if owned.iter().all(|o| *o) {
            kept.push(intent);
            continue;
        }
        let deltas = std::mem::take(&mut intent.deltas);
        let mut left_out = Vec::new();
        for (delta, owned) in deltas.into_iter().zip(owned) {
            if owned {
                intent.deltas.push(delta);
            } else {
                findings.extend(unowned(&delta, &intent));
                left_out.push(delta.resource.to_string());
            }
        }
        if intent.deltas.is_empty() {
            intent.kind = IntentKind::Unmanaged;
            intent.story = format!(
                "{} ({}) created {} outside any workspace: reported as unowned, not imported",
                intent.actor,
                intent.clients.join(" and "),
                left_out.join(", ")
            );
        }
        kept.push(intent);
    }
    (kept, findings)
}

/// The finding for a creation nobody's rules claim, on the intent's call that created it (its
/// first call on the resource; when netting gave the resource to this intent through another
/// intent's calls, its first call).
fn unowned(delta: &Delta, intent: &Intent) -> Option<Finding> {
    let call = delta
        .evidence
        .iter()
        .find_map(|id| intent.evidence.iter().find(|e| &e.event_id == id))
        .or(intent.evidence.first())?;
    Some(Finding {
        kind: FindingKind::Unowned,
        event_id: call.event_id.clone(),
        time: call.time,
        event_source: call.event_source.clone(),
        api: call.api.clone(),
        actor: call.actor.clone(),
        account: call.account.clone(),
        region: call.region.clone(),
        reach: Reach::Account,
        resources: vec![Touched {
            identity: delta.resource.identity.clone(),
            address: None,
        }],
        category: None,
        risk: Some(delta.risk),
        reason: format!(
            "{} {} was created outside any workspace: no link to this project's resources, and neither its tags nor its name are this workspace's",
            delta.resource.resource_type, delta.resource.identity
        ),
    })
}

/// A link from the created resource to a managed one: a managed change in the same intent, or
/// an argument naming a managed resource.
fn link(delta: &Delta, intent: &Intent, index: &StateIndex) -> Option<String> {
    if let Some(other) = intent
        .deltas
        .iter()
        .find(|d| d.lifecycle != Lifecycle::Created && d.address.is_some())
    {
        return Some(format!(
            "the same calls changed {}",
            other.address.as_deref().unwrap_or_default()
        ));
    }
    for (path, change) in &delta.attributes {
        let mut strings = Vec::new();
        collect_strings(&change.after, &mut strings);
        for value in strings {
            let managed = index
                .lookup(None, value)
                .into_iter()
                .find(|i| i.mode == Mode::Managed);
            if let Some(instance) = managed {
                return Some(format!("its {path} names {}", instance.address));
            }
        }
    }
    None
}

fn collect_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// The tags the creating call gave the resource.
fn created_tags(delta: &Delta) -> BTreeMap<String, String> {
    let mut tags = string_map(delta.attributes.get("tags").map(|a| &a.after));
    tags.extend(delta.tags_set.clone());
    tags
}

/// The created resource's name, from its arguments or its identity.
fn created_name(delta: &Delta) -> Option<String> {
    NAME_ATTRIBUTES
        .iter()
        .find_map(|a| delta.attributes.get(*a)?.after.as_str().map(str::to_owned))
        .or_else(|| {
            let identity = &delta.resource.identity;
            let last = identity.rsplit([':', '/']).next().unwrap_or(identity);
            (!last.is_empty()).then(|| last.to_owned())
        })
}

/// The tag pairs every tagged managed instance carries (`tags_all` when the state has it);
/// empty unless at least two carry tags.
fn common_tags(index: &StateIndex) -> BTreeMap<String, String> {
    let mut common: Option<BTreeMap<String, String>> = None;
    let mut tagged = 0;
    for instance in index.iter().filter(|i| i.mode == Mode::Managed) {
        let attributes = &instance.attributes;
        let Some(tags) = ["tags_all", "tags"].iter().find_map(|k| {
            attributes
                .get(*k)
                .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()))
        }) else {
            continue;
        };
        tagged += 1;
        let these = string_map(Some(tags));
        common = Some(match common {
            None => these,
            Some(so_far) => so_far
                .into_iter()
                .filter(|(k, v)| these.get(k) == Some(v))
                .collect(),
        });
    }
    if tagged < 2 {
        return BTreeMap::new();
    }
    common.unwrap_or_default()
}

/// The project's name stem: the longest run of leading name segments (`shop-prod-`) that at
/// least half of the named managed instances start with, separators (`-`, `_`, `/`, `.`)
/// taken alike; `None` unless at least two are named and the stem is long enough.
fn common_prefix(index: &StateIndex) -> Option<String> {
    let names: Vec<String> = index
        .iter()
        .filter(|i| i.mode == Mode::Managed)
        .filter_map(|i| {
            NAME_ATTRIBUTES
                .iter()
                .find_map(|a| i.attributes.get(*a)?.as_str())
        })
        .map(normalized)
        .collect();
    if names.len() < 2 {
        return None;
    }
    let mut support: BTreeMap<&str, usize> = BTreeMap::new();
    for name in &names {
        for (at, _) in name.match_indices('-') {
            *support.entry(&name[..=at]).or_default() += 1;
        }
    }
    support
        .into_iter()
        .filter(|(stem, count)| stem.len() >= MIN_PREFIX && 2 * count >= names.len())
        .max_by_key(|(stem, _)| stem.len())
        .map(|(stem, _)| stem.to_owned())
}

/// A name with its separators made alike and no leading separator: `/orders/staging/x` →
/// `orders-staging-x`.
fn normalized(name: &str) -> String {
    name.trim_start_matches(['/', '-', '_', '.'])
        .chars()
        .map(|c| if matches!(c, '_' | '/' | '.') { '-' } else { c })
        .collect()
}

/// Whether `name` holds the stem at the start of one of its segments.
fn has_stem(name: &str, stem: &str) -> bool {
    let name = normalized(name);
    name.starts_with(stem) || name.contains(&format!("-{stem}"))
}

fn globs(patterns: &[String]) -> Result<GlobSet, OwnershipError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|e| OwnershipError {
            pattern: pattern.clone(),
            message: e.kind().to_string(),
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| OwnershipError {
        pattern: patterns.join(", "),
        message: e.kind().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intents::{Change, Effect, Evidence, GroupOptions, ResourceKey, Risk, build};
    use crate::terraform::state::State;
    use serde_json::json;

    /// A state of two tagged queues named `shop-prod-*` and a role `shop-prod-app`.
    fn index() -> StateIndex {
        let queue = |name: &str| {
            json!({"mode": "managed", "type": "aws_sqs_queue", "name": name,
                "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                "instances": [{"attributes": {"id": format!("https://sqs/{name}"), "name": name,
                    "tags_all": {"Project": "shop", "Env": "prod", "Queue": name}}}]})
        };
        let role = json!({"mode": "managed", "type": "aws_iam_role", "name": "app",
            "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
            "instances": [{"attributes": {"id": "shop-prod-app", "name": "shop-prod-app",
                "arn": "arn:aws:iam::111122223333:role/shop-prod-app"}}]});
        let doc = json!({"version": 4, "terraform_version": "1.11.4", "serial": 1,
            "lineage": "t", "outputs": {},
            "resources": [queue("shop-prod-orders"), queue("shop-prod-refunds"), role]});
        let state = State::parse(doc.to_string().as_bytes(), "test").expect("state");
        StateIndex::new(state)
    }

    fn created(id: &str, resource_type: &str, attributes: Vec<(&str, Value)>) -> Effect {
        Effect {
            evidence: Evidence {
                event_id: id.into(),
                time: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
                event_source: "iam.amazonaws.com".into(),
                api: "Create".into(),
                actor: id.into(),
                client: "console".into(),
                session: id.into(),
                region: "us-east-1".into(),
                account: Some("111122223333".into()),
            },
            resource: ResourceKey {
                resource_type: resource_type.into(),
                identity: id.into(),
            },
            address: None,
            change: Change::Create {
                attributes: attributes
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            },
            rule: "iam:Create".into(),
            risk: Risk::Low,
            flags: vec![],
            summary: String::new(),
            mentions: vec![],
            allocates: vec![],
        }
    }

    /// The identities imported and those reported as created outside any workspace.
    fn sorted(effects: &[Effect], config: &OwnershipConfig) -> (Vec<String>, Vec<String>) {
        let index = index();
        let intents = build(effects, |_| None, GroupOptions::default());
        let ownership = Ownership::new(config, &index).expect("rules");
        let (kept, findings) = sort_creations(intents, &ownership, &index);
        let imported = kept
            .iter()
            .flat_map(|i| &i.deltas)
            .map(|d| d.resource.identity.clone())
            .collect();
        let unowned = findings
            .iter()
            .inspect(|f| assert_eq!(f.kind, FindingKind::Unowned))
            .map(|f| f.resources[0].identity.clone())
            .collect();
        (imported, unowned)
    }

    #[test]
    fn an_intent_emptied_of_its_creations_stays_listed_with_its_calls() {
        let index = index();
        let mut first = created("alice-bucket", "aws_s3_bucket_versioning", vec![]);
        first.change = Change::Set {
            attribute: "versioning_configuration.0.status".into(),
            value: json!("Enabled"),
        };
        first.resource.identity = "scratch".into();
        // Bob's later call on the same bucket, in his own session, wins the net change.
        let mut second = first.clone();
        second.evidence.event_id = "bob-suspend".into();
        second.evidence.session = "bob".into();
        second.evidence.actor = "bob".into();
        second.evidence.time += chrono::Duration::minutes(5);
        second.change = Change::Set {
            attribute: "versioning_configuration.0.status".into(),
            value: json!("Suspended"),
        };
        first.change = Change::Create {
            attributes: vec![("bucket".into(), json!("scratch"))],
        };
        let intents = build(&[first, second], |_| None, GroupOptions::default());
        assert_eq!(intents.len(), 2);
        let ownership = Ownership::new(&OwnershipConfig::default(), &index).expect("rules");
        let (kept, findings) = sort_creations(intents, &ownership, &index);
        // Both intents are still listed with their calls, and the creation is one finding on
        // a call of the intent that holds it.
        let ids: Vec<Vec<&str>> = kept
            .iter()
            .map(|i| i.evidence.iter().map(|e| e.event_id.as_str()).collect())
            .collect();
        assert_eq!(ids, vec![vec!["alice-bucket"], vec!["bob-suspend"]]);
        assert_eq!(findings.len(), 1);
        let holder = kept
            .iter()
            .find(|i| i.deltas.is_empty() && i.kind == IntentKind::Unmanaged);
        let holder = holder.expect("the emptied intent");
        assert!(
            holder.story.contains("outside any workspace"),
            "{}",
            holder.story
        );
        assert!(
            holder
                .evidence
                .iter()
                .any(|e| e.event_id == findings[0].event_id),
            "{} not a call of {}",
            findings[0].event_id,
            holder.id
        );
    }

    #[test]
    fn the_project_shows_its_tags_and_its_naming() {
        let index = index();
        let ownership = Ownership::new(&OwnershipConfig::default(), &index).expect("rules");
        // The role carries no tags: the queues' common tags are Project and Env, not Queue.
        assert_eq!(
            ownership.tags,
            BTreeMap::from([
                ("Env".into(), "prod".into()),
                ("Project".into(), "shop".into())
            ])
        );
        assert_eq!(ownership.prefix.as_deref(), Some("shop-prod-"));
        assert_eq!(normalized("/shop/prod/flags"), "shop-prod-flags");
        assert!(has_stem("/ecs/shop-prod/api", "shop-prod-"));
        assert!(!has_stem("workshop-prod-api", "shop-prod-"));
    }

    #[test]
    fn creations_are_imported_only_with_a_link_the_tags_or_the_naming() {
        let effects = vec![
            created(
                "ops-debug-lambda",
                "aws_iam_role",
                vec![("name", json!("ops-debug-lambda"))],
            ),
            created(
                "tagged",
                "aws_sqs_queue",
                vec![
                    ("name", json!("payments")),
                    (
                        "tags",
                        json!({"Project": "shop", "Env": "prod", "Extra": "x"}),
                    ),
                ],
            ),
            created(
                "/shop/prod/flags",
                "aws_ssm_parameter",
                vec![("name", json!("/shop/prod/flags"))],
            ),
            created(
                "attach",
                "aws_iam_role_policy_attachment",
                vec![
                    ("role", json!("shop-prod-app")),
                    (
                        "policy_arn",
                        json!("arn:aws:iam::aws:policy/ReadOnlyAccess"),
                    ),
                ],
            ),
            created(
                "half-tagged",
                "aws_sqs_queue",
                vec![
                    ("name", json!("other-team-jobs")),
                    ("tags", json!({"Project": "shop"})),
                ],
            ),
        ];
        let (imported, unowned) = sorted(&effects, &OwnershipConfig::default());
        assert_eq!(imported, ["tagged", "/shop/prod/flags", "attach"]);
        assert_eq!(unowned, ["ops-debug-lambda", "half-tagged"]);
    }

    #[test]
    fn stated_rules_replace_what_the_project_shows() {
        let effects = vec![
            created(
                "ops-debug-lambda",
                "aws_iam_role",
                vec![("name", json!("ops-debug-lambda"))],
            ),
            created(
                "shop-prod-cache",
                "aws_sqs_queue",
                vec![("name", json!("shop-prod-cache"))],
            ),
        ];
        let config = OwnershipConfig {
            name_patterns: vec!["ops-*".into()],
            ..OwnershipConfig::default()
        };
        let (imported, unowned) = sorted(&effects, &config);
        assert_eq!(imported, ["ops-debug-lambda"]);
        assert_eq!(unowned, ["shop-prod-cache"]);
        let elsewhere = OwnershipConfig {
            regions: vec!["eu-west-1".into()],
            ..config
        };
        let (imported, _) = sorted(&effects, &elsewhere);
        assert!(imported.is_empty(), "the calls were made in us-east-1");
    }
}

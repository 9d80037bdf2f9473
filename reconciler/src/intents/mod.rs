//! Intents: out-of-band calls grouped into what someone meant to do, with the net effect per
//! resource.
//!
//! Calls become a graph ([`petgraph`]): an edge joins two calls on the same resource, a call
//! that uses an id another call's response allocated (causality), and consecutive calls of one
//! sign-in session within a time window. Each connected part is an intent; its effects are
//! netted per resource ([`delta`]), so retries, reverts and create-then-delete leave nothing,
//! and a revoke plus an authorize of a rule reads as a replacement.

mod delta;
mod effect;

pub use delta::{
    AttributeDelta, BlockDelta, BlockOp, Delta, Lifecycle, lookup, removes, same_block, same_value,
};
pub use effect::{Change, Effect, Evidence, Flag, FlagLevel, ResourceKey, Risk};

use chrono::{DateTime, Duration, Utc};
use petgraph::graph::UnGraph;
use petgraph::unionfind::UnionFind;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// Why two calls were joined into one intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Link {
    /// Both touched the same resource.
    SameResource,
    /// One used an id the other's response allocated.
    Causality,
    /// The same sign-in session, close in time.
    SameSession,
}

/// What kind of change an intent is, by its net effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntentKind {
    /// Resources created outside Terraform.
    Create,
    /// Managed resources deleted outside Terraform.
    Delete,
    /// Association resources (policy attachments and the like) created or removed.
    Associate,
    /// Nested blocks (rules, statements) added or removed.
    NestedBlock,
    /// Attributes changed.
    Update,
    /// Only tags changed.
    Tags,
    /// Only unmanaged resources changed; nothing in the code describes them.
    Unmanaged,
    /// Everything cancelled out (changed then reverted, created then deleted).
    NoNetChange,
}

/// A group of calls with one purpose and its net effect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Intent {
    /// A short stable id, `I1`, `I2`, ... in time order.
    pub id: String,
    /// The kind, from the net effect.
    pub kind: IntentKind,
    /// Who made the calls (distinct actors joined with `, `).
    pub actor: String,
    /// The clients used.
    pub clients: Vec<String>,
    /// The first call's time.
    pub start: DateTime<Utc>,
    /// The last call's time.
    pub end: DateTime<Utc>,
    /// The calls, in time order.
    pub evidence: Vec<Evidence>,
    /// The net change per resource, in first-touched order; empty deltas are dropped.
    pub deltas: Vec<Delta>,
    /// Why calls were joined: (event id, event id, link).
    pub links: Vec<(String, String, Link)>,
    /// A one-line account in plain language.
    pub story: String,
}

/// How calls are grouped.
#[derive(Debug, Clone, Copy)]
pub struct GroupOptions {
    /// Calls of one session at most this far apart belong together.
    pub session_window: Duration,
}

impl Default for GroupOptions {
    fn default() -> Self {
        Self {
            session_window: Duration::minutes(10),
        }
    }
}

/// Groups effects (in time order) into intents; `state` gives a managed resource's attributes
/// by address so reverts can be recognised.
pub fn build<'s>(
    effects: &[Effect],
    state: impl Fn(&str) -> Option<&'s Value>,
    options: GroupOptions,
) -> Vec<Intent> {
    let (graph, parts) = components(effects, options);
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, part) in parts.iter().enumerate() {
        groups.entry(*part).or_default().push(i);
    }
    let mut ordered: Vec<Vec<usize>> = groups.into_values().collect();
    ordered.sort_by_key(|members| members[0]);
    ordered
        .into_iter()
        .enumerate()
        .map(|(n, members)| intent(n + 1, effects, &members, &graph, &state))
        .collect()
}

/// The call graph and, per effect, a representative of its connected part.
fn components(effects: &[Effect], options: GroupOptions) -> (UnGraph<usize, Link>, Vec<usize>) {
    let mut graph = UnGraph::<usize, Link>::new_undirected();
    let nodes: Vec<_> = (0..effects.len()).map(|i| graph.add_node(i)).collect();
    let mut last_on: HashMap<&ResourceKey, usize> = HashMap::new();
    let mut allocated_by: HashMap<&str, usize> = HashMap::new();
    let mut last_in_session: HashMap<&str, usize> = HashMap::new();
    for (i, e) in effects.iter().enumerate() {
        if let Some(&j) = last_on.get(&e.resource) {
            graph.add_edge(nodes[j], nodes[i], Link::SameResource);
        }
        let used = e.mentions.iter().chain([&e.resource.identity]);
        for id in used {
            if let Some(&j) = allocated_by.get(id.as_str())
                && j != i
            {
                graph.add_edge(nodes[j], nodes[i], Link::Causality);
            }
        }
        if let Some(&j) = last_in_session.get(e.evidence.session.as_str())
            && e.evidence.time - effects[j].evidence.time <= options.session_window
        {
            graph.add_edge(nodes[j], nodes[i], Link::SameSession);
        }
        last_on.insert(&e.resource, i);
        last_in_session.insert(&e.evidence.session, i);
        for id in &e.allocates {
            allocated_by.insert(id, i);
        }
    }
    let mut sets = UnionFind::new(effects.len());
    for edge in graph.raw_edges() {
        sets.union(edge.source().index(), edge.target().index());
    }
    let parts = (0..effects.len()).map(|i| sets.find(i)).collect();
    (graph, parts)
}

fn intent<'s>(
    number: usize,
    effects: &[Effect],
    members: &[usize],
    graph: &UnGraph<usize, Link>,
    state: &impl Fn(&str) -> Option<&'s Value>,
) -> Intent {
    let mine: Vec<&Effect> = members.iter().map(|&i| &effects[i]).collect();
    let mut evidence: Vec<Evidence> = Vec::new();
    for e in &mine {
        if !evidence.iter().any(|x| x.event_id == e.evidence.event_id) {
            evidence.push(e.evidence.clone());
        }
    }
    let deltas = deltas(&mine, state);
    let links = graph
        .raw_edges()
        .iter()
        .filter(|edge| members.contains(&edge.source().index()))
        .map(|edge| {
            (
                effects[edge.source().index()].evidence.event_id.clone(),
                effects[edge.target().index()].evidence.event_id.clone(),
                edge.weight,
            )
        })
        .collect();
    let kind = kind_of(&deltas, &mine);
    let actor = distinct(evidence.iter().map(|e| e.actor.clone())).join(", ");
    let clients = distinct(evidence.iter().map(|e| e.client.clone()));
    let story = story(&actor, &clients, kind, &deltas, &mine);
    Intent {
        id: format!("I{number}"),
        kind,
        actor,
        clients,
        start: evidence.first().map(|e| e.time).unwrap_or_default(),
        end: evidence.last().map(|e| e.time).unwrap_or_default(),
        evidence,
        deltas,
        links,
        story,
    }
}

/// Nets the effects per resource, keeping the order resources were first touched.
fn deltas<'s>(mine: &[&Effect], state: &impl Fn(&str) -> Option<&'s Value>) -> Vec<Delta> {
    let mut order: Vec<&ResourceKey> = Vec::new();
    for e in mine {
        if !order.contains(&&e.resource) {
            order.push(&e.resource);
        }
    }
    order
        .into_iter()
        .filter_map(|key| {
            let on: Vec<&Effect> = mine
                .iter()
                .copied()
                .filter(|e| &e.resource == key)
                .collect();
            let attributes = on.iter().find_map(|e| e.address.as_deref()).and_then(state);
            delta::net(&on, attributes)
        })
        .filter(|d| !d.is_empty())
        .collect()
}

fn kind_of(deltas: &[Delta], mine: &[&Effect]) -> IntentKind {
    let associative = |d: &Delta| {
        mine.iter()
            .any(|e| e.resource == d.resource && is_association(&e.resource.resource_type))
    };
    let kinds = deltas.iter().map(|d| match d.lifecycle {
        Lifecycle::Created | Lifecycle::Deleted if associative(d) => IntentKind::Associate,
        Lifecycle::Created => IntentKind::Create,
        Lifecycle::Deleted => IntentKind::Delete,
        Lifecycle::Unmanaged => IntentKind::Unmanaged,
        Lifecycle::Transient => IntentKind::NoNetChange,
        Lifecycle::Managed if !d.blocks.is_empty() => IntentKind::NestedBlock,
        Lifecycle::Managed if !d.attributes.is_empty() => IntentKind::Update,
        Lifecycle::Managed => IntentKind::Tags,
    });
    kinds.min().unwrap_or(IntentKind::NoNetChange)
}

/// Resource types that only link two others (an attachment, an association, a membership).
pub fn is_association(resource_type: &str) -> bool {
    ["_attachment", "_association", "_membership"]
        .iter()
        .any(|suffix| resource_type.ends_with(suffix))
}

fn distinct(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

fn story(
    actor: &str,
    clients: &[String],
    kind: IntentKind,
    deltas: &[Delta],
    mine: &[&Effect],
) -> String {
    let via = clients.join(" and ");
    if kind == IntentKind::NoNetChange {
        let apis = distinct(mine.iter().map(|e| e.evidence.api.clone())).join(", ");
        return format!("{actor} ({via}) called {apis}, but the changes cancelled out");
    }
    let parts: Vec<String> = deltas.iter().map(describe).collect();
    format!("{actor} ({via}) {}", parts.join("; "))
}

/// One delta in words, e.g. `set instance_type = "t3.large" on aws_instance.web`.
pub fn describe(d: &Delta) -> String {
    let target = d
        .address
        .clone()
        .unwrap_or_else(|| format!("unmanaged {}", d.resource));
    match d.lifecycle {
        Lifecycle::Created => format!(
            "created {} {}",
            d.resource.resource_type, d.resource.identity
        ),
        Lifecycle::Deleted => format!("deleted {target}"),
        Lifecycle::Transient => format!("created and deleted {}", d.resource),
        Lifecycle::Managed | Lifecycle::Unmanaged => {
            let mut what: Vec<String> = d
                .attributes
                .iter()
                .map(|(k, a)| format!("set {k} = {}", a.after))
                .collect();
            what.extend(d.blocks.iter().map(|b| {
                let op = if b.op == BlockOp::Added {
                    "added"
                } else {
                    "removed"
                };
                format!("{op} {} {}", b.block, Value::Object(b.fields.clone()))
            }));
            if !d.tags_set.is_empty() || !d.tags_removed.is_empty() {
                let mut tags: Vec<String> =
                    d.tags_set.iter().map(|(k, v)| format!("{k}={v}")).collect();
                tags.extend(d.tags_removed.iter().map(|k| format!("-{k}")));
                what.push(format!("tagged {}", tags.join(" ")));
            }
            format!("{} on {target}", what.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn effect(id: &str, minute: i64, session: &str, resource: &str, change: Change) -> Effect {
        Effect {
            evidence: Evidence {
                event_id: id.into(),
                time: DateTime::from_timestamp(1_700_000_000 + minute * 60, 0).unwrap_or_default(),
                event_source: "ec2.amazonaws.com".into(),
                api: "Api".into(),
                actor: session.into(),
                client: "console".into(),
                session: session.into(),
                region: "us-east-1".into(),
                account: None,
            },
            resource: ResourceKey {
                resource_type: "aws_instance".into(),
                identity: resource.into(),
            },
            address: Some(format!("aws_instance.{resource}")),
            change,
            rule: "ec2:Api".into(),
            risk: Risk::Low,
            flags: vec![],
            summary: String::new(),
            mentions: vec![],
            allocates: vec![],
        }
    }

    fn set(v: &str) -> Change {
        Change::Set {
            attribute: "instance_type".into(),
            value: json!(v),
        }
    }

    #[test]
    fn sessions_resources_and_causality_join_calls() {
        let mut created = effect(
            "c",
            30,
            "bob",
            "sg-new",
            Change::Create { attributes: vec![] },
        );
        created.resource.resource_type = "aws_security_group".into();
        created.address = None;
        created.allocates = vec!["sg-new".into()];
        let mut uses = effect("u", 200, "carol", "b", set("t3.large"));
        uses.mentions = vec!["sg-new".into()];
        let effects = vec![
            effect("a1", 0, "alice", "a", set("t3.large")),
            effect("a2", 5, "alice", "b", set("t3.large")),
            created,
            effect("a3", 100, "alice", "c", set("t3.large")),
            uses,
        ];
        let state = json!({"instance_type": "t3.micro"});
        let intents = build(&effects, |_| Some(&state), GroupOptions::default());
        let groups: Vec<Vec<&str>> = intents
            .iter()
            .map(|i| i.evidence.iter().map(|e| e.event_id.as_str()).collect())
            .collect();
        // a1+a2: one session within 10 minutes; a2 and u share resource b; u uses the id c
        // allocated; a3 is 95 minutes after a2 on another resource.
        assert_eq!(groups, [vec!["a1", "a2", "c", "u"], vec!["a3"]]);
        assert_eq!(intents[0].id, "I1");
        assert_eq!(intents[0].kind, IntentKind::Create);
        assert_eq!(intents[1].kind, IntentKind::Update);
        assert_eq!(
            intents[1].story,
            "alice (console) set instance_type = \"t3.large\" on aws_instance.c"
        );
    }

    #[test]
    fn a_reverted_change_is_reported_as_no_net_change() {
        let effects = vec![
            effect("a", 0, "alice", "a", set("t3.large")),
            effect("b", 3, "alice", "a", set("t3.micro")),
        ];
        let state = json!({"instance_type": "t3.micro"});
        let intents = build(&effects, |_| Some(&state), GroupOptions::default());
        assert_eq!(intents.len(), 1);
        assert_eq!(intents[0].kind, IntentKind::NoNetChange);
        assert!(intents[0].deltas.is_empty());
        assert_eq!(
            intents[0].story,
            "alice (console) called Api, but the changes cancelled out"
        );
    }
}

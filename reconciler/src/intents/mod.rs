//! Intents: out-of-band calls grouped into what someone meant to do, with the net effect per
//! resource.
//!
//! The grouping rule: calls become a graph ([`petgraph`]) whose edges join
//! - a call that uses an id another call's response allocated (causality), whoever made them;
//! - consecutive calls of one sign-in session (principal and access key) at most the session
//!   window apart (ten minutes by default), whether or not they touch the same resource.
//!
//! Each connected part is an intent. Calls on one resource by different people or sessions,
//! or far apart in time, are therefore separate intents unless causality joins them, and
//! each keeps its own decision. A resource's calls are netted over all of them (`delta.rs`),
//! so retries, reverts and create-then-delete leave nothing and a revoke plus an authorize of
//! a rule reads as a replacement; when several intents touched it, each part of the net
//! change belongs to the intent whose call wrote it last (`share.rs`).

mod delta;
mod share;

pub use crate::resolve::effect::{Change, Effect, Evidence, Flag, FlagLevel, ResourceKey, Risk};
pub use crate::terraform::values::{lookup, removes, same_block, same_value};
pub use delta::{AttributeDelta, BlockDelta, BlockOp, Delta, Lifecycle};

use chrono::{DateTime, Duration, Utc};
use knowledge::catalog::Catalog;
use petgraph::graph::UnGraph;
use petgraph::unionfind::UnionFind;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Why two calls were joined into one intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Link {
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
    let mut group_of = vec![0; effects.len()];
    for (group, members) in ordered.iter().enumerate() {
        for &i in members {
            group_of[i] = group;
        }
    }
    let nets = net_per_group(effects, &group_of, ordered.len(), &state);
    let mut links: Vec<Vec<(String, String, Link)>> = vec![Vec::new(); ordered.len()];
    for edge in graph.raw_edges() {
        let (from, to) = (edge.source().index(), edge.target().index());
        links[group_of[from]].push((
            effects[from].evidence.event_id.clone(),
            effects[to].evidence.event_id.clone(),
            edge.weight,
        ));
    }
    ordered
        .iter()
        .zip(nets)
        .zip(links)
        .enumerate()
        .map(|(n, ((members, net), links))| intent(n + 1, effects, members, net, links))
        .collect()
}

/// The call graph and, per effect, a representative of its connected part.
fn components(effects: &[Effect], options: GroupOptions) -> (UnGraph<usize, Link>, Vec<usize>) {
    let mut graph = UnGraph::<usize, Link>::new_undirected();
    let nodes: Vec<_> = (0..effects.len()).map(|i| graph.add_node(i)).collect();
    let mut allocated_by: HashMap<&str, usize> = HashMap::new();
    let mut last_in_session: HashMap<&str, usize> = HashMap::new();
    for (i, e) in effects.iter().enumerate() {
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

/// One intent's share of the net changes.
#[derive(Default)]
struct Net {
    /// Its deltas, in the order it first touched each resource.
    deltas: Vec<Delta>,
    /// The numbers of the intents whose calls came just before or just after its own on the
    /// resources it touched: the ones its calls were netted with (at most two per resource, so
    /// the text stays short however many intents touched one resource).
    undone_by: BTreeSet<usize>,
}

/// Per intent, its net changes: each resource is netted over all its calls and shared out
/// when several intents touched it.
fn net_per_group<'s>(
    effects: &[Effect],
    group_of: &[usize],
    groups: usize,
    state: &impl Fn(&str) -> Option<&'s Value>,
) -> Vec<Net> {
    let mut calls_on: Vec<(&ResourceKey, Vec<usize>)> = Vec::new();
    let mut position: HashMap<&ResourceKey, usize> = HashMap::new();
    for (i, e) in effects.iter().enumerate() {
        let at = *position.entry(&e.resource).or_insert_with(|| {
            calls_on.push((&e.resource, Vec::new()));
            calls_on.len() - 1
        });
        calls_on[at].1.push(i);
    }
    let mut placed: Vec<Vec<(usize, Delta)>> = vec![Vec::new(); groups];
    let mut nets: Vec<Net> = (0..groups).map(|_| Net::default()).collect();
    for (_, calls) in calls_on {
        let after = nearest_other_intent(calls.iter().rev(), group_of);
        for (group, other) in after.chain(nearest_other_intent(calls.iter(), group_of)) {
            nets[group].undone_by.insert(other);
        }
        let touched: Vec<(usize, &Effect)> =
            calls.iter().map(|&i| (group_of[i], &effects[i])).collect();
        let on: Vec<&Effect> = touched.iter().map(|(_, e)| *e).collect();
        let attributes = on.iter().find_map(|e| e.address.as_deref()).and_then(state);
        let Some(net) = delta::net(&on, attributes).filter(|d| !d.is_empty()) else {
            continue;
        };
        if touched.iter().all(|(g, _)| *g == touched[0].0) {
            placed[touched[0].0].push((calls[0], net));
            continue;
        }
        let mut first_in: HashMap<usize, usize> = HashMap::new();
        for &i in &calls {
            first_in.entry(group_of[i]).or_insert(i);
        }
        for (group, part) in share::share(&net, &touched) {
            placed[group].push((first_in.get(&group).copied().unwrap_or(calls[0]), part));
        }
    }
    for (net, mut deltas) in nets.iter_mut().zip(placed) {
        deltas.sort_by_key(|(first, _)| *first);
        net.deltas = deltas.into_iter().map(|(_, d)| d).collect();
    }
    nets
}

/// Walking one resource's calls in `order`, for each intent the intent of the nearest call
/// walked before its first one that belongs to another intent, when there is one: walked back
/// from the last call, the intent that wrote next after it; walked forward, the one that
/// wrote just before it. Linear in the calls however many intents share the resource.
fn nearest_other_intent<'a>(
    order: impl Iterator<Item = &'a usize> + 'a,
    group_of: &'a [usize],
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut seen: HashSet<usize> = HashSet::new();
    // The intent of the call walked last, and that call's own answer.
    let mut walked: Option<(usize, Option<usize>)> = None;
    order.filter_map(move |&call| {
        let group = group_of[call];
        let other = match walked {
            Some((previous, _)) if previous != group => Some(previous),
            Some((_, answer)) => answer,
            None => None,
        };
        walked = Some((group, other));
        (seen.insert(group))
            .then_some(other)
            .flatten()
            .map(|other| (group, other))
    })
}

fn intent(
    number: usize,
    effects: &[Effect],
    members: &[usize],
    net: Net,
    links: Vec<(String, String, Link)>,
) -> Intent {
    let deltas = net.deltas;
    let undone_by: Vec<String> = net
        .undone_by
        .iter()
        .map(|g| format!("I{}", g + 1))
        .collect();
    let mine: Vec<&Effect> = members.iter().map(|&i| &effects[i]).collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let evidence: Vec<Evidence> = mine
        .iter()
        .filter(|e| seen.insert(&e.evidence.event_id))
        .map(|e| e.evidence.clone())
        .collect();
    let kind = kind_of(&deltas);
    let actor = distinct(evidence.iter().map(|e| e.actor.clone())).join(", ");
    let clients = distinct(evidence.iter().map(|e| e.client.clone()));
    let story = story(&actor, &clients, kind, &deltas, &mine, &undone_by);
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

fn kind_of(deltas: &[Delta]) -> IntentKind {
    let associative = |d: &Delta| Catalog::bundled().is_association(&d.resource.resource_type);
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
    undone_by: &[String],
) -> String {
    let via = clients.join(" and ");
    if kind == IntentKind::NoNetChange {
        let apis = distinct(mine.iter().map(|e| e.evidence.api.clone())).join(", ");
        if !undone_by.is_empty() {
            return format!(
                "{actor} ({via}) called {apis}; with the calls of {} on the same resources, nothing of it remains",
                undone_by.join(", ")
            );
        }
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
                .map(|(k, a)| format!("set {k} = {}", crate::text::value(&a.after)))
                .collect();
            what.extend(d.blocks.iter().map(|b| {
                let op = if b.op == BlockOp::Added {
                    "added"
                } else {
                    "removed"
                };
                format!("{op} {}", block_words(&b.block, &b.fields))
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

/// A nested block in words: a security group rule as `ingress rule tcp 443 from
/// 10.0.0.0/16 "HTTPS"`, any other block as `the_block (key = value, ...)`.
pub fn block_words(block: &str, fields: &Map<String, Value>) -> String {
    if fields.contains_key("protocol") && fields.contains_key("from_port") {
        return rule_words(block, fields);
    }
    let pairs: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{k} = {}", crate::text::value(v)))
        .collect();
    crate::text::elide(
        &format!("{block} ({})", pairs.join(", ")),
        2 * crate::text::VALUE_WIDTH,
    )
}

/// A security group rule: protocol, ports, the peers it allows and its description.
fn rule_words(block: &str, fields: &Map<String, Value>) -> String {
    let text = |key: &str| match fields.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let protocol = text("protocol");
    let traffic = if matches!(protocol.as_str(), "-1" | "all") {
        "all traffic".to_owned()
    } else {
        let (from, to) = (text("from_port"), text("to_port"));
        let ports = if from == to || to.is_empty() {
            from
        } else {
            format!("{from}-{to}")
        };
        format!("{protocol} {ports}")
    };
    let mut peers: Vec<String> = [
        "cidr_blocks",
        "ipv6_cidr_blocks",
        "prefix_list_ids",
        "security_groups",
    ]
    .iter()
    .filter_map(|key| fields.get(*key).and_then(Value::as_array))
    .flatten()
    .map(|peer| {
        peer.as_str()
            .map_or_else(|| peer.to_string(), str::to_owned)
    })
    .collect();
    if fields.get("self") == Some(&Value::Bool(true)) {
        peers.push("the group itself".to_owned());
    }
    let direction = if block == "egress" { "to" } else { "from" };
    let mut words = format!("{block} rule {traffic}");
    if !peers.is_empty() {
        words.push_str(&format!(" {direction} {}", peers.join(", ")));
    }
    if let Some(Value::String(description)) = fields.get("description")
        && !description.is_empty()
    {
        words.push_str(&format!(" \"{description}\""));
    }
    words
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
    fn sessions_and_causality_join_calls_but_a_shared_resource_does_not() {
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
        let mut uses = effect("u", 200, "carol", "b", set("t3.xlarge"));
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
        // a1+a2: one session within 10 minutes; u uses the id c allocated; a3 is 95 minutes
        // after a2; a2 and u touch the same instance b, but they are different people.
        assert_eq!(groups, [vec!["a1", "a2"], vec!["c", "u"], vec!["a3"]]);
        let on = |i: &Intent| -> Vec<String> {
            i.deltas
                .iter()
                .map(|d| d.resource.identity.clone())
                .collect()
        };
        // carol's later write to b supersedes alice's: b's net change is carol's.
        assert_eq!(on(&intents[0]), ["a"]);
        assert_eq!(on(&intents[1]), ["sg-new", "b"]);
        assert_eq!(
            intents[1].deltas[1].attributes["instance_type"].after,
            json!("t3.xlarge")
        );
        assert_eq!(intents[1].deltas[1].evidence, ["u"]);
        assert_eq!(intents[0].kind, IntentKind::Update);
        assert_eq!(intents[1].kind, IntentKind::Create);
        assert_eq!(intents[2].kind, IntentKind::Update);
        assert_eq!(
            intents[2].story,
            "alice (console) set instance_type = \"t3.large\" on aws_instance.c"
        );
    }

    #[test]
    fn one_session_far_apart_in_time_is_two_intents() {
        let effects = vec![
            effect("a1", 0, "alice", "a", set("t3.large")),
            effect("a2", 11, "alice", "a", set("t3.xlarge")),
        ];
        let state = json!({"instance_type": "t3.micro"});
        let intents = build(&effects, |_| Some(&state), GroupOptions::default());
        assert_eq!(intents.len(), 2);
        // The last write holds the cloud's value; the first is superseded.
        assert!(intents[0].deltas.is_empty());
        assert_eq!(intents[0].kind, IntentKind::NoNetChange);
        assert_eq!(
            intents[0].story,
            "alice (console) called Api; with the calls of I2 on the same resources, nothing of it remains"
        );
        assert_eq!(
            intents[1].deltas[0].attributes["instance_type"].after,
            json!("t3.xlarge")
        );
        assert_eq!(
            intents[1].deltas[0].attributes["instance_type"].before,
            Some(json!("t3.micro"))
        );
    }

    #[test]
    fn each_person_keeps_the_parts_they_wrote_last() {
        let tag = |k: &str| Change::Tags {
            set: [(k.to_owned(), "x".to_owned())].into(),
            remove: vec![],
            replace: false,
        };
        let rule = |port: i64| Change::AddBlock {
            block: "ingress".into(),
            fields: json!({"from_port": port})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        };
        let mut effects = vec![
            effect("a1", 0, "alice", "sg", tag("Owner")),
            effect("a2", 1, "alice", "sg", rule(443)),
            effect("b1", 60, "bob", "sg", rule(22)),
            effect("b2", 61, "bob", "sg", tag("Owner")),
        ];
        effects[2].risk = Risk::High;
        let state = json!({"tags": {}});
        let intents = build(&effects, |_| Some(&state), GroupOptions::default());
        assert_eq!(intents.len(), 2);
        let (alice, bob) = (&intents[0].deltas[0], &intents[1].deltas[0]);
        assert_eq!(alice.blocks.len(), 1);
        assert_eq!(alice.blocks[0].fields["from_port"], json!(443));
        assert!(alice.tags_set.is_empty(), "bob set Owner last");
        assert_eq!(alice.risk, Risk::Low);
        assert_eq!(alice.evidence, ["a1", "a2"]);
        assert_eq!(bob.blocks[0].fields["from_port"], json!(22));
        assert_eq!(bob.tags_set.keys().collect::<Vec<_>>(), ["Owner"]);
        assert_eq!(bob.risk, Risk::High);
        assert_eq!(intents[0].actor, "alice");
        assert_eq!(intents[1].actor, "bob");
    }

    #[test]
    fn a_revert_by_someone_else_leaves_nothing_to_absorb() {
        let effects = vec![
            effect("a", 0, "alice", "a", set("t3.large")),
            effect("b", 30, "bob", "a", set("t3.micro")),
        ];
        let state = json!({"instance_type": "t3.micro"});
        let intents = build(&effects, |_| Some(&state), GroupOptions::default());
        assert_eq!(intents.len(), 2);
        assert!(intents.iter().all(|i| i.deltas.is_empty()));
        assert!(intents[1].story.contains("with the calls of I1"));
    }

    #[test]
    fn an_emptied_intent_names_only_its_neighbours_on_a_resource_many_intents_touched() {
        // One person resizing one instance every day for 301 days, back and forth: 301
        // intents on one resource, each undone by the next but the last.
        let effects: Vec<Effect> = (0..301)
            .map(|day| {
                let size = if day % 2 == 0 { "t3.large" } else { "t3.micro" };
                effect(&format!("e{day}"), day * 24 * 60, "alice", "a", set(size))
            })
            .collect();
        let state = json!({"instance_type": "t3.micro"});
        let intents = build(&effects, |_| Some(&state), GroupOptions::default());
        assert_eq!(intents.len(), 301);
        assert!(intents[..300].iter().all(|i| i.deltas.is_empty()));
        assert!(
            intents[0]
                .story
                .ends_with("with the calls of I2 on the same resources, nothing of it remains")
        );
        assert!(
            intents[150]
                .story
                .contains("with the calls of I150, I152 on"),
            "{}",
            intents[150].story
        );
        // The last one wrote t3.large, which stays.
        assert_eq!(intents[300].deltas.len(), 1);
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

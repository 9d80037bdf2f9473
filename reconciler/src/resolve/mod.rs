//! Resolve: for every out-of-band call, the resources it touches — the Terraform type and
//! cloud identity the knowledge base's rule extracts from the request and response — and the
//! state address when Terraform manages the resource, in the project's accounts and regions
//! only. What no intent can absorb becomes a [`Finding`]: a security signal, a call no rule
//! explains, a value CloudTrail does not record, or a call that changes nothing Terraform
//! configures.

use crate::ingest::Call;
use crate::terraform::state::{Mode, StateIndex};
use crate::terraform::values::{lookup, same_value};
use crate::text::secret_in;
use effect::{Change, Effect, Evidence, Flag, ResourceKey};
use knowledge::FlagLevel;
use knowledge::rules::{
    BlockChange, Extraction, Kind, MemberChange, Members, Missing, RuleSet, TagOp, Target,
};
use knowledge::signals::{CallView, Fired, SignalSet};
use serde_json::{Map, Value};

mod canned_acl;
mod companions;
pub mod effect;
mod finding;
mod routes;
mod scope;
mod sg_rules;
mod single_tags;
#[cfg(test)]
mod testing;

pub use finding::{Finding, FindingKind, Reach, Touched, touched};
pub use scope::{Origin, Scope, arn_parts, is_global};

/// What one call did: its effects on resources, and the findings no effect explains.
#[derive(Debug, Default)]
pub struct Resolved {
    /// One per resource and kind of change.
    pub effects: Vec<Effect>,
    /// Security signals, calls without a rule, hidden values, operational calls.
    pub findings: Vec<Finding>,
}

/// Resolves calls against the rules, the security signals and the state, in a scope.
pub struct Resolver<'a> {
    rules: &'a RuleSet,
    state: &'a StateIndex,
    signals: &'a SignalSet,
    scope: &'a Scope,
    known_accounts: Vec<String>,
}

impl<'a> Resolver<'a> {
    /// A resolver over a rule set, the signals, a state index and the project's scope.
    pub fn new(
        rules: &'a RuleSet,
        signals: &'a SignalSet,
        state: &'a StateIndex,
        scope: &'a Scope,
    ) -> Self {
        Self {
            rules,
            state,
            signals,
            scope,
            known_accounts: scope.accounts(),
        }
    }

    /// The call's effects, one per resource and kind of change, and its findings.
    pub fn resolve(&self, call: &Call) -> Resolved {
        let request = call.request_parameters.json();
        let response = call.response_elements.json();
        let view = CallView {
            event_source: &call.event_source,
            api: call.api_name(),
            account: call.account_id(),
            request: request.as_ref(),
            response: response.as_ref(),
        };
        let fired = self.signals.fired(&view, &self.known_accounts);
        let mut out = Resolved::default();
        let named = || {
            finding::touched_in(
                call,
                request.as_ref(),
                response.as_ref(),
                self.state,
                self.scope,
            )
        };
        let finding = |kind, resources, reason: String| {
            Finding::new(kind, call, resources, self.scope, reason)
        };
        let rule = self.rules.find_for(
            &call.event_source,
            call.api_name(),
            request.as_ref(),
            response.as_ref(),
        );
        let extraction = rule.map(|r| {
            r.extract(request.as_ref(), response.as_ref())
                .map(keep_secrets_out)
        });
        let mut resources = match &extraction {
            Some(Ok((extraction, _))) => self.targets(call, extraction),
            _ => Vec::new(),
        };
        merge(&mut resources, named());
        match extraction {
            None if fired.is_empty() => out.findings.push(finding(
                FindingKind::Unexplained,
                resources.clone(),
                "no rule in the knowledge base for this API".into(),
            )),
            None => {}
            Some(Err(error)) => out.findings.push(finding(
                FindingKind::Unexplained,
                resources.clone(),
                error.to_string(),
            )),
            Some(Ok((extraction, secrets))) => {
                out.effects = self.effects(call, &extraction, &fired);
                if extraction.kind == Kind::Operational {
                    out.findings.push(finding(
                        FindingKind::Operational,
                        resources.clone(),
                        extraction.summary.clone(),
                    ));
                } else if !extraction.hidden.is_empty() || !secrets.is_empty() {
                    let mut changed = Vec::new();
                    if !extraction.hidden.is_empty() {
                        changed.push(format!(
                            "{}, which CloudTrail does not record",
                            extraction.hidden.join(" and ")
                        ));
                    }
                    changed.extend(secrets);
                    out.findings.push(finding(
                        FindingKind::HiddenValue,
                        resources.clone(),
                        format!(
                            "changed {}: check it by hand; retrace keeps it out of the code",
                            changed.join("; ")
                        ),
                    ));
                } else if out.effects.is_empty() && fired.is_empty() {
                    out.findings.push(finding(
                        FindingKind::Unexplained,
                        resources.clone(),
                        format!(
                            "the rule {} read no change from this call",
                            extraction.rule_id
                        ),
                    ));
                }
            }
        }
        for signal in fired {
            let mut security = finding(FindingKind::Security, resources.clone(), signal.reason);
            security.category = Some(signal.category);
            security.risk = Some(signal.risk);
            out.findings.push(security);
        }
        out
    }

    /// The effects of a call its rule read, each carrying the fired signals as security
    /// flags.
    fn effects(&self, call: &Call, extraction: &Extraction, fired: &[Fired]) -> Vec<Effect> {
        if extraction.kind == Kind::Operational {
            return Vec::new();
        }
        let evidence = evidence(call);
        let mentions = mentions(extraction, call);
        let security: Vec<Flag> = fired
            .iter()
            .map(|f| Flag {
                reason: format!("security: {}", f.reason),
                level: FlagLevel::Security,
            })
            .collect();
        let unwritable = hidden_at_creation(extraction);
        let mut effects = Vec::new();
        for target in &extraction.targets {
            let (resource, address) = self.locate(call, extraction, target);
            let allocates = if matches!(extraction.kind, Kind::Create | Kind::Associate) {
                vec![target.identity.clone()]
            } else {
                Vec::new()
            };
            let state = address
                .as_deref()
                .and_then(|a| self.state.instance(a))
                .map(|i| &i.attributes);
            let mut flags = standing_flags(extraction, state);
            flags.extend(security.iter().cloned());
            for change in changes(extraction, target, address.is_some(), state) {
                let mut flags = flags.clone();
                if matches!(change, Change::Create { .. }) {
                    flags.extend(unwritable.clone());
                }
                effects.push(Effect {
                    evidence: evidence.clone(),
                    resource: resource.clone(),
                    address: address.clone(),
                    change,
                    rule: extraction.rule_id.clone(),
                    risk: extraction.risk,
                    flags,
                    summary: extraction.summary.clone(),
                    mentions: mentions.clone(),
                    allocates: allocates.clone(),
                });
            }
        }
        let effects = sg_rules::as_rule_resources(effects, call, self.state);
        let effects = sg_rules::onto_legacy_rules(effects, self.state);
        let effects = sg_rules::self_references(effects);
        let effects = routes::as_routes(effects, self.state);
        let effects = companions::as_companions(effects, self.state);
        let effects = canned_acl::with_grants(effects, self.state);
        single_tags::as_single_tags(effects, self.state)
    }

    /// The rule's targets as touched resources, with their addresses when managed.
    fn targets(&self, call: &Call, extraction: &Extraction) -> Vec<Touched> {
        extraction
            .targets
            .iter()
            .map(|target| Touched {
                identity: target.identity.clone(),
                address: self.locate(call, extraction, target).1,
            })
            .collect()
    }

    /// The resource type and, when managed in the call's account and region, the state
    /// address of a target.
    fn locate(
        &self,
        call: &Call,
        extraction: &Extraction,
        target: &Target,
    ) -> (ResourceKey, Option<String>) {
        let narrowed = if target.resource_types.is_empty() {
            &extraction.resource_types
        } else {
            &target.resource_types
        };
        let candidates: Vec<&str> = narrowed.iter().map(String::as_str).collect();
        let origin = finding::origin(call);
        for resource_type in &candidates {
            let found = self.state.lookup(Some(resource_type), &target.identity);
            let managed = found
                .into_iter()
                .find(|i| i.mode == Mode::Managed && self.scope.admits(i, &origin));
            if let Some(instance) = managed {
                let key = ResourceKey {
                    resource_type: (*resource_type).to_owned(),
                    identity: target.identity.clone(),
                };
                return (key, Some(instance.address.clone()));
            }
        }
        let key = ResourceKey {
            resource_type: candidates.first().map_or("unknown", |t| t).to_owned(),
            identity: target.identity.clone(),
        };
        (key, None)
    }
}

/// Adds the resources of `more` that `list` does not name yet (by address when managed, by
/// identity otherwise), keeping managed ones first.
fn merge(list: &mut Vec<Touched>, more: Vec<Touched>) {
    for t in more {
        let known_address = t.address.is_some() && list.iter().any(|o| o.address == t.address);
        match list.iter_mut().find(|o| o.identity == t.identity) {
            Some(o) if o.address.is_none() && !known_address => o.address = t.address,
            Some(_) => {}
            None if known_address => {}
            None => list.push(t),
        }
    }
    list.sort_by_key(|t| t.address.is_none());
}

/// The flag that holds a resource created with values CloudTrail does not record: code
/// without them would not describe it (a parameter without its value does not even plan).
fn hidden_at_creation(extraction: &Extraction) -> Option<Flag> {
    (!extraction.hidden.is_empty()).then(|| Flag {
        reason: format!(
            "created with {}, which CloudTrail does not record: retrace cannot write this \
             resource into the code; write it by hand",
            extraction.hidden.join(" and ")
        ),
        level: FlagLevel::Unwritable,
    })
}

/// The extraction's flags that stand against the target's state attributes (`state`, when
/// managed), with their reasons and levels: a flag about moving away from a value needs the
/// state to hold it.
fn standing_flags(extraction: &Extraction, state: Option<&Value>) -> Vec<Flag> {
    extraction
        .flags
        .iter()
        .filter(|f| f.fires_against(state.and_then(|s| lookup(s, &f.field))))
        .map(|f| Flag {
            reason: f.reason.clone(),
            level: f.level,
        })
        .collect()
}

/// What the extraction did to one target, whose state attributes are `state` when managed.
fn changes(
    extraction: &Extraction,
    target: &Target,
    managed: bool,
    state: Option<&Value>,
) -> Vec<Change> {
    let sets = || extraction.sets.iter().chain(&target.sets).cloned();
    // A created resource holds the members the call added.
    let attributes = || {
        let added = extraction
            .members
            .iter()
            .filter(|m| m.op == Members::Add)
            .map(|m| (m.attribute.clone(), Value::Array(m.values.clone())));
        sets().chain(added).collect()
    };
    match extraction.kind {
        Kind::Create => vec![Change::Create {
            attributes: attributes(),
        }],
        // An association the state already holds at the identity (a VPC's one DHCP options
        // association) is changed in place, not made again.
        Kind::Associate if !managed => vec![Change::Create {
            attributes: attributes(),
        }],
        Kind::Delete | Kind::Disassociate => vec![Change::Delete],
        Kind::Update if !managed && extraction.missing == Some(Missing::Create) => {
            vec![Change::Create {
                attributes: attributes(),
            }]
        }
        _ => {
            let mut out: Vec<Change> = sets()
                .map(|(attribute, value)| Change::Set { attribute, value })
                .collect();
            out.extend(extraction.members.iter().map(member_change));
            for blocks in &extraction.blocks {
                match state {
                    Some(state) if blocks.key.is_some() => {
                        out.extend(replaced_blocks(blocks, state));
                    }
                    _ => out.extend(block_changes(blocks, extraction.kind)),
                }
            }
            out.extend(tag_change(extraction));
            out
        }
    }
}

/// The effects with each one `rewrite` replaces by its result (an empty result drops it), the
/// others kept: how the passes that read effects as AWS applies them (security group rules,
/// routes, companions, single tags) work.
fn rewrite(effects: Vec<Effect>, rewrite: impl Fn(&Effect) -> Option<Vec<Effect>>) -> Vec<Effect> {
    let mut out = Vec::new();
    for effect in effects {
        match rewrite(&effect) {
            Some(replaced) => out.extend(replaced),
            None => out.push(effect),
        }
    }
    out
}

/// Values a call added to or removed from a set attribute, as a change.
fn member_change(members: &MemberChange) -> Change {
    let (add, remove) = match members.op {
        Members::Add => (members.values.clone(), Vec::new()),
        Members::Remove => (Vec::new(), members.values.clone()),
    };
    Change::Members {
        attribute: members.attribute.clone(),
        add,
        remove,
    }
}

/// The blocks of one kind a call added or removed, as changes.
fn block_changes(blocks: &BlockChange, kind: Kind) -> Vec<Change> {
    blocks
        .items
        .iter()
        .map(|fields| {
            let block = blocks.name.clone();
            let fields = fields.clone();
            if kind == Kind::RemoveBlock {
                Change::RemoveBlock { block, fields }
            } else {
                Change::AddBlock { block, fields }
            }
        })
        .collect()
}

/// A call that replaces a whole set of blocks, as its net change against the state's blocks
/// matched by the key field: a block whose fields changed is a `Set` of each changed field
/// when the resource has only that one block (the path `rule.expiration.days` then names it
/// unambiguously), and otherwise its removal plus the new block; new keys are added blocks and
/// keys the call left out are removed blocks. Only the fields the rule reads are compared.
fn replaced_blocks(blocks: &BlockChange, state: &Value) -> Vec<Change> {
    let Some(key) = blocks.key.as_deref() else {
        return Vec::new();
    };
    let old: Vec<&Map<String, Value>> = state
        .get(&blocks.name)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default();
    let fields: Vec<&String> = blocks.items.iter().flat_map(|i| i.keys()).collect();
    let project = |block: &Map<String, Value>| -> Map<String, Value> {
        let whole = Value::Object(block.clone());
        fields
            .iter()
            .filter_map(|f| Some(((*f).clone(), flat(lookup(&whole, f)?)?)))
            .collect()
    };
    let name = || blocks.name.clone();
    let mut out = Vec::new();
    for new in &blocks.items {
        let Some(before) = old.iter().find(|b| same_key(b, new, key)) else {
            out.push(Change::AddBlock {
                block: name(),
                fields: new.clone(),
            });
            continue;
        };
        if old.len() == 1 {
            // Every field, changed or not: netting drops those equal to the state, and a later
            // call putting a value back then undoes an earlier change.
            out.extend(
                new.iter()
                    .filter(|(f, _)| *f != key)
                    .map(|(f, v)| Change::Set {
                        attribute: format!("{}.{f}", blocks.name),
                        value: v.clone(),
                    }),
            );
            continue;
        }
        let before = Value::Object((*before).clone());
        let changed = new
            .iter()
            .any(|(f, v)| lookup(&before, f).is_none_or(|b| !same_value(b, v)));
        if !changed {
            continue;
        }
        if let Value::Object(before) = &before {
            out.push(Change::RemoveBlock {
                block: name(),
                fields: project(before),
            });
            out.push(Change::AddBlock {
                block: name(),
                fields: new.clone(),
            });
        }
    }
    let kept = |b: &&&Map<String, Value>| blocks.items.iter().any(|n| same_key(b, n, key));
    for gone in old.iter().filter(|b| !kept(b)) {
        out.push(Change::RemoveBlock {
            block: name(),
            fields: project(gone),
        });
    }
    out
}

/// Whether two blocks have the same value of the key field.
fn same_key(a: &Map<String, Value>, b: &Map<String, Value>, key: &str) -> bool {
    matches!((a.get(key), b.get(key)), (Some(x), Some(y)) if same_value(x, y))
}

/// A state value as a block field: a nested block held as a one-element list is stepped
/// into by `lookup` already; null stays out.
fn flat(value: &Value) -> Option<Value> {
    (!value.is_null()).then(|| value.clone())
}

fn tag_change(extraction: &Extraction) -> Option<Change> {
    let tags = extraction.tags.as_ref()?;
    Some(Change::Tags {
        set: tags.added.clone(),
        remove: tags.removed.clone(),
        replace: tags.op == TagOp::Replace,
    })
}

/// The call as evidence.
pub fn evidence(call: &Call) -> Evidence {
    let identity = &call.identity;
    let principal = identity
        .arn
        .clone()
        .or_else(|| identity.principal_id.clone())
        .unwrap_or_default();
    let session = format!(
        "{principal}|{}",
        identity.access_key_id.as_deref().unwrap_or_default()
    );
    Evidence {
        event_id: call.event_id.clone(),
        time: call.event_time,
        event_source: call.event_source.clone(),
        api: call.api_name().to_owned(),
        actor: identity.actor(),
        client: call.client.label(),
        session,
        region: call.aws_region.clone(),
        account: call.account_id().map(str::to_owned),
    }
}

/// Ids and ARNs the call refers to besides its targets: string values it sets and the
/// record's `resources[]`.
fn mentions(extraction: &Extraction, call: &Call) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        if looks_like_id(s) && !out.iter().any(|o| o == s) {
            out.push(s.to_owned());
        }
    };
    for (_, value) in &extraction.sets {
        strings(value, &mut push);
    }
    for resource in &call.resources {
        if let Some(arn) = &resource.arn {
            push(arn);
        }
    }
    out
}

fn strings(value: &Value, push: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, push)),
        Value::Object(map) => map.values().for_each(|v| strings(v, push)),
        _ => {}
    }
}

/// An AWS id (`sg-0abc...`, `subnet-...`) or an ARN.
fn looks_like_id(s: &str) -> bool {
    s.starts_with("arn:")
        || s.split_once('-').is_some_and(|(prefix, rest)| {
            (1..=10).contains(&prefix.len())
                && prefix.bytes().all(|b| b.is_ascii_lowercase())
                && rest.len() >= 8
                && rest.bytes().all(|b| b.is_ascii_hexdigit())
        })
}

/// Takes every value a rule read that holds a secret (a key naming one at any depth, a
/// password in a URL) out of the sets, and says which: whatever rule read it, shipped,
/// learned or proposed by a model, a secret is never written into the code.
fn keep_secrets_out(mut extraction: Extraction) -> (Extraction, Vec<String>) {
    let mut secrets = Vec::new();
    extraction
        .sets
        .retain(|(attribute, value)| match secret_in(value) {
            Some(why) => {
                secrets.push(format!("{attribute}, whose value holds a secret ({why})"));
                false
            }
            None => true,
        });
    (extraction, secrets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::record::Origin;
    use crate::resolve::testing::{index, resource};
    use std::sync::Arc;

    /// A console call of `api` in account 111122223333, eu-west-1, with `request`.
    fn console_call(event_source: &str, api: &str, request: &Value) -> Call {
        let record = serde_json::json!({"eventVersion": "1.10", "eventID": "e",
            "eventTime": "2025-03-01T08:00:00Z", "eventSource": event_source, "eventName": api,
            "awsRegion": "eu-west-1", "readOnly": false, "eventType": "AwsApiCall",
            "managementEvent": true, "eventCategory": "Management",
            "recipientAccountId": "111122223333", "userAgent": "console.amazonaws.com",
            "userIdentity": {"type": "IAMUser", "userName": "alice",
                "arn": "arn:aws:iam::111122223333:user/alice", "accountId": "111122223333"},
            "requestParameters": request, "responseElements": null});
        let origin = Origin {
            source: Arc::from("t"),
            index: 0,
            offset: None,
        };
        Call::parse(record.to_string().as_bytes(), origin).expect("test record parses")
    }

    /// The addresses of the managed instances `call`'s effects reach, in state `resources`.
    fn reached(resources: Value, call: &Call) -> Vec<String> {
        let state = index(resources);
        let scope = Scope::from_state(state.state());
        let rules = RuleSet::bundled().expect("rules");
        let signals = SignalSet::bundled().expect("signals");
        let resolver = Resolver::new(rules, signals, &state, &scope);
        resolver
            .resolve(call)
            .effects
            .into_iter()
            .filter_map(|effect| effect.address)
            .collect()
    }

    #[test]
    fn a_launch_template_named_by_its_name_is_found() {
        // The EC2 API takes LaunchTemplateId or LaunchTemplateName; CloudTrail records the
        // request under `ModifyLaunchTemplateRequest` as sent.
        let template = resource(
            "aws_launch_template",
            "web",
            serde_json::json!({"id": "lt-0a1b2c3d4e5f67890", "name": "web-template",
                "arn": "arn:aws:ec2:eu-west-1:111122223333:launch-template/lt-0a1b2c3d4e5f67890",
                "default_version": 1, "latest_version": 2}),
        );
        let by = |key: &str, value: &str| serde_json::json!({"ModifyLaunchTemplateRequest": {key: value, "SetDefaultVersion": "2"}});
        for request in [
            by("LaunchTemplateId", "lt-0a1b2c3d4e5f67890"),
            by("LaunchTemplateName", "web-template"),
        ] {
            let call = console_call("ec2.amazonaws.com", "ModifyLaunchTemplate", &request);
            assert_eq!(
                reached(serde_json::json!([template.clone()]), &call),
                ["aws_launch_template.web"],
                "{request}"
            );
        }
    }

    #[test]
    fn an_associate_call_on_a_held_association_changes_it_and_a_new_one_is_created() {
        let association = resource(
            "aws_vpc_dhcp_options_association",
            "this",
            serde_json::json!({"id": "dopt-0f1e-vpc-0a1b", "vpc_id": "vpc-0a1b",
                "dhcp_options_id": "dopt-0f1e"}),
        );
        let state = index(serde_json::json!([association]));
        let scope = Scope::from_state(state.state());
        let rules = RuleSet::bundled().expect("rules");
        let signals = SignalSet::bundled().expect("signals");
        let resolver = Resolver::new(rules, signals, &state, &scope);
        let changes = |vpc: &str| -> Vec<Change> {
            let request = serde_json::json!({"dhcpOptionsId": "default", "vpcId": vpc});
            let call = console_call("ec2.amazonaws.com", "AssociateDhcpOptions", &request);
            resolver
                .resolve(&call)
                .effects
                .into_iter()
                .map(|e| e.change)
                .collect()
        };
        let set = |attribute: &str, value: &str| Change::Set {
            attribute: attribute.into(),
            value: Value::from(value),
        };
        assert_eq!(
            changes("vpc-0a1b"),
            [set("vpc_id", "vpc-0a1b"), set("dhcp_options_id", "default")]
        );
        assert!(
            matches!(changes("vpc-0c2d").as_slice(), [Change::Create { .. }]),
            "{:?}",
            changes("vpc-0c2d")
        );
    }

    fn keyed(items: Value) -> BlockChange {
        let items = items
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_object().cloned())
            .collect();
        BlockChange {
            name: "rule".into(),
            items,
            key: Some("id".into()),
        }
    }

    #[test]
    fn a_value_holding_a_secret_is_taken_out_of_the_sets_whatever_the_rule() {
        // A rule that maps a function's environment into the code, as a model may propose.
        let rule = knowledge::rules::Rule {
            service: "lambda".into(),
            event_source: "lambda.amazonaws.com".into(),
            id_prefixes: Default::default(),
            spec: serde_json::from_value(serde_json::json!({
                "api": "UpdateFunctionConfiguration", "resource": "aws_lambda_function",
                "kind": "update", "risk": "low", "summary": "changed the environment",
                "identity": [{"path": "functionName"}],
                "set": [
                    {"attribute": "environment.variables", "path": "environment.variables"},
                    {"attribute": "timeout", "path": "timeout"}
                ]
            }))
            .expect("spec"),
        };
        let request = serde_json::json!({"functionName": "worker", "timeout": 30,
            "environment": {"variables": {"LOG_LEVEL": "info", "STRIPE_KEY": "sk_live_x"}}});
        let extraction = rule.extract(Some(&request), None).expect("extracts");
        let (kept, secrets) = keep_secrets_out(extraction);
        let sets: Vec<&str> = kept.sets.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(sets, ["timeout"]);
        assert_eq!(
            secrets,
            ["environment.variables, whose value holds a secret (STRIPE_KEY)"]
        );
        // Without a secret in it, the same map is written as read.
        let plain = serde_json::json!({"functionName": "worker",
            "environment": {"variables": {"LOG_LEVEL": "info"}}});
        let (kept, secrets) = keep_secrets_out(rule.extract(Some(&plain), None).expect("extracts"));
        assert_eq!(kept.sets.len(), 1);
        assert!(secrets.is_empty());
    }

    #[test]
    fn a_replaced_document_sets_every_field_of_its_one_block() {
        // State as the provider writes it: nested blocks are one-element lists.
        let state = serde_json::json!({"rule": [{"id": "tiering", "status": "Enabled",
            "expiration": [{"days": 400, "date": null}], "filter": [{"prefix": ""}]}]});
        let call = keyed(serde_json::json!([{"id": "tiering", "status": "Enabled",
            "filter.prefix": "", "expiration.days": 730}]));
        let set = |attribute: &str, value: Value| Change::Set {
            attribute: attribute.into(),
            value,
        };
        // Every field but the key; netting keeps only `expiration.days` (400 → 730). The
        // order follows the request's fields, which a JSON map may keep or sort.
        let mut changes = replaced_blocks(&call, &state);
        changes.sort_by_key(|c| match c {
            Change::Set { attribute, .. } => attribute.clone(),
            _ => String::new(),
        });
        assert_eq!(
            changes,
            [
                set("rule.expiration.days", serde_json::json!(730)),
                set("rule.filter.prefix", serde_json::json!("")),
                set("rule.status", serde_json::json!("Enabled")),
            ]
        );
    }

    #[test]
    fn with_several_blocks_a_change_is_a_replacement_and_left_out_keys_are_removed() {
        let state = serde_json::json!({"rule": [
            {"id": "a", "status": "Enabled", "expiration": [{"days": 30}]},
            {"id": "b", "status": "Enabled", "expiration": [{"days": 60}]}]});
        let call = keyed(serde_json::json!([
            {"id": "a", "status": "Disabled", "expiration.days": 30},
            {"id": "c", "status": "Enabled"}]));
        let map = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert_eq!(
            replaced_blocks(&call, &state),
            [
                Change::RemoveBlock {
                    block: "rule".into(),
                    fields: map(
                        serde_json::json!({"id": "a", "status": "Enabled", "expiration.days": 30})
                    )
                },
                Change::AddBlock {
                    block: "rule".into(),
                    fields: map(
                        serde_json::json!({"id": "a", "status": "Disabled", "expiration.days": 30})
                    )
                },
                Change::AddBlock {
                    block: "rule".into(),
                    fields: map(serde_json::json!({"id": "c", "status": "Enabled"}))
                },
                Change::RemoveBlock {
                    block: "rule".into(),
                    fields: map(
                        serde_json::json!({"id": "b", "status": "Enabled", "expiration.days": 60})
                    )
                },
            ]
        );
    }

    #[test]
    fn ids_and_arns_are_recognised() {
        assert!(looks_like_id("sg-0123456789abcdef0"));
        assert!(looks_like_id("vpc-1a2b3c4d"));
        assert!(looks_like_id("arn:aws:iam::111122223333:role/app"));
        assert!(!looks_like_id("t3-large"));
        assert!(!looks_like_id("my-bucket-name"));
    }
}

//! Policy: what to do with each part of an intent's net effect — absorb it into the code, flag
//! it for a human, or ignore it because an automation owns the value — with the reason.
//!
//! Decisions come, first match wins, from the `[[policy.rule]]` entries of `retrace.toml`, then
//! the risk conditions the knowledge base attached to the calls (a group opened to the
//! internet, encryption turned off), then `flag_risk`, then built-in ignores for values that
//! automation changes all day (an Auto Scaling group's desired capacity, an ECS service's
//! desired count), then `default`.
//!
//! A knowledge-base flag has a level. A `hold` flag flags the change. A `warn` flag (a hygiene
//! or resilience downgrade: versioning suspended, point-in-time recovery off) decides nothing:
//! the rest of the order decides (absorb by default) and the ruling carries the flag's reason
//! as a warning, which the planner puts on the edit for the reviewer. Two kinds of flag hold
//! whatever the policy says: a security signal holds its whole intent, and an unwritable flag
//! (a resource created with a value CloudTrail hides) holds its resource. `[policy]` options:
//!
//! - `default = "absorb" | "flag" | "ignore"` — the decision when nothing else matches;
//! - `flag_risk = "low" | "medium" | "high"` — flag every change whose rule is at least this
//!   risky (off when absent);
//! - `rule_flags = true` — whether the knowledge base's flags, of either level, count at all;
//! - `hold_warnings = false` — whether `warn` flags hold the change as `hold` flags do;
//! - `builtin_ignores = true` — whether the catalog's automation-owned attributes are ignored;
//! - `[[policy.rule]]` — `decision`, `reason` and any of `resource`, `attribute`, `actor`
//!   (globs) and `risk`, checked first, in order.

use crate::intents::{Delta, Flag, FlagLevel, Intent, Lifecycle, Risk};
use crate::terraform::state::{Mode, StateIndex};
use globset::{Glob, GlobMatcher};
use knowledge::catalog::{Catalog, Present};
use serde::{Deserialize, Serialize};

/// What to do with a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Patch the code to match.
    Absorb,
    /// Report it for a human to judge; do not patch.
    Flag,
    /// Leave the value to its automation; suggest `lifecycle { ignore_changes }`.
    Ignore,
    /// Leave out: a reviewer rejected this very change (its request closed unmerged) and the
    /// cloud has not changed it since. Only `retrace nightly` decides it, never a setting.
    #[serde(skip_deserializing)]
    Rejected,
}

/// What a change is, for remembering a reviewer's rejection: the resource (its state
/// address, else its type and id), the attribute, block or `tags` it is about (empty for a
/// whole resource), and the value proposed as canonical JSON.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The resource.
    pub resource: String,
    /// The attribute, block type or `tags`.
    pub attribute: String,
    /// The value, as canonical JSON.
    pub value: String,
}

impl Fingerprint {
    /// The fingerprint of one part of a delta.
    pub fn of(delta: &Delta, part: &Part) -> Fingerprint {
        let resource = delta
            .address
            .clone()
            .unwrap_or_else(|| delta.resource.to_string());
        let value = match part {
            Part::Resource => serde_json::to_value(delta.lifecycle).unwrap_or_default(),
            Part::Attribute(a) => delta
                .attributes
                .get(a)
                .map_or(serde_json::Value::Null, |x| x.after.clone()),
            Part::Block { index, .. } => delta
                .blocks
                .get(*index)
                .map(|b| serde_json::json!({"op": b.op, "fields": b.fields}))
                .unwrap_or_default(),
            Part::Tags => serde_json::json!({
                "set": delta.tags_set,
                "removed": delta.tags_removed,
            }),
        };
        Fingerprint {
            resource,
            attribute: part.attribute().to_owned(),
            value: value.to_string(),
        }
    }
}

/// `[policy]` in `retrace.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// The decision when nothing else matches.
    #[serde(default = "absorb")]
    pub default: Decision,
    /// Flag every change whose rule is at least this risky (off when absent).
    #[serde(default)]
    pub flag_risk: Option<Risk>,
    /// Whether the knowledge base's risk conditions flag a change, or for `warn` ones carry a
    /// warning (on by default).
    #[serde(default = "yes")]
    pub rule_flags: bool,
    /// Whether the knowledge base's `warn` conditions hold a change as its `hold` ones do (off
    /// by default: the change is decided as if unflagged and its ruling carries the warning).
    #[serde(default)]
    pub hold_warnings: bool,
    /// Whether the built-in ignores apply (on by default).
    #[serde(default = "yes")]
    pub builtin_ignores: bool,
    /// Rules checked first, in order.
    #[serde(default, rename = "rule")]
    pub rules: Vec<PolicyRule>,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self {
            default: Decision::Absorb,
            flag_risk: None,
            rule_flags: true,
            hold_warnings: false,
            builtin_ignores: true,
            rules: Vec::new(),
        }
    }
}

fn absorb() -> Decision {
    Decision::Absorb
}

fn yes() -> bool {
    true
}

/// One `[[policy.rule]]`: a decision for changes matching every given condition (globs for
/// the names).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyRule {
    /// The decision.
    pub decision: Decision,
    /// Why, for the report.
    pub reason: String,
    /// Resource type glob, e.g. `aws_iam_*`.
    #[serde(default)]
    pub resource: Option<String>,
    /// Attribute path glob, e.g. `tags*` or `desired_capacity`.
    #[serde(default)]
    pub attribute: Option<String>,
    /// Actor glob, e.g. `*AWSServiceRoleForAutoScaling*`.
    #[serde(default)]
    pub actor: Option<String>,
    /// Matches changes at least this risky.
    #[serde(default)]
    pub risk: Option<Risk>,
}

/// Which part of a delta a decision is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "part", content = "name", rename_all = "kebab-case")]
pub enum Part {
    /// The resource as a whole (a creation or deletion).
    Resource,
    /// One attribute.
    Attribute(String),
    /// One nested block added or removed (its position in the delta's blocks).
    Block {
        /// The block type.
        block: String,
        /// The position in [`Delta::blocks`].
        index: usize,
    },
    /// The tags.
    Tags,
}

impl Part {
    /// The top-level attribute the part is about (`tags` for tags, empty for a resource).
    pub fn attribute(&self) -> &str {
        match self {
            Part::Attribute(a) => a,
            Part::Block { block, .. } => block,
            Part::Tags => "tags",
            Part::Resource => "",
        }
    }
}

/// A decision about one part of a delta, with its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ruling {
    /// The part.
    pub part: Part,
    /// The decision.
    pub decision: Decision,
    /// Why, in words.
    pub reason: String,
    /// A caution for the reviewer from the knowledge base's `warn` flags, e.g. that versioning
    /// was suspended; the planner puts it on the part's edit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// A `[[policy.rule]]` that names an invalid glob.
#[derive(Debug, thiserror::Error)]
#[error("policy rule {index}: bad pattern `{pattern}`: {message}")]
pub struct PolicyError {
    /// The rule's position (1-based).
    pub index: usize,
    /// The pattern.
    pub pattern: String,
    /// The glob parser's message.
    pub message: String,
}

/// The policy, with its globs compiled.
pub struct Policy {
    config: PolicyConfig,
    rules: Vec<CompiledRule>,
    rejected: Vec<(Fingerprint, String)>,
}

struct CompiledRule {
    resource: Option<GlobMatcher>,
    attribute: Option<GlobMatcher>,
    actor: Option<GlobMatcher>,
}

fn compile(index: usize, pattern: &Option<String>) -> Result<Option<GlobMatcher>, PolicyError> {
    pattern
        .as_deref()
        .map(|p| {
            Glob::new(p)
                .map(|g| g.compile_matcher())
                .map_err(|e| PolicyError {
                    index,
                    pattern: p.to_owned(),
                    message: e.kind().to_string(),
                })
        })
        .transpose()
}

impl Policy {
    /// Compiles a policy.
    pub fn new(config: PolicyConfig) -> Result<Self, PolicyError> {
        let rules = config
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                Ok(CompiledRule {
                    resource: compile(i + 1, &r.resource)?,
                    attribute: compile(i + 1, &r.attribute)?,
                    actor: compile(i + 1, &r.actor)?,
                })
            })
            .collect::<Result<_, PolicyError>>()?;
        Ok(Self {
            config,
            rules,
            rejected: Vec::new(),
        })
    }

    /// The policy, leaving out the changes reviewers rejected, each with the reason to give
    /// (which request was closed). A rejection is checked before anything else.
    pub fn with_rejected(mut self, rejected: Vec<(Fingerprint, String)>) -> Self {
        self.rejected = rejected;
        self
    }

    /// A ruling for every part of every delta of the intent, in delta order. An intent with a
    /// security flag anywhere is held whole, whatever else the policy says: an intruder's
    /// user is not imported because only its access key was flagged. A delta with an
    /// unwritable flag (created with a value CloudTrail hides) is held whole, whatever the
    /// policy says. `state` is the run's state: an automation owns an attribute only where the state
    /// shows it (see [`Owned::when`]).
    pub fn decide(&self, intent: &Intent, state: &StateIndex) -> Vec<Vec<Ruling>> {
        let security = binding_reasons(
            intent.deltas.iter().flat_map(|d| &d.flags),
            FlagLevel::Security,
        );
        intent
            .deltas
            .iter()
            .map(|d| {
                let binding = security
                    .clone()
                    .or_else(|| binding_reasons(&d.flags, FlagLevel::Unwritable));
                parts(d)
                    .into_iter()
                    .map(|part| match &binding {
                        Some(reason) => Ruling {
                            part,
                            decision: Decision::Flag,
                            reason: reason.clone(),
                            warning: None,
                        },
                        None => self.rule_on(intent, d, part, state),
                    })
                    .collect()
            })
            .collect()
    }

    fn rule_on(&self, intent: &Intent, delta: &Delta, part: Part, state: &StateIndex) -> Ruling {
        let print = (!self.rejected.is_empty()).then(|| Fingerprint::of(delta, &part));
        if let Some((_, reason)) = self
            .rejected
            .iter()
            .find(|(f, _)| Some(f) == print.as_ref())
        {
            return Ruling {
                part,
                decision: Decision::Rejected,
                reason: reason.clone(),
                warning: None,
            };
        }
        let (held, warned) = self.sort_flags(flags_of(delta, &part));
        let (decision, reason) = self.choose(intent, delta, &part, &held, state);
        Ruling {
            part,
            decision,
            reason,
            warning: (!warned.is_empty()).then(|| reasons(&warned)),
        }
    }

    /// The flags that hold the change and those that only warn, by level and the
    /// configuration; none of either when `rule_flags` is off.
    fn sort_flags<'f>(&self, flags: &'f [Flag]) -> (Vec<&'f Flag>, Vec<&'f Flag>) {
        if !self.config.rule_flags {
            return (Vec::new(), Vec::new());
        }
        flags
            .iter()
            .partition(|f| f.level != FlagLevel::Warn || self.config.hold_warnings)
    }

    fn choose(
        &self,
        intent: &Intent,
        delta: &Delta,
        part: &Part,
        held: &[&Flag],
        state: &StateIndex,
    ) -> (Decision, String) {
        let resource_type = delta.resource.resource_type.as_str();
        let attribute = part.attribute();
        for (rule, compiled) in self.config.rules.iter().zip(&self.rules) {
            let hit =
                |m: &Option<GlobMatcher>, text: &str| m.as_ref().is_none_or(|g| g.is_match(text));
            if hit(&compiled.resource, resource_type)
                && hit(&compiled.attribute, attribute)
                && hit(&compiled.actor, &intent.actor)
                && rule.risk.is_none_or(|r| delta.risk >= r)
            {
                return (rule.decision, format!("policy: {}", rule.reason));
            }
        }
        if !held.is_empty() {
            return (Decision::Flag, reasons(held));
        }
        if let Some(limit) = self.config.flag_risk
            && delta.risk >= limit
        {
            return (
                Decision::Flag,
                format!("risk {} is at or above the policy's flag_risk", delta.risk),
            );
        }
        if self.config.builtin_ignores
            && let Some(owned) = Catalog::bundled().automation_owner(resource_type, attribute)
            && automation_present(owned.when.as_ref(), delta, state)
        {
            return (
                Decision::Ignore,
                format!(
                    "{attribute} is managed by {}; suggest lifecycle ignore_changes",
                    owned.owner
                ),
            );
        }
        if not_this_projects(delta) {
            return (
                Decision::Ignore,
                "the resource is not managed by this Terraform project".to_owned(),
            );
        }
        (self.config.default, "the policy's default".to_owned())
    }
}

/// Whether the automation that owns an attribute is there for the changed resource: always,
/// or where the state holds a resource of the condition's type with the same values of its
/// `same` attributes as the changed resource has.
fn automation_present(when: Option<&Present>, delta: &Delta, state: &StateIndex) -> bool {
    let Some(when) = when else {
        return true;
    };
    let Some(changed) = delta.address.as_deref().and_then(|a| state.instance(a)) else {
        return false;
    };
    state
        .iter()
        .filter(|i| i.mode == Mode::Managed && i.resource_type == when.resource)
        .any(|automation| {
            when.same.iter().all(|name| {
                let value = changed.attributes.get(name);
                value.is_some() && automation.attributes.get(name) == value
            })
        })
}

/// The flags that fired on a part of a delta: an attribute's or a block's own, the delta's for
/// tags and whole resources.
fn flags_of<'d>(delta: &'d Delta, part: &Part) -> &'d [Flag] {
    match part {
        Part::Attribute(a) => delta.attributes.get(a).map_or(&delta.flags, |x| &x.flags),
        Part::Block { index, .. } => delta.blocks.get(*index).map_or(&delta.flags, |b| &b.flags),
        Part::Tags | Part::Resource => &delta.flags,
    }
}

/// Whether a delta is about a resource this project does not manage: changed or deleted
/// without being in the state (in another account or region, or never imported).
fn not_this_projects(delta: &Delta) -> bool {
    match delta.lifecycle {
        Lifecycle::Unmanaged => true,
        Lifecycle::Deleted => delta.address.is_none(),
        _ => false,
    }
}

/// The reasons of the flags of `level` among `flags`, each once, joined, or `None`.
fn binding_reasons<'f>(
    flags: impl IntoIterator<Item = &'f Flag>,
    level: FlagLevel,
) -> Option<String> {
    let mut found: Vec<&Flag> = Vec::new();
    for flag in flags {
        if flag.level == level && !found.contains(&flag) {
            found.push(flag);
        }
    }
    (!found.is_empty()).then(|| reasons(&found))
}

/// The flags' reasons, joined.
fn reasons(flags: &[&Flag]) -> String {
    flags
        .iter()
        .map(|f| f.reason.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The parts of a delta that get a decision each.
fn parts(delta: &Delta) -> Vec<Part> {
    match delta.lifecycle {
        Lifecycle::Created | Lifecycle::Deleted | Lifecycle::Transient => vec![Part::Resource],
        Lifecycle::Managed | Lifecycle::Unmanaged => {
            let mut out: Vec<Part> = delta
                .attributes
                .keys()
                .map(|a| Part::Attribute(a.clone()))
                .collect();
            out.extend(
                delta
                    .blocks
                    .iter()
                    .enumerate()
                    .map(|(index, b)| Part::Block {
                        block: b.block.clone(),
                        index,
                    }),
            );
            if !delta.tags_set.is_empty() || !delta.tags_removed.is_empty() {
                out.push(Part::Tags);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intents::{AttributeDelta, IntentKind, ResourceKey};
    use serde_json::json;
    use std::collections::{BTreeMap, BTreeSet};

    fn hold(reason: &str) -> Flag {
        Flag {
            reason: reason.into(),
            level: FlagLevel::Hold,
        }
    }

    fn warn(reason: &str) -> Flag {
        Flag {
            reason: reason.into(),
            level: FlagLevel::Warn,
        }
    }

    fn intent(resource_type: &str, attribute: &str, risk: Risk, flags: &[Flag]) -> Intent {
        Intent {
            id: "I1".into(),
            kind: IntentKind::Update,
            actor: "alice via Admin".into(),
            clients: vec!["console".into()],
            start: chrono::DateTime::default(),
            end: chrono::DateTime::default(),
            evidence: vec![],
            deltas: vec![Delta {
                resource: ResourceKey {
                    resource_type: resource_type.into(),
                    identity: "x".into(),
                },
                address: Some(format!("{resource_type}.x")),
                lifecycle: Lifecycle::Managed,
                attributes: BTreeMap::from([(
                    attribute.to_owned(),
                    AttributeDelta {
                        before: Some(json!(1)),
                        after: json!(2),
                        flags: flags.to_vec(),
                    },
                )]),
                blocks: vec![],
                tags_set: BTreeMap::new(),
                tags_removed: BTreeSet::new(),
                rules: BTreeSet::new(),
                risk,
                flags: flags.to_vec(),
                evidence: vec![],
            }],
            links: vec![],
            story: String::new(),
        }
    }

    /// A state of `resources` (state file `resources` entries).
    fn state_of(resources: serde_json::Value) -> StateIndex {
        let text = json!({"version": 4, "resources": resources}).to_string();
        StateIndex::new(crate::terraform::state::State::parse(text.as_bytes(), "t").expect("state"))
    }

    fn no_state() -> StateIndex {
        state_of(json!([]))
    }

    /// A managed resource `TYPE.x` of one instance with `attributes`.
    fn managed(resource_type: &str, attributes: serde_json::Value) -> serde_json::Value {
        json!({"mode": "managed", "type": resource_type, "name": "x",
               "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
               "instances": [{"schema_version": 0, "attributes": attributes}]})
    }

    #[test]
    fn a_scalable_targets_capacity_is_the_schedules_only_where_one_exists_for_it() {
        let p = Policy::new(PolicyConfig::default()).expect("policy");
        let raised = intent("aws_appautoscaling_target", "max_capacity", Risk::Low, &[]);
        let target = json!({"id": "table/jobs", "service_namespace": "dynamodb",
            "resource_id": "table/jobs", "scalable_dimension": "dynamodb:table:WriteCapacityUnits",
            "min_capacity": 5, "max_capacity": 50});
        let schedule = |dimension: &str| {
            managed(
                "aws_appautoscaling_scheduled_action",
                json!({"id": "s",
                "service_namespace": "dynamodb", "resource_id": "table/jobs",
                "scalable_dimension": dimension}),
            )
        };
        // Target tracking policies scale within the capacities: a person's change is absorbed.
        let tracked = state_of(json!([
            managed("aws_appautoscaling_target", target.clone()),
            managed(
                "aws_appautoscaling_policy",
                json!({"id": "p", "resource_id": "table/jobs",
                "scalable_dimension": "dynamodb:table:WriteCapacityUnits"})
            ),
        ]));
        assert_eq!(p.decide(&raised, &tracked)[0][0].decision, Decision::Absorb);
        // A schedule for the other dimension does not own this one.
        let other = state_of(json!([
            managed("aws_appautoscaling_target", target.clone()),
            schedule("dynamodb:table:ReadCapacityUnits"),
        ]));
        assert_eq!(p.decide(&raised, &other)[0][0].decision, Decision::Absorb);
        let scheduled = state_of(json!([
            managed("aws_appautoscaling_target", target),
            schedule("dynamodb:table:WriteCapacityUnits"),
        ]));
        let ruling = &p.decide(&raised, &scheduled)[0][0];
        assert_eq!(ruling.decision, Decision::Ignore);
        assert_eq!(
            ruling.reason,
            "max_capacity is managed by scheduled scaling actions; suggest lifecycle ignore_changes"
        );
    }

    fn decision(policy: &Policy, i: &Intent) -> (Decision, String) {
        let r = &policy.decide(i, &no_state())[0][0];
        (r.decision, r.reason.clone())
    }

    #[test]
    fn defaults_absorb_flag_risky_and_ignore_automation() {
        let p = Policy::new(PolicyConfig::default()).expect("policy");
        let plain = intent("aws_instance", "instance_type", Risk::Medium, &[]);
        assert_eq!(decision(&p, &plain).0, Decision::Absorb);
        let open = intent(
            "aws_security_group",
            "ingress",
            Risk::High,
            &[hold("opens to 0.0.0.0/0")],
        );
        assert_eq!(
            decision(&p, &open),
            (Decision::Flag, "opens to 0.0.0.0/0".to_owned())
        );
        let asg = intent("aws_autoscaling_group", "desired_capacity", Risk::Low, &[]);
        assert_eq!(decision(&p, &asg).0, Decision::Ignore);
    }

    #[test]
    fn configured_rules_come_first_and_match_every_condition() {
        let config: PolicyConfig = toml::from_str(
            r#"
flag_risk = "high"
[[rule]]
decision = "absorb"
reason = "the network team owns groups"
resource = "aws_security_group"
actor = "alice*"
[[rule]]
decision = "flag"
reason = "IAM needs review"
resource = "aws_iam_*"
"#,
        )
        .expect("parses");
        let p = Policy::new(config).expect("policy");
        let open = intent(
            "aws_security_group",
            "ingress",
            Risk::High,
            &[hold("opens")],
        );
        assert_eq!(decision(&p, &open).0, Decision::Absorb);
        let mut bob = open.clone();
        bob.actor = "bob".into();
        assert_eq!(decision(&p, &bob).0, Decision::Flag);
        let role = intent("aws_iam_role", "description", Risk::Low, &[]);
        assert_eq!(
            decision(&p, &role),
            (Decision::Flag, "policy: IAM needs review".to_owned())
        );
        let big = intent("aws_instance", "instance_type", Risk::High, &[]);
        assert_eq!(decision(&p, &big).0, Decision::Flag);
    }

    /// A policy that absorbs everything it may, the knowledge base's flags off.
    fn absorb_everything() -> Policy {
        let config: PolicyConfig = toml::from_str(
            r#"
rule_flags = false
[[rule]]
decision = "absorb"
reason = "absorb everything"
"#,
        )
        .expect("parses");
        Policy::new(config).expect("policy")
    }

    #[test]
    fn a_security_flag_holds_the_whole_intent_whatever_the_policy_says() {
        let p = absorb_everything();
        let security = Flag {
            reason: "security: created an access key".into(),
            level: FlagLevel::Security,
        };
        let mut both = intent("aws_iam_user", "path", Risk::Low, &[]);
        let key = intent("aws_iam_access_key", "status", Risk::High, &[security]);
        both.deltas.extend(key.deltas);
        let decided = p.decide(&both, &no_state());
        for rulings in &decided {
            assert_eq!(rulings[0].decision, Decision::Flag);
            assert_eq!(rulings[0].reason, "security: created an access key");
        }
        let alone = intent("aws_iam_user", "path", Risk::Low, &[]);
        assert_eq!(decision(&p, &alone).0, Decision::Absorb);
    }

    #[test]
    fn an_unwritable_creation_is_held_whatever_the_policy_says_and_only_it() {
        let p = absorb_everything();
        let hidden = Flag {
            reason: "created with the parameter's value, which CloudTrail does not record".into(),
            level: FlagLevel::Unwritable,
        };
        let mut both = intent("aws_ssm_parameter", "type", Risk::Medium, &[hidden]);
        both.deltas
            .extend(intent("aws_iam_user", "path", Risk::Low, &[]).deltas);
        let decided = p.decide(&both, &no_state());
        assert_eq!(decided[0][0].decision, Decision::Flag);
        assert_eq!(
            decided[0][0].reason,
            "created with the parameter's value, which CloudTrail does not record"
        );
        assert_eq!(decided[1][0].decision, Decision::Absorb);
    }

    #[test]
    fn a_deletion_of_a_resource_not_in_the_state_is_not_this_projects() {
        let p = Policy::new(PolicyConfig::default()).expect("policy");
        let mut gone = intent("aws_cloudwatch_log_group", "name", Risk::Low, &[]);
        gone.deltas[0].lifecycle = Lifecycle::Deleted;
        gone.deltas[0].address = None;
        let decided = p.decide(&gone, &no_state());
        assert_eq!(decided[0][0].decision, Decision::Ignore);
        gone.deltas[0].address = Some("aws_cloudwatch_log_group.x".into());
        assert_eq!(
            p.decide(&gone, &no_state())[0][0].decision,
            Decision::Absorb
        );
    }

    fn ruling(policy: &Policy, i: &Intent) -> Ruling {
        policy.decide(i, &no_state())[0][0].clone()
    }

    const SUSPENDED: &str = "suspends versioning";

    fn suspended(flags: &[Flag]) -> Intent {
        intent(
            "aws_s3_bucket_versioning",
            "versioning_configuration.status",
            Risk::Medium,
            flags,
        )
    }

    #[test]
    fn a_warning_absorbs_the_change_and_the_ruling_carries_it() {
        let p = Policy::new(PolicyConfig::default()).expect("policy");
        let r = ruling(&p, &suspended(&[warn(SUSPENDED)]));
        assert_eq!(r.decision, Decision::Absorb);
        assert_eq!(r.reason, "the policy's default");
        assert_eq!(r.warning.as_deref(), Some(SUSPENDED));
        let r = ruling(&p, &suspended(&[]));
        assert_eq!((r.decision, r.warning), (Decision::Absorb, None));
    }

    #[test]
    fn a_hold_flag_wins_over_a_warning_on_the_same_part() {
        let p = Policy::new(PolicyConfig::default()).expect("policy");
        let r = ruling(&p, &suspended(&[warn(SUSPENDED), hold("removes logging")]));
        assert_eq!(r.decision, Decision::Flag);
        assert_eq!(r.reason, "removes logging");
        assert_eq!(r.warning.as_deref(), Some(SUSPENDED));
    }

    #[test]
    fn hold_warnings_holds_warnings_like_other_flags() {
        let config: PolicyConfig = toml::from_str("hold_warnings = true").expect("parses");
        assert!(config.hold_warnings);
        assert!(!PolicyConfig::default().hold_warnings);
        let p = Policy::new(config).expect("policy");
        let r = ruling(&p, &suspended(&[warn(SUSPENDED), hold("removes logging")]));
        assert_eq!(r.decision, Decision::Flag);
        assert_eq!(r.reason, format!("{SUSPENDED}; removes logging"));
        assert_eq!(r.warning, None);
    }

    #[test]
    fn rule_flags_off_disables_holds_and_warnings() {
        let config: PolicyConfig =
            toml::from_str("rule_flags = false\nhold_warnings = true").expect("parses");
        let p = Policy::new(config).expect("policy");
        for flags in [vec![warn(SUSPENDED)], vec![hold("opens")]] {
            let r = ruling(&p, &suspended(&flags));
            assert_eq!(
                (r.decision, r.warning),
                (Decision::Absorb, None),
                "{flags:?}"
            );
        }
    }

    #[test]
    fn a_warning_does_not_override_the_rest_of_the_policy() {
        let config: PolicyConfig = toml::from_str("flag_risk = \"medium\"").expect("parses");
        let p = Policy::new(config).expect("policy");
        let r = ruling(&p, &suspended(&[warn(SUSPENDED)]));
        assert_eq!(r.decision, Decision::Flag);
        assert_eq!(r.warning.as_deref(), Some(SUSPENDED));
        let json = serde_json::to_value(&r).expect("serialises");
        assert_eq!(json["warning"], SUSPENDED);
        let plain = ruling(&p, &intent("aws_instance", "ami", Risk::Low, &[]));
        let json = serde_json::to_value(&plain).expect("serialises");
        assert!(json.get("warning").is_none(), "{json}");
    }

    #[test]
    fn bad_globs_and_unknown_keys_are_refused() {
        let config = PolicyConfig {
            rules: vec![PolicyRule {
                decision: Decision::Flag,
                reason: "x".into(),
                resource: Some("aws_[".into()),
                attribute: None,
                actor: None,
                risk: None,
            }],
            ..PolicyConfig::default()
        };
        let error = Policy::new(config).err().expect("refused").to_string();
        assert!(error.contains("policy rule 1"), "{error}");
        assert!(toml::from_str::<PolicyConfig>("defualt = \"flag\"").is_err());
    }

    #[test]
    fn a_rejected_change_is_left_out_and_another_value_is_not() {
        let plain = intent("aws_instance", "instance_type", Risk::Medium, &[]);
        let part = Part::Attribute("instance_type".into());
        let print = Fingerprint::of(&plain.deltas[0], &part);
        assert_eq!(
            (
                print.resource.as_str(),
                print.attribute.as_str(),
                print.value.as_str()
            ),
            ("aws_instance.x", "instance_type", "2")
        );
        let policy = Policy::new(PolicyConfig::default())
            .expect("policy")
            .with_rejected(vec![(print, "closed unmerged in #4".into())]);
        let ruling = &policy.decide(&plain, &no_state())[0][0];
        assert_eq!(ruling.decision, Decision::Rejected);
        assert_eq!(ruling.reason, "closed unmerged in #4");
        let mut changed = plain.clone();
        if let Some(a) = changed.deltas[0].attributes.get_mut("instance_type") {
            a.after = json!(3);
        }
        assert_eq!(
            policy.decide(&changed, &no_state())[0][0].decision,
            Decision::Absorb
        );
    }
}

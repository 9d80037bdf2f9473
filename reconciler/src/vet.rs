//! retrace's own judgement of a rule it did not ship — one a model proposed or the drift
//! learner wrote — before the rule may be tried: whatever risk and flags the proposer chose,
//! the rule gets at least the risk and the flags the shipped rules give the same resource
//! type, the wildcard and public-principal checks of a policy document, and values that the
//! shipped rules or the schema call hidden or secret are moved out of `set` into `hidden`,
//! so they are reported for a person and never written into code. The drift learner's rules
//! and the agent's pass through [`harden`] alike.

use crate::text::is_secret_key;
use knowledge::rules::{
    FlagLevel, FlagSpec, HiddenSpec, Paths, Payload, Rule, RuleSet, SetSpec, Transform,
};

use knowledge::schema::ProviderSchema;
use serde_json::json;

/// The rule as retrace lets it be tried: risk raised to the shipped rules' for its types and
/// kind of change,
/// their flags on the fields it sets added, policy-document checks added, and hidden or
/// secret values moved to `hidden`. A block that would carry such a value refuses the rule,
/// with the reason in words.
pub fn harden(mut rule: Rule, shipped: &RuleSet, schema: &ProviderSchema) -> Result<Rule, String> {
    let types: Vec<String> = rule
        .resource_types()
        .iter()
        .map(|t| (*t).to_owned())
        .collect();
    let peers: Vec<&Rule> = shipped
        .iter()
        .filter(|r| r.id() != rule.id())
        .filter(|r| {
            r.resource_types()
                .iter()
                .any(|t| types.iter().any(|u| u == t))
        })
        .collect();
    // The risk of the shipped rules making the same kind of change to the same type (a tag
    // rule is not as risky as a rule that replaces a policy document of the same type).
    let same_kind = peers.iter().filter(|r| r.spec.kind == rule.spec.kind);
    if let Some(risk) = same_kind.map(|r| r.spec.risk).max() {
        rule.spec.risk = rule.spec.risk.max(risk);
    }
    hide_secrets(&mut rule, &types, &peers, schema)?;
    let fields = fields_of(&rule);
    let mut added: Vec<FlagSpec> = peers
        .iter()
        .flat_map(|r| &r.spec.flags)
        .filter(|f| fields.contains(&f.field))
        .cloned()
        .collect();
    for set in rule.spec.sets.iter().filter(|s| holds_document(s)) {
        added.extend(document_flags(&set.attribute));
    }
    for flag in added {
        if !rule.spec.flags.contains(&flag) {
            rule.spec.flags.push(flag);
        }
    }
    // A flag the proposer marked `warn` on a field retrace checks holds the change instead.
    for flag in &mut rule.spec.flags {
        if flag.level == FlagLevel::Warn && fields.contains(&flag.field) && is_grant_field(flag) {
            flag.level = FlagLevel::Hold;
        }
    }
    Ok(rule)
}

/// The attributes and block fields a rule writes.
fn fields_of(rule: &Rule) -> Vec<String> {
    let mut out: Vec<String> = rule.spec.sets.iter().map(|s| s.attribute.clone()).collect();
    out.extend(
        rule.spec
            .blocks
            .iter()
            .flat_map(|b| b.fields.keys().cloned()),
    );
    out
}

/// Whether a flag is about a policy document's grants (a `Principal` or `Action` key).
fn is_grant_field(flag: &FlagSpec) -> bool {
    matches!(
        flag.key.as_deref(),
        Some("Principal" | "Action" | "NotPrincipal" | "NotAction")
    )
}

/// Whether a `set` reads a JSON document (a policy) rather than a plain value.
fn holds_document(set: &SetSpec) -> bool {
    set.transform == Some(Transform::Json) || set.attribute.to_lowercase().contains("policy")
}

/// The checks every policy document a rule writes passes, as the shipped IAM, S3, SQS and
/// KMS rules and the security signals make them: an `Allow` of every action (or every action
/// of a service), of everything but some actions, to every principal, or to everyone but
/// some principals is held for a person.
fn document_flags(field: &str) -> Vec<FlagSpec> {
    let flag = |key: &str, reason: &str| FlagSpec {
        field: field.to_owned(),
        contains: None,
        equals: None,
        ends_with: None,
        present: None,
        absent: None,
        key: Some(key.to_owned()),
        effect: Some("Allow".to_owned()),
        replaces: None,
        reason: reason.to_owned(),
        level: FlagLevel::Hold,
    };
    vec![
        FlagSpec {
            ends_with: Some("*".to_owned()),
            ..flag(
                "Action",
                "the policy allows a wildcard action (every action, or every action of a service)",
            )
        },
        FlagSpec {
            present: Some(true),
            ..flag(
                "NotAction",
                "the policy allows every action but those it names",
            )
        },
        FlagSpec {
            contains: Some(json!("*")),
            ..flag(
                "Principal",
                "the policy allows every principal (a public grant)",
            )
        },
        FlagSpec {
            present: Some(true),
            ..flag(
                "NotPrincipal",
                "the policy allows every principal but those it names",
            )
        },
    ]
}

/// Moves the sets that would write a hidden or secret value into `hidden`; refuses a block
/// that would.
fn hide_secrets(
    rule: &mut Rule,
    types: &[String],
    peers: &[&Rule],
    schema: &ProviderSchema,
) -> Result<(), String> {
    let hidden_paths: Vec<&str> = peers
        .iter()
        .flat_map(|r| &r.spec.hidden)
        .flat_map(|h| h.path.as_slice())
        .map(String::as_str)
        .collect();
    // A shipped rule that hides the whole call's value (SSM's `PutParameter`) writes only
    // the attributes it names; an unshipped rule writes no more than it does.
    let whole_call_hidden = hidden_paths.iter().any(|p| p.is_empty());
    let shipped_attributes: Vec<&str> = peers
        .iter()
        .flat_map(|r| &r.spec.sets)
        .map(|s| s.attribute.as_str())
        .collect();
    let secret = |attribute: &str, path: Option<&Paths>| -> Option<String> {
        let top = attribute.split('.').next().unwrap_or(attribute);
        if types
            .iter()
            .any(|t| schema.attribute(t, top).is_some_and(|a| a.sensitive))
        {
            return Some(format!("{attribute} (sensitive in the provider schema)"));
        }
        if attribute.split('.').any(is_secret_key) {
            return Some(format!("{attribute} (a secret)"));
        }
        let paths = path.map(Paths::as_slice).unwrap_or_default();
        if paths.iter().any(|p| p.split(['.', '[']).any(is_secret_key)) {
            return Some(format!("{attribute} (read from a secret)"));
        }
        if paths.iter().any(|p| {
            hidden_paths
                .iter()
                .any(|h| !h.is_empty() && (p == h || p.starts_with(&format!("{h}."))))
        }) {
            return Some(format!(
                "{attribute} (a value the shipped rules keep hidden)"
            ));
        }
        if path.is_some() && whole_call_hidden && !shipped_attributes.contains(&attribute) {
            return Some(format!(
                "{attribute} (a value the shipped rules keep hidden)"
            ));
        }
        None
    };
    for block in &rule.spec.blocks {
        let mut paths: Vec<(String, &Paths)> = vec![(block.name.clone(), &block.each)];
        paths.extend(
            block
                .fields
                .iter()
                .map(|(name, f)| (format!("{}.{name}", block.name), f.parts().0)),
        );
        if let Some(what) = paths.iter().find_map(|(name, p)| secret(name, Some(p))) {
            return Err(format!(
                "the rule writes {what} into code: retrace never writes hidden or secret values"
            ));
        }
    }
    let sets = std::mem::take(&mut rule.spec.sets);
    for set in sets {
        match secret(&set.attribute, set.path.as_ref()) {
            Some(what) if set.from == Payload::Request && set.path.is_some() => {
                rule.spec.hidden.push(HiddenSpec {
                    path: set.path.clone().unwrap_or(Paths::One(String::new())),
                    what,
                });
            }
            Some(what) => {
                return Err(format!(
                    "the rule writes {what} into code: retrace never writes hidden or secret values"
                ));
            }
            None => rule.spec.sets.push(set),
        }
    }
    rule.spec.flags.retain(|f| {
        rule.spec.sets.iter().any(|s| s.attribute == f.field)
            || rule
                .spec
                .blocks
                .iter()
                .any(|b| b.fields.contains_key(&f.field))
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use knowledge::rules::{Risk, RuleSpec};

    fn schema() -> &'static ProviderSchema {
        ProviderSchema::bundled().expect("schema")
    }

    fn rule(spec: serde_json::Value) -> Rule {
        Rule {
            service: "iam".into(),
            event_source: "iam.amazonaws.com".into(),
            id_prefixes: Default::default(),
            spec: serde_json::from_value::<RuleSpec>(spec).expect("spec"),
        }
    }

    #[test]
    fn a_low_risk_policy_rule_gets_the_document_checks() {
        let proposed = rule(json!({
            "api": "PutGroupPolicy", "resource": "aws_iam_group_policy", "kind": "update",
            "risk": "low", "summary": "set a group policy",
            "identity": [{"path": "groupName"}, {"path": "policyName"}], "separator": ":",
            "set": [{"attribute": "policy", "path": "policyDocument", "transform": "json"}]
        }));
        let hardened =
            harden(proposed, RuleSet::bundled().expect("rules"), schema()).expect("kept");
        let keys: Vec<&str> = hardened
            .spec
            .flags
            .iter()
            .filter_map(|f| f.key.as_deref())
            .collect();
        assert!(
            keys.contains(&"Action") && keys.contains(&"Principal"),
            "{keys:?}"
        );
        assert!(
            hardened
                .spec
                .flags
                .iter()
                .all(|f| f.level == FlagLevel::Hold)
        );
        // A fired Allow-everything statement holds the change.
        let extraction = hardened
            .extract(
                Some(&json!({"groupName": "ops", "policyName": "all",
                    "policyDocument": "{\"Statement\":[{\"Effect\":\"Allow\",\"Action\":\"*\",\"Resource\":\"*\"}]}"})),
                None,
            )
            .expect("reads");
        assert_eq!(extraction.flags.len(), 1, "{:?}", extraction.flags);
    }

    #[test]
    fn a_policy_read_as_a_plain_string_is_checked_all_the_same() {
        let proposed = rule(json!({
            "api": "PutGroupPolicy", "resource": "aws_iam_group_policy", "kind": "update",
            "risk": "low", "summary": "set a group policy",
            "identity": [{"path": "groupName"}],
            "set": [{"attribute": "policy", "path": "policyDocument"}]
        }));
        let hardened =
            harden(proposed, RuleSet::bundled().expect("rules"), schema()).expect("kept");
        let public = "{\"Statement\":{\"Effect\":\"Allow\",\"Principal\":{\"AWS\":\"*\"},\"Action\":\"s3:GetObject\"}}";
        let narrow =
            "{\"Statement\":{\"Effect\":\"Allow\",\"Action\":\"s3:GetObject\",\"Resource\":\"*\"}}";
        let fired = |document: &str| {
            hardened
                .extract(
                    Some(&json!({"groupName": "ops", "policyDocument": document})),
                    None,
                )
                .expect("reads")
                .flags
                .len()
        };
        assert_eq!(fired(public), 1);
        assert_eq!(fired(narrow), 0);
    }

    #[test]
    fn risk_is_raised_to_the_shipped_rules_for_the_type() {
        let proposed = rule(json!({
            "api": "PutRolePolicyTwice", "resource": "aws_iam_role_policy", "kind": "update",
            "risk": "low", "summary": "x", "identity": [{"path": "roleName"}]
        }));
        let hardened =
            harden(proposed, RuleSet::bundled().expect("rules"), schema()).expect("kept");
        assert_eq!(hardened.spec.risk, Risk::High);
    }

    #[test]
    fn hidden_and_secret_values_move_out_of_set() {
        let lambda = Rule {
            service: "lambda".into(),
            event_source: "lambda.amazonaws.com".into(),
            ..rule(json!({
                "api": "UpdateFunctionConfigurationAgain", "resource": "aws_lambda_function",
                "kind": "update", "risk": "low", "summary": "x",
                "identity": [{"path": "functionName"}],
                "set": [
                    {"attribute": "environment.variables", "path": "environment.variables"},
                    {"attribute": "timeout", "path": "timeout", "transform": "int"}
                ]
            }))
        };
        let hardened = harden(lambda, RuleSet::bundled().expect("rules"), schema()).expect("kept");
        let sets: Vec<&str> = hardened
            .spec
            .sets
            .iter()
            .map(|s| s.attribute.as_str())
            .collect();
        assert_eq!(sets, ["timeout"]);
        assert_eq!(hardened.spec.hidden.len(), 1);

        let ssm = Rule {
            service: "ssm".into(),
            event_source: "ssm.amazonaws.com".into(),
            ..rule(json!({
                "api": "PutParameterAgain", "resource": "aws_ssm_parameter",
                "kind": "update", "risk": "low", "summary": "x",
                "identity": [{"path": "name"}],
                "set": [
                    {"attribute": "value", "path": "value"},
                    {"attribute": "insecure_value", "path": "value"},
                    {"attribute": "description", "path": "description"}
                ]
            }))
        };
        let hardened = harden(ssm, RuleSet::bundled().expect("rules"), schema()).expect("kept");
        let sets: Vec<&str> = hardened
            .spec
            .sets
            .iter()
            .map(|s| s.attribute.as_str())
            .collect();
        assert_eq!(sets, ["description"]);
    }
}

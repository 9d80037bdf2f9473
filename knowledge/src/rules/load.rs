//! Reading rule files: TOML into [`Rule`]s, with load-time checks that name file, line and rule.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::error::RuleError;
use super::model::{BY_ID_PREFIX, Kind, Paths, Rule, RuleSpec, TagOp};
use super::path::JsonPath;

/// A rule file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    service: String,
    event_source: String,
    #[serde(default, deserialize_with = "super::model::one_or_many")]
    id_prefixes: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    rule: Vec<toml::Spanned<RuleSpec>>,
    /// The catalog's `[[resource]]` tables, read by [`crate::catalog::Catalog::add_file`].
    #[serde(default, rename = "resource")]
    _resources: serde::de::IgnoredAny,
}

/// Parses one rule file; `file` names it in errors.
pub fn parse_file(file: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    let parsed: RuleFile = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        RuleError::Parse {
            file: file.to_owned(),
            line: line_of(text, offset),
            rule: rule_at(text, offset),
            message: e.message().trim().to_owned(),
        }
    })?;
    let header_error = |message: &str| RuleError::Parse {
        file: file.to_owned(),
        line: 1,
        rule: None,
        message: message.to_owned(),
    };
    if parsed.service.trim().is_empty() || parsed.event_source.trim().is_empty() {
        return Err(header_error(
            "`service` and `event_source` must not be empty",
        ));
    }
    parsed
        .rule
        .into_iter()
        .map(|spanned| {
            let line = line_of(text, spanned.span().start);
            let rule = Rule {
                service: parsed.service.clone(),
                event_source: parsed.event_source.clone(),
                id_prefixes: parsed.id_prefixes.clone(),
                spec: spanned.into_inner(),
            };
            validate(&rule).map_err(|message| RuleError::Invalid {
                file: file.to_owned(),
                line,
                rule: rule.id(),
                message,
            })?;
            Ok(rule)
        })
        .collect()
}

/// Checks what the TOML types cannot: one resource form, the parts each kind needs, paths
/// that parse, flags that name an extracted field.
pub fn validate(rule: &Rule) -> Result<(), String> {
    let spec = &rule.spec;
    if spec.api.trim().is_empty() || spec.summary.trim().is_empty() {
        return Err("`api` and `summary` must not be empty".into());
    }
    check_resources(rule)?;
    check_parts(spec)?;
    check_paths(spec)?;
    check_flags(spec)
}

fn check_resources(rule: &Rule) -> Result<(), String> {
    let spec = &rule.spec;
    match (&spec.resource, spec.resources.is_empty()) {
        (Some(_), false) | (None, true) => {
            Err("give exactly one of `resource` and `resources`".into())
        }
        (Some(r), true) if r == BY_ID_PREFIX && rule.id_prefixes.is_empty() => {
            Err("`by-id-prefix` needs an [id_prefixes] table in the file".into())
        }
        _ => Ok(()),
    }
}

fn check_parts(spec: &RuleSpec) -> Result<(), String> {
    let blocky = matches!(spec.kind, Kind::AddBlock | Kind::RemoveBlock);
    if blocky == spec.blocks.is_empty() {
        return Err("a [rule.block] table goes with kind add-block or remove-block, only".into());
    }
    if (spec.kind == Kind::Tags) != spec.tags.is_some() {
        return Err("a [rule.tags] table goes with kind tags, only".into());
    }
    for block in &spec.blocks {
        if let Some(key) = &block.key
            && !block.fields.contains_key(key)
        {
            return Err(format!("the block's `key` {key} must be one of its fields"));
        }
    }
    if spec.identity.is_empty() {
        return Err("`identity` needs at least one part".into());
    }
    if spec.kind == Kind::Operational && (!spec.sets.is_empty() || !spec.flags.is_empty()) {
        return Err(
            "an operational rule changes nothing Terraform configures: no `set` or `flag`".into(),
        );
    }
    for set in &spec.sets {
        if set.path.is_some() == set.value.is_some() {
            return Err(format!(
                "set {}: give exactly one of `path` and `value`",
                set.attribute
            ));
        }
        if set.each.is_some() && (set.path.is_none() || set.members.is_some()) {
            return Err(format!(
                "set {}: `each` reads a `path` inside each element, never `value` or `members`",
                set.attribute
            ));
        }
    }
    Ok(())
}

fn check_paths(spec: &RuleSpec) -> Result<(), String> {
    let mut all: Vec<&Paths> = spec.identity.iter().map(|p| &p.path).collect();
    all.extend(spec.sets.iter().filter_map(|s| s.path.as_ref()));
    all.extend(spec.sets.iter().filter_map(|s| s.each.as_ref()));
    for block in &spec.blocks {
        all.push(&block.each);
        all.extend(block.fields.values().map(|f| f.parts().0));
    }
    if let Some(tags) = &spec.tags {
        all.push(&tags.path);
    }
    all.extend(spec.delete_unless.as_ref());
    all.extend(spec.hidden.iter().map(|h| &h.path));
    if let Some(when) = &spec.delete_when {
        JsonPath::parse(&when.path)?;
    }
    if let Some(requires) = &spec.requires {
        JsonPath::parse(&requires.path)?;
    }
    for paths in all {
        if paths.as_slice().is_empty() {
            return Err("an empty list of paths".into());
        }
        for path in paths.as_slice() {
            JsonPath::parse(path)?;
        }
    }
    for set in &spec.sets {
        if let Some(when) = &set.when {
            JsonPath::parse(&when.path)?;
        }
    }
    if spec.tags.as_ref().is_some_and(|t| t.op == TagOp::Replace) && spec.identity.len() > 1 {
        return Err("a tag replacement needs a single-part identity".into());
    }
    Ok(())
}

fn check_flags(spec: &RuleSpec) -> Result<(), String> {
    for flag in &spec.flags {
        let conditions = [
            flag.contains.is_some(),
            flag.equals.is_some(),
            flag.ends_with.is_some(),
            flag.present == Some(true),
            flag.absent == Some(true),
        ];
        if conditions.iter().filter(|c| **c).count() != 1 {
            return Err(format!(
                "flag {}: give exactly one of `contains`, `equals`, `ends_with`, `present = true` and `absent = true`",
                flag.field
            ));
        }
        let is_set = spec.sets.iter().any(|s| s.attribute == flag.field);
        let is_field = spec
            .blocks
            .iter()
            .any(|b| b.fields.contains_key(&flag.field));
        if !is_set && !is_field {
            return Err(format!(
                "flag {}: not an attribute the rule sets or a block field",
                flag.field
            ));
        }
    }
    Ok(())
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The `api` of the `[[rule]]` table around a byte offset, when there is one.
fn rule_at(text: &str, offset: usize) -> Option<String> {
    let before = text.get(..offset.min(text.len()))?;
    let start = before.rfind("[[rule]]")?;
    text[start..].lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "api").then(|| value.trim().trim_matches('"').to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::model::FlagLevel;

    const HEAD: &str = "service = \"ec2\"\nevent_source = \"ec2.amazonaws.com\"\n";

    fn load(body: &str) -> Result<Vec<Rule>, RuleError> {
        parse_file("test.toml", &format!("{HEAD}{body}"))
    }

    const GOOD: &str = r#"
[[rule]]
api = "ModifyInstanceAttribute"
resource = "aws_instance"
kind = "update"
risk = "medium"
summary = "changed an instance attribute"
identity = [{ path = "instanceId" }]
  [[rule.set]]
  attribute = "instance_type"
  path = "instanceType.value"
  transform = "string"
"#;

    #[test]
    fn a_good_rule_loads() {
        let rules = load(GOOD).expect("loads");
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].id(), "ec2:ModifyInstanceAttribute");
        assert_eq!(rules[0].resource_types(), vec!["aws_instance"]);
    }

    fn error_of(body: &str) -> String {
        load(body).expect_err("rejected").to_string()
    }

    #[test]
    fn a_set_read_per_element_needs_a_path_and_no_members() {
        let each = GOOD.replace(
            "  path = \"instanceType.value\"",
            "  each = \"items[]\"\n  path = \"value\"",
        );
        assert!(load(&each).is_ok());
        let constant = GOOD.replace(
            "  path = \"instanceType.value\"",
            "  each = \"items[]\"\n  value = \"t3.large\"",
        );
        assert!(error_of(&constant).contains("`each` reads a `path`"));
        let members = each.replace("  transform", "  members = \"add\"\n  transform");
        assert!(error_of(&members).contains("`each` reads a `path`"));
    }

    #[test]
    fn unknown_transform_names_file_line_and_rule() {
        let err = error_of(&GOOD.replace("\"string\"", "\"strnig\""));
        assert!(
            err.starts_with("test.toml:14: rule ModifyInstanceAttribute:"),
            "{err}"
        );
        assert!(err.contains("strnig"), "{err}");
    }

    #[test]
    fn unknown_kind_risk_and_key_are_rejected() {
        let err = error_of(&GOOD.replace("\"update\"", "\"upgrade\""));
        assert!(
            err.contains("test.toml:7:") && err.contains("upgrade"),
            "{err}"
        );
        let err = error_of(&GOOD.replace("\"medium\"", "\"severe\""));
        assert!(
            err.contains("test.toml:8:") && err.contains("severe"),
            "{err}"
        );
        let err = error_of(&GOOD.replace("summary =", "sumary ="));
        assert!(
            err.contains("rule ModifyInstanceAttribute") && err.contains("sumary"),
            "{err}"
        );
        let err = parse_file(
            "x.toml",
            "service = \"s\"\nevent_source = \"e\"\nextra = 1\n",
        )
        .expect_err("rejected")
        .to_string();
        assert!(
            err.starts_with("x.toml:3:") && err.contains("extra"),
            "{err}"
        );
    }

    #[test]
    fn invalid_combinations_name_the_rule() {
        let err = error_of(&GOOD.replace("kind = \"update\"", "kind = \"add-block\""));
        assert_eq!(
            err,
            "test.toml:4: rule ec2:ModifyInstanceAttribute: a [rule.block] table goes with kind add-block or remove-block, only"
        );
        let err = error_of(&GOOD.replace("resource = ", "resources = [\"aws_vpc\"]\nresource = "));
        assert!(
            err.contains("exactly one of `resource` and `resources`"),
            "{err}"
        );
        let err = error_of(&GOOD.replace("instanceType.value", "instanceType..value"));
        assert!(err.contains("empty segment"), "{err}");
        let err = error_of(&GOOD.replace("\"aws_instance\"", "\"by-id-prefix\""));
        assert!(err.contains("[id_prefixes]"), "{err}");
    }

    #[test]
    fn flags_must_name_a_field() {
        let body = format!(
            "{GOOD}  [[rule.flag]]\n  field = \"ami\"\n  equals = \"x\"\n  reason = \"r\"\n"
        );
        assert!(error_of(&body).contains("flag ami: not an attribute"));
        let body =
            format!("{GOOD}  [[rule.flag]]\n  field = \"instance_type\"\n  reason = \"r\"\n");
        assert!(error_of(&body).contains("exactly one of `contains`"));
    }

    #[test]
    fn flag_level_defaults_to_hold_and_reads_warn() {
        let flag = |extra: &str| {
            let body = format!(
                "{GOOD}  [[rule.flag]]\n  field = \"instance_type\"\n  equals = \"t3.nano\"\n  reason = \"r\"\n{extra}"
            );
            load(&body).map(|rules| rules[0].spec.flags[0].level)
        };
        assert_eq!(flag("").expect("loads"), FlagLevel::Hold);
        assert_eq!(
            flag("  level = \"hold\"\n").expect("loads"),
            FlagLevel::Hold
        );
        assert_eq!(
            flag("  level = \"warn\"\n").expect("loads"),
            FlagLevel::Warn
        );
        let err = flag("  level = \"loud\"\n")
            .expect_err("rejected")
            .to_string();
        assert!(
            err.contains("test.toml:19:") && err.contains("loud"),
            "{err}"
        );
    }

    #[test]
    fn flag_level_round_trips_as_json_and_hold_is_left_out() {
        let body = format!(
            "{GOOD}  [[rule.flag]]\n  field = \"instance_type\"\n  present = true\n  reason = \"r\"\n"
        );
        let mut rule = load(&body).expect("loads").remove(0);
        let held = serde_json::to_string(&rule).expect("serialises");
        assert!(!held.contains("level"), "{held}");
        rule.spec.flags[0].level = FlagLevel::Warn;
        let warned = serde_json::to_string(&rule).expect("serialises");
        assert!(warned.contains(r#""level":"warn""#), "{warned}");
        let back: Rule = serde_json::from_str(&warned).expect("parses");
        assert_eq!(back, rule);
    }
}

//! API-to-Terraform rules: which resource a CloudTrail call changes and how.
//!
//! Rules live in `knowledge/rules/<service>.toml`, one file per AWS service; the format is
//! described in `knowledge/rules/README.md`. [`RuleSet::bundled`] embeds the shipped files;
//! [`RuleSet::load_dir`] reads a directory of them. [`Rule::extract`] applies a rule to a
//! call's `requestParameters` / `responseElements`, and [`RuleSet::check_schema`] checks every
//! rule's resource types and attribute paths against a provider schema.

mod error;
mod extract;
mod load;
mod model;
mod path;
mod transform;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::OnceLock;

use crate::schema::{Member, ProviderSchema, ResourceSchema};

pub use error::RuleError;
pub use extract::{BlockChange, Extraction, FiredFlag, MemberChange, TagChange, Target};
pub use load::validate;
pub use model::{
    BY_ID_PREFIX, BlockSpec, FieldSpec, FlagLevel, FlagSpec, HiddenSpec, Kind, Members, Missing,
    Paths, Payload, Requires, Risk, Rule, RuleSpec, SetSpec, TagOp, TagSpec, ValueSource, When,
};
pub use path::JsonPath;
pub use transform::{Transform, name_from_arn};

/// The shipped rule files, by the name errors use.
pub(crate) const BUNDLED: &[(&str, &str)] = &[
    (
        "knowledge/rules/acm.toml",
        include_str!("../../rules/acm.toml"),
    ),
    (
        "knowledge/rules/apigateway.toml",
        include_str!("../../rules/apigateway.toml"),
    ),
    (
        "knowledge/rules/apigatewayv2.toml",
        include_str!("../../rules/apigatewayv2.toml"),
    ),
    (
        "knowledge/rules/appautoscaling.toml",
        include_str!("../../rules/appautoscaling.toml"),
    ),
    (
        "knowledge/rules/autoscaling.toml",
        include_str!("../../rules/autoscaling.toml"),
    ),
    (
        "knowledge/rules/cloudfront.toml",
        include_str!("../../rules/cloudfront.toml"),
    ),
    (
        "knowledge/rules/cloudtrail.toml",
        include_str!("../../rules/cloudtrail.toml"),
    ),
    (
        "knowledge/rules/cloudwatch.toml",
        include_str!("../../rules/cloudwatch.toml"),
    ),
    (
        "knowledge/rules/cognito-identity.toml",
        include_str!("../../rules/cognito-identity.toml"),
    ),
    (
        "knowledge/rules/cognito-idp.toml",
        include_str!("../../rules/cognito-idp.toml"),
    ),
    (
        "knowledge/rules/config.toml",
        include_str!("../../rules/config.toml"),
    ),
    (
        "knowledge/rules/dynamodb.toml",
        include_str!("../../rules/dynamodb.toml"),
    ),
    (
        "knowledge/rules/ec2.toml",
        include_str!("../../rules/ec2.toml"),
    ),
    (
        "knowledge/rules/ecr.toml",
        include_str!("../../rules/ecr.toml"),
    ),
    (
        "knowledge/rules/ecs.toml",
        include_str!("../../rules/ecs.toml"),
    ),
    (
        "knowledge/rules/efs.toml",
        include_str!("../../rules/efs.toml"),
    ),
    (
        "knowledge/rules/eks.toml",
        include_str!("../../rules/eks.toml"),
    ),
    (
        "knowledge/rules/elasticache.toml",
        include_str!("../../rules/elasticache.toml"),
    ),
    (
        "knowledge/rules/elbv2.toml",
        include_str!("../../rules/elbv2.toml"),
    ),
    (
        "knowledge/rules/events.toml",
        include_str!("../../rules/events.toml"),
    ),
    (
        "knowledge/rules/firehose.toml",
        include_str!("../../rules/firehose.toml"),
    ),
    (
        "knowledge/rules/iam.toml",
        include_str!("../../rules/iam.toml"),
    ),
    (
        "knowledge/rules/kinesis.toml",
        include_str!("../../rules/kinesis.toml"),
    ),
    (
        "knowledge/rules/kms.toml",
        include_str!("../../rules/kms.toml"),
    ),
    (
        "knowledge/rules/lambda.toml",
        include_str!("../../rules/lambda.toml"),
    ),
    (
        "knowledge/rules/logs.toml",
        include_str!("../../rules/logs.toml"),
    ),
    (
        "knowledge/rules/opensearch.toml",
        include_str!("../../rules/opensearch.toml"),
    ),
    (
        "knowledge/rules/rds.toml",
        include_str!("../../rules/rds.toml"),
    ),
    (
        "knowledge/rules/redshift.toml",
        include_str!("../../rules/redshift.toml"),
    ),
    (
        "knowledge/rules/route53.toml",
        include_str!("../../rules/route53.toml"),
    ),
    (
        "knowledge/rules/route53resolver.toml",
        include_str!("../../rules/route53resolver.toml"),
    ),
    (
        "knowledge/rules/s3.toml",
        include_str!("../../rules/s3.toml"),
    ),
    (
        "knowledge/rules/s3express.toml",
        include_str!("../../rules/s3express.toml"),
    ),
    (
        "knowledge/rules/secretsmanager.toml",
        include_str!("../../rules/secretsmanager.toml"),
    ),
    (
        "knowledge/rules/sfn.toml",
        include_str!("../../rules/sfn.toml"),
    ),
    (
        "knowledge/rules/sns.toml",
        include_str!("../../rules/sns.toml"),
    ),
    (
        "knowledge/rules/sqs.toml",
        include_str!("../../rules/sqs.toml"),
    ),
    (
        "knowledge/rules/ssm.toml",
        include_str!("../../rules/ssm.toml"),
    ),
    (
        "knowledge/rules/wafv2.toml",
        include_str!("../../rules/wafv2.toml"),
    ),
];

/// A set of rules, at most one per (event source, API).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleSet {
    rules: Vec<Rule>,
    index: HashMap<(String, String), Vec<usize>>,
    prefixes: BTreeMap<String, Vec<String>>,
}

impl RuleSet {
    /// The shipped rules, parsed on first use and shared afterwards.
    pub fn bundled() -> Result<&'static RuleSet, RuleError> {
        static BUNDLED_SET: OnceLock<Result<RuleSet, RuleError>> = OnceLock::new();
        BUNDLED_SET
            .get_or_init(|| Self::from_texts(BUNDLED.iter().copied()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Reads every `*.toml` file of a directory, in name order.
    pub fn load_dir(dir: &Path) -> Result<RuleSet, RuleError> {
        let read_error = |file: &Path, e: std::io::Error| RuleError::Read {
            file: file.display().to_string(),
            message: e.to_string(),
        };
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| read_error(dir, e))?
            .map(|entry| entry.map(|e| e.path()).map_err(|e| read_error(dir, e)))
            .collect::<Result<_, _>>()?;
        files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
        files.sort();
        let texts = files
            .iter()
            .map(|p| {
                std::fs::read_to_string(p)
                    .map(|t| (p.display().to_string(), t))
                    .map_err(|e| read_error(p, e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_texts(texts.iter().map(|(n, t)| (n.as_str(), t.as_str())))
    }

    /// Parses rule files given as (name, text) pairs.
    pub fn from_texts<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<RuleSet, RuleError> {
        let mut set = RuleSet::default();
        let mut origin: Vec<String> = Vec::new();
        for (name, text) in files {
            for rule in load::parse_file(name, text)? {
                if let Some(other) = set.clash(&rule) {
                    return Err(RuleError::Duplicate {
                        file: name.to_owned(),
                        rule: rule.id(),
                        other: origin[other].clone(),
                    });
                }
                origin.push(name.to_owned());
                set.push(rule);
            }
        }
        Ok(set)
    }

    /// A set of already-parsed rules; a second rule for the same event source and API is
    /// rejected unless the two `requires` different paths.
    pub fn from_rules(rules: impl IntoIterator<Item = Rule>) -> Result<RuleSet, RuleError> {
        let mut set = RuleSet::default();
        for rule in rules {
            if set.clash(&rule).is_some() {
                return Err(RuleError::Duplicate {
                    file: "(rules given)".to_owned(),
                    rule: rule.id(),
                    other: "(rules given)".to_owned(),
                });
            }
            set.push(rule);
        }
        Ok(set)
    }

    /// The position of a rule that `rule` may not sit beside: one with the same id, or one
    /// for the same event source and API that reads the same calls (the same `requires`).
    fn clash(&self, rule: &Rule) -> Option<usize> {
        let key = (rule.event_source.clone(), rule.spec.api.clone());
        let same_calls = self.index.get(&key).and_then(|positions| {
            positions
                .iter()
                .copied()
                .find(|i| self.rules[*i].spec.requires == rule.spec.requires)
        });
        same_calls.or_else(|| self.rules.iter().position(|r| r.id() == rule.id()))
    }

    fn push(&mut self, rule: Rule) {
        for (prefix, types) in &rule.id_prefixes {
            self.prefixes.insert(prefix.clone(), types.clone());
        }
        let key = (rule.event_source.clone(), rule.spec.api.clone());
        self.index.entry(key).or_default().push(self.rules.len());
        self.rules.push(rule);
    }

    /// A rule for an API, whatever calls of it it reads (the first loaded); Lambda's
    /// versioned event names (`UpdateFunctionConfiguration20150331v2`) are matched without
    /// their suffix.
    pub fn find(&self, event_source: &str, api: &str) -> Option<&Rule> {
        self.candidates(event_source, api).next()
    }

    /// The rule that reads one call: the first rule for its API whose `requires` the call
    /// meets, else the one that requires nothing.
    pub fn find_for(
        &self,
        event_source: &str,
        api: &str,
        request: Option<&serde_json::Value>,
        response: Option<&serde_json::Value>,
    ) -> Option<&Rule> {
        let meets = |requires: &Requires| {
            let payload = match requires.from {
                Payload::Request => request,
                Payload::Response => response,
            };
            let found = match (payload, JsonPath::parse(&requires.path)) {
                (Some(p), Ok(path)) => path.select(p),
                _ => Vec::new(),
            };
            match (found.first(), &requires.equals) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(first), Some(value)) => *first == value,
            }
        };
        self.candidates(event_source, api)
            .find(|r| r.spec.requires.as_ref().is_some_and(meets))
            .or_else(|| {
                self.candidates(event_source, api)
                    .find(|r| r.spec.requires.is_none())
            })
    }

    fn candidates(&self, event_source: &str, api: &str) -> impl Iterator<Item = &Rule> {
        let key = (event_source.to_owned(), normalize_api(api).to_owned());
        self.index
            .get(&key)
            .into_iter()
            .flatten()
            .map(|i| &self.rules[*i])
    }

    /// This set without the rules whose ids (`service:Api`) are in `ids`: rules withheld to
    /// see how calls without a rule are handled.
    pub fn without(&self, ids: &[String]) -> RuleSet {
        let mut set = RuleSet::default();
        for rule in self.iter().filter(|r| !ids.contains(&r.id())) {
            set.push(rule.clone());
        }
        set
    }

    /// This set with `added` in it, each replacing the rule for the same API (and the same
    /// `requires`).
    pub fn with_replaced(&self, added: &[Rule]) -> Result<RuleSet, RuleError> {
        let replaced = |r: &Rule| {
            added.iter().any(|a| {
                a.event_source == r.event_source
                    && a.api() == r.api()
                    && a.spec.requires == r.spec.requires
            })
        };
        RuleSet::from_rules(
            self.iter()
                .filter(|r| !replaced(r))
                .cloned()
                .chain(added.iter().cloned()),
        )
    }

    /// The rules, in load order.
    pub fn iter(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter()
    }

    /// How many rules there are.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The services covered, in name order.
    pub fn services(&self) -> BTreeSet<&str> {
        self.rules.iter().map(|r| r.service.as_str()).collect()
    }

    /// The resource types a cloud id may name by its prefix (`sg-` → `aws_security_group`,
    /// `aws_default_security_group`), by the longest prefix in any file's `[id_prefixes]`
    /// table.
    pub fn id_prefix_types(&self, id: &str) -> &[String] {
        model::prefix_types(&self.prefixes, id)
    }

    /// Problems found checking every rule against a provider schema: unknown resource types
    /// and attribute, block or field paths. Empty when all is well.
    pub fn check_schema(&self, schema: &ProviderSchema) -> Vec<String> {
        self.rules
            .iter()
            .flat_map(|r| check_rule(r, schema))
            .collect()
    }
}

/// An event name without Lambda's API-version suffix (`AddPermission20150331v2` → `AddPermission`).
pub fn normalize_api(name: &str) -> &str {
    let base = match name.rfind('v') {
        Some(i) if i + 1 < name.len() && name[i + 1..].bytes().all(|b| b.is_ascii_digit()) => {
            &name[..i]
        }
        _ => name,
    };
    let digits = base.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 8 && base.len() > 8 {
        &base[..base.len() - 8]
    } else {
        name
    }
}

/// The schema problems of one rule.
fn check_rule(rule: &Rule, schema: &ProviderSchema) -> Vec<String> {
    let id = rule.id();
    let mut problems = Vec::new();
    for ty in rule.resource_types() {
        let Some(resource) = schema.resource(ty) else {
            problems.push(format!("{id}: unknown resource type {ty}"));
            continue;
        };
        for problem in check_paths(rule, resource) {
            problems.push(format!("{id}: {ty}: {problem}"));
        }
    }
    problems
}

fn check_paths(rule: &Rule, resource: &ResourceSchema) -> Vec<String> {
    let spec = &rule.spec;
    let is_attribute = |path: &str| matches!(resource.member(path), Some(Member::Attribute(_)));
    let mut problems: Vec<String> = spec
        .sets
        .iter()
        .filter(|s| !is_attribute(&s.attribute))
        .map(|s| format!("no attribute {}", s.attribute))
        .collect();
    for block in &spec.blocks {
        let holds_objects = match resource.member(&block.name) {
            Some(Member::Block(_)) => true,
            Some(Member::Attribute(a)) => a.nested.is_some(),
            None => false,
        };
        if !holds_objects {
            problems.push(format!("no block {}", block.name));
        }
        problems.extend(
            block
                .fields
                .keys()
                .map(|f| format!("{}.{f}", block.name))
                .filter(|p| !is_attribute(p))
                .map(|p| format!("no block field {p}")),
        );
    }
    if spec.tags.is_some() && !is_attribute("tags") {
        problems.push("no tags attribute".to_owned());
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "service = \"s3\"\nevent_source = \"s3.amazonaws.com\"\n";

    fn problems(body: &str) -> Vec<String> {
        let text = format!("{HEAD}{body}");
        let set = RuleSet::from_texts([("t.toml", text.as_str())]).expect("loads");
        set.check_schema(ProviderSchema::bundled().expect("schema"))
    }

    #[test]
    fn a_rule_added_with_replacement_takes_the_place_of_the_one_for_its_api() {
        let text = format!(
            "{HEAD}[[rule]]\napi = \"A\"\nresource = \"aws_s3_bucket\"\nkind = \"update\"\nrisk = \"low\"\nsummary = \"old\"\nidentity = [{{ path = \"b\" }}]\n\
             [[rule]]\napi = \"B\"\nresource = \"aws_s3_bucket\"\nkind = \"update\"\nrisk = \"low\"\nsummary = \"other\"\nidentity = [{{ path = \"b\" }}]\n"
        );
        let set = RuleSet::from_texts([("t.toml", text.as_str())]).expect("loads");
        let mut new = set.find("s3.amazonaws.com", "A").expect("A").clone();
        new.spec.summary = "new".into();
        let replaced = set
            .with_replaced(std::slice::from_ref(&new))
            .expect("replaced");
        assert_eq!(replaced.len(), 2);
        assert_eq!(
            replaced
                .find("s3.amazonaws.com", "A")
                .expect("A")
                .spec
                .summary,
            "new"
        );
        assert_eq!(
            replaced
                .find("s3.amazonaws.com", "B")
                .expect("B")
                .spec
                .summary,
            "other"
        );
    }

    #[test]
    fn schema_check_finds_unknown_types_attributes_and_blocks() {
        let rule = "[[rule]]\napi = \"A\"\nresource = \"aws_s3_bucket_versioning\"\nkind = \"update\"\nrisk = \"low\"\nsummary = \"s\"\nidentity = [{ path = \"b\" }]\nset = [{ attribute = \"versioning_configuration.status\", value = \"Enabled\" }]\n";
        assert!(problems(rule).is_empty(), "{:?}", problems(rule));
        let bad = rule.replace("configuration.status", "configuration.state");
        assert_eq!(
            problems(&bad),
            vec!["s3:A: aws_s3_bucket_versioning: no attribute versioning_configuration.state"]
        );
        let block_only = rule.replace(
            "versioning_configuration.status",
            "versioning_configuration",
        );
        assert_eq!(problems(&block_only).len(), 1);
        let unknown = rule.replace("aws_s3_bucket_versioning", "aws_s3_bucket_versioned");
        assert_eq!(
            problems(&unknown),
            vec!["s3:A: unknown resource type aws_s3_bucket_versioned"]
        );
        let tags = "[[rule]]\napi = \"T\"\nresource = \"aws_s3_bucket_policy\"\nkind = \"tags\"\nrisk = \"low\"\nsummary = \"s\"\nidentity = [{ path = \"b\" }]\n[rule.tags]\nop = \"merge\"\npath = \"t\"\n";
        assert_eq!(
            problems(tags),
            vec!["s3:T: aws_s3_bucket_policy: no tags attribute"]
        );
        let block = "[[rule]]\napi = \"B\"\nresource = \"aws_s3_bucket_cors_configuration\"\nkind = \"add-block\"\nrisk = \"low\"\nsummary = \"s\"\nidentity = [{ path = \"b\" }]\n[rule.block]\nname = \"cors_rule\"\neach = \"r[]\"\nfields = { id = \"ID\", nope = \"X\" }\n";
        assert_eq!(
            problems(block),
            vec!["s3:B: aws_s3_bucket_cors_configuration: no block field cors_rule.nope"]
        );
    }

    #[test]
    fn lambda_suffixes_are_dropped() {
        assert_eq!(normalize_api("AddPermission20150331v2"), "AddPermission");
        assert_eq!(normalize_api("CreateFunction20150331"), "CreateFunction");
        assert_eq!(
            normalize_api("UpdateFunctionConfiguration20150331v2"),
            "UpdateFunctionConfiguration"
        );
        assert_eq!(
            normalize_api("ModifyInstanceAttribute"),
            "ModifyInstanceAttribute"
        );
        assert_eq!(normalize_api("CreateApiV2"), "CreateApiV2");
    }
}

//! The AWS provider's documented argument defaults, for the resource types retrace creates.
//!
//! The provider schema says which arguments are optional but not what they default to, so the
//! table is kept by hand in `knowledge/data/provider-defaults.toml` (format in its header):
//! per resource type, the provider documentation page it was read from and the arguments
//! whose default that page states. A new resource block leaves out an argument at its
//! default, as a careful engineer would (`visibility_timeout_seconds = 30` on a new queue
//! plans the same written or not).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

use crate::schema::{AttrType, Presence, ProviderSchema};

/// The shipped table, by the name errors use.
const BUNDLED: (&str, &str) = (
    "knowledge/data/provider-defaults.toml",
    include_str!("../data/provider-defaults.toml"),
);

/// Where every documentation page of the table lives: the registry's pages for one provider
/// version, followed by the resource type without its `aws_` prefix.
const DOC_PREFIX: &str =
    "https://registry.terraform.io/providers/hashicorp/aws/5.100.0/docs/resources/";

/// A defaults file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefaultsError {
    /// The file is not valid.
    #[error("{file}: line {line}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The line of the problem, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// One resource type's documented defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceDefaults {
    /// The resource type, e.g. `aws_sqs_queue`.
    #[serde(rename = "type")]
    pub resource_type: String,
    /// The provider documentation page the defaults come from.
    pub doc: String,
    /// Argument (a dotted path for one inside a nested block) to its documented default.
    pub defaults: BTreeMap<String, Value>,
}

/// The documented defaults of every resource type the table covers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defaults {
    resources: BTreeMap<String, ResourceDefaults>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultsFile {
    #[serde(default)]
    resource: Vec<toml::Spanned<ResourceDefaults>>,
}

impl Defaults {
    /// The shipped table, parsed on first use.
    pub fn bundled() -> Result<&'static Defaults, DefaultsError> {
        static TABLE: OnceLock<Result<Defaults, DefaultsError>> = OnceLock::new();
        TABLE
            .get_or_init(|| Self::parse(BUNDLED.0, BUNDLED.1))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Parses a defaults file; `file` names it in errors. A type given twice, a type outside
    /// the AWS provider, or a page other than the type's registry page is an error.
    pub fn parse(file: &str, text: &str) -> Result<Defaults, DefaultsError> {
        let invalid = |line: usize, message: String| DefaultsError::Invalid {
            file: file.to_owned(),
            line,
            message,
        };
        let parsed: DefaultsFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            invalid(line, e.message().trim().to_owned())
        })?;
        let mut resources = BTreeMap::new();
        for spanned in parsed.resource {
            let line = line_of(text, spanned.span().start);
            let entry = spanned.into_inner();
            check(&entry).map_err(|m| invalid(line, format!("{}: {m}", entry.resource_type)))?;
            if resources.contains_key(&entry.resource_type) {
                return Err(invalid(
                    line,
                    format!("{} is given twice", entry.resource_type),
                ));
            }
            resources.insert(entry.resource_type.clone(), entry);
        }
        Ok(Defaults { resources })
    }

    /// Every covered resource type's defaults, in type order.
    pub fn iter(&self) -> impl Iterator<Item = &ResourceDefaults> {
        self.resources.values()
    }

    /// The documented default of an argument (a dotted path inside nested blocks), if any.
    pub fn default_of(&self, resource_type: &str, argument: &str) -> Option<&Value> {
        self.resources.get(resource_type)?.defaults.get(argument)
    }

    /// Problems of the table against a provider schema: an unknown type, an argument that is
    /// not one the configuration may leave out (computed only, or required), a default of the
    /// wrong type. Empty when it fits.
    pub fn check_schema(&self, schema: &ProviderSchema) -> Vec<String> {
        let mut problems = Vec::new();
        for entry in self.iter() {
            let ty = &entry.resource_type;
            if schema.resource(ty).is_none() {
                problems.push(format!("unknown resource type {ty}"));
                continue;
            }
            for (argument, value) in &entry.defaults {
                let problem = match schema.attribute(ty, argument) {
                    None => Some(format!("unknown argument {argument}")),
                    Some(a) if matches!(a.presence, Presence::Computed | Presence::Required) => {
                        Some(format!("{argument} is {:?}, not optional", a.presence))
                    }
                    Some(a) if !fits(&a.ty, value) => Some(format!(
                        "the default {value} of {argument} is not of its type {:?}",
                        a.ty
                    )),
                    Some(_) => None,
                };
                problems.extend(problem.map(|p| format!("{ty}: {p}")));
            }
        }
        problems
    }
}

/// What a table entry must hold whatever the schema says.
fn check(entry: &ResourceDefaults) -> Result<(), String> {
    let Some(short) = entry.resource_type.strip_prefix("aws_") else {
        return Err("the type must be an AWS provider resource type (`aws_...`)".into());
    };
    if entry.doc != format!("{DOC_PREFIX}{short}") {
        return Err(format!("the page must be {DOC_PREFIX}{short}"));
    }
    if entry.defaults.is_empty() {
        return Err("no defaults".into());
    }
    Ok(())
}

/// Whether a JSON value is of a Terraform type (numbers and bools as themselves, not as the
/// strings Terraform would also convert).
fn fits(ty: &AttrType, value: &Value) -> bool {
    match (ty, value) {
        (AttrType::Dynamic, _)
        | (AttrType::String, Value::String(_))
        | (AttrType::Number, Value::Number(_))
        | (AttrType::Bool, Value::Bool(_)) => true,
        (AttrType::List(inner) | AttrType::Set(inner), Value::Array(items)) => {
            items.iter().all(|v| fits(inner, v))
        }
        (AttrType::Map(inner), Value::Object(fields)) => fields.values().all(|v| fits(inner, v)),
        _ => false,
    }
}

/// The line (from 1) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const QUEUE: &str = "[[resource]]\ntype = \"aws_sqs_queue\"\ndoc = \"https://registry.terraform.io/providers/hashicorp/aws/5.100.0/docs/resources/sqs_queue\"\n[resource.defaults]\ndelay_seconds = 0\n\"a.b\" = \"x\"\n";

    #[test]
    fn entries_load_with_dotted_arguments() {
        let table = Defaults::parse("t.toml", QUEUE).expect("loads");
        assert_eq!(
            table.default_of("aws_sqs_queue", "delay_seconds"),
            Some(&json!(0))
        );
        assert_eq!(table.default_of("aws_sqs_queue", "a.b"), Some(&json!("x")));
        assert_eq!(table.default_of("aws_sqs_queue", "name"), None);
        assert_eq!(table.default_of("aws_sns_topic", "delay_seconds"), None);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let twice = format!("{QUEUE}\n{QUEUE}");
        let err = Defaults::parse("t.toml", &twice)
            .expect_err("an error")
            .to_string();
        assert_eq!(err, "t.toml: line 8: aws_sqs_queue is given twice");
        let other_page = QUEUE.replace("resources/sqs_queue", "resources/sns_topic");
        let err = Defaults::parse("t.toml", &other_page)
            .expect_err("an error")
            .to_string();
        assert!(
            err.starts_with("t.toml: line 1: aws_sqs_queue: the page must be"),
            "{err}"
        );
        let unknown_key = QUEUE.replace("doc =", "page =");
        let err = Defaults::parse("t.toml", &unknown_key)
            .expect_err("an error")
            .to_string();
        assert!(err.starts_with("t.toml: line "), "{err}");
        assert!(err.contains("page"), "{err}");
    }

    #[test]
    fn the_schema_check_names_unknown_unsettable_and_mistyped_arguments() {
        let text = QUEUE
            .replace(
                "delay_seconds = 0",
                "delay_seconds = \"0\"\narn = \"x\"\nno_such = 1",
            )
            .replace("\"a.b\" = \"x\"", "visibility_timeout_seconds = 30")
            + "[[resource]]\ntype = \"aws_iam_role\"\ndoc = \"https://registry.terraform.io/providers/hashicorp/aws/5.100.0/docs/resources/iam_role\"\n[resource.defaults]\nassume_role_policy = \"{}\"\npath = \"/\"\n";
        let table = Defaults::parse("t.toml", &text).expect("loads");
        let schema = ProviderSchema::bundled().expect("schema loads");
        assert_eq!(
            table.check_schema(schema),
            vec![
                "aws_iam_role: assume_role_policy is Required, not optional",
                "aws_sqs_queue: arn is Computed, not optional",
                "aws_sqs_queue: the default \"0\" of delay_seconds is not of its type Number",
                "aws_sqs_queue: unknown argument no_such",
            ]
        );
    }

    #[test]
    fn values_fit_their_terraform_type() {
        let strings = AttrType::List(Box::new(AttrType::String));
        assert!(fits(&strings, &json!(["x86_64"])));
        assert!(!fits(&strings, &json!([1])));
        assert!(fits(&AttrType::Number, &json!(30)));
        assert!(!fits(&AttrType::Number, &json!("30")));
        assert!(!fits(&AttrType::Bool, &json!("false")));
        assert!(fits(&AttrType::Dynamic, &json!({"a": 1})));
    }
}

//! The AWS provider's resource types that cannot be imported.
//!
//! `terraform plan` of an `import` block for one of them stops with "resource TYPE doesn't
//! support import" before any AWS call, so an object of such a type created outside Terraform
//! is written as a resource block alone, and the next apply creates it again. The list is
//! data, `knowledge/data/not-importable.toml`, written by `knowledge/tools/probe_import.py`
//! from the real provider (its header says how and what it found).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::schema::ProviderSchema;

/// The shipped list, by the name errors use.
const BUNDLED: (&str, &str) = (
    "knowledge/data/not-importable.toml",
    include_str!("../data/not-importable.toml"),
);

/// A list of types that cannot be imported could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportableError {
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

/// The resource types of one provider version that cannot be imported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotImportable {
    provider_version: String,
    types: BTreeSet<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListFile {
    provider_version: String,
    not_importable: Vec<toml::Spanned<String>>,
}

impl NotImportable {
    /// The shipped list, parsed on first use.
    pub fn bundled() -> Result<&'static NotImportable, ImportableError> {
        static LIST: OnceLock<Result<NotImportable, ImportableError>> = OnceLock::new();
        LIST.get_or_init(|| Self::parse(BUNDLED.0, BUNDLED.1))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Parses a list file; `file` names it in errors. A type outside the AWS provider or
    /// given twice is an error.
    pub fn parse(file: &str, text: &str) -> Result<NotImportable, ImportableError> {
        let invalid = |line: usize, message: String| ImportableError::Invalid {
            file: file.to_owned(),
            line,
            message,
        };
        let parsed: ListFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            invalid(line, e.message().trim().to_owned())
        })?;
        let mut types = BTreeSet::new();
        for spanned in parsed.not_importable {
            let line = line_of(text, spanned.span().start);
            let name = spanned.into_inner();
            if !name.starts_with("aws_") {
                return Err(invalid(
                    line,
                    format!("{name}: not an AWS provider resource type (`aws_...`)"),
                ));
            }
            if !types.insert(name.clone()) {
                return Err(invalid(line, format!("{name} is given twice")));
            }
        }
        Ok(NotImportable {
            provider_version: parsed.provider_version,
            types,
        })
    }

    /// Whether the provider can import a resource type (any type the list does not name).
    pub fn importable(&self, resource_type: &str) -> bool {
        !self.types.contains(resource_type)
    }

    /// The provider version the list was taken from.
    pub fn provider_version(&self) -> &str {
        &self.provider_version
    }

    /// The listed types, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.types.iter().map(String::as_str)
    }

    /// Problems of the list against a provider schema: a type it does not know, another
    /// provider version. Empty when it fits.
    pub fn check_schema(&self, schema: &ProviderSchema) -> Vec<String> {
        let mut problems: Vec<String> = self
            .iter()
            .filter(|t| schema.resource(t).is_none())
            .map(|t| format!("unknown resource type {t}"))
            .collect();
        let schema_version = schema.provider_version().unwrap_or("an unknown version");
        if schema_version != self.provider_version {
            problems.push(format!(
                "the list is of provider {}, the schema of {schema_version}",
                self.provider_version
            ));
        }
        problems
    }
}

/// The line (from 1) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = "# a comment\nprovider_version = \"5.100.0\"\nnot_importable = [\n  \"aws_lb_target_group_attachment\",\n  \"aws_acm_certificate_validation\",\n]\n";

    #[test]
    fn listed_types_are_not_importable_and_others_are() {
        let list = NotImportable::parse("t.toml", LIST).expect("loads");
        assert!(!list.importable("aws_lb_target_group_attachment"));
        assert!(!list.importable("aws_acm_certificate_validation"));
        assert!(list.importable("aws_sqs_queue"));
        assert_eq!(list.provider_version(), "5.100.0");
        assert_eq!(
            list.iter().collect::<Vec<_>>(),
            [
                "aws_acm_certificate_validation",
                "aws_lb_target_group_attachment"
            ]
        );
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let twice = LIST.replace(
            "\"aws_acm_certificate_validation\"",
            "\"aws_lb_target_group_attachment\"",
        );
        let err = NotImportable::parse("t.toml", &twice).expect_err("an error");
        assert_eq!(
            err.to_string(),
            "t.toml: line 5: aws_lb_target_group_attachment is given twice"
        );
        let other = LIST.replace("\"aws_acm_certificate_validation\"", "\"google_x\"");
        let err = NotImportable::parse("t.toml", &other).expect_err("an error");
        assert_eq!(
            err.to_string(),
            "t.toml: line 5: google_x: not an AWS provider resource type (`aws_...`)"
        );
        let err = NotImportable::parse("t.toml", &LIST.replace("provider_version", "version"))
            .expect_err("an error")
            .to_string();
        assert!(err.starts_with("t.toml: line 2: "), "{err}");
    }

    #[test]
    fn the_schema_check_names_unknown_types_and_another_version() {
        let schema = ProviderSchema::bundled().expect("schema loads");
        let list = NotImportable::parse("t.toml", LIST).expect("loads");
        assert!(list.check_schema(schema).is_empty());
        let odd = LIST
            .replace("\"aws_acm_certificate_validation\"", "\"aws_no_such\"")
            .replace("5.100.0", "5.1.0");
        let list = NotImportable::parse("t.toml", &odd).expect("loads");
        assert_eq!(
            list.check_schema(schema),
            [
                "unknown resource type aws_no_such",
                "the list is of provider 5.1.0, the schema of 5.100.0"
            ]
        );
    }
}

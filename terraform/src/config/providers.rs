//! The AWS provider blocks of the root module: the regions the project deploys to, and the
//! tags the default provider gives every resource (`default_tags`).

use std::collections::BTreeMap;

use hcl::{Expression, TraversalOperator};

use super::Project;
use crate::functions::Value;

/// The regions the root module's `provider "aws"` blocks (the default and each alias) name,
/// as a literal or through a root variable; other expressions are left out.
pub fn aws_regions(project: &Project) -> Vec<String> {
    let mut regions: Vec<String> = Vec::new();
    let bodies = project
        .files()
        .iter()
        .filter(|(path, _)| super::json::is_configuration(path) && !path.contains('/'))
        .filter_map(|(_, text)| hcl::parse(text).ok());
    for body in bodies {
        let providers = body.blocks().filter(|b| {
            b.identifier() == "provider" && b.labels().first().is_some_and(|l| l.as_str() == "aws")
        });
        for provider in providers {
            let region = provider
                .body()
                .attributes()
                .find(|a| a.key() == "region")
                .and_then(|a| region_of(project, a.expr()));
            if let Some(region) = region.filter(|r| !regions.contains(r)) {
                regions.push(region);
            }
        }
    }
    regions
}

/// The `default_tags` of the root's default `provider "aws"` block (the one without an
/// `alias`), which the provider merges under every resource's own `tags`.
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultTags {
    /// The file holding the provider block.
    pub file: String,
    /// The tags, when their value is known.
    pub tags: BTreeMap<String, String>,
    /// Whether it is the only `provider "aws"` block of its file, so that an edit can name it.
    pub alone_in_file: bool,
}

/// The default provider's `default_tags`, or `None` when it has none or the project writes
/// several default `provider "aws"` blocks.
pub fn default_tags(project: &Project) -> Option<DefaultTags> {
    let mut found = project
        .files()
        .iter()
        .filter(|(path, _)| super::json::is_configuration(path) && !path.contains('/'))
        .filter_map(|(path, text)| Some((path, hcl::parse(text).ok()?)))
        .flat_map(|(path, body)| {
            body.into_blocks()
                .filter(|b| {
                    b.identifier() == "provider"
                        && b.labels().first().is_some_and(|l| l.as_str() == "aws")
                        && !b.body().attributes().any(|a| a.key() == "alias")
                })
                .map(move |b| (path.clone(), b))
                .collect::<Vec<_>>()
        });
    let (file, provider) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let alone_in_file = project
        .files()
        .get(&file)
        .and_then(|t| hcl::parse(t).ok())
        .is_some_and(|body| {
            body.blocks()
                .filter(|b| {
                    b.identifier() == "provider"
                        && b.labels().first().is_some_and(|l| l.as_str() == "aws")
                })
                .count()
                == 1
        });
    let expr = provider
        .body()
        .blocks()
        .find(|b| b.identifier() == "default_tags")?
        .body()
        .attributes()
        .find(|a| a.key() == "tags")?
        .expr()
        .clone();
    let tags = match project.evaluate_in_root(&expr) {
        Value::Object(map) => map
            .into_iter()
            .filter_map(|(k, v)| Some((k, v.to_text()?)))
            .collect(),
        _ => BTreeMap::new(),
    };
    Some(DefaultTags {
        file,
        tags,
        alone_in_file,
    })
}

/// A literal region, or the value of the root variable `var.NAME`.
fn region_of(project: &Project, expr: &Expression) -> Option<String> {
    match expr {
        Expression::String(s) => Some(s.clone()),
        Expression::Traversal(t) => {
            let Expression::Variable(root) = &t.expr else {
                return None;
            };
            let [TraversalOperator::GetAttr(name)] = t.operators.as_slice() else {
                return None;
            };
            if root.as_str() != "var" {
                return None;
            }
            match project.variable(None, name.as_str())?.value {
                Value::String(s) => Some(s),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::LoadOptions;

    #[test]
    fn default_and_aliased_providers_give_their_regions() {
        let dir = tempfile::tempdir().unwrap();
        let main = r#"
variable "region" {
  default = "eu-west-1"
}

provider "aws" {
  region = var.region
}

provider "aws" {
  alias  = "us"
  region = "us-east-1"
}

provider "aws" {
  alias  = "dr"
  region = "eu-west-1"
}

provider "google" {
  region = "europe-west1"
}
"#;
        std::fs::write(dir.path().join("main.tf"), main).unwrap();
        let project = Project::load(dir.path(), &LoadOptions::default()).unwrap();
        assert_eq!(aws_regions(&project), ["eu-west-1", "us-east-1"]);
    }

    #[test]
    fn the_default_providers_default_tags_are_evaluated() {
        let dir = tempfile::tempdir().unwrap();
        let main = r#"
locals {
  common = { Team = "data" }
}

provider "aws" {
  region = "eu-west-1"
  default_tags {
    tags = merge(local.common, { Env = "prod" })
  }
}

provider "aws" {
  alias  = "us"
  region = "us-east-1"
  default_tags {
    tags = { Env = "us" }
  }
}
"#;
        std::fs::write(dir.path().join("providers.tf"), main).unwrap();
        let project = Project::load(dir.path(), &LoadOptions::default()).unwrap();
        let defaults = default_tags(&project).unwrap();
        assert_eq!(defaults.file, "providers.tf");
        assert!(!defaults.alone_in_file);
        assert_eq!(
            defaults.tags,
            BTreeMap::from([
                ("Env".to_owned(), "prod".to_owned()),
                ("Team".to_owned(), "data".to_owned())
            ])
        );
    }
}

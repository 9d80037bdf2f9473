//! The AWS provider blocks of the root module: the regions the project deploys to.

use hcl::{Expression, TraversalOperator};

use super::Project;
use crate::terraform::functions::Value;

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
    use crate::terraform::config::LoadOptions;

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
}

//! Which nested block of the code a block the cloud lost is, when its arguments are not all
//! literals: `cidr_blocks = [var.vpc_cidr, var.onprem_cidr]` is found by the evaluated
//! configuration, then named to the edit tools by its source text.

use super::edit::{Ordered, Value as EditValue};
use super::settled::{blocks, holds};
use crate::terraform::config::{Project, ResourceInstance};
use hcl::edit::Span as _;
use hcl::edit::expr::Expression;
use hcl::edit::structure::Body;
use serde_json::{Map, Value};

/// The `match` that picks the code's one `block` block of `instance` holding `fields` (the
/// removed block as the cloud gave it): each argument as its literal value, or as its source
/// text when it is an expression (the edit tools compare expressions by their text). `None`
/// when the block is not found that way: blocks written with `dynamic`, none or several
/// evaluated blocks holding these values.
pub fn block_match(
    project: &Project,
    instance: &ResourceInstance,
    block: &str,
    fields: &Map<String, Value>,
) -> Option<Ordered> {
    let configured = instance.attributes.to_json()?;
    let evaluated = blocks(&configured, block);
    let holding: Vec<usize> = (0..evaluated.len())
        .filter(|i| holds(evaluated[*i], fields))
        .collect();
    let [index] = holding.as_slice() else {
        return None;
    };
    if project.writes_dynamic(&instance.address, block) {
        return None;
    }
    let text = project.files().get(&instance.file)?;
    let written: Vec<&Body> = project
        .resource_body(&instance.address)?
        .blocks()
        .filter(|b| b.ident.as_str() == block)
        .map(|b| &b.body)
        .collect();
    if written.len() != evaluated.len() {
        return None;
    }
    let source = written[*index];
    let entries = fields.iter().map(|(name, want)| {
        let value = match source.get_attribute(name) {
            Some(attr) if !is_literal(&attr.value) => {
                let span = attr.value.span()?;
                EditValue::String(text.get(span)?.trim().to_owned())
            }
            _ => EditValue::from_json(want),
        };
        Some((name.clone(), value))
    });
    entries.collect::<Option<Vec<_>>>().map(Ordered)
}

/// Whether the expression is a literal: a number, a string without interpolation, a bool,
/// null, or a list or object of literals.
fn is_literal(expr: &Expression) -> bool {
    match expr {
        Expression::Null(_) | Expression::Bool(_) | Expression::Number(_) => true,
        Expression::String(_) => true,
        Expression::Array(items) => items.iter().all(is_literal),
        Expression::Object(object) => object.iter().all(|(_, v)| is_literal(v.expr())),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn project(main: &str) -> Project {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join("main.tf"), main).expect("written");
        Project::load(dir.path(), &Default::default()).expect("loads")
    }

    const GROUP: &str = r#"variable "vpc_cidr" {
  default = "10.60.0.0/16"
}

resource "aws_security_group" "lb" {
  name = "lb"

  ingress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = [var.vpc_cidr, "192.168.0.0/16"]
  }

  ingress {
    from_port   = 80
    to_port     = 80
    protocol    = "tcp"
    cidr_blocks = [var.vpc_cidr]
  }
}
"#;

    fn as_map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_block_with_expressions_is_named_by_their_source_text() {
        let project = project(GROUP);
        let instance = project
            .instance("aws_security_group.lb")
            .expect("the group");
        let fields = as_map(json!({"from_port": 443, "to_port": 443, "protocol": "tcp",
                            "cidr_blocks": ["192.168.0.0/16", "10.60.0.0/16"]}));
        let found = block_match(&project, instance, "ingress", &fields).expect("found");
        let cidrs = found
            .0
            .iter()
            .find(|(k, _)| k == "cidr_blocks")
            .map(|(_, v)| v);
        assert_eq!(
            cidrs,
            Some(&EditValue::String(
                "[var.vpc_cidr, \"192.168.0.0/16\"]".to_owned()
            ))
        );
        let port = found
            .0
            .iter()
            .find(|(k, _)| k == "from_port")
            .map(|(_, v)| v);
        assert_eq!(port, Some(&EditValue::from_json(&json!(443))));
    }

    #[test]
    fn a_block_no_evaluated_block_holds_is_not_found() {
        let project = project(GROUP);
        let instance = project
            .instance("aws_security_group.lb")
            .expect("the group");
        let fields = as_map(json!({"from_port": 22, "to_port": 22, "protocol": "tcp",
                            "cidr_blocks": ["10.60.0.0/16"]}));
        assert_eq!(block_match(&project, instance, "ingress", &fields), None);
    }
}

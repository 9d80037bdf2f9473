//! Values for the root module's variables, from tfvars files, var files and `-var`
//! arguments in Terraform's order of precedence.

use std::collections::BTreeMap;
use std::path::Path;

use hcl::edit::Span;
use hcl::edit::expr::Expression;

use super::files::{parse, read_text};
use super::types::is_primitive;
use super::{Diagnostic, LoadError, LoadOptions, VariableSource, line_of};
use crate::functions::{EvalScope, Value, evaluate};
use knowledge::schema::AttrType;

/// A value assigned to a root variable outside its declaration.
#[derive(Debug, Clone)]
pub(super) struct Assigned {
    /// The value, before type conversion.
    pub value: Value,
    /// Where it was assigned.
    pub source: VariableSource,
    /// The value's expression in that file, for following paths into it.
    pub expr: Option<Expression>,
}

/// How a file's assignments are reported.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tfvars,
    VarFile,
}

/// The assignments to root variables, each the one with the highest precedence: the
/// `terraform.tfvars` files, then `*.auto.tfvars(.json)` in lexical order, then the var files
/// in order, then `-var`. Texts read are added to `files`.
pub(super) fn root_assignments(
    root: &Path,
    options: &LoadOptions,
    types: &BTreeMap<String, AttrType>,
    files: &mut BTreeMap<String, String>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<BTreeMap<String, Assigned>, LoadError> {
    let mut auto: Vec<String> = std::fs::read_dir(root)
        .map_err(|source| LoadError::Read {
            path: root.to_path_buf(),
            source,
        })?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".auto.tfvars") || name.ends_with(".auto.tfvars.json"))
        .collect();
    auto.sort();
    let mut sources: Vec<(String, Kind)> = ["terraform.tfvars", "terraform.tfvars.json"]
        .into_iter()
        .filter(|name| root.join(name).is_file())
        .map(|name| (name.to_string(), Kind::Tfvars))
        .collect();
    sources.extend(auto.into_iter().map(|name| (name, Kind::Tfvars)));
    for file in &options.var_files {
        let name = match file.strip_prefix(root) {
            Ok(inside) => inside.to_string_lossy().replace('\\', "/"),
            Err(_) => file.to_string_lossy().into_owned(),
        };
        sources.push((name, Kind::VarFile));
    }
    let mut assigned = BTreeMap::new();
    for (name, kind) in sources {
        let text = read_text(&root.join(&name))?;
        let values = if name.ends_with(".json") {
            json_file(&name, &text, kind)?
        } else {
            hcl_file(&name, &text, kind, root, diagnostics)?
        };
        files.insert(name.clone(), text);
        for (variable, value) in values {
            if !types.contains_key(&variable) {
                diagnostics.push(Diagnostic {
                    file: name.clone(),
                    line: value.line(),
                    subject: format!("var.{variable}"),
                    message: "a value for an undeclared variable".to_string(),
                });
                continue;
            }
            assigned.insert(variable, value);
        }
    }
    for text in &options.vars {
        let (name, value) = cli_var(text, types, root)?;
        if types.contains_key(&name) {
            assigned.insert(name, value);
        } else {
            diagnostics.push(Diagnostic {
                file: "-var".to_string(),
                line: 1,
                subject: format!("var.{name}"),
                message: "a value for an undeclared variable".to_string(),
            });
        }
    }
    Ok(assigned)
}

impl Assigned {
    fn line(&self) -> usize {
        match &self.source {
            VariableSource::Tfvars { line, .. } | VariableSource::VarFile { line, .. } => *line,
            _ => 1,
        }
    }
}

fn source(kind: Kind, file: &str, line: usize, span: std::ops::Range<usize>) -> VariableSource {
    let file = file.to_string();
    match kind {
        Kind::Tfvars => VariableSource::Tfvars { file, line, span },
        Kind::VarFile => VariableSource::VarFile { file, line, span },
    }
}

/// The assignments of a tfvars file in HCL syntax; values are constant expressions.
fn hcl_file(
    name: &str,
    text: &str,
    kind: Kind,
    root: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Vec<(String, Assigned)>, LoadError> {
    let body = parse(name, text)?;
    let scope = EvalScope::new(root);
    Ok(body
        .attributes()
        .map(|attr| {
            let span = attr.value.span().unwrap_or_default();
            let line = line_of(text, span.start);
            let value = evaluate(&hcl::Expression::from(attr.value.clone()), &scope)
                .unwrap_or_else(|error| {
                    diagnostics.push(Diagnostic {
                        file: name.to_string(),
                        line,
                        subject: format!("var.{}", attr.key.as_str()),
                        message: error.to_string(),
                    });
                    Value::Unknown
                });
            let assigned = Assigned {
                value,
                source: source(kind, name, line, span),
                expr: Some(attr.value.clone()),
            };
            (attr.key.as_str().to_string(), assigned)
        })
        .collect())
}

/// The assignments of a tfvars file in JSON syntax. Values come from the JSON parser; spans
/// from reading the same text as an HCL object (JSON objects are HCL objects with `:`), or
/// the whole file when that fails.
fn json_file(name: &str, text: &str, kind: Kind) -> Result<Vec<(String, Assigned)>, LoadError> {
    let invalid = |line: usize, message: String| LoadError::Invalid {
        file: name.to_string(),
        line,
        message,
    };
    let json: serde_json::Value =
        serde_json::from_str(text).map_err(|e| invalid(e.line(), e.to_string()))?;
    let serde_json::Value::Object(map) = json else {
        return Err(invalid(
            1,
            "a tfvars JSON file must hold an object".to_string(),
        ));
    };
    let object = match hcl::edit::parser::parse_expr(text.trim_end()) {
        Ok(Expression::Object(object)) => Some(object),
        _ => None,
    };
    let located = |key: &str| {
        let object = object.as_ref()?;
        object.iter().find_map(|(k, v)| {
            let name = super::provenance::key_name(k)?;
            (name == key).then(|| v.expr().clone())
        })
    };
    Ok(map
        .into_iter()
        .map(|(key, value)| {
            let expr = located(&key);
            let span = expr.as_ref().and_then(Span::span).unwrap_or(0..text.len());
            let assigned = Assigned {
                value: Value::from_json(&value),
                source: source(kind, name, line_of(text, span.start), span),
                expr,
            };
            (key, assigned)
        })
        .collect())
}

/// A `-var NAME=VALUE` argument: the value is taken literally for variables of primitive type
/// (or undeclared type) and read as an HCL expression otherwise, as Terraform does.
fn cli_var(
    text: &str,
    types: &BTreeMap<String, AttrType>,
    root: &Path,
) -> Result<(String, Assigned), LoadError> {
    let (name, raw) = text.split_once('=').ok_or_else(|| LoadError::CliVar {
        text: text.to_string(),
    })?;
    let name = name.trim().to_string();
    let literal = types.get(&name).is_none_or(is_primitive);
    let value = if literal {
        Value::String(raw.to_string())
    } else {
        hcl::edit::parser::parse_expr(raw)
            .ok()
            .and_then(|expr| evaluate(&hcl::Expression::from(expr), &EvalScope::new(root)).ok())
            .ok_or_else(|| LoadError::CliVar {
                text: text.to_string(),
            })?
    };
    let assigned = Assigned {
        value,
        source: VariableSource::Cli,
        expr: None,
    };
    Ok((name, assigned))
}

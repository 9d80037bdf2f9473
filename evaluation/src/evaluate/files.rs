//! Reading a configuration: the `.tf` files of each module directory, parsed into its
//! declarations, and the root's variable files.

use super::LoadError;
use hcl::{Block, Body, Expression};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

/// A `resource` or `data` block.
#[derive(Debug, Clone)]
pub(super) struct ResourceDecl {
    /// Whether it is a `data` block.
    pub data: bool,
    /// The resource type.
    pub resource_type: String,
    /// The resource name.
    pub name: String,
    /// The block's body.
    pub body: Body,
    /// The file, relative to the root.
    pub file: String,
    /// The block's byte range in the file.
    pub span: Range<usize>,
}

/// A `variable` block.
#[derive(Debug, Clone, Default)]
pub(super) struct VariableDecl {
    /// The `type` constraint.
    pub constraint: Option<Expression>,
    /// The `default`.
    pub default: Option<Expression>,
    /// `nullable = false`: a null value given stands for the default.
    pub not_null: bool,
}

/// A `module` block.
#[derive(Debug, Clone)]
pub(super) struct CallDecl {
    /// The block's body (its arguments and meta-arguments).
    pub body: Body,
    /// The called module's directory, relative to the root.
    pub dir: String,
}

/// The declarations of one module directory.
#[derive(Debug, Clone, Default)]
pub(super) struct Module {
    /// The variables.
    pub variables: BTreeMap<String, VariableDecl>,
    /// The locals.
    pub locals: BTreeMap<String, Expression>,
    /// The outputs' `value` expressions.
    pub outputs: BTreeMap<String, Expression>,
    /// The resources and data sources, in file order.
    pub resources: Vec<ResourceDecl>,
    /// The module calls.
    pub calls: BTreeMap<String, CallDecl>,
}

impl Module {
    /// The resource (or data source) block of this type and name.
    pub fn resource(&self, data: bool, resource_type: &str, name: &str) -> Option<&ResourceDecl> {
        self.resources
            .iter()
            .find(|r| r.data == data && r.resource_type == resource_type && r.name == name)
    }
}

/// A configuration as read: every module directory's declarations and every file's text.
#[derive(Debug, Default)]
pub(super) struct Sources {
    /// The modules by directory relative to the root (`""` for the root).
    pub modules: BTreeMap<String, Module>,
    /// Every file read, by path relative to the root.
    pub files: BTreeMap<String, String>,
    /// The root variables' assignments in variable files, later files winning.
    pub assigned: BTreeMap<String, Expression>,
}

/// Reads the configuration rooted at `root`.
pub(super) fn read(root: &Path) -> Result<Sources, LoadError> {
    let installed = installed_modules(root)?;
    let mut sources = Sources::default();
    let mut todo = vec![(String::new(), Vec::<String>::new())];
    while let Some((dir, keys)) = todo.pop() {
        if sources.modules.contains_key(&dir) {
            continue;
        }
        let module = read_module(root, &dir, &keys, &installed, &mut sources.files)?;
        for (name, call) in &module.calls {
            let mut keys = keys.clone();
            keys.push(name.clone());
            todo.push((call.dir.clone(), keys));
        }
        sources.modules.insert(dir, module);
    }
    for name in variable_files(root)? {
        let text = read_text(&root.join(&name))?;
        sources.assigned.extend(assignments(&name, &text)?);
        sources.files.insert(name, text);
    }
    Ok(sources)
}

/// The assignments of a variable file, HCL or (`.json`) JSON.
fn assignments(name: &str, text: &str) -> Result<Vec<(String, Expression)>, LoadError> {
    let parse_error = |message: String| LoadError::Parse {
        file: name.to_owned(),
        message,
    };
    if name.ends_with(".json") {
        let json: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).map_err(|e| parse_error(e.to_string()))?;
        return Ok(json
            .iter()
            .map(|(k, v)| (k.clone(), Expression::from(super::module::from_json(v))))
            .collect());
    }
    let body: Body = hcl::parse(text).map_err(|e| parse_error(e.to_string()))?;
    Ok(body
        .attributes()
        .map(|a| (a.key().to_owned(), a.expr().clone()))
        .collect())
}

/// The variable files Terraform reads by itself, in its order (later ones win):
/// `terraform.tfvars`, `terraform.tfvars.json`, then the `*.auto.tfvars` and
/// `*.auto.tfvars.json` files in lexical order.
fn variable_files(root: &Path) -> Result<Vec<String>, LoadError> {
    let names = list(root)?;
    let mut auto: Vec<String> = names
        .iter()
        .filter(|name| name.ends_with(".auto.tfvars") || name.ends_with(".auto.tfvars.json"))
        .cloned()
        .collect();
    auto.sort();
    let mut out: Vec<String> = ["terraform.tfvars", "terraform.tfvars.json"]
        .into_iter()
        .filter(|n| names.iter().any(|m| m == n))
        .map(str::to_owned)
        .collect();
    out.extend(auto);
    Ok(out)
}

/// The names of the files in a directory.
fn list(dir: &Path) -> Result<Vec<String>, LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|source| LoadError::Read {
        path: dir.to_owned(),
        source,
    })?;
    Ok(entries
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect())
}

fn read_text(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })
}

/// Where `terraform init` installed each module call, by its key (`app.dns`), from
/// `.terraform/modules/modules.json`.
fn installed_modules(root: &Path) -> Result<BTreeMap<String, String>, LoadError> {
    let path = root.join(".terraform/modules/modules.json");
    if !path.is_file() {
        return Ok(BTreeMap::new());
    }
    let text = read_text(&path)?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| LoadError::Parse {
        file: ".terraform/modules/modules.json".to_owned(),
        message: e.to_string(),
    })?;
    let entries = json["Modules"].as_array().cloned().unwrap_or_default();
    Ok(entries
        .iter()
        .filter_map(|m| Some((m["Key"].as_str()?.to_owned(), m["Dir"].as_str()?.to_owned())))
        .map(|(key, dir)| (key, normalize("", &dir)))
        .collect())
}

/// `dir` joined with a relative path, `.` and `..` resolved, `/`-separated (`""` for the root;
/// a directory beside the root starts with `..`).
fn normalize(dir: &str, relative: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

/// The file name relative to the root of `name` in module directory `dir`.
fn in_dir(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// Reads and parses the `.tf` files of one module directory.
fn read_module(
    root: &Path,
    dir: &str,
    keys: &[String],
    installed: &BTreeMap<String, String>,
    files: &mut BTreeMap<String, String>,
) -> Result<Module, LoadError> {
    let mut names: Vec<String> = list(&root.join(dir))?
        .into_iter()
        .filter(|n| n.ends_with(".tf"))
        .collect();
    names.sort();
    let mut module = Module::default();
    for name in names {
        let file = in_dir(dir, &name);
        let text = read_text(&root.join(&file))?;
        let body = hcl::edit::parser::parse_body(&text).map_err(|e| LoadError::Parse {
            file: file.clone(),
            message: e.to_string(),
        })?;
        for block in body.blocks() {
            use hcl::edit::Span;
            let span = block.span().unwrap_or_default();
            let block = Block::from(block.clone());
            declare(&mut module, block, &file, span, dir, keys, installed)?;
        }
        files.insert(file, text);
    }
    Ok(module)
}

/// The text of a block's labels.
fn labels(block: &Block) -> Vec<&str> {
    block.labels().iter().map(|l| l.as_str()).collect()
}

/// Adds one top-level block's declaration to `module`.
fn declare(
    module: &mut Module,
    block: Block,
    file: &str,
    span: Range<usize>,
    dir: &str,
    keys: &[String],
    installed: &BTreeMap<String, String>,
) -> Result<(), LoadError> {
    let duplicate = |what: String| LoadError::Duplicate {
        file: file.to_owned(),
        what,
    };
    let owned: Vec<String> = labels(&block).into_iter().map(str::to_owned).collect();
    match (block.identifier(), owned.as_slice()) {
        ("variable", [name]) => {
            let get = |key: &str| attribute(&block.body, key);
            let decl = VariableDecl {
                constraint: get("type"),
                default: get("default"),
                not_null: get("nullable") == Some(Expression::Bool(false)),
            };
            if !once(&mut module.variables, name, decl) {
                return Err(duplicate(format!("var.{name}")));
            }
        }
        ("locals", []) => {
            for a in block.body.attributes() {
                if !once(&mut module.locals, a.key(), a.expr().clone()) {
                    return Err(duplicate(format!("local.{}", a.key())));
                }
            }
        }
        ("output", [name]) => {
            if let Some(value) = attribute(&block.body, "value")
                && !once(&mut module.outputs, name, value)
            {
                return Err(duplicate(format!("output {name}")));
            }
        }
        (kind @ ("resource" | "data"), [resource_type, name]) => {
            let data = kind == "data";
            if module.resource(data, resource_type, name).is_some() {
                return Err(duplicate(format!("{kind} {resource_type}.{name}")));
            }
            module.resources.push(ResourceDecl {
                data,
                resource_type: resource_type.clone(),
                name: name.clone(),
                body: block.body,
                file: file.to_owned(),
                span,
            });
        }
        ("module", [name]) => {
            let source = attribute(&block.body, "source");
            let local = match &source {
                Some(Expression::String(s)) if s.starts_with("./") || s.starts_with("../") => {
                    Some(normalize(dir, s))
                }
                _ => None,
            };
            let mut key = keys.to_vec();
            key.push(name.clone());
            let dir = local.or_else(|| installed.get(&key.join(".")).cloned());
            if let Some(dir) = dir {
                let body = block.body;
                if !once(&mut module.calls, name, CallDecl { body, dir }) {
                    return Err(duplicate(format!("module.{name}")));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Adds a named declaration; false when the name is taken.
fn once<T>(map: &mut BTreeMap<String, T>, name: &str, value: T) -> bool {
    if map.contains_key(name) {
        return false;
    }
    map.insert(name.to_owned(), value);
    true
}

/// The expression of a body's attribute.
pub(super) fn attribute(body: &Body, key: &str) -> Option<Expression> {
    body.attributes()
        .find(|a| a.key() == key)
        .map(|a| a.expr().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_sources_resolve_against_the_calling_directory() {
        assert_eq!(normalize("", "./modules/app"), "modules/app");
        assert_eq!(normalize("modules/app", "../dns"), "modules/dns");
        assert_eq!(normalize("", "."), "");
        assert_eq!(normalize("", "../modules/bucket"), "../modules/bucket");
        assert_eq!(normalize("../modules/a", "../../b"), "../b");
        assert_eq!(in_dir("", "main.tf"), "main.tf");
        assert_eq!(in_dir("modules/app", "main.tf"), "modules/app/main.tf");
    }
}

//! Reading a module directory: its `.tf` files parsed, and the blocks Terraform declares in
//! them gathered by kind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use hcl::edit::Span;
use hcl::edit::structure::{Attribute, Block};
use serde::Deserialize;

use super::{ConfigError, Diagnostic, line_of};

/// The declarations of one module directory.
#[derive(Debug, Clone)]
pub(super) struct ModuleDecls {
    /// The directory relative to the root, `/`-separated; empty for the root.
    pub rel: String,
    /// `variable` blocks.
    pub variables: Vec<BlockDecl>,
    /// Attributes of `locals` blocks.
    pub locals: Vec<LocalDecl>,
    /// `resource` and `data` blocks.
    pub resources: Vec<BlockDecl>,
    /// `module` blocks.
    pub calls: Vec<BlockDecl>,
    /// `output` blocks.
    pub outputs: Vec<BlockDecl>,
}

impl ModuleDecls {
    /// The local called `name`.
    pub fn local(&self, name: &str) -> Option<&LocalDecl> {
        self.locals.iter().find(|l| l.name == name)
    }
}

/// A block and the file it is in.
#[derive(Debug, Clone)]
pub(super) struct BlockDecl {
    /// The file, relative to the root.
    pub file: String,
    /// The parsed block, spans into the file's text.
    pub block: Block,
}

impl BlockDecl {
    /// The label at `index`, or empty.
    pub fn label(&self, index: usize) -> &str {
        self.block.labels.get(index).map_or("", |l| l.as_str())
    }

    /// The block's span.
    pub fn span(&self) -> std::ops::Range<usize> {
        self.block.span().unwrap_or_default()
    }
}

/// One attribute of a `locals` block.
#[derive(Debug, Clone)]
pub(super) struct LocalDecl {
    /// The file, relative to the root.
    pub file: String,
    /// The local's name.
    pub name: String,
    /// The parsed attribute.
    pub attr: Attribute,
}

/// Joins a relative directory and a relative path, resolving `.` and `..` lexically.
pub(super) fn join_rel(base: &str, path: &str) -> String {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

/// The root-relative name of `file` in the directory `rel`.
pub(super) fn file_name(rel: &str, file: &str) -> String {
    join_rel(rel, file)
}

/// Reads a text file, naming it in the error.
pub(super) fn read_text(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Parses HCL text, naming the file and position of a syntax error.
pub(super) fn parse(name: &str, text: &str) -> Result<hcl::edit::structure::Body, ConfigError> {
    crate::terraform::syntax::parse_body(text).map_err(|error| ConfigError::Parse {
        file: name.to_string(),
        line: error.location().line(),
        column: error.location().column(),
        message: error.message().to_string(),
    })
}

/// Reads and parses every `.tf` file of the module in `root/rel`, adding the texts to
/// `files`; `.tf.json` files are noted in `diagnostics` and skipped.
pub(super) fn read_module(
    root: &Path,
    rel: &str,
    files: &mut BTreeMap<String, String>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<ModuleDecls, ConfigError> {
    let dir = root.join(rel);
    let entries = std::fs::read_dir(&dir).map_err(|source| ConfigError::Read {
        path: dir.clone(),
        source,
    })?;
    let mut names = BTreeSet::new();
    for entry in entries {
        let entry = entry.map_err(|source| ConfigError::Read {
            path: dir.clone(),
            source,
        })?;
        if entry.path().is_file() {
            names.insert(entry.file_name().to_string_lossy().into_owned());
        }
    }
    let mut decls = ModuleDecls {
        rel: rel.to_string(),
        variables: Vec::new(),
        locals: Vec::new(),
        resources: Vec::new(),
        calls: Vec::new(),
        outputs: Vec::new(),
    };
    for name in names {
        let file = file_name(rel, &name);
        if name.ends_with(".tf.json") {
            diagnostics.push(Diagnostic {
                file,
                line: 1,
                subject: "configuration".to_string(),
                message: "JSON configuration files are not read".to_string(),
            });
            continue;
        }
        if !name.ends_with(".tf") {
            continue;
        }
        let text = read_text(&dir.join(&name))?;
        let body = parse(&file, &text)?;
        gather(&mut decls, &file, body);
        files.insert(file, text);
    }
    check_duplicates(&decls, files)?;
    Ok(decls)
}

/// Sorts a file's top-level blocks into `decls`.
fn gather(decls: &mut ModuleDecls, file: &str, body: hcl::edit::structure::Body) {
    for block in body.into_blocks() {
        let decl = BlockDecl {
            file: file.to_string(),
            block,
        };
        match decl.block.ident.as_str() {
            "variable" => decls.variables.push(decl),
            "resource" | "data" => decls.resources.push(decl),
            "module" => decls.calls.push(decl),
            "output" => decls.outputs.push(decl),
            "locals" => decls
                .locals
                .extend(decl.block.body.into_attributes().map(|attr| LocalDecl {
                    file: file.to_string(),
                    name: attr.key.as_str().to_string(),
                    attr,
                })),
            _ => {}
        }
    }
}

/// Fails on a second declaration of the same variable, local, resource, module or output.
fn check_duplicates(
    decls: &ModuleDecls,
    files: &BTreeMap<String, String>,
) -> Result<(), ConfigError> {
    let blocks = decls
        .variables
        .iter()
        .chain(&decls.resources)
        .chain(&decls.calls)
        .chain(&decls.outputs)
        .map(|d| {
            let what = format!(
                "{} {}",
                d.block.ident.as_str(),
                d.block
                    .labels
                    .iter()
                    .map(|l| l.as_str())
                    .collect::<Vec<_>>()
                    .join(".")
            );
            (what, &d.file, d.span().start)
        });
    let locals = decls.locals.iter().map(|l| {
        let at = l.attr.span().unwrap_or_default().start;
        (format!("local {}", l.name), &l.file, at)
    });
    let mut seen = BTreeSet::new();
    for (what, file, at) in blocks.chain(locals) {
        if !seen.insert(what.clone()) {
            let text = files.get(file.as_str()).map_or("", String::as_str);
            return Err(ConfigError::Invalid {
                file: file.clone(),
                line: line_of(text, at),
                message: format!("duplicate declaration of {what}"),
            });
        }
    }
    Ok(())
}

#[derive(Deserialize)]
struct ModulesJson {
    #[serde(rename = "Modules", default)]
    modules: Vec<ModuleEntry>,
}

#[derive(Deserialize)]
struct ModuleEntry {
    #[serde(rename = "Key")]
    key: String,
    #[serde(rename = "Dir")]
    dir: String,
}

/// The directories of installed modules by key (`net`, `app.dns`), from
/// `.terraform/modules/modules.json`; empty when the file does not exist.
pub(super) fn installed_modules(root: &Path) -> Result<BTreeMap<String, String>, ConfigError> {
    let path: PathBuf = root.join(".terraform/modules/modules.json");
    if !path.is_file() {
        return Ok(BTreeMap::new());
    }
    let text = read_text(&path)?;
    let parsed: ModulesJson =
        serde_json::from_str(&text).map_err(|error| ConfigError::Invalid {
            file: ".terraform/modules/modules.json".to_string(),
            line: error.line(),
            message: error.to_string(),
        })?;
    Ok(parsed
        .modules
        .into_iter()
        .map(|m| (m.key, join_rel("", &m.dir)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_resolved_lexically() {
        assert_eq!(join_rel("modules/app", "../dns"), "modules/dns");
        assert_eq!(join_rel("", "./modules/app"), "modules/app");
        assert_eq!(join_rel("", "../shared"), "../shared");
        assert_eq!(join_rel("a", "../../b"), "../b");
        assert_eq!(join_rel("", "."), "");
    }
}

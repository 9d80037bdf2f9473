//! Reading a module directory: its `.tf` files parsed, and the blocks Terraform declares in
//! them gathered by kind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use hcl::edit::Span;
use hcl::edit::structure::{Attribute, Block};
use serde::Deserialize;

use super::json::{Native, is_json, to_native};
use super::{LoadError, line_of};

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
    /// `provider` blocks.
    pub providers: Vec<BlockDecl>,
    /// The JSON configuration files' translations, for their line numbers.
    pub json: BTreeMap<String, Native>,
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
    /// The parsed block, spans into the file's text (an argument or nested block type an
    /// override file replaced: into that file's text, see `overridden`).
    pub block: Block,
    /// Arguments and nested block types replaced by an override file, with that file.
    pub overridden: BTreeMap<String, String>,
}

impl BlockDecl {
    /// The file that holds the argument or nested block type `key` of the block.
    pub fn file_of(&self, key: &str) -> &str {
        self.overridden.get(key).unwrap_or(&self.file)
    }

    /// Merges an override block of `file` into this one (see [`apply_override`]).
    fn merge(&mut self, file: &str, mut with: Block) {
        let resource = matches!(self.block.ident.as_str(), "resource" | "data");
        if resource && let Some(lifecycle) = with.body.remove_blocks("lifecycle").into_iter().next()
        {
            let mut original = self.block.body.remove_blocks("lifecycle");
            match original.first_mut() {
                Some(base) => {
                    for attr in lifecycle.body.into_attributes() {
                        base.body.remove_attribute(attr.key.as_str());
                        base.body.push(attr);
                    }
                    self.block.body.push(original.swap_remove(0));
                }
                None => self.block.body.push(lifecycle),
            }
            self.overridden
                .insert("lifecycle".to_string(), file.to_string());
        }
        let mut replaced_blocks = BTreeSet::new();
        for structure in with.body.into_iter() {
            match structure {
                hcl::edit::structure::Structure::Attribute(attr) => {
                    let key = attr.key.as_str().to_string();
                    self.block.body.remove_attribute(&key);
                    self.block.body.push(attr);
                    self.overridden.insert(key, file.to_string());
                }
                hcl::edit::structure::Structure::Block(block) => {
                    let ident = block.ident.as_str().to_string();
                    if replaced_blocks.insert(ident.clone()) {
                        self.block.body.remove_blocks(&ident);
                    }
                    self.block.body.push(block);
                    self.overridden.insert(ident, file.to_string());
                }
            }
        }
    }

    /// A resource or data block's address in its module: `aws_x.y` or `data.aws_x.y`.
    pub fn address(&self) -> String {
        let prefix = match self.block.ident.as_str() {
            "data" => "data.",
            _ => "",
        };
        format!("{prefix}{}.{}", self.label(0), self.label(1))
    }

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
pub(super) fn read_text(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Parses HCL text, naming the file and position of a syntax error.
pub(super) fn parse(name: &str, text: &str) -> Result<hcl::edit::structure::Body, LoadError> {
    crate::syntax::parse_body(text).map_err(|error| LoadError::Parse {
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
    earlier: Option<Earlier<'_>>,
) -> Result<ModuleDecls, LoadError> {
    let dir = root.join(rel);
    let entries = std::fs::read_dir(&dir).map_err(|source| LoadError::Read {
        path: dir.clone(),
        source,
    })?;
    let mut names = BTreeSet::new();
    for entry in entries {
        let entry = entry.map_err(|source| LoadError::Read {
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
        providers: Vec::new(),
        json: BTreeMap::new(),
    };
    let names = configuration_files(&names);
    let (overrides, normal): (Vec<&String>, Vec<&String>) =
        names.iter().partition(|name| is_override(name));
    // Override files merge into earlier blocks, so a directory with any is read afresh.
    let earlier = earlier.filter(|_| overrides.is_empty());
    for name in normal {
        let file = file_name(rel, name);
        match earlier.as_ref().filter(|e| e.keeps(&file)) {
            Some(earlier) => earlier.take(&file, &mut decls, files),
            None => {
                let body = read_configuration(&dir.join(name), &file, files, &mut decls.json)?;
                gather(&mut decls, &file, body);
            }
        }
    }
    check_duplicates(&decls, files)?;
    for name in overrides {
        let file = file_name(rel, name);
        let body = read_configuration(&dir.join(name), &file, files, &mut decls.json)?;
        apply_override(&mut decls, &file, body, files)?;
    }
    Ok(decls)
}

/// What reading a module directory again may take from an earlier load of the same
/// directory: that load's declarations and file texts, and the files changed since
/// (root-relative, as [`file_name`] writes them), which are read afresh.
#[derive(Clone, Copy)]
pub(super) struct Earlier<'a> {
    /// The directory's declarations as the earlier load read them.
    pub decls: &'a ModuleDecls,
    /// The earlier load's file texts.
    pub files: &'a BTreeMap<String, String>,
    /// The files changed since.
    pub changed: &'a BTreeSet<String>,
}

impl Earlier<'_> {
    /// Whether `file` can be taken from the earlier load: unchanged, and read by it.
    fn keeps(&self, file: &str) -> bool {
        !self.changed.contains(file) && self.files.contains_key(file)
    }

    /// Adds the earlier load's declarations of `file` to `decls`, in their order, with its
    /// text (and a JSON file's translation).
    fn take(&self, file: &str, decls: &mut ModuleDecls, files: &mut BTreeMap<String, String>) {
        let of_file = |d: &&BlockDecl| d.file == file;
        let from = self.decls;
        decls
            .variables
            .extend(from.variables.iter().filter(of_file).cloned());
        decls
            .resources
            .extend(from.resources.iter().filter(of_file).cloned());
        decls
            .calls
            .extend(from.calls.iter().filter(of_file).cloned());
        decls
            .outputs
            .extend(from.outputs.iter().filter(of_file).cloned());
        decls
            .providers
            .extend(from.providers.iter().filter(of_file).cloned());
        decls
            .locals
            .extend(from.locals.iter().filter(|l| l.file == file).cloned());
        if let Some(native) = from.json.get(file) {
            decls.json.insert(file.to_string(), native.clone());
        }
        files.insert(file.to_string(), self.files[file].clone());
    }
}

/// Reads and parses one configuration file, native or JSON, keeping its text in `files` (a
/// JSON file's native translation, line for line; see [`super::json`]).
fn read_configuration(
    path: &Path,
    file: &str,
    files: &mut BTreeMap<String, String>,
    json: &mut BTreeMap<String, Native>,
) -> Result<hcl::edit::structure::Body, LoadError> {
    let mut text = read_text(path)?;
    if is_json(file) {
        let native = to_native(file, &text)?;
        text = native.text.clone();
        json.insert(file.to_string(), native);
    }
    let body = parse(file, &text)?;
    files.insert(file.to_string(), text);
    Ok(body)
}

/// The configuration files among a directory's file names, in load order: `.tf` and
/// `.tf.json`; in an OpenTofu project (one with a `.tofu` or `.tofu.json` file) also those,
/// each taking the place of the `.tf` file of the same stem, as OpenTofu reads them.
fn configuration_files(names: &BTreeSet<String>) -> Vec<String> {
    const TOFU: [(&str, &str); 2] = [(".tofu", ".tf"), (".tofu.json", ".tf.json")];
    let tofu = names
        .iter()
        .any(|n| TOFU.iter().any(|(ext, _)| n.ends_with(ext)));
    names
        .iter()
        .filter(|name| {
            let terraform = name.ends_with(".tf") || name.ends_with(".tf.json");
            let opentofu = tofu && TOFU.iter().any(|(ext, _)| name.ends_with(ext));
            let replaced = tofu
                && TOFU.iter().any(|(ext, tf)| {
                    name.strip_suffix(tf)
                        .is_some_and(|stem| names.contains(&format!("{stem}{ext}")))
                });
            (terraform || opentofu) && !replaced
        })
        .cloned()
        .collect()
}

/// Whether a configuration file is an override file: `override.tf`, `*_override.tf` (and
/// their `.tf.json`, `.tofu` forms).
fn is_override(name: &str) -> bool {
    let stem = [".tf.json", ".tofu.json", ".tf", ".tofu"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(name);
    stem == "override" || stem.ends_with("_override")
}

/// Merges an override file into the module's declarations by Terraform's rules ("Override
/// Files"): each top-level block replaces, argument by argument, the one with the same
/// type and labels; a nested block type replaces all the original's blocks of that type,
/// but for a resource's `lifecycle`, merged argument by argument; each local replaces the
/// one of the same name. An override with no original is an error, as in Terraform.
fn apply_override(
    decls: &mut ModuleDecls,
    file: &str,
    body: hcl::edit::structure::Body,
    files: &BTreeMap<String, String>,
) -> Result<(), LoadError> {
    let text = files.get(file).map_or("", String::as_str);
    for block in body.into_blocks() {
        let at = block.span().unwrap_or_default().start;
        let missing = |what: String| LoadError::Invalid {
            file: file.to_string(),
            line: line_of(text, at),
            message: format!("override of {what}, which is not declared"),
        };
        let ident = block.ident.as_str().to_string();
        if ident == "locals" {
            for attr in block.body.into_attributes() {
                let name = attr.key.as_str().to_string();
                let local = LocalDecl {
                    file: file.to_string(),
                    name: name.clone(),
                    attr,
                };
                match decls.locals.iter_mut().find(|l| l.name == name) {
                    Some(original) => *original = local,
                    None => return Err(missing(format!("local.{name}"))),
                }
            }
            continue;
        }
        let list = match ident.as_str() {
            "variable" => &mut decls.variables,
            "resource" | "data" => &mut decls.resources,
            "module" => &mut decls.calls,
            "output" => &mut decls.outputs,
            _ => continue,
        };
        let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
        let original = list.iter_mut().find(|d| {
            d.block.ident.as_str() == ident
                && d.block
                    .labels
                    .iter()
                    .map(|l| l.as_str())
                    .eq(labels.iter().copied())
        });
        let Some(original) = original else {
            return Err(missing(format!("{ident} {}", labels.join("."))));
        };
        original.merge(file, block);
    }
    Ok(())
}

/// Sorts a file's top-level blocks into `decls`.
fn gather(decls: &mut ModuleDecls, file: &str, body: hcl::edit::structure::Body) {
    for block in body.into_blocks() {
        let decl = BlockDecl {
            file: file.to_string(),
            block,
            overridden: BTreeMap::new(),
        };
        match decl.block.ident.as_str() {
            "variable" => decls.variables.push(decl),
            "resource" | "data" => decls.resources.push(decl),
            "module" => decls.calls.push(decl),
            "output" => decls.outputs.push(decl),
            "provider" => decls.providers.push(decl),
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
) -> Result<(), LoadError> {
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
            return Err(LoadError::Invalid {
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
pub(super) fn installed_modules(root: &Path) -> Result<BTreeMap<String, String>, LoadError> {
    let path: PathBuf = root.join(".terraform/modules/modules.json");
    if !path.is_file() {
        return Ok(BTreeMap::new());
    }
    let text = read_text(&path)?;
    let parsed: ModulesJson = serde_json::from_str(&text).map_err(|error| LoadError::Invalid {
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

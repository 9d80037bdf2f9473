//! The modules of `reconciler` and of `retrace-terraform` in layers: in each crate no module's
//! code imports a later stage (tests inside a module may), and inside the stages listed in
//! [`INSIDE`] and [`TERRAFORM_INSIDE`] no module imports one above it, so each stage and each
//! of their modules can be read, tested and replaced knowing only what comes before it.
//! ARCHITECTURE.md lists the same order.
//!
//! Files are parsed with `syn`: every import form counts (`use crate::a::b`, `use
//! crate::{a, b::c}`, `use super::x`, `use child::x` in a `mod.rs`, and paths in code such as
//! `crate::x::f()`), and only the items marked `#[cfg(test)]` are skipped, wherever they sit.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The modules of `reconciler/src/`, earliest first: shared models, then the stages in the
/// order a run passes through them, then the layers that assemble and show them. `terraform`
/// is the `retrace-terraform` crate, re-exported.
const ORDER: &[&str] = &[
    "text",
    "terraform",
    "ingest",
    "attribute",
    "pipeline",
    "resolve",
    "intents",
    "ownership",
    "policy",
    "synthesize",
    "patch",
    "validate",
    "reconcile",
    "vet",
    "learn",
    "record",
    "agent",
    "run",
    "report",
    "config",
    "nightly",
    "fuzzing",
];

/// The modules inside a stage, lowest first. The stage's own `mod.rs` is its façade, above all
/// of them: it may use every one, and none may import what it defines.
const INSIDE: &[(&str, &[&str])] = &[
    (
        "synthesize",
        &[
            "tags", "defaults", "idiom", "settled", "nested", "place", "rules", "plan",
        ],
    ),
    (
        "synthesize::place",
        &[
            "model",
            "instances",
            "input",
            "entry",
            "site",
            "removal",
            "addition",
            "write",
        ],
    ),
    (
        "synthesize::plan",
        &[
            "model",
            "planner",
            "references",
            "conflicts",
            "attributes",
            "tags",
            "lifecycle",
        ],
    ),
    (
        "nightly::forge",
        &["model", "rest", "common", "github", "gitlab", "gitea"],
    ),
];

/// The modules of `terraform/src/` (the `retrace-terraform` crate), earliest first.
const TERRAFORM_ORDER: &[&str] = &[
    "text",
    "syntax",
    "source",
    "values",
    "state",
    "functions",
    "config",
    "edit",
];

/// The modules inside a stage of `retrace-terraform`, lowest first, as [`INSIDE`].
const TERRAFORM_INSIDE: &[(&str, &[&str])] = &[
    (
        "edit",
        &[
            "error",
            "value",
            "text",
            "align",
            "render",
            "locate",
            "ops",
            "outline",
            "instance",
            "tags",
            "filter",
            "workspace",
            "tools",
        ],
    ),
    (
        "config",
        &[
            "model",
            "json",
            "files",
            "expand",
            "types",
            "refactor",
            "loaded",
            "refs",
            "project",
            "providers",
            "provenance",
            "vars",
            "provider_data",
            "load",
        ],
    ),
];

/// The name the façade (`mod.rs`) of a stage has in the layering.
const FACADE: &str = "mod";

/// A module path from the crate root, such as `["config", "load"]`.
type ModPath = Vec<String>;

/// The layers a set of files is checked against.
struct Layers<'a> {
    stages: &'a [&'a str],
    inside: &'a [(&'a str, &'a [&'a str])],
}

/// A crate of the workspace: its directory and the layers of its library.
struct Checked {
    dir: &'static str,
    layers: Layers<'static>,
}

/// Every crate whose layers are checked.
const CRATES: &[Checked] = &[
    Checked {
        dir: "reconciler",
        layers: Layers {
            stages: ORDER,
            inside: INSIDE,
        },
    },
    Checked {
        dir: "terraform",
        layers: Layers {
            stages: TERRAFORM_ORDER,
            inside: TERRAFORM_INSIDE,
        },
    },
];

/// One source file: its module and its text.
struct Source {
    module: ModPath,
    name: String,
    text: String,
}

/// What a file's code refers to, outside its `#[cfg(test)]` items.
#[derive(Default)]
struct Scan {
    /// Each path as written (`use` trees expanded), with the module it is written in.
    paths: Vec<(ModPath, Vec<String>)>,
    /// The names each `use` binds in the file's own module, and the path it binds.
    bindings: Vec<(String, Vec<String>)>,
}

/// Walks a file's syntax, skipping items marked `#[cfg(test)]`.
struct Walker<'s> {
    scan: &'s mut Scan,
    module: ModPath,
    depth: usize,
}

/// Whether the attributes mark an item `#[cfg(test)]`.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

/// The attributes of an item (the kinds code is written in).
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Every path a `use` tree names, with the name each binds (none for a glob).
fn use_paths(tree: &syn::UseTree, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
    let join = |name: String| {
        let mut path = prefix.to_vec();
        path.push(name);
        path
    };
    match tree {
        syn::UseTree::Path(p) => use_paths(&p.tree, &join(p.ident.to_string()), out),
        syn::UseTree::Name(n) if n.ident == "self" => {
            out.push((prefix.to_vec(), prefix.last().cloned()));
        }
        syn::UseTree::Name(n) => out.push((join(n.ident.to_string()), Some(n.ident.to_string()))),
        syn::UseTree::Rename(r) => {
            let path = if r.ident == "self" {
                prefix.to_vec()
            } else {
                join(r.ident.to_string())
            };
            out.push((path, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix.to_vec(), None)),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_paths(t, prefix, out)),
    }
}

impl<'ast> Visit<'ast> for Walker<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if is_test_only(item_attrs(item)) {
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_none() {
            return;
        }
        self.module.push(item.ident.to_string());
        self.depth += 1;
        syn::visit::visit_item_mod(self, item);
        self.depth -= 1;
        self.module.pop();
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            _ => return syn::visit::visit_impl_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        use_paths(&item.tree, &[], &mut paths);
        for (path, name) in paths {
            if let (0, Some(name)) = (self.depth, name) {
                self.scan.bindings.push((name, path.clone()));
            }
            self.scan.paths.push((self.module.clone(), path));
        }
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(super)` names no import.
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.scan.paths.push((self.module.clone(), segments));
        syn::visit::visit_path(self, path);
    }
}

/// What the code of `source` refers to; a file that does not parse is an error naming it.
fn scan(source: &Source) -> Scan {
    let file = syn::parse_file(&source.text)
        .unwrap_or_else(|e| panic!("{}: does not parse: {e}", source.name));
    let mut scan = Scan::default();
    let mut walker = Walker {
        scan: &mut scan,
        module: source.module.clone(),
        depth: 0,
    };
    walker.visit_file(&file);
    scan
}

/// The modules of the crate, and what each file's module refers to and defines.
struct Crate {
    modules: BTreeSet<ModPath>,
    scans: Vec<(String, ModPath, Scan)>,
}

impl Crate {
    fn new(sources: &[Source]) -> Crate {
        Crate {
            modules: sources.iter().map(|s| s.module.clone()).collect(),
            scans: sources
                .iter()
                .map(|s| (s.name.clone(), s.module.clone(), scan(s)))
                .collect(),
        }
    }

    /// The module path `path`, written in `module`, names from the crate root; `None` for a
    /// path into another crate, a local name or a single plain name.
    fn absolute(&self, module: &[String], path: &[String]) -> Option<ModPath> {
        let first = path.first()?;
        let mut at: ModPath = module.to_vec();
        let mut rest = path;
        match first.as_str() {
            "crate" => {
                at.clear();
                rest = &path[1..];
            }
            "self" => rest = &path[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    at.pop()?;
                    rest = &rest[1..];
                }
            }
            _ => {
                let mut child = module.to_vec();
                child.push(first.clone());
                if path.len() < 2 || !self.modules.contains(&child) {
                    return None;
                }
            }
        }
        at.extend(rest.iter().cloned());
        Some(at)
    }

    /// The scan of the file of `module`.
    fn scan_of(&self, module: &[String]) -> Option<&Scan> {
        self.scans
            .iter()
            .find(|(_, m, _)| m == module)
            .map(|(_, _, scan)| scan)
    }

    /// The module of `stage` that `target` (from the crate root) points into: a child, the
    /// façade for what the stage's `mod.rs` defines itself, or `None` when it is outside the
    /// stage (a name the façade imports from elsewhere included).
    fn owner(&self, stage: &[String], target: &[String], hops: usize) -> Option<String> {
        if !target.starts_with(stage) || hops > 8 {
            return None;
        }
        let Some(name) = target.get(stage.len()) else {
            return Some(FACADE.to_owned()); // the stage itself: a glob of its façade
        };
        let mut child = stage.to_vec();
        child.push(name.clone());
        if self.modules.contains(&child) {
            return Some(name.clone());
        }
        let facade = self.scan_of(stage)?;
        if let Some((_, bound)) = facade.bindings.iter().find(|(n, _)| n == name) {
            let mut through = self.absolute(stage, bound)?;
            through.extend(target[stage.len() + 1..].iter().cloned());
            return self.owner(stage, &through, hops + 1);
        }
        Some(FACADE.to_owned())
    }

    /// Every import that points to a later stage, or up inside a stage of `layers.inside`.
    fn back_imports(&self, layers: &Layers) -> Vec<String> {
        let rank = |name: &str| layers.stages.iter().position(|m| *m == name);
        let mut wrong = BTreeSet::new();
        for (file, _, scan) in &self.scans {
            for (module, path) in &scan.paths {
                let Some(target) = self.absolute(module, path) else {
                    continue;
                };
                let shown = path.join("::");
                let (Some(mine), Some(theirs)) = (module.first(), target.first()) else {
                    continue;
                };
                if let (Some(a), Some(b)) = (rank(mine), rank(theirs))
                    && b > a
                {
                    wrong.insert(format!(
                        "{file}: `{shown}` imports the later stage {theirs}"
                    ));
                }
                for (stage, order) in layers.inside {
                    let stage: ModPath = stage.split("::").map(str::to_owned).collect();
                    if !module.starts_with(&stage) {
                        continue;
                    }
                    let mine = module.get(stage.len()).map_or(FACADE, String::as_str);
                    let Some(theirs) = self.owner(&stage, &target, 0) else {
                        continue;
                    };
                    let place = |name: &str| {
                        order
                            .iter()
                            .position(|m| *m == name)
                            .unwrap_or(if name == FACADE {
                                order.len()
                            } else {
                                usize::MAX
                            })
                    };
                    if place(&theirs) > place(mine) {
                        wrong.insert(format!(
                            "{file}: `{shown}` imports {theirs}, above {mine} in {}",
                            stage.join("::")
                        ));
                    }
                }
            }
        }
        wrong.into_iter().collect()
    }
}

/// The `src/` of the workspace crate in `dir`.
fn src(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(dir)
        .join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file of `src` is (`nightly/forge/mod.rs` → `nightly::forge`); `None` for the
/// binaries.
fn module_of(src: &Path, file: &Path) -> Option<ModPath> {
    let relative = file.strip_prefix(src).ok()?;
    let mut parts: ModPath = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    Some(parts)
}

/// Every library file of the crate in `dir`, named from the workspace root.
fn library(dir: &str) -> Vec<Source> {
    let src = src(dir);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|file| {
            let relative = file.strip_prefix(&src).ok()?;
            Some(Source {
                module: module_of(&src, &file)?,
                name: format!("{dir}/src/{}", relative.display()),
                text: std::fs::read_to_string(&file).expect("readable"),
            })
        })
        .collect()
}

#[test]
fn every_module_is_in_the_order() {
    let mut missing = Vec::new();
    for checked in CRATES {
        let Layers { stages, inside } = &checked.layers;
        let modules: BTreeSet<ModPath> =
            library(checked.dir).into_iter().map(|s| s.module).collect();
        for module in &modules {
            if let [stage] = module.as_slice()
                && !stages.contains(&stage.as_str())
            {
                missing.push(format!(
                    "{}: {stage} is missing from its order",
                    checked.dir
                ));
            }
        }
        for (stage, order) in *inside {
            let stage: ModPath = stage.split("::").map(str::to_owned).collect();
            for module in modules.iter().filter(|m| m.len() == stage.len() + 1) {
                let name = &module[stage.len()];
                if module.starts_with(&stage) && !order.contains(&name.as_str()) {
                    missing.push(format!(
                        "{}: {name} is missing from the order of {}",
                        checked.dir,
                        stage.join("::")
                    ));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn no_module_imports_a_later_stage_or_a_module_above_it() {
    let wrong: Vec<String> = CRATES
        .iter()
        .flat_map(|checked| Crate::new(&library(checked.dir)).back_imports(&checked.layers))
        .collect();
    assert!(
        wrong.is_empty(),
        "imports pointing back up:\n{}",
        wrong.join("\n")
    );
}

/// The back-imports the checker finds in small in-memory crates.
fn planted(files: &[(&str, &str)]) -> Vec<String> {
    let sources: Vec<Source> = files
        .iter()
        .map(|(name, text)| Source {
            module: name
                .split('/')
                .filter(|p| *p != "mod")
                .map(str::to_owned)
                .collect(),
            name: (*name).to_owned(),
            text: (*text).to_owned(),
        })
        .collect();
    let layers = Layers {
        stages: &["low", "stage", "high"],
        inside: &[("stage", &["model", "load"])],
    };
    Crate::new(&sources).back_imports(&layers)
}

/// A small crate: three stages, the middle one with two modules and a façade.
fn with(file: &str, text: &str) -> Vec<String> {
    let mut files = vec![
        ("low", "pub fn f() {}"),
        ("high", "pub fn g() {}"),
        (
            "stage/mod",
            "mod load; mod model; pub use model::Model; pub use load::Loaded; use crate::low::f; pub struct Own;",
        ),
        ("stage/model", "pub struct Model;"),
        ("stage/load", "pub struct Loaded;"),
    ];
    files.retain(|(name, _)| *name != file);
    files.push((file, text));
    planted(&files)
}

#[test]
fn the_checker_sees_every_import_form() {
    // Allowed: earlier stages, lower modules, the façade's re-exports of lower modules, and
    // whatever a test module imports.
    let fine = "use crate::low::f;\nuse super::model::Model;\nuse super::Model as M;\nfn a() { crate::low::f(); }\n#[cfg(test)]\nmod tests { use crate::high::g; use super::super::load::Loaded; }";
    assert_eq!(with("stage/model", fine), Vec::<String>::new());
    let forms = [
        ("use crate::high::g;", "later stage high"),
        ("use crate::{low::f, high::g};", "later stage high"),
        ("use crate::{low, high};", "later stage high"),
        ("fn a() { crate::high::g(); }", "later stage high"),
        ("fn a(_: crate::high::G) {}", "later stage high"),
        ("use super::super::high::g;", "later stage high"),
        ("use super::load::Loaded;", "load, above model"),
        ("use super::{load};", "load, above model"),
        ("use super::Loaded;", "load, above model"),
        ("use super::Own;", "mod, above model"),
        ("use super::*;", "mod, above model"),
        ("fn a() { super::load::Loaded; }", "load, above model"),
        ("use crate::stage::load::Loaded;", "load, above model"),
        // Code after a test module is read.
        (
            "#[cfg(test)]\nmod tests {}\nuse crate::high::g;",
            "later stage high",
        ),
        // An inline module's `super` is the file's module.
        (
            "mod inner { use super::super::load::Loaded; }",
            "load, above model",
        ),
    ];
    for (code, expected) in forms {
        let found = with("stage/model", code);
        assert!(
            found.len() == 1 && found[0].contains(expected),
            "{code}: {found:?}"
        );
    }
    // A façade's `use child::x` is relative to it, and it may use every module of its stage.
    assert_eq!(
        with(
            "stage/mod",
            "mod load; mod model; use load::Loaded; use model::Model;"
        ),
        Vec::<String>::new()
    );
    // A test-only function or method is skipped like a test module.
    let skipped = "#[cfg(test)]\nfn t() { crate::high::g(); }\nstruct S;\nimpl S {\n    #[cfg(test)]\n    fn t() { crate::high::g(); }\n}";
    assert_eq!(with("stage/model", skipped), Vec::<String>::new());
}

/// The lines of `text` outside the items marked `#[cfg(test)]` (1-based numbers with them).
fn lines_outside_tests(text: &str, name: &str) -> Vec<(usize, String)> {
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{name}: does not parse: {e}"));
    let mut tests = Vec::new();
    collect_test_spans(&file.items, &mut tests);
    text.lines()
        .enumerate()
        .map(|(n, line)| (n + 1, line.to_owned()))
        .filter(|(n, _)| !tests.iter().any(|(a, b)| a <= n && n <= b))
        .collect()
}

/// The first and last line of each item marked `#[cfg(test)]`, in inline modules too.
fn collect_test_spans(items: &[syn::Item], out: &mut Vec<(usize, usize)>) {
    use syn::spanned::Spanned;
    for item in items {
        if is_test_only(item_attrs(item)) {
            let span = item.span();
            out.push((span.start().line, span.end().line));
        } else if let syn::Item::Mod(m) = item
            && let Some((_, inner)) = &m.content
        {
            collect_test_spans(inner, out);
        }
    }
}

#[test]
fn test_items_are_found_by_their_lines() {
    let text = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn b() {}\n}\nfn c() {}\n";
    let kept: Vec<usize> = lines_outside_tests(text, "x")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(kept, [1, 6]);
}

#[test]
fn no_user_text_is_rust_debug_output() {
    // `{:?}` and `{x:?}` print Rust's debug form; user-facing text names values in plain
    // words. Logs (`tracing` fields) and tests may use it.
    let mut found = Vec::new();
    for source in CRATES.iter().flat_map(|checked| library(checked.dir)) {
        for (n, line) in lines_outside_tests(&source.text, &source.name) {
            let debug = line.contains(":?}") || line.contains("{:#?}");
            let logged = ["debug!", "trace!", "info!", "warn!", "error!"]
                .iter()
                .any(|m| line.contains(m));
            if debug && !logged && !line.trim_start().starts_with("//") {
                found.push(format!("{}:{n}: {}", source.name, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "debug formatting in user text:\n{}",
        found.join("\n")
    );
}

#[test]
fn inside_orders_name_real_modules_once() {
    for checked in CRATES {
        let inside = checked.layers.inside;
        for (stage, order) in inside {
            let unique: BTreeSet<&&str> = order.iter().collect();
            assert_eq!(unique.len(), order.len(), "{stage} lists a module twice");
        }
        let modules: BTreeMap<String, ()> = library(checked.dir)
            .into_iter()
            .map(|s| (s.module.join("::"), ()))
            .collect();
        for (stage, order) in inside {
            for name in *order {
                assert!(
                    modules.contains_key(&format!("{stage}::{name}")),
                    "{}: {stage}::{name} is no module",
                    checked.dir
                );
            }
        }
    }
}

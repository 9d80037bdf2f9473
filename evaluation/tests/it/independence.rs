//! The benchmark's ground truth and judges are independent of the product they judge: no file
//! of the evaluation library outside `contender/` (retrace run as the system under test) uses
//! product code other than the data types of Terraform state (`reconciler::terraform::state`)
//! and the provider schema's data (`knowledge::schema`), and only the harness hands a scenario
//! to the contender. The files that still reach further are listed in [`EXEMPT`], each with
//! its reason, so the remaining gap stays in sight.
//!
//! Files are parsed with `syn`: every `use` tree and every path in code counts; the items
//! marked `#[cfg(test)]` are skipped.

use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The product's crates.
const PRODUCT: [&str; 2] = ["reconciler", "knowledge"];

/// The product code every file may use: data types, not behaviour.
const ALLOWED: [&str; 2] = ["reconciler::terraform::state", "knowledge::schema"];

/// Files (under `evaluation/src/`) that still use more of the product, and why.
const EXEMPT: &[(&str, &str)] = &[];

/// The harness, which hands each scenario to the system under test: the only file that may
/// use `crate::contender`.
const HARNESS: &str = "score/mod.rs";

/// The library's sources, relative to `evaluation/src/`, outside `contender/` and `bin/`.
fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut todo = vec![root.clone()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(&root).unwrap().to_owned();
            if path.is_dir() && relative != Path::new("contender") && relative != Path::new("bin") {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(relative);
            }
        }
    }
    out.sort();
    out
}

/// Every path a file's code names outside its `#[cfg(test)]` items, as `a::b::c`.
#[derive(Default)]
struct Paths(Vec<String>);

/// Whether the attributes mark an item `#[cfg(test)]`.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

/// The full paths a `use` tree names.
fn use_paths(tree: &syn::UseTree, prefix: &str, out: &mut Vec<String>) {
    let join = |name: &dyn std::fmt::Display| match prefix {
        "" => name.to_string(),
        _ => format!("{prefix}::{name}"),
    };
    match tree {
        syn::UseTree::Path(p) => use_paths(&p.tree, &join(&p.ident), out),
        syn::UseTree::Name(n) => out.push(join(&n.ident)),
        syn::UseTree::Rename(r) => out.push(join(&r.ident)),
        syn::UseTree::Glob(_) => out.push(join(&"*")),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_paths(t, prefix, out)),
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Const(i) => &i.attrs,
            _ => &[],
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        use_paths(&item.tree, "", &mut self.0);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.0.push(segments.join("::"));
        syn::visit::visit_path(self, path);
    }
}

/// The paths the code of `text` names.
fn paths(text: &str) -> Vec<String> {
    let mut paths = Paths::default();
    paths.visit_file(&syn::parse_file(text).unwrap());
    paths.0
}

/// The product code a path names beyond the allowed data types (a lone `knowledge` is a
/// local name: a crate is named with a path below it).
fn beyond_data(path: &str) -> bool {
    let below = |prefix: &str| path.starts_with(&format!("{prefix}::"));
    PRODUCT.iter().any(|c| below(c)) && !ALLOWED.iter().any(|a| path == *a || below(a))
}

/// Whether a path names the contender.
fn names_the_contender(path: &str) -> bool {
    path == "crate::contender" || path.starts_with("crate::contender::")
}

#[test]
fn the_simulator_generator_and_judges_use_only_the_data_types_of_the_product() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources();
    assert!(files.len() > 40, "{files:?}");
    let mut problems = Vec::new();
    for file in &files {
        let name = file.to_string_lossy().into_owned();
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let paths = paths(&text);
        let exempt = EXEMPT.iter().any(|(f, _)| *f == name);
        let beyond: Vec<&String> = paths.iter().filter(|p| beyond_data(p)).collect();
        match (exempt, beyond.is_empty()) {
            (false, false) => problems.push(format!("{name} uses {beyond:?}")),
            (true, true) => problems.push(format!(
                "{name} is exempt but uses only the data types: take it off EXEMPT"
            )),
            _ => {}
        }
        if name != HARNESS && paths.iter().any(|p| names_the_contender(p)) {
            problems.push(format!("{name} uses the contender: only the harness may"));
        }
    }
    for (file, _) in EXEMPT {
        if !files.iter().any(|f| f == Path::new(file)) {
            problems.push(format!("EXEMPT names {file}, which is not a source"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn product_paths_are_found_in_use_trees_and_code_and_not_in_tests() {
    let found = paths(
        r#"
use reconciler::terraform::{state::State, config::Project};
use knowledge::{schema::ProviderSchema, rules::RuleSet as Rules};
use crate::contender::*;
fn f() { let _ = reconciler::ingest::record::api_name("x"); }
#[cfg(test)]
mod tests { use reconciler::validate::Sandbox; }
"#,
    );
    let beyond: Vec<&String> = found.iter().filter(|p| beyond_data(p)).collect();
    assert_eq!(
        beyond,
        [
            "reconciler::terraform::config::Project",
            "knowledge::rules::RuleSet",
            "reconciler::ingest::record::api_name",
        ]
    );
    assert!(found.iter().any(|p| names_the_contender(p)));
    assert!(!beyond_data("reconciler::terraform::state::tfstate_json"));
    assert!(!beyond_data("knowledge::schema"));
    assert!(!beyond_data("knowledge"));
    assert!(beyond_data("reconciler::terraform"));
    assert!(beyond_data("reconciler::terraform::stateful"));
}

//! The crate's modules in pipeline order: no module's code imports a later one (tests inside a
//! module may), so each stage can be read, tested and replaced knowing only what comes
//! before it. ARCHITECTURE.md lists the same order.

use std::path::{Path, PathBuf};

/// The modules of `src/`, earliest first: shared models, then the stages in the order a run
/// passes through them, then the layers that assemble and show them.
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

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The module a file of `src/` belongs to (`ingest/files.rs` → `ingest`).
fn module_of(file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src()).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_owned())
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

/// The modules named by `crate::NAME` in the code of `text` before its tests.
fn imports(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices("crate::") {
            let name: String = line[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

#[test]
fn every_module_is_in_the_order() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    for line in lib.lines() {
        if let Some(name) = line.strip_prefix("pub mod ") {
            let name = name.trim_end_matches(';');
            assert!(ORDER.contains(&name), "{name} is missing from ORDER");
        }
    }
}

#[test]
fn no_module_imports_a_later_stage() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let rank = |name: &str| ORDER.iter().position(|m| *m == name);
    let mut wrong = Vec::new();
    for file in files {
        let Some(module) = module_of(&file) else {
            continue;
        };
        let Some(mine) = rank(&module) else {
            continue; // lib.rs, the binaries
        };
        let text = std::fs::read_to_string(&file).expect("readable");
        for name in imports(&text) {
            if rank(&name).is_some_and(|theirs| theirs > mine) {
                wrong.push(format!("{} imports {name}", file.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "later stages imported:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_import_scan_sees_paths_and_skips_comments_and_tests() {
    let text = "use crate::intents::Delta;\n// crate::report\nfn f() { crate::text::value(&v); }\n#[cfg(test)]\nmod tests { use crate::run; }";
    assert_eq!(imports(text), ["intents", "text"]);
}

#[test]
fn no_user_text_is_rust_debug_output() {
    // `{:?}` and `{x:?}` print Rust's debug form; user-facing text names values in plain
    // words. Logs (`tracing` fields) and tests may use it.
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            let debug = line.contains(":?}") || line.contains("{:#?}");
            let logged = ["debug!", "trace!", "info!", "warn!", "error!"]
                .iter()
                .any(|m| line.contains(m));
            if debug && !logged && !line.trim_start().starts_with("//") {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "debug formatting in user text:\n{}",
        found.join("\n")
    );
}

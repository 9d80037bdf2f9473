//! The initialised working directory `terraform init` leaves (`.terraform` and the dependency
//! lock file), kept between runs under the cache directory as `KEY/`, where the key is a digest
//! of everything init reads: the binary and its version, where the provider comes from, the
//! project's lock file, the installed modules' manifest, and of every module the root reaches
//! through local paths its `terraform` and `module` blocks and the providers its resources
//! and data sources use. Code that changes nothing of these (the usual patch) finds the
//! directory initialised; each check links it into its scratch copy.

use super::{Providers, Runner, Tool};
use crate::validate::ValidateError;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The file marking a cache entry complete.
const READY: &str = "ready";

/// The dependency lock file.
const LOCK_FILE: &str = ".terraform.lock.hcl";

/// The working directory a check plans in: initialised in place, or linked from the cache.
#[derive(Debug)]
pub(super) struct Workdir {
    /// The cache entry linked in, when there is one.
    entry: Option<PathBuf>,
}

impl Workdir {
    /// Initialises the scratch copy itself (no cache), its AWS provider from `providers`.
    pub(super) fn init_in_place(
        run: &Runner,
        providers: &Providers,
    ) -> Result<Workdir, ValidateError> {
        init(run, providers)?;
        Ok(Workdir { entry: None })
    }

    /// The cache entry `key` under `cache`, initialised now in the scratch copy and stored
    /// when missing, linked into the scratch copy.
    pub(super) fn cached(
        cache: &Path,
        key: &str,
        run: &Runner,
        providers: &Providers,
    ) -> Result<Workdir, ValidateError> {
        let entry = cache.join(key);
        let scratch = |source| ValidateError::Scratch {
            root: run.dir.clone(),
            source,
        };
        if entry.join(READY).is_file() {
            tracing::debug!(entry = %entry.display(), "reusing terraform's initialised working directory");
        } else {
            init(run, providers)?;
            store(&run.dir, cache, &entry).map_err(scratch)?;
        }
        link(&run.dir, &entry).map_err(scratch)?;
        Ok(Workdir { entry: Some(entry) })
    }

    /// Whether the directory came from the cache.
    pub(super) fn cached_entry(&self) -> bool {
        self.entry.is_some()
    }

    /// Removes the cache entry (it did not fit after all), so the next check initialises anew.
    pub(super) fn discard(&self) {
        if let Some(entry) = &self.entry {
            tracing::debug!(entry = %entry.display(), "terraform asked for init: the cached working directory is dropped");
            let _ = std::fs::remove_dir_all(entry);
        }
    }
}

/// `terraform init` in the scratch copy, the project's own providers linked in first when they
/// are the source.
fn init(run: &Runner, providers: &Providers) -> Result<(), ValidateError> {
    let dot = run.dir.join(".terraform");
    // A link left by a cache entry that is gone.
    if dot.is_symlink() {
        let _ = std::fs::remove_file(&dot);
    }
    if let Providers::Initialised(from) = providers {
        let fail = |source| ValidateError::Scratch {
            root: run.dir.clone(),
            source,
        };
        std::fs::create_dir_all(&dot).map_err(fail)?;
        std::os::unix::fs::symlink(from, dot.join("providers")).map_err(fail)?;
    }
    run.init(providers)
}

/// Moves the scratch copy's `.terraform` and lock file into the cache as `entry`, whole or
/// not at all (another process storing the same entry first wins).
fn store(dir: &Path, cache: &Path, entry: &Path) -> std::io::Result<()> {
    let partial = tempfile::Builder::new()
        .prefix(".partial-")
        .tempdir_in(cache)?;
    std::fs::rename(dir.join(".terraform"), partial.path().join(".terraform"))?;
    if dir.join(LOCK_FILE).is_file() {
        std::fs::copy(dir.join(LOCK_FILE), partial.path().join(LOCK_FILE))?;
    }
    std::fs::write(partial.path().join(READY), "")?;
    let kept = partial.keep();
    if std::fs::rename(&kept, entry).is_err() {
        std::fs::remove_dir_all(&kept)?;
    }
    Ok(())
}

/// Points the scratch copy's `.terraform` at the cache entry and gives it the entry's lock
/// file when it has none.
fn link(dir: &Path, entry: &Path) -> std::io::Result<()> {
    let dot = dir.join(".terraform");
    if dot.is_symlink() {
        std::fs::remove_file(&dot)?;
    } else if dot.exists() {
        std::fs::remove_dir_all(&dot)?;
    }
    std::os::unix::fs::symlink(entry.join(".terraform"), &dot)?;
    if !dir.join(LOCK_FILE).exists() && entry.join(LOCK_FILE).is_file() {
        std::fs::copy(entry.join(LOCK_FILE), dir.join(LOCK_FILE))?;
    }
    Ok(())
}

/// The cache key of the project copied at `dir` (hex SHA-256 of what init reads).
pub(super) fn key(dir: &Path, tool: &Tool, providers: &Path) -> String {
    let mut hash = Sha256::new();
    let mut add = |label: &str, text: &str| {
        hash.update(label.as_bytes());
        hash.update([0]);
        hash.update(text.as_bytes());
        hash.update([0]);
    };
    add("tool", &format!("{} {}", tool.name, tool.version));
    add("providers", &providers.display().to_string());
    for name in [LOCK_FILE, ".terraform/modules/modules.json"] {
        add(
            name,
            &std::fs::read_to_string(dir.join(name)).unwrap_or_default(),
        );
    }
    let mut seen = BTreeSet::new();
    let mut todo = vec![(String::from("."), dir.to_owned())];
    while let Some((label, module)) = todo.pop() {
        let Ok(canonical) = module.canonicalize() else {
            continue;
        };
        if !seen.insert(canonical) {
            continue;
        }
        // The providers the module's resources use, over all its files.
        let mut used = BTreeSet::new();
        for inputs in init_inputs(&module) {
            if !inputs.blocks.is_empty() {
                add(&format!("{label}/{}", inputs.file), &inputs.blocks);
            }
            used.extend(inputs.providers);
            todo.extend(
                inputs
                    .sources
                    .into_iter()
                    .map(|source| (format!("{label}/{source}"), module.join(source))),
            );
        }
        let used: Vec<String> = used.into_iter().map(|p| p.to_string()).collect();
        add(&format!("{label} providers"), &used.join(","));
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// What init reads in one configuration file.
#[derive(Debug, Default, PartialEq)]
struct Inputs {
    /// The file's name.
    file: String,
    /// The text of its `terraform`, `module` and `provider` blocks (the whole text when it
    /// does not parse: init fails on it as the plan will).
    blocks: String,
    /// The provider a resource or data source uses: its `provider` argument, else the type's
    /// prefix (`aws` of `aws_vpc`).
    providers: BTreeSet<String>,
    /// The local module sources it calls (`./` and `../` paths).
    sources: Vec<String>,
}

/// What init reads in each configuration file of a module directory, in name order.
fn init_inputs(module: &Path) -> Vec<Inputs> {
    let Ok(entries) = std::fs::read_dir(module) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            [".tf", ".tofu", ".tf.json", ".tofu.json"]
                .iter()
                .any(|s| n.ends_with(s))
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|name| {
            let text = std::fs::read_to_string(module.join(&name)).ok()?;
            let inputs = if name.ends_with(".json") {
                json_inputs(&text)
            } else {
                hcl_inputs(&text)
            };
            Some(Inputs {
                file: name,
                ..inputs
            })
        })
        .collect()
}

/// [`Inputs`] of a native-syntax file.
fn hcl_inputs(text: &str) -> Inputs {
    let Ok(body) = hcl::parse(text) else {
        return Inputs {
            blocks: text.to_owned(),
            ..Inputs::default()
        };
    };
    let mut out = Inputs::default();
    for block in body.blocks() {
        let argument = |name: &str| {
            block
                .body()
                .attributes()
                .find(|a| a.key() == name)
                .map(|a| a.expr().clone())
        };
        match block.identifier() {
            "terraform" | "module" | "provider" => {
                out.blocks
                    .push_str(&hcl::format::to_string(block).unwrap_or_default());
                out.blocks.push('\n');
                if let Some(hcl::Expression::String(source)) = argument("source")
                    && block.identifier() == "module"
                    && is_local(&source)
                {
                    out.sources.push(source);
                }
            }
            "resource" | "data" => {
                let provider = match argument("provider") {
                    Some(expr) => expr.to_string(),
                    None => block
                        .labels()
                        .first()
                        .and_then(|t| t.as_str().split('_').next())
                        .unwrap_or_default()
                        .to_owned(),
                };
                out.providers.insert(provider);
            }
            _ => {}
        }
    }
    out
}

/// [`Inputs`] of a JSON-syntax file.
fn json_inputs(text: &str) -> Inputs {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return Inputs {
            blocks: text.to_owned(),
            ..Inputs::default()
        };
    };
    let mut out = Inputs::default();
    for key in ["terraform", "module", "provider"] {
        out.blocks.push_str(&format!("{key} {}\n", doc[key]));
    }
    for key in ["resource", "data"] {
        out.providers.extend(
            doc[key]
                .as_object()
                .into_iter()
                .flat_map(|m| m.keys())
                .filter_map(|t| t.split('_').next())
                .map(str::to_owned),
        );
    }
    out.sources = doc["module"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .filter_map(|call| call["source"].as_str())
        .filter(|s| is_local(s))
        .map(str::to_owned)
        .collect();
    out
}

/// Whether a module source is a local path.
fn is_local(source: &str) -> bool {
    source.starts_with("./") || source.starts_with("../")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tool() -> Tool {
        Tool {
            name: "terraform",
            version: "Terraform v1.11.4".into(),
        }
    }

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn key_of(files: &[(&str, &str)]) -> String {
        let dir = project(files);
        key(dir.path(), &tool(), Path::new("/opt/tf-plugins"))
    }

    const MAIN: &str = "terraform {\n  required_providers {\n    aws = {\n      source  = \"hashicorp/aws\"\n      version = \"~> 5.0\"\n    }\n  }\n}\n\nmodule \"net\" {\n  source = \"./modules/net\"\n}\n\nresource \"aws_sqs_queue\" \"jobs\" {\n  delay_seconds = 0\n}\n";
    const NET: &str = "resource \"aws_vpc\" \"main\" {\n  cidr_block = \"10.0.0.0/16\"\n}\n";

    #[test]
    fn a_patch_to_arguments_keeps_the_key_what_init_reads_changes_it() {
        let base = key_of(&[("main.tf", MAIN), ("modules/net/main.tf", NET)]);
        assert_eq!(base.len(), 64);
        // The usual patch: an argument's value, in the root and in a local module.
        let patched = MAIN.replace("delay_seconds = 0", "delay_seconds = 5");
        let module = NET.replace("10.0.0.0/16", "10.1.0.0/16");
        assert_eq!(
            key_of(&[("main.tf", &patched), ("modules/net/main.tf", &module)]),
            base
        );
        // A new file of resources of a provider already used.
        let import = "import {\n  to = aws_sqs_queue.more\n  id = \"q\"\n}\n\nresource \"aws_sqs_queue\" \"more\" {}\n";
        assert_eq!(
            key_of(&[
                ("main.tf", MAIN),
                ("modules/net/main.tf", NET),
                ("imports.tf", import)
            ]),
            base
        );
        // A provider version constraint, a lock file, a module source, a provider reached
        // only through a local module's resources: each is read by init.
        let constraint = MAIN.replace("~> 5.0", "~> 5.90");
        let other_source = MAIN.replace("./modules/net", "./modules/net2");
        let random = format!("{NET}resource \"random_id\" \"x\" {{}}\n");
        for files in [
            vec![
                ("main.tf", constraint.as_str()),
                ("modules/net/main.tf", NET),
            ],
            vec![
                ("main.tf", MAIN),
                ("modules/net/main.tf", NET),
                (
                    LOCK_FILE,
                    "provider \"registry.terraform.io/hashicorp/aws\" {}\n",
                ),
            ],
            vec![
                ("main.tf", other_source.as_str()),
                ("modules/net2/main.tf", NET),
            ],
            vec![("main.tf", MAIN), ("modules/net/main.tf", random.as_str())],
        ] {
            assert_ne!(key_of(&files), base, "{files:?}");
        }
    }

    #[test]
    fn the_key_names_the_binary_and_the_provider_source() {
        let dir = project(&[("main.tf", MAIN)]);
        let base = key(dir.path(), &tool(), Path::new("/opt/tf-plugins"));
        let tofu = Tool {
            name: "tofu",
            version: "OpenTofu v1.9.0".into(),
        };
        assert_ne!(key(dir.path(), &tofu, Path::new("/opt/tf-plugins")), base);
        assert_ne!(key(dir.path(), &tool(), Path::new("/elsewhere")), base);
    }

    #[test]
    fn json_files_count_as_native_ones_do() {
        let json = r#"{"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws"}}},
            "module": {"net": {"source": "./net"}}, "resource": {"aws_vpc": {"a": {}}}}"#;
        let inputs = json_inputs(json);
        assert_eq!(inputs.sources, ["./net"]);
        assert!(inputs.blocks.contains("hashicorp/aws"), "{inputs:?}");
        assert_eq!(inputs.providers, BTreeSet::from(["aws".to_owned()]));
    }
}

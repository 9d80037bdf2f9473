//! The frozen dataset: what `retrace-eval dataset` exports and `retrace-eval run --dataset`
//! reads. Every scenario is self-contained (its whole trail, the background day included, as
//! gzip-compressed JSON Lines), the fixture projects sit beside the scenarios, and a manifest
//! names the dataset's version and every file's SHA-256, so a result file can say which
//! benchmark it was measured on and a reader can check each file before use.
//!
//! Layout of an export:
//! - `MANIFEST.json`: [`Manifest`];
//! - `DATASHEET.md`: what is simulated, what is real, known biases, licence;
//! - `load.py`: a loader for Python (standard library only);
//! - `index.jsonl`: one line per scenario (id, project, category, directory, records);
//! - `projects/<project>/`: the fixture projects (code and pre-drift `terraform.tfstate`);
//! - `scenarios/<project>/<id>/`: `scenario.json` (the ground truth), `post.tfstate` (the
//!   post-drift state as a delta, as under `scenarios/`), `trail.json` (the records the drift
//!   itself made: a label, never given to a system under test) and `trail.jsonl.gz` (every
//!   record the system reads, in delivery order, one per line).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The dataset's name.
pub const NAME: &str = "retrace-drift";

/// The dataset's version: bump it whenever a scenario, a fixture project or the background
/// generator's output changes, so equal versions mean equal inputs.
pub const VERSION: &str = "1.2.2";

/// The manifest's file name.
pub const MANIFEST: &str = "MANIFEST.json";

/// The file every exported scenario's whole trail is in.
pub const TRAIL: &str = "trail.jsonl.gz";

/// Reading or writing a dataset failed.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The manifest is not the JSON it should be.
    #[error("{path}: {message}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file is not in the manifest.
    #[error("{0}: not listed in the dataset's manifest")]
    Unlisted(String),
    /// A file's bytes are not those the manifest names.
    #[error(
        "{path}: SHA-256 {actual}, but the manifest names {expected}; the dataset is damaged or altered"
    )]
    Checksum {
        /// The file, relative to the dataset root.
        path: String,
        /// The manifest's digest.
        expected: String,
        /// The file's digest.
        actual: String,
    },
}

/// One file of the dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// SHA-256 of its bytes, lower-case hex.
    pub sha256: String,
    /// Its size.
    pub bytes: u64,
}

/// `MANIFEST.json`: the dataset's identity and every other file's checksum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`NAME`].
    pub name: String,
    /// [`VERSION`].
    pub version: String,
    /// The program that exported it, with its version.
    pub generator: String,
    /// The licence the data is under.
    pub licence: String,
    /// Scenarios in the dataset.
    pub scenarios: usize,
    /// CloudTrail records over all trails.
    pub records: usize,
    /// Every file but the manifest, by path relative to the root (`/`-separated).
    pub files: BTreeMap<String, FileEntry>,
}

/// Which dataset a run read, as its results record it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetRef {
    /// The dataset's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// SHA-256 of its `MANIFEST.json`.
    pub manifest_sha256: String,
}

/// A dataset opened for reading: its root, manifest and the manifest's digest.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The dataset's root directory.
    pub root: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// SHA-256 of `MANIFEST.json`.
    pub manifest_sha256: String,
}

impl Opened {
    /// Opens the dataset at `root`, reading its manifest.
    pub fn open(root: &Path) -> Result<Opened, DatasetError> {
        let path = root.join(MANIFEST);
        let bytes = read(&path)?;
        let manifest = serde_json::from_slice(&bytes).map_err(|e| DatasetError::Manifest {
            path: path.clone(),
            message: e.to_string(),
        })?;
        Ok(Opened {
            root: root.to_owned(),
            manifest,
            manifest_sha256: sha256_hex(&bytes),
        })
    }

    /// What a result file records about this dataset.
    pub fn reference(&self) -> DatasetRef {
        DatasetRef {
            name: self.manifest.name.clone(),
            version: self.manifest.version.clone(),
            manifest_sha256: self.manifest_sha256.clone(),
        }
    }

    /// Checks every file but the trails (each checked when read) against the manifest, and
    /// that no listed file is missing.
    pub fn verify_small_files(&self) -> Result<(), DatasetError> {
        for path in self.manifest.files.keys() {
            if !path.ends_with(TRAIL) {
                self.verify(&self.root.join(path))?;
            }
        }
        Ok(())
    }

    /// Checks the trail at `path` against the manifest and counts its records.
    pub fn trail_records(&self, path: &Path) -> Result<usize, DatasetError> {
        let bytes = self.verify(path)?;
        let mut lines = 0;
        let mut decoder = flate2::read::GzDecoder::new(bytes.as_slice());
        let mut buffer = [0u8; 64 * 1024];
        loop {
            let read = std::io::Read::read(&mut decoder, &mut buffer).map_err(|source| {
                DatasetError::Io {
                    path: path.to_owned(),
                    source,
                }
            })?;
            if read == 0 {
                return Ok(lines);
            }
            lines += buffer[..read].iter().filter(|b| **b == b'\n').count();
        }
    }

    /// Checks the file at `path` (under the root) against the manifest; its bytes.
    pub fn verify(&self, path: &Path) -> Result<Vec<u8>, DatasetError> {
        let relative = relative(&self.root, path);
        let entry = self
            .manifest
            .files
            .get(&relative)
            .ok_or_else(|| DatasetError::Unlisted(relative.clone()))?;
        let bytes = read(path)?;
        let actual = sha256_hex(&bytes);
        if actual != entry.sha256 {
            return Err(DatasetError::Checksum {
                path: relative,
                expected: entry.sha256.clone(),
                actual,
            });
        }
        Ok(bytes)
    }
}

/// A JSON value written with every object's keys in sorted order, whichever map serde_json
/// was built with: a build that turns on its `preserve_order` feature (any crate of the
/// workspace may) would otherwise write keys in insertion order, and the dataset's bytes and
/// checksums would depend on how the binary was built.
pub struct Canonical<'a>(pub &'a Value);

impl serde::Serialize for Canonical<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = serializer.serialize_map(Some(keys.len()))?;
                for key in keys {
                    out.serialize_entry(key, &Canonical(&map[key]))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Canonical(item))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// Writes records as gzip-compressed JSON Lines, all or nothing (through a temporary file).
pub fn write_trail(path: &Path, records: &[Value]) -> Result<(), DatasetError> {
    let io = |source| DatasetError::Io {
        path: path.to_owned(),
        source,
    };
    let tmp = path.with_extension("tmp");
    let file = std::fs::File::create(&tmp).map_err(io)?;
    let mut gz = flate2::write::GzEncoder::new(
        std::io::BufWriter::new(file),
        flate2::Compression::default(),
    );
    for record in records {
        serde_json::to_writer(&mut gz, &Canonical(record)).map_err(|e| io(e.into()))?;
        gz.write_all(b"\n").map_err(io)?;
    }
    gz.finish().and_then(|mut w| w.flush()).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// The manifest of the files under `root` (all but an existing manifest).
pub fn manifest_of(
    root: &Path,
    scenarios: usize,
    records: usize,
) -> Result<Manifest, DatasetError> {
    let mut files = BTreeMap::new();
    for path in files_under(root)? {
        let relative = relative(root, &path);
        if relative == MANIFEST {
            continue;
        }
        let bytes = read(&path)?;
        files.insert(
            relative,
            FileEntry {
                sha256: sha256_hex(&bytes),
                bytes: bytes.len() as u64,
            },
        );
    }
    Ok(Manifest {
        name: NAME.to_owned(),
        version: VERSION.to_owned(),
        generator: format!("retrace-eval {}", env!("CARGO_PKG_VERSION")),
        licence: env!("CARGO_PKG_LICENSE").to_owned(),
        scenarios,
        records,
        files,
    })
}

/// Every file under `dir`, recursively, sorted.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>, DatasetError> {
    let io = |source| DatasetError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            out.extend(files_under(&path)?);
        } else {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// `path` relative to `root`, `/`-separated.
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// SHA-256 of bytes, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read(path: &Path) -> Result<Vec<u8>, DatasetError> {
    std::fs::read(path).map_err(|source| DatasetError::Io {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_every_objects_keys() {
        let mut inner = serde_json::Map::new();
        inner.insert("zeta".into(), json!(1));
        inner.insert("alpha".into(), json!([{"b": 2, "a": 1}]));
        let mut outer = serde_json::Map::new();
        outer.insert("y".into(), Value::Object(inner));
        outer.insert("x".into(), json!(null));
        let text = serde_json::to_string(&Canonical(&Value::Object(outer))).unwrap();
        assert_eq!(text, r#"{"x":null,"y":{"alpha":[{"a":1,"b":2}],"zeta":1}}"#);
    }

    #[test]
    fn a_manifest_lists_every_file_and_catches_a_changed_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("scenarios/p/a")).unwrap();
        let trail = root.join("scenarios/p/a").join(TRAIL);
        write_trail(
            &trail,
            &[json!({"eventName": "A"}), json!({"eventName": "B"})],
        )
        .unwrap();
        std::fs::write(root.join("index.jsonl"), "{}\n").unwrap();
        let manifest = manifest_of(root, 1, 2).unwrap();
        let names: Vec<&str> = manifest.files.keys().map(String::as_str).collect();
        assert_eq!(names, ["index.jsonl", "scenarios/p/a/trail.jsonl.gz"]);
        // sha256("{}\n"), worked out with sha256sum.
        assert_eq!(
            manifest.files["index.jsonl"].sha256,
            "ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356"
        );
        std::fs::write(root.join(MANIFEST), serde_json::to_vec(&manifest).unwrap()).unwrap();
        let opened = Opened::open(root).unwrap();
        assert_eq!(opened.trail_records(&trail).unwrap(), 2);
        std::fs::write(root.join("index.jsonl"), "{\"x\":1}\n").unwrap();
        let damaged = opened.verify(&root.join("index.jsonl"));
        assert!(
            matches!(damaged, Err(DatasetError::Checksum { path, .. }) if path == "index.jsonl")
        );
        std::fs::write(root.join("extra"), "").unwrap();
        assert!(matches!(
            opened.verify(&root.join("extra")),
            Err(DatasetError::Unlisted(p)) if p == "extra"
        ));
    }

    #[test]
    fn a_trail_reads_back_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TRAIL);
        let records = [json!({"eventName": "A", "n": 1}), json!({"eventName": "B"})];
        write_trail(&path, &records).unwrap();
        let mut text = String::new();
        use std::io::Read;
        flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        let back: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(back, records);
    }
}

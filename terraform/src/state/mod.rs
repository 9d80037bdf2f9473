//! Terraform state, read from a state file (format version 4, the shape `terraform state pull`
//! prints for any backend) or from `terraform show -json`, and indexed by cloud identity in
//! [`StateIndex`].

mod complete;
mod index;
mod show;
mod tfstate;
mod write;

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use serde::Deserialize;
use serde_json::Value;

pub use complete::complete;
pub use index::{KEY_SEPARATOR, StateIndex};
pub use write::tfstate_json;

/// A snapshot of Terraform state, whichever format it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Where it came from: a file name, or the command that printed it.
    pub origin: String,
    /// The format it was read from.
    pub format: StateFormat,
    /// The Terraform version that wrote it.
    pub terraform_version: Option<String>,
    /// The state serial (state files only).
    pub serial: Option<u64>,
    /// The state lineage (state files only).
    pub lineage: Option<String>,
    /// The root module's outputs.
    pub outputs: BTreeMap<String, Output>,
    /// Every resource instance, in the order the input lists them.
    pub instances: Vec<Instance>,
}

/// The input format of a [`State`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateFormat {
    /// A state file, format version 4.
    Tfstate,
    /// `terraform show -json`, format version 1.x.
    ShowJson,
}

/// A root module output value.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Output {
    /// The value.
    pub value: Value,
    /// Whether the output is declared sensitive.
    #[serde(default)]
    pub sensitive: bool,
    /// The value's type as the state file writes it (`"string"`, `["list", "string"]`).
    #[serde(default, rename = "type")]
    pub value_type: Option<Value>,
}

/// Whether a resource is managed or read by a data source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A `resource` block.
    Managed,
    /// A `data` block.
    Data,
}

/// The `count` or `for_each` key of an instance.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum IndexKey {
    /// A `count` index.
    Int(i64),
    /// A `for_each` key.
    Str(String),
}

impl fmt::Display for IndexKey {
    /// Writes the key with its brackets, as Terraform prints it: `[0]`, `["a"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexKey::Int(n) => write!(f, "[{n}]"),
            IndexKey::Str(s) => write!(f, "[{}]", super::quoted(s)),
        }
    }
}

/// One step into an attribute value. State files tell attribute names from map keys, but
/// `terraform show -json` does not, so both are [`PathStep::Key`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathStep {
    /// An attribute name or a map key.
    Key(String),
    /// A list or set position.
    Index(u64),
}

/// One resource instance: the object behind an address such as `module.net.aws_subnet.a["x"]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// The full address, as Terraform prints it.
    pub address: String,
    /// The module path (`module.app[1]`), or `None` in the root module.
    pub module: Option<String>,
    /// Managed resource or data source.
    pub mode: Mode,
    /// The resource type, `aws_s3_bucket`.
    pub resource_type: String,
    /// The resource name from the configuration.
    pub name: String,
    /// The `count` or `for_each` key.
    pub index: Option<IndexKey>,
    /// The provider's source address, `registry.terraform.io/hashicorp/aws`.
    pub provider: String,
    /// The provider's schema version for this resource type.
    pub schema_version: u64,
    /// The attribute values, an object.
    pub attributes: Value,
    /// Attribute paths marked sensitive (a marked path covers everything under it).
    pub sensitive: Vec<Vec<PathStep>>,
    /// Provider-private data, base64 (state files only).
    pub private: Option<String>,
    /// Addresses this instance depends on.
    pub dependencies: Vec<String>,
    /// Whether the instance is tainted.
    pub tainted: bool,
    /// The deposed key of an object awaiting destruction after a create-before-destroy.
    pub deposed: Option<String>,
}

impl Instance {
    /// The address of the instance's resource, without its key, as the state's
    /// `dependencies` name it: `module.vpc.aws_subnet.private`.
    pub fn resource_address(&self) -> String {
        match &self.module {
            Some(module) => format!("{module}.{}.{}", self.resource_type, self.name),
            None => format!("{}.{}", self.resource_type, self.name),
        }
    }

    /// A top-level attribute that is a non-empty string.
    pub fn string_attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    /// Whether the value at `path`, or anything containing it, is marked sensitive.
    pub fn is_sensitive(&self, path: &[PathStep]) -> bool {
        self.sensitive.iter().any(|marked| path.starts_with(marked))
    }
}

/// Sorts sensitive paths and drops repeats, so both input formats give the same list.
fn sorted_paths(mut paths: Vec<Vec<PathStep>>) -> Vec<Vec<PathStep>> {
    paths.sort();
    paths.dedup();
    paths
}

/// Formats an instance address from its parts.
pub(crate) fn instance_address(
    module: Option<&str>,
    mode: Mode,
    resource_type: &str,
    name: &str,
    index: Option<&IndexKey>,
) -> String {
    let mut address = String::new();
    if let Some(module) = module {
        address.push_str(module);
        address.push('.');
    }
    if mode == Mode::Data {
        address.push_str("data.");
    }
    address.push_str(resource_type);
    address.push('.');
    address.push_str(name);
    if let Some(index) = index {
        address.push_str(&index.to_string());
    }
    address
}

/// A problem reading state.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The input is not JSON at all.
    #[error("{origin}: not a Terraform state: expected a JSON document ({message})")]
    NotJson {
        /// The file or command.
        origin: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// The input is JSON but not of the expected shape.
    #[error("{origin}: not a Terraform state as expected: at `{json_path}`: {message}")]
    Json {
        /// The file or command.
        origin: String,
        /// Where in the document, `resources[2].instances[0].index_key`.
        json_path: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A state file of a format version other than 4.
    #[error("{origin}: state format version {version} is not supported (only version 4 is)")]
    UnsupportedVersion {
        /// The file or command.
        origin: String,
        /// The `version` found.
        version: String,
    },
    /// `terraform show -json` output of an unknown major format version.
    #[error(
        "{origin}: `terraform show -json` format_version {version} is not supported (only 1.x is)"
    )]
    UnsupportedFormatVersion {
        /// The file or command.
        origin: String,
        /// The `format_version` found.
        version: String,
    },
    /// A JSON object with neither `version` nor `format_version`.
    #[error("{origin}: not Terraform state: no `version` or `format_version` at the top level")]
    UnknownFormat {
        /// The file or command.
        origin: String,
    },
    /// `terraform` is not on PATH.
    #[error("`terraform` is not on PATH")]
    TerraformMissing,
    /// `terraform` could not be started.
    #[error("cannot run terraform in {}: {source}", dir.display())]
    TerraformSpawn {
        /// The working directory.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// `terraform state pull` exited with an error.
    #[error("`terraform state pull` in {} failed ({status}): {stderr}", dir.display())]
    TerraformFailed {
        /// The working directory.
        dir: PathBuf,
        /// Its exit status.
        status: ExitStatus,
        /// What it printed on standard error.
        stderr: String,
    },
}

/// The top-level fields that tell the formats apart.
#[derive(Deserialize)]
struct Probe {
    version: Option<Value>,
    format_version: Option<Value>,
}

impl State {
    /// Reads a state file or saved `terraform show -json` output, telling them apart by content.
    pub fn read(path: &Path) -> Result<State, StateError> {
        let bytes = std::fs::read(path).map_err(|source| StateError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        State::parse(&bytes, &path.display().to_string())
    }

    /// Parses either format; `origin` names the input in errors.
    pub fn parse(bytes: &[u8], origin: &str) -> Result<State, StateError> {
        let probe: Probe = decode(bytes, origin)?;
        match (probe.format_version, probe.version) {
            (Some(format_version), _) => {
                check_format_version(&format_version, origin)?;
                show::parse(bytes, origin)
            }
            (None, Some(version)) if version.as_u64() == Some(4) => tfstate::parse(bytes, origin),
            (None, Some(version)) => Err(StateError::UnsupportedVersion {
                origin: origin.to_string(),
                version: version.to_string(),
            }),
            (None, None) => Err(StateError::UnknownFormat {
                origin: origin.to_string(),
            }),
        }
    }

    /// Runs `terraform state pull` in `dir`, which reads the state from whatever backend the
    /// directory is initialised for. Fails with [`StateError::TerraformMissing`] when
    /// `terraform` is not on PATH. An empty answer (no state yet) is an empty state.
    pub fn pull(dir: &Path) -> Result<State, StateError> {
        let output = Command::new("terraform")
            .args(["state", "pull"])
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|source| match source.kind() {
                io::ErrorKind::NotFound => StateError::TerraformMissing,
                _ => StateError::TerraformSpawn {
                    dir: dir.to_path_buf(),
                    source,
                },
            })?;
        if !output.status.success() {
            return Err(StateError::TerraformFailed {
                dir: dir.to_path_buf(),
                status: output.status,
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        let origin = format!("`terraform state pull` in {}", dir.display());
        if output.stdout.iter().all(u8::is_ascii_whitespace) {
            return Ok(State::empty(origin));
        }
        State::parse(&output.stdout, &origin)
    }

    /// A state with nothing in it.
    fn empty(origin: String) -> State {
        State {
            origin,
            format: StateFormat::Tfstate,
            terraform_version: None,
            serial: None,
            lineage: None,
            outputs: BTreeMap::new(),
            instances: Vec::new(),
        }
    }
}

/// Accepts `format_version` 1.x.
fn check_format_version(version: &Value, origin: &str) -> Result<(), StateError> {
    let major = version.as_str().and_then(|v| v.split('.').next());
    if major == Some("1") {
        Ok(())
    } else {
        Err(StateError::UnsupportedFormatVersion {
            origin: origin.to_string(),
            version: version.to_string(),
        })
    }
}

/// Deserializes JSON, naming the origin and the JSON path of any error.
fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8], origin: &str) -> Result<T, StateError> {
    let json_error = |json_path: String, error: serde_json::Error| {
        if error.is_syntax() || error.is_eof() {
            StateError::NotJson {
                origin: origin.to_string(),
                message: error.to_string(),
            }
        } else {
            StateError::Json {
                origin: origin.to_string(),
                json_path,
                message: error.to_string(),
            }
        }
    };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|e| json_error(e.path().to_string(), e.into_inner()))?;
    deserializer
        .end()
        .map_err(|e| json_error(".".to_string(), e))?;
    Ok(value)
}

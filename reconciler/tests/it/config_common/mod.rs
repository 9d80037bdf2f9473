//! The provenance fixture project, loaded the way the configuration tests use it.
#![allow(dead_code, clippy::unwrap_used, missing_docs)]

use std::path::{Path, PathBuf};

use reconciler::terraform::config::{LoadOptions, Project};
use reconciler::terraform::state::{PathStep, State};

/// `fixtures/projects/provenance`.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/projects/provenance")
}

/// The project with its state, `-var-file=extra.tfvars` and `-var region=us-east-1`.
pub fn project() -> Project {
    let state = State::read(&dir().join("terraform.tfstate")).unwrap();
    let options = LoadOptions {
        var_files: vec!["extra.tfvars".into()],
        vars: vec!["region=us-east-1".into()],
        state: Some(&state),
    };
    Project::load(&dir(), &options).unwrap()
}

/// The text of `span` in `file` of the project.
pub fn text<'p>(project: &'p Project, file: &str, span: &std::ops::Range<usize>) -> &'p str {
    &project.files()[file][span.clone()]
}

/// A path written like `ingress.1.from_port`: numbers are positions.
pub fn path(text: &str) -> Vec<PathStep> {
    text.split('.')
        .map(|part| match part.parse() {
            Ok(n) => PathStep::Index(n),
            Err(_) => PathStep::Key(part.to_string()),
        })
        .collect()
}

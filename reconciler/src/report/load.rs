//! `retrace check-config`: what retrace sees of a Terraform project, and every construct it
//! could not evaluate, with file and line.

use serde::Serialize;

use crate::terraform::config::{Diagnostic, Project};
use crate::terraform::state::Mode;
use crate::text::escaped;

/// What a load found, for printing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadReport {
    /// The root module's directory.
    pub project: String,
    /// Files read (`.tf`, `.tf.json`, tfvars), relative to the root.
    pub files: usize,
    /// Module instances, the root included.
    pub modules: usize,
    /// Managed resource instances.
    pub resources: usize,
    /// Data source instances.
    pub data_sources: usize,
    /// What could not be evaluated or resolved.
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadReport {
    /// The report of a loaded project.
    pub fn of(project: &Project) -> LoadReport {
        let managed = project
            .instances()
            .filter(|i| i.mode == Mode::Managed)
            .count();
        LoadReport {
            project: project.root().display().to_string(),
            files: project.files().len(),
            modules: project.module_paths().count(),
            resources: managed,
            data_sources: project.instances().count() - managed,
            diagnostics: project.diagnostics().to_vec(),
        }
    }

    /// Whether everything was evaluated.
    pub fn clean(&self) -> bool {
        self.diagnostics.is_empty()
    }

    /// The report as lines for a terminal.
    pub fn text(&self) -> String {
        let mut out = format!(
            "Project: {}\n  {} files, {} module instances, {} resource instances, {} data source instances\n",
            escaped(&self.project),
            self.files,
            self.modules,
            self.resources,
            self.data_sources
        );
        if self.clean() {
            out.push_str("\nEverything was evaluated.\n");
            return out;
        }
        out.push_str(&format!(
            "\nNot evaluated ({}): retrace does not see these values\n",
            self.diagnostics.len()
        ));
        for d in &self.diagnostics {
            out.push_str(&format!(
                "  {}:{}  {}: {}\n",
                escaped(&d.file),
                d.line,
                escaped(&d.subject),
                escaped(&d.message)
            ));
        }
        out
    }
}

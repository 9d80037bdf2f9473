//! The committed baseline: per scenario, whether it passed. A check against it reports the
//! scenarios that passed then and fail now (regressions) and those it does not know yet.

use super::results::Results;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `evaluation/baseline.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// Per scenario id, whether every sample passed.
    pub scenarios: BTreeMap<String, bool>,
}

/// The baseline file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a baseline.
    #[error("{path}: not a baseline: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

/// What changed against the baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Passed in the baseline, fail now.
    pub regressions: Vec<String>,
    /// Failed in the baseline, pass now.
    pub fixed: Vec<String>,
    /// Not in the baseline.
    pub new: Vec<String>,
    /// In the baseline, not in this run.
    pub missing: Vec<String>,
}

impl Baseline {
    /// The baseline of a run.
    pub fn of(results: &Results) -> Baseline {
        Baseline {
            scenarios: results
                .scenarios
                .iter()
                .map(|r| (r.id.clone(), r.passed))
                .collect(),
        }
    }

    /// Reads a baseline file.
    pub fn read(path: &Path) -> Result<Baseline, BaselineError> {
        let bytes = std::fs::read(path).map_err(|source| BaselineError::Io {
            path: path.to_owned(),
            source,
        })?;
        serde_json::from_slice(&bytes).map_err(|e| BaselineError::Json {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// Writes it, atomically (temporary file and rename).
    pub fn write(&self, path: &Path) -> Result<(), BaselineError> {
        let io = |source| BaselineError::Io {
            path: path.to_owned(),
            source,
        };
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Compares a run with the baseline.
    pub fn compare(&self, results: &Results) -> Comparison {
        let mut out = Comparison::default();
        for r in &results.scenarios {
            match self.scenarios.get(&r.id) {
                None => out.new.push(r.id.clone()),
                Some(true) if !r.passed => out.regressions.push(r.id.clone()),
                Some(false) if r.passed => out.fixed.push(r.id.clone()),
                Some(_) => {}
            }
        }
        out.missing = self
            .scenarios
            .keys()
            .filter(|id| !results.scenarios.iter().any(|r| &r.id == *id))
            .cloned()
            .collect();
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::scenario::Category;
    use crate::score::results::ScenarioResult;

    fn result(id: &str, passed: bool) -> ScenarioResult {
        let mut r = ScenarioResult::error(
            &crate::scenario::Scenario {
                id: id.into(),
                project: "p".into(),
                category: Category::Console,
                family: String::new(),
                description: String::new(),
                generator: String::new(),
                seed: 0,
                base_state_sha256: String::new(),
                expect: Default::default(),
                touches: Vec::new(),
                background: None,
                withhold: Vec::new(),
            },
            1,
            "x",
        );
        r.passed = passed;
        r
    }

    #[test]
    fn a_scenario_that_passed_and_now_fails_is_a_regression() {
        let before = Results::new(
            1,
            1,
            vec![result("a", true), result("b", false), result("gone", true)],
            0.0,
        );
        let baseline = Baseline::of(&before);
        let now = Results::new(
            1,
            1,
            vec![result("a", false), result("b", true), result("c", false)],
            0.0,
        );
        let cmp = baseline.compare(&now);
        assert_eq!(cmp.regressions, vec!["a"]);
        assert_eq!(cmp.fixed, vec!["b"]);
        assert_eq!(cmp.new, vec!["c"]);
        assert_eq!(cmp.missing, vec!["gone"]);
    }

    #[test]
    fn a_baseline_round_trips_through_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baseline.json");
        let baseline = Baseline::of(&Results::new(1, 1, vec![result("a", true)], 0.0));
        baseline.write(&path).unwrap();
        assert_eq!(Baseline::read(&path).unwrap(), baseline);
        std::fs::write(&path, "[]").unwrap();
        assert!(matches!(
            Baseline::read(&path),
            Err(BaselineError::Json { .. })
        ));
    }
}

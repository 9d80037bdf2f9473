//! Drift injection: generators that walk every applicable resource of a project's state,
//! build out-of-band changes from resource types and current values, run them in a fresh
//! simulated cloud with the noise real trails carry, and keep the trail, the post-drift
//! state and what a correct answer is as [`Scenario`]s.
//!
//! Each scenario runs from its own seed (derived from the master seed, the project, the
//! category and its position), so it is reproducible on its own. When a category yields more
//! candidates than wanted, the pick is seeded too, round-robin across generators.

mod actors;
mod attached;
pub mod background;
mod categories;
pub mod change;
mod compute;
pub mod coverage;
mod edge;
mod events;
mod fleet;
mod identity;
mod longtail;
mod network;
mod ops;
mod platform;
mod runbooks;
mod security;
pub mod session;
mod storage;
mod tagging;
mod tags;
mod vpc;

use crate::evaluate::Project;
use crate::scenario::{self, Category, Scenario, ScenarioError, StateDelta};
use reconciler::terraform::state::State;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use categories::{Candidate, Run};
use change::Change;

/// The master seed `retrace-eval generate` uses unless told otherwise.
pub const DEFAULT_SEED: u64 = 20_260_302;

/// How many scenarios at most per project and category.
pub const PER_CATEGORY: usize = 50;

/// How many account-level security events at most per project, beside the security
/// category's events on managed resources.
pub const ACCOUNT_EVENTS: usize = 6;

/// Generating scenarios failed.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The project's state could not be read.
    #[error("{project}: {source}")]
    State {
        /// The project.
        project: String,
        /// The cause.
        source: reconciler::terraform::state::StateError,
    },
    /// The project's configuration could not be loaded.
    #[error("{project}: {message}")]
    Config {
        /// The project.
        project: String,
        /// What went wrong.
        message: String,
    },
    /// Writing scenarios failed.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// One generated scenario with its trail and post-drift delta.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The scenario.
    pub scenario: Scenario,
    /// The CloudTrail records.
    pub records: Vec<Value>,
    /// The post-drift state over the base.
    pub delta: StateDelta,
}

/// A project's scenarios and its base state.
#[derive(Debug)]
pub struct ProjectScenarios {
    /// The project's name.
    pub project: String,
    /// The pre-drift state.
    pub base: State,
    /// The scenarios, in id order.
    pub scenarios: Vec<Generated>,
}

/// Generates the scenarios of the project in `projects/<name>` from `seed`.
pub fn generate_project(
    projects: &Path,
    name: &str,
    seed: u64,
) -> Result<ProjectScenarios, GenerateError> {
    let dir = projects.join(name);
    let state_path = dir.join("terraform.tfstate");
    let base = State::read(&state_path).map_err(|source| GenerateError::State {
        project: name.to_owned(),
        source,
    })?;
    let digest = scenario::sha256_file(&state_path)?;
    let project = Project::load(&dir, &base).map_err(|e| GenerateError::Config {
        project: name.to_owned(),
        message: e.to_string(),
    })?;
    let changes = all_changes(&base);
    let security = security::changes(&base);
    let reasserts: Vec<_> = changes
        .iter()
        .filter_map(|c| c.undo.first().cloned())
        .collect();
    let mut with_runbooks = changes.clone();
    with_runbooks.extend(runbooks::changes(&base));
    let mut scenarios = Vec::new();
    for category in Category::ALL {
        let pool = match category {
            Category::Security => &security,
            Category::Runbook => &with_runbooks,
            _ => &changes,
        };
        let candidates = categories::candidates(category, pool, &base, &project);
        let mut picked: Vec<Picked> = categories::pick(
            candidates,
            seed,
            name,
            category,
            PER_CATEGORY,
            &base,
            &reasserts,
        )
        .into_iter()
        .map(|(candidate, run_seed, run)| {
            let addresses = candidate.changes.iter().map(|c| c.address.clone());
            let touches = touches(addresses, &run.delta, None);
            (candidate.generator, touches, run_seed, run)
        })
        .collect();
        picked.extend(events(category, &base, seed, name)?);
        for (n, (generator, touches, run_seed, run)) in picked.into_iter().enumerate() {
            let id = format!("{name}-{}-{:03}", category.name(), n + 1);
            scenarios.push(Generated {
                scenario: Scenario {
                    id,
                    project: name.to_owned(),
                    category,
                    family: touches
                        .first()
                        .map_or("other", |t| crate::family::of(t))
                        .to_owned(),
                    description: run.description,
                    generator: format!("{}/{generator}", category.name()),
                    seed: run_seed,
                    base_state_sha256: digest.clone(),
                    expect: run.expect,
                    touches,
                    background: Some(background::plan(run_seed)),
                    withhold: Vec::new(),
                },
                records: run.records,
                delta: run.delta,
            });
        }
    }
    Ok(ProjectScenarios {
        project: name.to_owned(),
        base,
        scenarios,
    })
}

/// A picked scenario before it is named: its generator, what it touches, its seed and run.
type Picked = (String, Vec<String>, u64, Run);

/// Account-level security events (at most [`ACCOUNT_EVENTS`]) and long-tail calls: the
/// scenarios of `category` played outside the model ([`events`]).
fn events(
    category: Category,
    base: &State,
    seed: u64,
    project: &str,
) -> Result<Vec<Picked>, GenerateError> {
    let (pool, finding, want) = match category {
        Category::Security => (
            security::account_events(base),
            events::Finding::Security,
            ACCOUNT_EVENTS,
        ),
        Category::LongTail => (
            longtail::events(base),
            events::Finding::Unexplained,
            PER_CATEGORY,
        ),
        _ => return Ok(Vec::new()),
    };
    let picked = events::pick(pool, finding, seed, project, category, want, base);
    Ok(picked
        .into_iter()
        .map(|(event, run_seed, run)| {
            let touches = touches(
                event.address.iter().cloned(),
                &run.delta,
                Some(&event.request.event_source),
            );
            (event.generator.to_owned(), touches, run_seed, run)
        })
        .collect())
}

/// The resource types of `addresses` and of what `delta` changed; the event source when
/// there are none.
fn touches(
    addresses: impl Iterator<Item = String>,
    delta: &StateDelta,
    event_source: Option<&str>,
) -> Vec<String> {
    let changed = delta
        .upserts
        .iter()
        .map(|i| i.address.clone())
        .chain(delta.removed.iter().cloned());
    let mut types: Vec<String> = addresses
        .chain(changed)
        .filter_map(|a| {
            a.split('.')
                .find(|s| s.starts_with("aws_"))
                .map(str::to_owned)
        })
        .collect();
    types.sort();
    types.dedup();
    if types.is_empty() {
        types.extend(event_source.map(str::to_owned));
    }
    types
}

/// Every change the generators derive from the managed instances of `state`.
pub fn all_changes(state: &State) -> Vec<Change> {
    let all: Vec<_> = state
        .instances
        .iter()
        .filter(|i| i.mode == reconciler::terraform::state::Mode::Managed && i.deposed.is_none())
        .cloned()
        .collect();
    let mut out = Vec::new();
    for (n, instance) in all.iter().enumerate() {
        out.extend(tags::changes(instance, n));
        out.extend(network::changes(instance, &all));
        out.extend(storage::changes(instance, &all));
        out.extend(identity::changes(instance, &all));
        out.extend(compute::changes(instance));
        out.extend(ops::changes(instance, &all));
        out.extend(fleet::changes(instance, &all));
        out.extend(edge::changes(instance));
        out.extend(platform::changes(instance));
        out.extend(vpc::changes(instance, &all));
        out.extend(attached::changes(instance, &all));
    }
    out.extend(network::creations(&all));
    out.extend(identity::creations(&all));
    out.extend(ops::creations(&all));
    out
}

/// Writes a project's scenarios under `out/<project>/`, replacing what was there: they are
/// written into a temporary directory first, which then takes the old one's place.
pub fn write_project(out: &Path, generated: &ProjectScenarios) -> Result<PathBuf, GenerateError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| GenerateError::Io { path, source }
    };
    std::fs::create_dir_all(out).map_err(io(out))?;
    let staging = out.join(format!(".staging-{}", generated.project));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
    }
    for g in &generated.scenarios {
        scenario::save(&staging, &g.scenario, &g.records, &g.delta, &generated.base)?;
    }
    let target = out.join(&generated.project);
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(io(&target))?;
    }
    let built = staging.join(&generated.project);
    if built.exists() {
        std::fs::rename(&built, &target).map_err(io(&target))?;
    }
    std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
    Ok(target)
}

/// Scenario counts per project and category.
pub fn counts(projects: &[ProjectScenarios]) -> BTreeMap<String, BTreeMap<Category, usize>> {
    let mut table: BTreeMap<String, BTreeMap<Category, usize>> = BTreeMap::new();
    for p in projects {
        let row = table.entry(p.project.clone()).or_default();
        for g in &p.scenarios {
            *row.entry(g.scenario.category).or_default() += 1;
        }
    }
    table
}

/// The benchmark's projects: the directories under `projects` holding a state and a
/// configuration, except the loader's own `provenance` fixture.
pub fn project_names(projects: &Path) -> Result<Vec<String>, GenerateError> {
    let entries = std::fs::read_dir(projects).map_err(|source| GenerateError::Io {
        path: projects.to_owned(),
        source,
    })?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("terraform.tfstate").is_file() && p.join("main.tf").is_file())
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        .filter(|n| n != "provenance")
        .collect();
    names.sort();
    Ok(names)
}

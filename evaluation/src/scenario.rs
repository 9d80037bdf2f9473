//! Drift scenarios as data: what `retrace-eval generate` writes under `scenarios/` and what
//! `retrace-eval run` reads, so a run needs no regeneration.
//!
//! One directory per scenario, `scenarios/<project>/<id>/`, holding three files:
//! - `scenario.json`: the [`Scenario`] (id, project, category, description, the generator and
//!   seed that made it, the digest of the pre-drift state, and what a correct answer is);
//! - `trail.json`: the CloudTrail records, in the `{"Records": [...]}` envelope S3 delivers;
//! - `post.tfstate`: the post-drift observed state as a delta over the pre-drift state (the
//!   project's `terraform.tfstate`): a version 4 state document holding only the instances the
//!   drift created or changed, plus the addresses it removed under the top-level key
//!   `removed`. [`StateDelta::apply`] turns it back into the whole post-drift state.
//!
//! The reconciler never reads `scenario.json`: only the scorer does.

use crate::sim::tfstate_json;
use reconciler::terraform::state::{Instance, Mode, State, StateError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// What kind of drift a scenario injects; results are reported per category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// A change made by an SSM Automation runbook (restrict a security group, enable
    /// encryption, resize an instance, ...), under the automation's assumed role.
    Runbook,
    /// A hand edit in the console or CLI with the noise real sessions leave: Describe calls,
    /// a failed attempt and its retry, Terraform's own apply interleaved, other regions.
    Console,
    /// A change undone minutes later, or a trail where nothing out-of-band changed anything:
    /// the correct answer is no patch.
    NoiseOnly,
    /// Resources created outside Terraform: the code gains an `import` block and a resource.
    Creation,
    /// Managed resources deleted outside Terraform: the code loses them.
    Deletion,
    /// One intent changing several resources together.
    MultiResource,
    /// A change to a value the code sets through a variable, a module input, a local or a
    /// `for_each` entry, which must be edited where it comes from.
    Provenance,
    /// A risky change the default policy flags for a human instead of absorbing.
    PolicyGated,
    /// A security event (a role trusted by a foreign account, a topic or bucket opened to
    /// everyone): flagged for a person whatever the policy says, nothing written.
    Security,
    /// A day where several people and automations change overlapping resources: the answer
    /// is the net effect, each part ruled on its own (one actor's change flagged, another's
    /// absorbed on the same resource).
    MultiActor,
    /// A write with no shipped rule on a managed resource: reported as unexplained, never
    /// silent, never patched.
    LongTail,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: [Category; 11] = [
        Category::Runbook,
        Category::Console,
        Category::NoiseOnly,
        Category::Creation,
        Category::Deletion,
        Category::MultiResource,
        Category::Provenance,
        Category::PolicyGated,
        Category::Security,
        Category::MultiActor,
        Category::LongTail,
    ];

    /// The kebab-case name used in ids, files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Category::Runbook => "runbook",
            Category::Console => "console",
            Category::NoiseOnly => "noise-only",
            Category::Creation => "creation",
            Category::Deletion => "deletion",
            Category::MultiResource => "multi-resource",
            Category::Provenance => "provenance",
            Category::PolicyGated => "policy-gated",
            Category::Security => "security",
            Category::MultiActor => "multi-actor",
            Category::LongTail => "long-tail",
        }
    }

    /// The category with this name.
    pub fn parse(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One attribute of one instance, as the scorer checks it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Target {
    /// The instance address, `aws_security_group.web`.
    pub address: String,
    /// The top-level attribute or nested block name, `ingress`; empty for the whole resource.
    pub attribute: String,
}

/// What a correct reconciliation of the scenario does, beyond the default (every attribute the
/// drift changed evaluates to its post-drift value, created resources are imported, deleted
/// ones removed, nothing else changes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expect {
    /// Whether any patch is expected at all; `false` for noise-only scenarios.
    pub patch: bool,
    /// Parts the default policy must flag: reported, not absorbed (the code keeps its value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flag: Vec<Target>,
    /// Parts an automation owns: the code keeps its value and gains `ignore_changes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<Target>,
    /// Resources created out of band that belong to no workspace: reported as created
    /// outside any workspace, not imported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unowned: Vec<Target>,
    /// Parts changed by a call no rule explains: reported as unexplained findings naming the
    /// resource, the code keeping its value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unexplained: Vec<Target>,
    /// Calls that must raise a security finding (`cloudtrail.amazonaws.com:StopLogging`),
    /// whatever they touched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<String>,
}

/// The day of background activity a scenario's trail is embedded in: synthesised from the
/// seed when the scenario is run (`generate::background`), never stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Background {
    /// The seed of the day.
    pub seed: u64,
    /// How many background records the day holds.
    pub records: usize,
}

/// A scenario's `scenario.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scenario {
    /// Unique across the suite: `<project>-<category>-<nnn>`.
    pub id: String,
    /// The fixture project under `fixtures/projects/`.
    pub project: String,
    /// The kind of drift.
    pub category: Category,
    /// The service family of the resource the scenario is about (`crate::family`).
    #[serde(default)]
    pub family: String,
    /// One line a reviewer reads: who did what to which resource.
    pub description: String,
    /// The generator that made it, `runbook/restrict-ssh`.
    pub generator: String,
    /// The seed the simulator ran with.
    pub seed: u64,
    /// SHA-256 of the pre-drift state file, so a changed fixture is noticed.
    pub base_state_sha256: String,
    /// What a correct answer is.
    pub expect: Expect,
    /// What the scenario is about: the resource types its changes touch, or the event
    /// source of a call on nothing a state holds; results are reported per service family
    /// of these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub touches: Vec<String>,
    /// The background day around the trail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<Background>,
    /// Shipped rules withheld from the run, as `service:Api` (`sqs:SetQueueAttributes`): the
    /// reconciler runs without them, so an agent has to explain those calls itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withhold: Vec<String>,
}

/// The post-drift state as changes over the pre-drift state.
#[derive(Debug, Clone, PartialEq)]
pub struct StateDelta {
    /// Instances created or changed, whole.
    pub upserts: Vec<Instance>,
    /// Addresses of instances removed.
    pub removed: Vec<String>,
}

impl StateDelta {
    /// The delta from `before` to `after` (managed instances only; data sources never drift).
    pub fn between(before: &State, after: &State) -> StateDelta {
        let old: BTreeMap<&str, &Instance> =
            managed(before).map(|i| (i.address.as_str(), i)).collect();
        let new: BTreeSet<&str> = managed(after).map(|i| i.address.as_str()).collect();
        let upserts = managed(after)
            .filter(|i| old.get(i.address.as_str()).is_none_or(|o| *o != *i))
            .cloned()
            .collect();
        let removed = old
            .keys()
            .filter(|a| !new.contains(*a))
            .map(|a| (*a).to_owned())
            .collect();
        StateDelta { upserts, removed }
    }

    /// Whether the drift left the cloud as it was.
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.removed.is_empty()
    }

    /// The whole post-drift state: `base` with the delta applied, changed instances in place
    /// and created ones at the end.
    pub fn apply(&self, base: &State) -> State {
        let mut state = base.clone();
        let mut pending: Vec<&Instance> = self.upserts.iter().collect();
        state
            .instances
            .retain(|i| !self.removed.contains(&i.address));
        for instance in &mut state.instances {
            if let Some(at) = pending.iter().position(|u| u.address == instance.address) {
                *instance = pending.remove(at).clone();
            }
        }
        state.instances.extend(pending.into_iter().cloned());
        state
    }

    /// The delta as a state document with a top-level `removed` list.
    pub fn to_json(&self, base: &State) -> Value {
        let mut doc = base.clone();
        doc.instances = self.upserts.clone();
        let mut json = tfstate_json(&doc);
        json["removed"] = Value::from(self.removed.clone());
        json
    }

    /// Reads a delta written by [`StateDelta::to_json`]; `origin` names it in errors.
    pub fn parse(bytes: &[u8], origin: &str) -> Result<StateDelta, ScenarioError> {
        let doc = State::parse(bytes, origin)?;
        let json: Value = serde_json::from_slice(bytes).map_err(|e| ScenarioError::Json {
            path: PathBuf::from(origin),
            message: e.to_string(),
        })?;
        let removed = json["removed"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Ok(StateDelta {
            upserts: doc.instances,
            removed,
        })
    }
}

fn managed(state: &State) -> impl Iterator<Item = &Instance> {
    state
        .instances
        .iter()
        .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
}

/// A scenario read from disk, with where its files are.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The scenario.
    pub scenario: Scenario,
    /// Its directory.
    pub dir: PathBuf,
}

impl Stored {
    /// The trail file.
    pub fn trail_path(&self) -> PathBuf {
        self.dir.join(TRAIL)
    }

    /// The post-drift delta.
    pub fn post(&self) -> Result<StateDelta, ScenarioError> {
        let path = self.dir.join(POST);
        let bytes = read(&path)?;
        StateDelta::parse(&bytes, &path.display().to_string())
    }
}

/// File names inside a scenario directory.
const SCENARIO: &str = "scenario.json";
const TRAIL: &str = "trail.json";
const POST: &str = "post.tfstate";

/// Reading or writing scenarios failed.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not the JSON it should be.
    #[error("{path}: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A state document is malformed.
    #[error(transparent)]
    State(#[from] StateError),
}

/// Writes one scenario's three files into `root/<project>/<id>/`, each atomically.
pub fn save(
    root: &Path,
    scenario: &Scenario,
    records: &[Value],
    post: &StateDelta,
    base: &State,
) -> Result<PathBuf, ScenarioError> {
    let dir = root.join(&scenario.project).join(&scenario.id);
    std::fs::create_dir_all(&dir).map_err(|source| ScenarioError::Io {
        path: dir.clone(),
        source,
    })?;
    write_json(
        &dir.join(SCENARIO),
        &serde_json::to_value(scenario).unwrap_or_default(),
    )?;
    write_json(&dir.join(TRAIL), &serde_json::json!({ "Records": records }))?;
    write_json(&dir.join(POST), &post.to_json(base))?;
    Ok(dir)
}

/// Every scenario under `root` (`root/<project>/<id>/scenario.json`), sorted by id.
pub fn load_all(root: &Path) -> Result<Vec<Stored>, ScenarioError> {
    let mut found = Vec::new();
    for project in read_dir(root)? {
        if !project.is_dir() {
            continue;
        }
        for dir in read_dir(&project)? {
            let path = dir.join(SCENARIO);
            if !path.is_file() {
                continue;
            }
            let bytes = read(&path)?;
            let scenario: Scenario =
                serde_json::from_slice(&bytes).map_err(|e| ScenarioError::Json {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
            found.push(Stored { scenario, dir });
        }
    }
    found.sort_by(|a, b| a.scenario.id.cmp(&b.scenario.id));
    Ok(found)
}

/// SHA-256 of a file's bytes, lower-case hex.
pub fn sha256_file(path: &Path) -> Result<String, ScenarioError> {
    let bytes = read(path)?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn read(path: &Path) -> Result<Vec<u8>, ScenarioError> {
    std::fs::read(path).map_err(|source| ScenarioError::Io {
        path: path.to_owned(),
        source,
    })
}

fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
    let io = |source| ScenarioError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        paths.push(entry.map_err(io)?.path());
    }
    paths.sort();
    Ok(paths)
}

/// Writes pretty JSON with a trailing newline through a temporary file and a rename.
fn write_json(path: &Path, value: &Value) -> Result<(), ScenarioError> {
    let mut text = serde_json::to_string_pretty(&crate::sim::sorted(value)).unwrap_or_default();
    text.push('\n');
    let tmp = path.with_extension("tmp");
    let io = |source| ScenarioError::Io {
        path: path.to_owned(),
        source,
    };
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// Every `n`-th scenario of each project and category, in id order (the first, the
/// `n+1`-th, ...): at least one of every project and category.
pub fn every_nth(mut scenarios: Vec<Stored>, n: usize) -> Vec<Stored> {
    scenarios.sort_by(|a, b| a.scenario.id.cmp(&b.scenario.id));
    let mut seen: std::collections::HashMap<(String, Category), usize> = Default::default();
    scenarios.retain(|s| {
        let at = seen
            .entry((s.scenario.project.clone(), s.scenario.category))
            .or_default();
        *at += 1;
        (*at - 1).is_multiple_of(n)
    });
    scenarios
}

/// `n` scenarios spread evenly over the list ordered by category, project and id: a fixed
/// sample smaller than one per project and category, in which every category has its share
/// and the projects take turns. All of them when there are no more than `n`.
pub fn spread(mut scenarios: Vec<Stored>, n: usize) -> Vec<Stored> {
    let key = |s: &Stored| {
        (
            s.scenario.category,
            s.scenario.project.clone(),
            s.scenario.id.clone(),
        )
    };
    scenarios.sort_by_key(key);
    let len = scenarios.len();
    if n >= len {
        return scenarios;
    }
    let picked: BTreeSet<usize> = (0..n).map(|i| i * len / n).collect();
    scenarios
        .into_iter()
        .enumerate()
        .filter(|(at, _)| picked.contains(at))
        .map(|(_, s)| s)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn state(json: &str) -> State {
        State::parse(json.as_bytes(), "test").unwrap()
    }

    const BASE: &str = r#"{"version":4,"terraform_version":"1.9.0","serial":3,"lineage":"l",
      "resources":[
        {"mode":"managed","type":"aws_sqs_queue","name":"a","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
         "instances":[{"schema_version":0,"attributes":{"id":"q1","delay_seconds":0}}]},
        {"mode":"managed","type":"aws_sqs_queue","name":"b","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
         "instances":[{"schema_version":0,"attributes":{"id":"q2","delay_seconds":5}}]}]}"#;

    #[test]
    fn a_delta_round_trips_through_its_document() {
        let before = state(BASE);
        let mut after = before.clone();
        after.instances[0].attributes["delay_seconds"] = 30.into();
        after.instances.remove(1);
        let delta = StateDelta::between(&before, &after);
        assert_eq!(delta.upserts.len(), 1);
        assert_eq!(delta.removed, vec!["aws_sqs_queue.b".to_owned()]);
        let text = serde_json::to_vec(&delta.to_json(&before)).unwrap();
        let back = StateDelta::parse(&text, "post").unwrap();
        assert_eq!(back, delta);
        let rebuilt = back.apply(&before);
        assert_eq!(rebuilt.instances.len(), 1);
        assert_eq!(rebuilt.instances[0].attributes["delay_seconds"], 30);
    }

    #[test]
    fn an_unchanged_cloud_gives_an_empty_delta() {
        let before = state(BASE);
        assert!(StateDelta::between(&before, &before).is_empty());
    }

    #[test]
    fn categories_parse_from_their_names() {
        for category in Category::ALL {
            assert_eq!(Category::parse(category.name()), Some(category));
        }
        assert_eq!(Category::parse("nothing"), None);
    }

    fn stored(project: &str, category: Category, n: usize) -> Stored {
        Stored {
            scenario: Scenario {
                id: format!("{project}-{}-{n:03}", category.name()),
                project: project.to_owned(),
                category,
                family: String::new(),
                description: String::new(),
                generator: String::new(),
                seed: 0,
                base_state_sha256: String::new(),
                expect: Expect::default(),
                touches: Vec::new(),
                background: None,
                withhold: Vec::new(),
            },
            dir: PathBuf::new(),
        }
    }

    /// Two projects, three categories, `per` scenarios each.
    fn suite(per: usize) -> Vec<Stored> {
        let categories = [Category::Console, Category::Deletion, Category::NoiseOnly];
        let mut all = Vec::new();
        for project in ["alpha", "beta"] {
            for category in categories {
                all.extend((1..=per).map(|n| stored(project, category, n)));
            }
        }
        all
    }

    fn ids(scenarios: &[Stored]) -> Vec<&str> {
        scenarios.iter().map(|s| s.scenario.id.as_str()).collect()
    }

    #[test]
    fn every_nth_takes_the_first_and_each_nth_of_every_group() {
        let picked = every_nth(suite(5), 4);
        // Of 001..005 in each of the six groups: 001 and 005.
        assert_eq!(picked.len(), 12);
        assert!(ids(&picked).contains(&"beta-noise-only-005"));
        assert!(!ids(&picked).contains(&"beta-noise-only-004"));
    }

    #[test]
    fn a_spread_sample_shares_categories_and_alternates_projects() {
        // 30 scenarios in the categories' order: console (alpha 1-5, beta 1-5), noise-only
        // (...), deletion (...); 6 of them are every fifth: positions 0, 5, 10, 15, 20, 25.
        let picked = spread(suite(5), 6);
        assert_eq!(
            ids(&picked),
            [
                "alpha-console-001",
                "beta-console-001",
                "alpha-noise-only-001",
                "beta-noise-only-001",
                "alpha-deletion-001",
                "beta-deletion-001",
            ]
        );
    }

    #[test]
    fn a_spread_sample_larger_than_the_suite_is_the_suite() {
        assert_eq!(spread(suite(2), 50).len(), 12);
        assert_eq!(spread(suite(2), 0).len(), 0);
    }
}

//! From changes to scenarios: which changes make candidates of each category, how each
//! category's session is played (who acts, what noise surrounds the change), the checks a run
//! must pass, and the seeded pick.

use super::change::{Change, Kind};
use super::session::{AUTOMATION_ROLE, Session};
use super::tags;
use crate::evaluate::Project;
use crate::scenario::{Category, Expect, StateDelta, Target};
use crate::sim::{Caller, Cloud, Request, Settings};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reconciler::terraform::state::{IndexKey, Instance, Mode, PathStep, State};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// How a noise-only session is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Noise {
    /// Someone only reads.
    ReadOnly,
    /// Someone tries the change and is refused.
    FailedOnly,
    /// Someone makes the change and undoes it minutes later.
    Undone,
    /// Terraform's own apply re-asserts values the cloud already has.
    TerraformOnly,
}

/// A scenario before it is run.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The generator's name within the category.
    pub generator: String,
    /// The changes the session makes.
    pub changes: Vec<Change>,
    /// For noise-only candidates, the kind of noise.
    pub noise: Option<Noise>,
}

impl Candidate {
    fn of(change: &Change) -> Candidate {
        Candidate {
            generator: change.name.to_owned(),
            changes: vec![change.clone()],
            noise: None,
        }
    }
}

/// The result of running a candidate.
#[derive(Debug, Clone)]
pub struct Run {
    /// The one-line description.
    pub description: String,
    /// What a correct answer is.
    pub expect: Expect,
    /// The trail.
    pub records: Vec<Value>,
    /// The post-drift delta.
    pub delta: StateDelta,
}

/// The candidates of a category.
pub fn candidates(
    category: Category,
    changes: &[Change],
    base: &State,
    project: &Project,
) -> Vec<Candidate> {
    let plain = |keep: &dyn Fn(&Change) -> bool| -> Vec<Candidate> {
        changes
            .iter()
            .filter(|c| keep(c))
            .map(Candidate::of)
            .collect()
    };
    match category {
        Category::Runbook => plain(&|c| c.runbook.is_some()),
        Category::Console => plain(&|c| c.kind == Kind::Modify && !c.risky),
        Category::Creation => plain(&|c| c.kind == Kind::Create && !c.risky),
        Category::Deletion => plain(&|c| c.kind == Kind::Delete && !c.risky),
        Category::PolicyGated => plain(&|c| c.risky),
        Category::Security => plain(&|_| true),
        Category::Provenance => {
            plain(&|c| c.kind == Kind::Modify && !c.risky && traced(c, project))
        }
        Category::NoiseOnly => noise_candidates(changes),
        Category::MultiResource => multi_candidates(changes, base),
        Category::MultiActor => super::actors::candidates(changes),
        // Long-tail calls are not changes the model runs: see `super::events`.
        Category::LongTail => Vec::new(),
    }
}

fn noise_candidates(changes: &[Change]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for change in changes
        .iter()
        .filter(|c| c.kind == Kind::Modify && !c.undo.is_empty())
    {
        for (noise, name) in [
            (Noise::ReadOnly, "read-only"),
            (Noise::FailedOnly, "failed-only"),
            (Noise::Undone, "undone"),
            (Noise::TerraformOnly, "terraform-only"),
        ] {
            out.push(Candidate {
                generator: name.to_owned(),
                changes: vec![change.clone()],
                noise: Some(noise),
            });
        }
    }
    out
}

/// Tag sets on groups of resources, and pairs of changes to resources of different types.
fn multi_candidates(changes: &[Change], base: &State) -> Vec<Candidate> {
    let taggable: Vec<&Instance> = managed(base)
        .filter(|i| tags::tag_request(i, "k", "v").is_some())
        .collect();
    let mut out = Vec::new();
    for (n, window) in taggable.windows(3).step_by(2).enumerate() {
        let Some((key, value)) = tags::fresh_tag(window, n) else {
            continue;
        };
        out.push(Candidate {
            generator: "tag-many".to_owned(),
            changes: tags::tag_many(window, key, value),
            noise: None,
        });
    }
    let simple: Vec<&Change> = changes
        .iter()
        .filter(|c| c.kind == Kind::Modify && !c.risky)
        .collect();
    for (n, first) in simple.iter().enumerate() {
        let first_type = type_of(&first.address);
        let second = simple[n + 1..]
            .iter()
            .chain(simple[..n].iter())
            .find(|c| type_of(&c.address) != first_type);
        if let Some(second) = second {
            out.push(Candidate {
                generator: "pair".to_owned(),
                changes: vec![(*first).clone(), (*second).clone()],
                noise: None,
            });
        }
    }
    out
}

fn type_of(address: &str) -> &str {
    address
        .split('.')
        .find(|s| s.starts_with("aws_"))
        .unwrap_or(address)
}

fn managed(state: &State) -> impl Iterator<Item = &Instance> {
    state
        .instances
        .iter()
        .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
}

/// Whether every path the change sets comes from a variable, a local, a module input or a
/// `for_each` entry in the code ([`Project::written_indirectly`]).
fn traced(change: &Change, project: &Project) -> bool {
    !change.paths.is_empty()
        && change
            .paths
            .iter()
            .all(|p| project.written_indirectly(&change.address, &path_steps(p)))
}

/// `a.0.b` as path steps.
pub fn path_steps(path: &str) -> Vec<PathStep> {
    path.split('.')
        .map(|s| match s.parse::<u64>() {
            Ok(n) => PathStep::Index(n),
            Err(_) => PathStep::Key(s.to_owned()),
        })
        .collect()
}

/// A 64-bit mix (SplitMix64's finaliser).
pub(super) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub(super) fn name_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Picks up to `want` candidates that run cleanly: generators in seeded order, taken
/// round-robin, each generator's candidates shuffled. Returns each with its seed and run.
pub fn pick(
    candidates: Vec<Candidate>,
    seed: u64,
    project: &str,
    category: Category,
    want: usize,
    base: &State,
    reasserts: &[Request],
) -> Vec<(Candidate, u64, Run)> {
    let category_seed = mix(seed ^ name_hash(project) ^ name_hash(category.name()));
    let mut rng = ChaCha8Rng::seed_from_u64(category_seed);
    let mut groups: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    for c in candidates {
        groups.entry(c.generator.clone()).or_default().push(c);
    }
    let mut queues: Vec<Vec<Candidate>> = groups.into_values().collect();
    queues.shuffle(&mut rng);
    for q in &mut queues {
        q.shuffle(&mut rng);
        q.reverse();
    }
    let mut picked = Vec::new();
    let mut tried = 0u64;
    while picked.len() < want && queues.iter().any(|q| !q.is_empty()) {
        for q in &mut queues {
            if picked.len() >= want {
                break;
            }
            let Some(candidate) = q.pop() else { continue };
            tried += 1;
            let run_seed = mix(category_seed.wrapping_add(tried));
            match run(&candidate, category, run_seed, base, reasserts) {
                Ok(run) => picked.push((candidate, run_seed, run)),
                Err(why) => {
                    tracing::debug!(project, %category, generator = %candidate.generator, "skipped: {why}")
                }
            }
        }
    }
    picked
}

/// Plays a candidate in a fresh cloud and checks the outcome.
pub fn run(
    candidate: &Candidate,
    category: Category,
    seed: u64,
    base: &State,
    reasserts: &[Request],
) -> Result<Run, String> {
    let settings = Settings {
        seed,
        ..Settings::default()
    };
    let mut session =
        Session::new(Cloud::from_state(base, &settings), seed).with_reasserts(reasserts.to_vec());
    let description = match (category, candidate.noise) {
        (Category::Runbook, _) => runbook_session(&mut session, candidate)?,
        (Category::NoiseOnly, Some(noise)) => noise_session(&mut session, candidate, noise)?,
        (Category::MultiActor, _) => super::actors::session(&mut session, candidate)?,
        _ => console_session(&mut session, candidate)?,
    };
    let delta = StateDelta::between(base, &session.cloud.snapshot());
    let records = session.shuffled_records();
    if category == Category::NoiseOnly {
        if !delta.is_empty() {
            let changed: Vec<String> = targets(base, &delta)
                .into_iter()
                .map(|t| format!("{}.{}", t.address, t.attribute))
                .collect();
            return Err(format!("noise changed {}", changed.join(", ")));
        }
    } else {
        if delta.is_empty() {
            return Err("no change".to_owned());
        }
        if let Some(why) = unexpected(base, &delta, &candidate.changes) {
            return Err(why);
        }
    }
    let expect = expect(category, base, &delta, &candidate.changes);
    Ok(Run {
        description,
        expect,
        records,
        delta,
    })
}

fn err(e: crate::sim::SimError) -> String {
    e.to_string()
}

fn summary(changes: &[Change]) -> String {
    changes
        .iter()
        .map(|c| format!("{} ({})", c.what, c.address))
        .collect::<Vec<_>>()
        .join("; ")
}

fn runbook_session(s: &mut Session, candidate: &Candidate) -> Result<String, String> {
    let mut caller = Caller::automation(AUTOMATION_ROLE);
    caller.session = Some(s.execution_id());
    let change = candidate.changes.first().ok_or("no change")?;
    s.look_at(&change.address, &caller).map_err(err)?;
    s.apply(change, &caller)?;
    s.look_at(&change.address, &caller).map_err(err)?;
    if s.rng.random_bool(0.5) {
        s.terraform_refresh().map_err(err)?;
    }
    Ok(format!(
        "SSM Automation {} as {AUTOMATION_ROLE} {}",
        change.runbook.unwrap_or("runbook"),
        summary(&candidate.changes)
    ))
}

/// A hand session: reads around each change, sometimes a refused attempt first,
/// Terraform's refresh interleaved, sometimes a call in another region.
fn console_session(s: &mut Session, candidate: &Candidate) -> Result<String, String> {
    let (caller, who) = s.human();
    let mut failures = Vec::new();
    for change in &candidate.changes {
        s.look_at(&change.address, &caller).map_err(err)?;
        let n = s.rng.random_range(0..=1);
        s.reads(&caller, n).map_err(err)?;
        if s.rng.random_bool(0.4)
            && let Some(code) = s.failed_attempt(change, &caller)
        {
            failures.push(code);
        }
        if s.rng.random_bool(0.5) {
            s.terraform_refresh().map_err(err)?;
            if s.rng.random_bool(0.5) {
                s.terraform_apply().map_err(err)?;
            }
        }
        s.apply(change, &caller)?;
        let n = s.rng.random_range(0..=1);
        s.reads(&caller, n).map_err(err)?;
    }
    if s.rng.random_bool(0.4) {
        s.other_region(&caller).map_err(err)?;
    }
    let retry = match failures.first() {
        Some(code) => format!(" (after a refused attempt: {code})"),
        None => String::new(),
    };
    Ok(format!("{who} {}{retry}", summary(&candidate.changes)))
}

fn noise_session(s: &mut Session, candidate: &Candidate, noise: Noise) -> Result<String, String> {
    let (caller, who) = s.human();
    let change = candidate.changes.first().ok_or("no change")?;
    let about = format!("{} ({})", change.address, change.what);
    match noise {
        Noise::ReadOnly => {
            let n = s.rng.random_range(3..=6);
            s.reads(&caller, n).map_err(err)?;
            s.other_region(&caller).map_err(err)?;
            Ok(format!(
                "{who} only read resources; no change (looked at {})",
                change.address
            ))
        }
        Noise::FailedOnly => {
            s.reads(&caller, 1).map_err(err)?;
            let first = s
                .failed_attempt(change, &caller)
                .ok_or("no refusable call")?;
            let second = s
                .failed_attempt(change, &caller)
                .ok_or("no refusable call")?;
            Ok(format!(
                "{who} tried twice and was refused ({first}, {second}): {about}"
            ))
        }
        Noise::Undone => {
            s.reads(&caller, 1).map_err(err)?;
            s.apply(change, &caller)?;
            let minutes = s.rng.random_range(3..=25);
            let later = s.later(&caller, minutes);
            s.undo(change, &later)?;
            Ok(format!(
                "{who} made a change and undid it {minutes} minutes later: {about}"
            ))
        }
        Noise::TerraformOnly => {
            let terraform = Caller::terraform(super::session::TERRAFORM_ROLE);
            s.terraform_refresh().map_err(err)?;
            s.undo(change, &terraform)?;
            s.terraform_refresh().map_err(err)?;
            Ok(format!(
                "Terraform (CI role) applied values the cloud already had; no change ({})",
                change.address
            ))
        }
    }
}

/// The top-level attributes that differ between two attribute objects.
fn changed_attributes(before: &Value, after: &Value) -> BTreeSet<String> {
    let empty = serde_json::Map::new();
    let a = before.as_object().unwrap_or(&empty);
    let b = after.as_object().unwrap_or(&empty);
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// Attributes AWS updates as a consequence of another change, on any resource: the tag
/// copies, a function's modification time, a role's lists of its policies, and a launch
/// template's version numbers.
const ECHOES: [&str; 7] = [
    "tags",
    "tags_all",
    "last_modified",
    "managed_policy_arns",
    "inline_policy",
    "latest_version",
    "default_version",
];

/// Why a delta holds more than the changes meant, if it does.
fn unexpected(base: &State, delta: &StateDelta, changes: &[Change]) -> Option<String> {
    let creates = changes.iter().any(|c| c.kind == Kind::Create);
    for upsert in &delta.upserts {
        let Some(old) = managed(base).find(|i| i.address == upsert.address) else {
            if creates {
                continue;
            }
            return Some(format!("{} appeared", upsert.address));
        };
        let mut allowed: BTreeSet<String> = ECHOES.iter().map(|e| (*e).to_owned()).collect();
        for c in changes.iter().filter(|c| c.address == upsert.address) {
            allowed.extend(c.top_attributes());
        }
        let extra: Vec<String> = changed_attributes(&old.attributes, &upsert.attributes)
            .into_iter()
            .filter(|a| !allowed.contains(a))
            .collect();
        if !extra.is_empty() {
            return Some(format!(
                "{} also changed {}",
                upsert.address,
                extra.join(", ")
            ));
        }
    }
    let touched = |a: &str| {
        delta.upserts.iter().any(|u| u.address == a) || delta.removed.iter().any(|r| r == a)
    };
    if let Some(idle) = changes
        .iter()
        .find(|c| c.kind != Kind::Create && !touched(&c.address))
    {
        return Some(format!("{} did not change", idle.address));
    }
    let deletes = changes.iter().any(|c| c.kind == Kind::Delete);
    match (delta.removed.first(), deletes) {
        (Some(gone), false) => Some(format!("{gone} disappeared")),
        _ => None,
    }
}

/// Instances deleted out of band that no edit of the code can remove cleanly, so a correct
/// reconciliation leaves them to a person, the code keeping them:
/// - one instance of a `count` resource whose other instances remain: Terraform names `count`
///   instances by position, so dropping a middle one renumbers every later one (each planned
///   for replacement), and dropping the last one needs the count changed, an expression the
///   instances' neighbours usually share (`length(var.azs)` also makes the subnets);
/// - one instance of a collection another resource reads as a whole (a `for` expression or a
///   splat over it, seen in the state as a reader holding the identities of two or more of its
///   instances): dropping the key changes that reader, as the certificate validation that lists
///   every validation record's name;
/// - the one instance of a resource another resource that remains depends on (its state's
///   `dependencies`): removing the block would leave that resource's reference to it
///   undeclared, which Terraform refuses.
fn held_deletions(base: &State, delta: &StateDelta) -> Vec<Target> {
    delta
        .removed
        .iter()
        .filter_map(|address| managed(base).find(|i| i.address == *address))
        .filter(|gone| {
            counted_among_others(base, gone)
                || read_as_collection(base, gone)
                || depended_on_by_a_remaining(base, delta, gone)
        })
        .map(|gone| Target {
            address: gone.address.clone(),
            attribute: String::new(),
        })
        .collect()
}

/// The instances of the resource `instance` belongs to (every key of its `count` or
/// `for_each`).
fn siblings<'a>(base: &'a State, instance: &'a Instance) -> impl Iterator<Item = &'a Instance> {
    managed(base).filter(|i| {
        i.module == instance.module
            && i.resource_type == instance.resource_type
            && i.name == instance.name
    })
}

/// The resources created with a value CloudTrail hides, of the types the changes marked so
/// are about: a person must write them.
fn held_creations(base: &State, all: &[Target], changes: &[Change]) -> Vec<Target> {
    all.iter()
        .filter(|t| created(base, t))
        .filter(|t| {
            changes
                .iter()
                .any(|c| c.hides_values && type_of(&c.address) == type_of(&t.address))
        })
        .cloned()
        .collect()
}

/// Whether the target is a whole instance the base state does not hold: one the drift made.
fn created(base: &State, target: &Target) -> bool {
    target.attribute.is_empty() && managed(base).all(|i| i.address != target.address)
}

/// Whether `instance` is one of several instances of a `count` resource.
fn counted_among_others(base: &State, instance: &Instance) -> bool {
    matches!(instance.index, Some(IndexKey::Int(_))) && siblings(base, instance).count() > 1
}

/// Whether another resource reads the collection `instance` belongs to as a whole: it depends
/// on the resource and holds an identity (`id`, `arn`, `fqdn`) of two or more of its
/// instances.
fn read_as_collection(base: &State, instance: &Instance) -> bool {
    let resource = instance.resource_address();
    let identities: Vec<Vec<String>> = siblings(base, instance)
        .map(|i| {
            ["id", "arn", "fqdn"]
                .iter()
                .filter_map(|k| i.string_attribute(k))
                .filter(|v| !v.is_empty())
                .map(|v| format!("\"{v}\""))
                .collect()
        })
        .collect();
    managed(base)
        .filter(|reader| reader.dependencies.contains(&resource))
        .any(|reader| {
            let text = reader.attributes.to_string();
            let named = |ids: &&Vec<String>| ids.iter().any(|id| text.contains(id.as_str()));
            identities.iter().filter(named).count() >= 2
        })
}

/// Whether `instance`, a resource's one instance, is a dependency of a managed instance the
/// delta keeps.
fn depended_on_by_a_remaining(base: &State, delta: &StateDelta, instance: &Instance) -> bool {
    let resource = instance.resource_address();
    instance.index.is_none()
        && managed(base).any(|reader| {
            reader.dependencies.contains(&resource) && !delta.removed.contains(&reader.address)
        })
}

/// `a` and `b` together, sorted, each target once.
fn merged(a: Vec<Target>, b: Vec<Target>) -> Vec<Target> {
    let set: BTreeSet<Target> = a.into_iter().chain(b).collect();
    set.into_iter().collect()
}

/// Every part the delta changed, as targets: changed top-level attributes of changed
/// instances, and whole created or removed instances.
fn targets(base: &State, delta: &StateDelta) -> Vec<Target> {
    let mut out = Vec::new();
    for upsert in &delta.upserts {
        match managed(base).find(|i| i.address == upsert.address) {
            Some(old) => out.extend(
                changed_attributes(&old.attributes, &upsert.attributes)
                    .into_iter()
                    .filter(|a| a != "tags_all")
                    .map(|attribute| Target {
                        address: upsert.address.clone(),
                        attribute,
                    }),
            ),
            None => out.push(Target {
                address: upsert.address.clone(),
                attribute: String::new(),
            }),
        }
    }
    out.extend(delta.removed.iter().map(|a| Target {
        address: a.clone(),
        attribute: String::new(),
    }));
    out.sort();
    out
}

fn expect(category: Category, base: &State, delta: &StateDelta, changes: &[Change]) -> Expect {
    let all = targets(base, delta);
    // consequences AWS records elsewhere (a role's list of its policies) are not flagged
    let meant = |t: &Target| {
        !ECHOES.contains(&t.attribute.as_str())
            || changes
                .iter()
                .any(|c| c.address == t.address && c.top_attributes().contains(&t.attribute))
    };
    let flag = match category {
        Category::PolicyGated | Category::Security => {
            all.iter().filter(|t| meant(t)).cloned().collect()
        }
        // Only the parts a risky change set: the other actors' parts are absorbed.
        Category::MultiActor => all
            .iter()
            .filter(|t| {
                changes.iter().any(|c| {
                    c.risky && c.address == t.address && c.top_attributes().contains(&t.attribute)
                })
            })
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    let flag = merged(flag, held_deletions(base, delta));
    let flag = merged(flag, held_creations(base, &all, changes));
    let owned: BTreeSet<(String, String)> = changes
        .iter()
        .flat_map(|c| c.owned.iter().map(|o| (c.address.clone(), (*o).to_owned())))
        .collect();
    let all_count = all.len();
    let unowned_types: BTreeSet<&str> = changes
        .iter()
        .flat_map(|c| c.unowned.iter().copied())
        .collect();
    let unowned: Vec<Target> = all
        .iter()
        .filter(|t| created(base, t))
        .filter(|t| {
            unowned_types
                .iter()
                .any(|ty| t.address.starts_with(&format!("{ty}.")))
        })
        .cloned()
        .collect();
    let ignore = all
        .into_iter()
        .filter(|t| owned.contains(&(t.address.clone(), t.attribute.clone())))
        .collect();
    Expect {
        patch: category != Category::NoiseOnly && unowned.len() < all_count,
        flag,
        ignore,
        unowned,
        ..Expect::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::change::Change;
    use serde_json::json;

    const STATE: &str = r#"{"version":4,"terraform_version":"1.9.0","serial":1,"lineage":"l","resources":[
      {"mode":"managed","type":"aws_iam_role","name":"app","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
       "instances":[{"schema_version":0,"attributes":{"id":"app","name":"app","description":"","managed_policy_arns":[]}}]},
      {"mode":"managed","type":"aws_sqs_queue","name":"q","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
       "instances":[{"schema_version":0,"attributes":{"id":"q","visibility_timeout_seconds":30,"delay_seconds":0}}]}]}"#;

    fn state() -> State {
        State::parse(STATE.as_bytes(), "test").expect("test state parses")
    }

    fn queue_change(state: &State) -> Change {
        Change::modify(
            "sqs-visibility",
            &state.instances[1],
            "raised".to_owned(),
            &["visibility_timeout_seconds"],
            Vec::new(),
        )
    }

    #[test]
    fn paths_become_steps() {
        assert_eq!(
            path_steps("rule.0.days"),
            vec![
                PathStep::Key("rule".into()),
                PathStep::Index(0),
                PathStep::Key("days".into())
            ]
        );
    }

    #[test]
    fn a_delta_beyond_the_change_is_refused() {
        let base = state();
        let change = queue_change(&base);
        let mut after = base.clone();
        after.instances[1].attributes["visibility_timeout_seconds"] = json!(60);
        assert_eq!(
            unexpected(
                &base,
                &StateDelta::between(&base, &after),
                std::slice::from_ref(&change)
            ),
            None
        );
        after.instances[1].attributes["delay_seconds"] = json!(5);
        let why = unexpected(
            &base,
            &StateDelta::between(&base, &after),
            std::slice::from_ref(&change),
        );
        assert_eq!(
            why.as_deref(),
            Some("aws_sqs_queue.q also changed delay_seconds")
        );
        let mut idle = base.clone();
        idle.instances[0].attributes["description"] = json!("x");
        let why = unexpected(&base, &StateDelta::between(&base, &idle), &[change]);
        assert!(why.is_some_and(|w| w.contains("aws_iam_role.app")));
    }

    #[test]
    fn flags_leave_out_consequences_recorded_elsewhere() {
        let base = state();
        let mut after = base.clone();
        after.instances[0].attributes["managed_policy_arns"] =
            json!(["arn:aws:iam::aws:policy/AdministratorAccess"]);
        after.instances[1].attributes["visibility_timeout_seconds"] = json!(60);
        let delta = StateDelta::between(&base, &after);
        let expect = expect(Category::PolicyGated, &base, &delta, &[queue_change(&base)]);
        let flagged: Vec<(&str, &str)> = expect
            .flag
            .iter()
            .map(|t| (t.address.as_str(), t.attribute.as_str()))
            .collect();
        assert_eq!(
            flagged,
            vec![("aws_sqs_queue.q", "visibility_timeout_seconds")]
        );
        assert!(expect.patch);
        let noise = super::expect(
            Category::NoiseOnly,
            &base,
            &StateDelta::between(&base, &base),
            &[],
        );
        assert!(!noise.patch && noise.flag.is_empty());
    }

    /// A state with three `count` route table associations, a `for_each` of two validation
    /// records that a certificate validation lists by name, a `for_each` of two alarms
    /// nothing reads, and a layer one function uses.
    const COLLECTIONS: &str = r#"{"version":4,"terraform_version":"1.9.0","serial":1,"lineage":"l","resources":[
      {"mode":"managed","type":"aws_route_table_association","name":"public","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
       "instances":[{"index_key":0,"schema_version":0,"attributes":{"id":"rtbassoc-0"}},
                    {"index_key":1,"schema_version":0,"attributes":{"id":"rtbassoc-1"}},
                    {"index_key":2,"schema_version":0,"attributes":{"id":"rtbassoc-2"}}]},
      {"mode":"managed","type":"aws_route53_record","name":"cert","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
       "instances":[{"index_key":"a.example","schema_version":0,"attributes":{"id":"Z_a_CNAME","fqdn":"_x.a.example"}},
                    {"index_key":"b.example","schema_version":0,"attributes":{"id":"Z_b_CNAME","fqdn":"_y.b.example"}}]},
      {"mode":"managed","type":"aws_acm_certificate_validation","name":"site","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
       "instances":[{"schema_version":0,"attributes":{"id":"v","validation_record_fqdns":["_x.a.example","_y.b.example"]},
                     "dependencies":["aws_route53_record.cert"]}]},
      {"mode":"managed","type":"aws_cloudwatch_metric_alarm","name":"this","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
       "instances":[{"index_key":"cpu","schema_version":0,"attributes":{"id":"cpu","arn":"arn:aws:cloudwatch:us-east-1:1:alarm:cpu"}},
                    {"index_key":"5xx","schema_version":0,"attributes":{"id":"5xx","arn":"arn:aws:cloudwatch:us-east-1:1:alarm:5xx"}}]},
      {"mode":"managed","type":"aws_lambda_layer_version","name":"ffmpeg","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
       "instances":[{"schema_version":0,"attributes":{"id":"arn:aws:lambda:us-east-1:1:layer:ffmpeg:1","arn":"arn:aws:lambda:us-east-1:1:layer:ffmpeg:1"}}]},
      {"mode":"managed","type":"aws_lambda_function","name":"f","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
       "instances":[{"schema_version":0,"attributes":{"id":"f","layers":["arn:aws:lambda:us-east-1:1:layer:ffmpeg:1"]},
                     "dependencies":["aws_lambda_layer_version.ffmpeg"]}]}]}"#;

    /// The addresses `expect` flags when `address` is deleted out of band.
    fn flagged_when_deleted(address: &str) -> Vec<String> {
        let base = State::parse(COLLECTIONS.as_bytes(), "test").expect("test state parses");
        let mut after = base.clone();
        after.instances.retain(|i| i.address != address);
        let delta = StateDelta::between(&base, &after);
        assert_eq!(delta.removed, vec![address.to_owned()]);
        let expect = expect(Category::Deletion, &base, &delta, &[]);
        assert!(expect.patch);
        expect.flag.into_iter().map(|t| t.address).collect()
    }

    #[test]
    fn a_deleted_count_instance_with_siblings_is_held() {
        for address in [
            "aws_route_table_association.public[0]",
            "aws_route_table_association.public[2]",
        ] {
            assert_eq!(flagged_when_deleted(address), vec![address.to_owned()]);
        }
    }

    #[test]
    fn a_deleted_key_of_a_collection_read_whole_is_held() {
        let address = r#"aws_route53_record.cert["a.example"]"#;
        assert_eq!(flagged_when_deleted(address), vec![address.to_owned()]);
    }

    #[test]
    fn a_deleted_key_nothing_reads_is_absorbed() {
        assert!(flagged_when_deleted(r#"aws_cloudwatch_metric_alarm.this["cpu"]"#).is_empty());
        assert!(flagged_when_deleted("aws_acm_certificate_validation.site").is_empty());
    }

    #[test]
    fn a_deleted_resource_a_remaining_one_depends_on_is_held() {
        // The function that remains depends on the layer: the layer's block cannot go.
        let address = "aws_lambda_layer_version.ffmpeg";
        assert_eq!(flagged_when_deleted(address), vec![address.to_owned()]);
    }
}

//! `reconcile`: from out-of-band calls and a Terraform project to a validated patch — resolve,
//! group into intents, decide by policy, plan edits, apply them to copies of the files, and
//! validate the result.

use crate::ingest::Call;
use crate::intents::{self, Delta, GroupOptions, Intent, Lifecycle, ResourceKey};
use crate::ownership::{self, Ownership, OwnershipConfig};
use crate::patch::{ChangeSet, Colour};
use crate::policy::{Decision, Part, Policy, Ruling};
use crate::resolve::{Finding, Origin, Resolver, Scope, is_global};
use crate::synthesize::edit::{Files, ToolCall, Workspace};
use crate::synthesize::place::{attribute_steps, split_blocks};
use crate::synthesize::plan::{Plan, Planner, Step, Unplanned};
use crate::terraform::config::{LoadOptions, Project, Written, aws_regions};
use crate::terraform::state::{PathStep, State, StateIndex};
use crate::validate::{
    Check, PlanCheck, Reach, Sandbox, ValidateError, Validation, Validator, admit, expected_state,
};
use knowledge::rules::RuleSet;
use knowledge::schema::ProviderSchema;
use knowledge::signals::SignalSet;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// The project and the knowledge a run reconciles against, as a front end gives them.
pub struct Input<'a> {
    /// The project's root directory.
    pub dir: &'a Path,
    /// `-var-file` arguments.
    pub var_files: Vec<PathBuf>,
    /// The state before the drift.
    pub state: State,
    /// The cloud after the drift, when a refreshed snapshot is at hand (needed to learn rules).
    pub observed: Option<State>,
    /// The project's accounts, when configured (else derived from the state's ARNs).
    pub accounts: Vec<String>,
    /// The project's regions, when configured (else derived from the state).
    pub regions: Vec<String>,
    /// The rules, when no knowledge base gives them.
    pub rules: &'a RuleSet,
    /// The security signals.
    pub signals: &'a SignalSet,
    /// The provider schema.
    pub schema: &'a ProviderSchema,
    /// The policy.
    pub policy: &'a Policy,
    /// What marks a created resource as this workspace's.
    pub ownership: &'a OwnershipConfig,
    /// Makes the validators run after the built-in check (e.g. `terraform plan`), once per
    /// reconciliation.
    pub validators: &'a dyn Fn() -> Vec<Box<dyn Validator>>,
    /// Whether an edit may land in a module outside the root, which other roots may share
    /// (`--allow-shared-module-edits`); else such an edit is left unplanned with the reason.
    pub shared_module_edits: bool,
    /// The run's one scratch copy of the project, which every check sets to its patch (made
    /// at its first use: `Sandbox::new(dir)`).
    pub sandbox: Sandbox,
}

/// An [`Input`] made ready once per run, which every reconciliation of the run borrows: the
/// configuration loaded, the state indexed, the project's scope and ownership rules, and what
/// the configuration reads outside its root.
pub struct Context<'a> {
    input: &'a Input<'a>,
    project: Project,
    index: StateIndex,
    scope: Scope,
    ownership: Ownership,
    outside: Vec<String>,
}

impl<'a> Context<'a> {
    /// Loads the project of `input` and indexes its state.
    pub fn new(input: &'a Input<'a>) -> Result<Context<'a>, ReconcileError> {
        let options = LoadOptions {
            var_files: input.var_files.clone(),
            state: Some(&input.state),
            ..LoadOptions::default()
        };
        let project = Project::load(input.dir, &options)?;
        let outside = outside_the_root(project.files().keys(), &input.var_files);
        let index = StateIndex::new(input.state.clone());
        let scope = Scope::from_state(&input.state)
            .with_regions(aws_regions(&project))
            .overridden(&input.accounts, &input.regions);
        let ownership = Ownership::new(input.ownership, &index)?;
        Ok(Context {
            input,
            project,
            index,
            scope,
            ownership,
            outside,
        })
    }

    /// What the run was given.
    pub fn input(&self) -> &'a Input<'a> {
        self.input
    }

    /// The loaded configuration, unpatched.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The state before the drift, indexed.
    pub fn index(&self) -> &StateIndex {
        &self.index
    }

    /// Reconciles `calls` (out-of-band, in time order) with `rules`, and with the edits
    /// `placed` beside the planner when given. The validators beside the built-in check get
    /// ready (the real Terraform initialises its working directory) on threads while the patch
    /// is made.
    pub fn reconcile(
        &self,
        calls: &[Call],
        rules: &RuleSet,
        placed: Option<&Placed>,
    ) -> Result<Outcome, ReconcileError> {
        let validators = (self.input.validators)();
        std::thread::scope(|threads| {
            for validator in &validators {
                if validator.available(self.input.dir).is_ok() {
                    let (root, outside) = (self.input.dir, self.outside.as_slice());
                    threads.spawn(move || validator.prepare(root, outside));
                }
            }
            let once = Once {
                calls,
                rules,
                placed,
                validators: &validators,
            };
            reconcile_loaded(self, &once)
        })
    }
}

/// What one reconciliation of a run reads besides its [`Context`].
struct Once<'a> {
    calls: &'a [Call],
    rules: &'a RuleSet,
    placed: Option<&'a Placed>,
    validators: &'a [Box<dyn Validator>],
}

/// Edits made beside the planner for parts it could not place: the whole new text of each
/// file they change (over the planner's patch) and the parts they place.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placed {
    /// Path (relative to the project root) → the file's new text.
    pub files: BTreeMap<String, String>,
    /// The unplanned parts the edits place.
    pub parts: Vec<Unplanned>,
}

impl Placed {
    /// Adds another set of edits; its file texts, made over these, replace them.
    pub fn extend(&mut self, other: Placed) {
        self.files.extend(other.files);
        self.parts.extend(other.parts);
    }
}

/// How the run ended, as the exit code tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// No drift: exit 0.
    NoDrift,
    /// Every intent was reconciled (absorbed, ignored by suggestion): exit 2.
    Patched,
    /// Some drift could not be reconciled (flagged, unplanned, failed validation): exit 3.
    Partial,
}

impl Status {
    /// The process exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Status::NoDrift => 0,
            Status::Patched => 2,
            Status::Partial => 3,
        }
    }
}

/// An intent with its decisions.
#[derive(Debug, Clone, Serialize)]
pub struct Decided {
    /// The intent.
    pub intent: Intent,
    /// Per delta, a ruling per part.
    pub rulings: Vec<Vec<Ruling>>,
}

/// The result of a reconciliation.
#[derive(Debug, Serialize)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// The intents and their decisions.
    pub intents: Vec<Decided>,
    /// The accounts and regions the run took as the project's.
    pub scope: ScopeSummary,
    /// What no intent absorbs: security signals, calls without a rule, hidden values,
    /// operational calls.
    pub findings: Vec<Finding>,
    /// The edits and what could not be planned or applied.
    pub plan: Plan,
    /// The new text of each changed file.
    #[serde(skip)]
    pub changes: ChangeSet,
    /// The unified diff.
    pub diff: String,
    /// Each validator's verdict.
    pub validations: Vec<Validation>,
    /// Validators that could not run, with the reason.
    pub skipped_validators: Vec<(String, String)>,
    /// Rounds of repair the patch needed (see [`REPAIR_ROUNDS`]).
    pub repair_rounds: usize,
    /// What became of each out-of-band write call (the report prints it with the input).
    #[serde(skip)]
    pub accounting: Accounting,
}

impl Outcome {
    /// The outcome of a run that found nothing: no drift, no patch.
    pub fn empty() -> Outcome {
        Outcome {
            status: Status::NoDrift,
            intents: Vec::new(),
            scope: ScopeSummary::default(),
            findings: Vec::new(),
            plan: Plan::default(),
            changes: ChangeSet::new(),
            diff: String::new(),
            validations: Vec::new(),
            skipped_validators: Vec::new(),
            repair_rounds: 0,
            accounting: Accounting::default(),
        }
    }
}

/// What became of the out-of-band write calls that entered a reconciliation. Each one must
/// have a fate in the report: part of a listed intent (absorbed, held, ignored, cancelled,
/// settled), or else a finding of a named kind. A call with neither is a bug of retrace,
/// listed by event id in `unaccounted`, and the run fails rather than pass in silence.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Accounting {
    /// The distinct write calls.
    pub writes: usize,
    /// Those that are part of a listed intent.
    pub in_intents: usize,
    /// Those in no intent that are a finding.
    pub findings: usize,
    /// The event ids of those with no fate.
    pub unaccounted: Vec<String>,
}

impl Accounting {
    /// The fate of each of `calls` among the intents and findings of a reconciliation.
    pub fn of(calls: &[Call], intents: &[Decided], findings: &[Finding]) -> Accounting {
        let in_intents: HashSet<&str> = intents
            .iter()
            .flat_map(|d| &d.intent.evidence)
            .map(|e| e.event_id.as_str())
            .collect();
        let in_findings: HashSet<&str> = findings.iter().map(|f| f.event_id.as_str()).collect();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut out = Accounting::default();
        for call in calls {
            let id = call.event_id.as_str();
            if !seen.insert(id) {
                continue;
            }
            out.writes += 1;
            if in_intents.contains(id) {
                out.in_intents += 1;
            } else if in_findings.contains(id) {
                out.findings += 1;
            } else {
                out.unaccounted.push(id.to_owned());
            }
        }
        out
    }

    /// Whether every write call has its fate.
    pub fn holds(&self) -> bool {
        self.unaccounted.is_empty()
    }

    /// The counts in words: `263 writes: 180 in intents, 83 findings, 0 unaccounted`.
    pub fn words(&self) -> String {
        format!(
            "{} writes: {} in intents, {} findings, {} unaccounted",
            self.writes,
            self.in_intents,
            self.findings,
            self.unaccounted.len()
        )
    }
}

/// The accounts and regions a run took as the project's (empty: unknown, so every call
/// counts as the project's).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScopeSummary {
    /// The accounts.
    pub accounts: Vec<String>,
    /// The regions.
    pub regions: Vec<String>,
}

impl ScopeSummary {
    fn of(scope: &Scope) -> ScopeSummary {
        ScopeSummary {
            accounts: scope.accounts(),
            regions: scope.regions(),
        }
    }
}

/// A reconciliation could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The project does not load.
    #[error(transparent)]
    Config(#[from] crate::terraform::config::LoadError),
    /// A validator failed to run.
    #[error(transparent)]
    Validate(#[from] crate::validate::ValidateError),
    /// The change set could not be built.
    #[error(transparent)]
    Patch(#[from] crate::patch::PatchError),
    /// An `[ownership]` pattern is bad.
    #[error(transparent)]
    Ownership(#[from] crate::ownership::OwnershipError),
}

/// One reconciliation of a run: resolve, group, sort creations, decide, plan, repair, adopt
/// the edits placed beside the planner, and validate.
fn reconcile_loaded(context: &Context, once: &Once) -> Result<Outcome, ReconcileError> {
    let (input, project, index) = (context.input, &context.project, &context.index);
    let resolver = Resolver::new(once.rules, input.signals, index, &context.scope);
    // Most calls have one effect: sized for that, the list is not copied as it grows.
    let mut effects = Vec::with_capacity(once.calls.len());
    let mut findings = Vec::new();
    for call in once.calls {
        let resolved = resolver.resolve(call);
        effects.extend(resolved.effects);
        findings.extend(resolved.findings);
    }
    let attributes = |address: &str| index.instance(address).map(|i| &i.attributes);
    let intents = intents::build(&effects, attributes, GroupOptions::default());
    let (intents, unowned) = ownership::sort_creations(intents, &context.ownership, index);
    findings.extend(unowned);
    let decided: Vec<Decided> = intents
        .into_iter()
        .map(|intent| Decided {
            rulings: input.policy.decide(&intent, index),
            intent,
        })
        .collect();
    let planner = Planner::new(project, index, input.schema);
    let mut plan = Plan::default();
    for d in &decided {
        planner.plan(&d.intent, &d.rulings, &mut plan);
    }
    let files = apply_steps(project, &mut plan, input.shared_module_edits);
    let mut changed = changed_files(project, files);
    let checked = Checked {
        context,
        validators: once.validators,
        decided: &decided,
    };
    let repair_rounds = repair(&checked, project, &mut plan, &mut changed)?;
    // The agent worked over the repaired patch, which the same input plans again.
    if let Some(placed) = once.placed {
        adopt((project, input), placed, &mut plan, &mut changed);
    }
    let mut changes = ChangeSet::new();
    for (path, text) in &changed {
        let old = project.source(path).map(str::to_owned);
        match input.shared_module_edits {
            true => changes.insert_beside(path, old, Some(text.clone()))?,
            false => changes.insert(path, old, Some(text.clone()))?,
        }
    }
    let diff = changes.diff(Colour::Plain);
    let (validations, skipped) = validate(&checked, &plan, &changed)?;
    let status = status(
        &decided,
        &plan,
        &validations,
        &findings,
        &context.scope,
        diff.is_empty(),
    );
    let accounting = Accounting::of(once.calls, &decided, &findings);
    if !accounting.holds() {
        tracing::error!(
            unaccounted = %accounting.unaccounted.join(", "),
            "out-of-band write calls with no intent and no finding: a bug of retrace"
        );
    }
    Ok(Outcome {
        status,
        accounting,
        intents: decided,
        scope: ScopeSummary::of(&context.scope),
        findings,
        plan,
        changes,
        diff,
        validations,
        skipped_validators: skipped,
        repair_rounds,
    })
}

/// Takes edits made beside the planner: their files over the planner's, and the parts they
/// place moved from `unplanned` to `placed`. Edits to a file outside the root (a shared
/// module) are refused as the planner's are, unless such edits are allowed.
fn adopt(
    (project, input): (&Project, &Input),
    placed: &Placed,
    plan: &mut Plan,
    changed: &mut BTreeMap<String, String>,
) {
    let (schema, shared) = (input.schema, input.shared_module_edits);
    let edited: Vec<(&String, &String)> = placed
        .files
        .iter()
        .filter(|(path, text)| project.files().get(*path) != Some(*text))
        .collect();
    if let Some(reason) = edited.iter().find_map(|(path, text)| {
        unplaceable(project.root(), path, shared)
            .or_else(|| out_of_bounds(project, schema, path, text, &placed.parts))
    }) {
        tracing::warn!(%reason, "edits made beside the planner are refused");
        return;
    }
    for (path, text) in edited {
        changed.insert(path.clone(), text.clone());
    }
    let (now_placed, left): (Vec<Unplanned>, Vec<Unplanned>) = std::mem::take(&mut plan.unplanned)
        .into_iter()
        .partition(|u| {
            placed
                .parts
                .iter()
                .any(|p| p.intent == u.intent && p.resource == u.resource && p.part == u.part)
        });
    plan.unplanned = left;
    plan.placed.extend(now_placed);
}

/// The files whose text the steps changed.
/// A JSON configuration file's entry is its JSON text, the change written into it (each
/// step was checked to be writable there, see [`apply_steps`]).
fn changed_files(project: &Project, files: Files) -> BTreeMap<String, String> {
    files
        .into_iter()
        .filter(|(path, text)| project.files().get(path) != Some(text))
        .filter_map(|(path, text)| match project.json_edit(&path, &text) {
            None => Some((path, text)),
            Some(Ok(json)) => Some((path, json)),
            Some(Err(_)) => None,
        })
        .collect()
}

/// Rounds of repair after a failed plan check, at most.
pub const REPAIR_ROUNDS: usize = 2;

/// Repairs a patch the plan check finds changing what no intent touched: each round finds the
/// steps whose withdrawal removes such collateral changes (an edit at a source other values
/// share, say), withdraws them as unplanned with the reason, and checks again. Returns the
/// rounds taken.
fn repair(
    checked: &Checked,
    project: &Project,
    plan: &mut Plan,
    changed: &mut BTreeMap<String, String>,
) -> Result<usize, ReconcileError> {
    let mut current = plan_check(checked, plan, changed)?;
    let mut rounds = 0;
    while !current.collateral.is_empty() && rounds < REPAIR_ROUNDS {
        let culprits = culprits(checked, project, plan, &current);
        if culprits.is_empty() {
            break;
        }
        rounds += 1;
        for (at, spared) in culprits.into_iter().rev() {
            let step = plan.steps.remove(at);
            plan.unplanned.push(Unplanned {
                reason: format!(
                    "withdrawn in repair round {rounds}: {} ({}) also changed {}",
                    step.call.name(),
                    step.why,
                    spared.join(", ")
                ),
                intent: step.intent,
                resource: step.resource,
                part: step.part,
            });
        }
        let files = apply_steps(project, plan, checked.context.input.shared_module_edits);
        *changed = changed_files(project, files);
        current = plan_check(checked, plan, changed)?;
    }
    Ok(rounds)
}

/// The steps whose withdrawal spares some collateral change, each with the addresses it spares.
fn culprits(
    checked: &Checked,
    project: &Project,
    plan: &Plan,
    current: &Validation,
) -> Vec<(usize, Vec<String>)> {
    let addresses = |v: &Validation| -> Vec<String> {
        v.collateral.iter().map(|d| d.address.clone()).collect()
    };
    let before = addresses(current);
    (0..plan.steps.len())
        .filter_map(|at| {
            let mut trial = plan.clone();
            trial.steps.remove(at);
            let files = apply_steps(
                project,
                &mut trial,
                checked.context.input.shared_module_edits,
            );
            let changed = changed_files(project, files);
            // A trial that no longer loads (a reference to what the step created) spares nothing.
            let after = addresses(&plan_check(checked, &trial, &changed).ok()?);
            let spared: Vec<String> = before
                .iter()
                .filter(|a| !after.contains(a))
                .cloned()
                .collect();
            (!spared.is_empty()).then_some((at, spared))
        })
        .collect()
}

/// Runs the planned steps in order over copies of the files; a refused edit moves its step to
/// the unplanned list with the tool's reason, and one that changed nothing (the code already
/// held it) to the settled list.
fn apply_steps(project: &Project, plan: &mut Plan, shared: bool) -> Files {
    let mut workspace = Workspace::new(project.files().clone());
    let mut kept = Vec::new();
    for mut step in std::mem::take(&mut plan.steps) {
        let unplanned = |step: &Step, reason: String| Unplanned {
            intent: step.intent.clone(),
            resource: step.resource.clone(),
            part: step.part.clone(),
            reason,
        };
        let summary = match step.call.run_in(&mut workspace) {
            Ok(summary) => summary,
            Err(error) => {
                let reason = format!("{}: {error}", step.call.name());
                plan.unplanned.push(unplanned(&step, reason));
                continue;
            }
        };
        let changed: Vec<String> = workspace
            .step_changes()
            .into_iter()
            .map(str::to_owned)
            .collect();
        if changed.is_empty() {
            let reason = format!("already in the code: {summary}");
            plan.settled.push(unplanned(&step, reason));
            continue;
        }
        match refusal(project, &workspace, &changed, &step, shared) {
            Refusal::None => {}
            Refusal::Caution(caution) => {
                step.warning = Some(match step.warning.take() {
                    Some(warning) => format!("{warning}; {caution}"),
                    None => caution,
                });
            }
            Refusal::Refused(reason) => {
                workspace.rollback();
                plan.unplanned.push(unplanned(&step, reason));
                continue;
            }
        }
        kept.push(step);
    }
    plan.steps = kept;
    workspace.into_files()
}

/// Whether a step that changed `changed` may stand.
enum Refusal {
    /// It may.
    None,
    /// It may, with this caution on the step.
    Caution(String),
    /// It may not, for this reason.
    Refused(String),
}

/// Whether the step that changed the files `changed` of `workspace` may stand: a change a JSON
/// file cannot take, one inside a module `terraform init` installs, one to a path
/// [`admit`] refuses (a symbolic link), or one in a module outside the root (unless `shared`
/// allows it, with a caution) is refused.
fn refusal(
    project: &Project,
    workspace: &Workspace,
    changed: &[String],
    step: &Step,
    shared: bool,
) -> Refusal {
    let tool = step.call.name();
    let unwritable = changed.iter().find_map(|path| {
        let text = workspace.text(path).ok()?;
        let reason = project.json_edit(path, text)?.err()?;
        Some(format!(
            "{tool}: the change lands in {path}, JSON configuration, and {reason}"
        ))
    });
    if let Some(reason) = unwritable {
        return Refusal::Refused(reason);
    }
    if let Some(file) = changed.iter().find(|p| installed_module(p)) {
        return Refusal::Refused(format!(
            "{tool}: the edit lands in {file}, a module `terraform init` installs from a registry or repository; a change there is lost at the next init, so it is left to a person"
        ));
    }
    let mut outside = None;
    for path in changed {
        match admit(project.root(), path) {
            Err(reason) => return Refusal::Refused(format!("{tool}: {reason}")),
            Ok(Reach::Shared) => outside = outside.or(Some(path)),
            Ok(Reach::Root) => {}
        }
    }
    match outside {
        None => Refusal::None,
        Some(file) if !shared => Refusal::Refused(format!(
            "{tool}: the edit lands in {file}, a module outside this root that other roots may use; rerun with --allow-shared-module-edits to make it"
        )),
        Some(file) => Refusal::Caution(format!(
            "edits {file}, a module outside this root: every root that uses it changes too"
        )),
    }
}

/// Why a file may not take edits made beside the planner: JSON configuration (the planner
/// writes those through its own steps), a module `terraform init` installs, a path [`admit`]
/// refuses (a symbolic link, a path not plainly written), or a file outside the root (a
/// module beside it, a linked directory elsewhere) unless `shared` allows it.
pub fn unplaceable(root: &Path, path: &str, shared: bool) -> Option<String> {
    if path.ends_with(".tf.json") {
        return Some(format!("{path} is JSON configuration"));
    }
    if installed_module(path) {
        return Some(format!(
            "{path} is in a module `terraform init` installs; a change there is lost at the next init"
        ));
    }
    match admit(root, path) {
        Err(reason) => Some(reason),
        Ok(Reach::Shared) if !shared => Some(format!(
            "{path} is in a module outside this root that other roots may use"
        )),
        Ok(_) => None,
    }
}

/// Why an edit made beside the planner to `path` (new text `text`) reaches past the parts it
/// places: placement may change only the intent's own resources and the blocks their values
/// come from ([`Provenance::blocks`](crate::terraform::config::Provenance::blocks): the
/// variables, `.tfvars` entries, `locals` and module calls on the way), add a new variable,
/// or add an `import`. A provider, the `terraform` block (backend), another resource (its
/// `lifecycle` too), a variable or module call the values do not pass through, and an output
/// are out of bounds; which files may take edits at all is [`unplaceable`]'s to say.
pub fn out_of_bounds(
    project: &Project,
    schema: &ProviderSchema,
    path: &str,
    text: &str,
    parts: &[Unplanned],
) -> Option<String> {
    if path.ends_with(".json") {
        return Some(format!(
            "{path} is JSON configuration, which placement does not edit"
        ));
    }
    let old = project.files().get(path).map_or("", String::as_str);
    let (Ok(before), Ok(after)) = (
        crate::terraform::syntax::parse_body(old),
        crate::terraform::syntax::parse_body(text),
    ) else {
        return Some(format!("{path} does not parse after the edits"));
    };
    let before = top_blocks(&before);
    let after = top_blocks(&after);
    let chain: Vec<Written> = parts
        .iter()
        .flat_map(|p| chain_of(project, schema, p))
        .collect();
    let changed = after
        .iter()
        .filter(|b| !before.contains(b))
        .chain(before.iter().filter(|b| !after.contains(b)));
    for (kind, labels, _) in changed {
        let label = labels.first().map(String::as_str);
        let own = kind == "resource" && parts.iter().any(|p| address_names(&p.resource, labels));
        let on_chain = chain
            .iter()
            .any(|w| w.file == path && w.kind == kind && w.label.as_deref() == label);
        // A `.tfvars` entry may set any root variable the values pass through.
        let entry = path.ends_with(".tfvars")
            && kind == "attribute"
            && chain.iter().any(|w| {
                matches!(w.kind, "variable" | "attribute")
                    && !w.file.contains('/')
                    && w.label.as_deref() == label
            });
        let new_variable = kind == "variable"
            && !before
                .iter()
                .any(|(k, l, _)| k == "variable" && l == labels);
        if !(own || on_chain || entry || new_variable || kind == "import") {
            let what = std::iter::once(kind.as_str())
                .chain(labels.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            return Some(format!(
                "the edit to {path} changes `{what}`, which is neither a resource of the change being placed nor where its values come from"
            ));
        }
    }
    None
}

/// The blocks a part's value passes through: for an attribute, tags or a nested block, where
/// its value is written; for a whole `for_each` instance, where its key is.
fn chain_of(project: &Project, schema: &ProviderSchema, part: &Unplanned) -> Vec<Written> {
    let key = |step: &str| PathStep::Key(step.to_owned());
    let steps: Vec<PathStep> = match &part.part {
        Part::Attribute(attribute) => {
            // Split into nested blocks and attribute by the schema, as the planner splits it.
            let resource = project.instance(&part.resource).map(|i| &i.resource_type);
            let schema = resource.and_then(|r| schema.resource(r));
            // A dotted rest is a path into a map or object attribute.
            let (blocks, name) = split_blocks(schema, attribute);
            let mut keys = name.split('.');
            let first = keys.next().unwrap_or_default();
            let mut steps = attribute_steps(&blocks, first);
            steps.extend(keys.map(key));
            steps
        }
        Part::Block { block, .. } => vec![key(block)],
        Part::Tags => vec![key("tags")],
        Part::Resource => match instance_key(&part.resource) {
            Some(k) => vec![key("for_each"), key(k)],
            None => return Vec::new(),
        },
    };
    project
        .provenance(&part.resource, &steps)
        .map(|p| p.blocks())
        .unwrap_or_default()
}

/// The `for_each` key of an instance address (`aws_iam_user.this["alice"]` gives `alice`).
fn instance_key(address: &str) -> Option<&str> {
    address
        .strip_suffix("\"]")?
        .rsplit_once("[\"")
        .map(|(_, key)| key)
}

/// A file's top-level blocks: kind, labels and text.
fn top_blocks(body: &hcl::edit::structure::Body) -> Vec<(String, Vec<String>, String)> {
    body.iter()
        .map(|structure| match structure {
            hcl::edit::structure::Structure::Block(b) => (
                b.ident.as_str().to_owned(),
                b.labels.iter().map(|l| l.as_str().to_owned()).collect(),
                b.body.to_string(),
            ),
            hcl::edit::structure::Structure::Attribute(a) => (
                "attribute".to_owned(),
                vec![a.key.as_str().to_owned()],
                a.value.to_string(),
            ),
        })
        .collect()
}

/// Whether a resource address (`module.a.aws_s3_bucket.logs["x"]`) names the resource block
/// with these labels (`aws_s3_bucket`, `logs`).
fn address_names(address: &str, labels: &[String]) -> bool {
    let [kind, name] = labels else {
        return false;
    };
    let base = address.split('[').next().unwrap_or(address);
    base == format!("{kind}.{name}") || base.ends_with(&format!(".{kind}.{name}"))
}

/// Whether a root-relative path lies in a module `terraform init` installed
/// (`.terraform/modules/...`).
fn installed_module(path: &str) -> bool {
    path.starts_with(".terraform/") || path.contains("/.terraform/")
}

/// What every check of one reconciliation shares: the run's context, the validators beside
/// the built-in check, and the decided intents.
struct Checked<'a> {
    context: &'a Context<'a>,
    validators: &'a [Box<dyn Validator>],
    decided: &'a [Decided],
}

/// Builds what a validator checks (the observed or expected state, the touched and excused
/// parts) and runs `run` on it.
fn with_check<R>(
    checked: &Checked,
    plan: &Plan,
    changed: &BTreeMap<String, String>,
    run: impl FnOnce(&Check) -> Result<R, ReconcileError>,
) -> Result<R, ReconcileError> {
    let (input, decided) = (checked.context.input, checked.decided);
    let deltas: Vec<&Delta> = decided.iter().flat_map(|d| &d.intent.deltas).collect();
    let created = created_addresses(plan, &deltas);
    let expected = expected_state(&input.state, &deltas, &created);
    let observed = match &input.observed {
        Some(observed) => with_created(observed, &expected, &created),
        None => expected,
    };
    let unplanned: HashSet<(&str, &Part)> = plan
        .unplanned
        .iter()
        .map(|u| (u.resource.as_str(), &u.part))
        .collect();
    let mut touched: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut excused: Vec<(String, String)> = Vec::new();
    for d in decided {
        for (delta, rulings) in d.intent.deltas.iter().zip(&d.rulings) {
            let Some(address) = delta
                .address
                .clone()
                .or_else(|| created.get(&delta.resource).cloned())
            else {
                continue;
            };
            if seen.insert(address.clone()) {
                touched.push(address.clone());
            }
            for ruling in rulings {
                let unplanned = unplanned.contains(&(address.as_str(), &ruling.part));
                if ruling.decision != Decision::Absorb || unplanned {
                    excused.push((address.clone(), ruling.part.attribute().to_owned()));
                }
            }
        }
    }
    // A resource a step imports for a change to another one (a security group's new rule
    // written as an `aws_security_group_rule`, or as a list entry a module's rule resources
    // are made from): the expected state has no instance for it (the
    // change is checked on the group), so it is touched and excused, not collateral.
    for (_, address) in plan.steps.iter().filter_map(|s| imported(&s.call)) {
        if seen.insert(address.clone()) {
            excused.push((address.clone(), String::new()));
            touched.push(address);
        }
    }
    let creates: Vec<String> = plan
        .not_imported
        .iter()
        .map(|n| n.address.clone())
        .collect();
    let check = Check {
        root: input.dir,
        sandbox: &input.sandbox,
        outside: &checked.context.outside,
        changed,
        var_files: &input.var_files,
        state: &input.state,
        observed: &observed,
        touched: &touched,
        excused: &excused,
        creates: &creates,
    };
    run(&check)
}

/// What the configuration reads outside its root directory (local modules through `../`, var
/// files), as root-relative paths: module directories whole, var files alone.
pub fn outside_the_root<'a>(
    files: impl Iterator<Item = &'a String>,
    var_files: &[PathBuf],
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for file in files.filter(|f| f.starts_with("../")) {
        let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
        if !out.iter().any(|o| o == dir) {
            out.push(dir.to_owned());
        }
    }
    for var_file in var_files {
        let text = var_file.to_string_lossy().replace('\\', "/");
        if text.starts_with("../") && !out.contains(&text) {
            out.push(text);
        }
    }
    out
}

/// The built-in plan check alone, as the repair loop runs it.
fn plan_check(
    checked: &Checked,
    plan: &Plan,
    changed: &BTreeMap<String, String>,
) -> Result<Validation, ReconcileError> {
    with_check(checked, plan, changed, |check| {
        Ok(PlanCheck::new(&checked.context.project).validate(check)?)
    })
}

/// Each validator's verdict, and the validators that could not run with the reason.
type Verdicts = (Vec<Validation>, Vec<(String, String)>);

/// The plan check, and beside it on a thread every other validator that can run; one that
/// cannot run or fails to is reported as not run, with the reason, never as the run's error.
fn validate(
    checked: &Checked,
    plan: &Plan,
    changed: &BTreeMap<String, String>,
) -> Result<Verdicts, ReconcileError> {
    let (root, validators) = (checked.context.input.dir, checked.validators);
    let built_in = PlanCheck::new(&checked.context.project);
    with_check(checked, plan, changed, |check| {
        std::thread::scope(|threads| {
            let others = threads.spawn(|| others((root, validators), check, changed));
            let built_in = built_in.validate(check);
            let (rest, skipped) = others
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let mut validations = vec![built_in?];
            validations.extend(rest);
            Ok((validations, skipped))
        })
    })
}

/// The verdicts of the validators besides the built-in one, and those that did not run with
/// the reason.
fn others(
    (root, validators): (&Path, &[Box<dyn Validator>]),
    check: &Check,
    changed: &BTreeMap<String, String>,
) -> Verdicts {
    let mut validations = Vec::new();
    let mut skipped = Vec::new();
    for validator in validators {
        let name = validator.name().to_owned();
        if changed.is_empty() {
            // The code is as it was: an external judge would only repeat its last verdict.
            skipped.push((
                name,
                "the patch is empty, so the code is unchanged".to_owned(),
            ));
            continue;
        }
        let verdict = validator
            .available(root)
            .map_err(ValidateError::Unavailable)
            .and_then(|()| validator.validate(check));
        match verdict {
            Ok(validation) => validations.push(validation),
            Err(error) => skipped.push((name, error.to_string())),
        }
    }
    (validations, skipped)
}

/// The observed state plus the resources created out of band: a refresh reads only what the
/// state already manages, so what the intents created is taken from their net effect.
fn with_created(
    observed: &State,
    expected: &State,
    created: &BTreeMap<ResourceKey, String>,
) -> State {
    let mut out = observed.clone();
    for address in created.values() {
        let known = out.instances.iter().any(|i| &i.address == address);
        let new = expected.instances.iter().find(|i| &i.address == address);
        if let (false, Some(new)) = (known, new) {
            out.instances.push(new.clone());
        }
    }
    out
}

/// The import id and address of a step that imports an object: a new resource block with its
/// import, or an import of an instance another step's edit makes.
fn imported(call: &ToolCall) -> Option<(&str, String)> {
    match call {
        ToolCall::ImportResource(i) => Some((&i.id, format!("{}.{}", i.resource_type, i.name))),
        ToolCall::AddImport(i) => Some((&i.id, i.to.clone())),
        _ => None,
    }
}

/// The address each created resource got in the plan: where a step imports it, or where the
/// patch declares it without an import (a type the provider cannot import).
fn created_addresses(plan: &Plan, deltas: &[&Delta]) -> BTreeMap<ResourceKey, String> {
    let not_imported = plan
        .not_imported
        .iter()
        .map(|n| (n.id.as_str(), n.address.clone()));
    let declared: Vec<(&str, String)> = plan
        .steps
        .iter()
        .filter_map(|s| imported(&s.call))
        .chain(not_imported)
        .collect();
    deltas
        .iter()
        .filter(|d| d.lifecycle == Lifecycle::Created)
        .filter_map(|d| {
            let address = declared
                .iter()
                .find_map(|(id, address)| (*id == d.resource.identity).then_some(address))?;
            Some((d.resource.clone(), address.clone()))
        })
        .collect()
}

/// Whether an intent is the project's business: it touches a managed resource, or its calls
/// were made in the project's accounts and regions (a flagged change there is an
/// account-level finding).
fn concerns_project(intent: &Intent, scope: &Scope) -> bool {
    let managed = intent
        .deltas
        .iter()
        .any(|d| d.lifecycle != Lifecycle::Unmanaged && d.address.is_some());
    managed
        || intent.evidence.iter().any(|e| {
            scope.contains(&Origin {
                account: e.account.as_deref(),
                region: &e.region,
                global: is_global(&e.event_source),
            })
        })
}

/// How the run ended: partial when anything is left for a person (a flagged change, an edit
/// that could not be planned, a failed validation, a finding in the project's reach); patched
/// when the patch is not empty; otherwise nothing to do — the code already says what the
/// cloud does, as on a second run over the same trail.
fn status(
    decided: &[Decided],
    plan: &Plan,
    validations: &[Validation],
    findings: &[Finding],
    scope: &Scope,
    empty_diff: bool,
) -> Status {
    let flagged = decided
        .iter()
        .filter(|d| concerns_project(&d.intent, scope))
        .flat_map(|d| d.rulings.iter().flatten())
        .any(|r| r.decision == Decision::Flag);
    let failed = validations.iter().any(|v| !v.passed);
    let for_person = findings.iter().any(Finding::needs_person);
    if flagged || failed || for_person || !plan.unplanned.is_empty() {
        Status::Partial
    } else if !empty_diff {
        Status::Patched
    } else {
        Status::NoDrift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = r#"variable "instance_type" {
  default = "t3.micro"
}

variable "other" {
  default = "x"
}

locals {
  ami  = "ami-123"
  team = "data"
}

provider "aws" {
  region = "us-east-1"
}

resource "aws_instance" "web" {
  ami           = local.ami
  instance_type = var.instance_type
  monitoring    = var.other == "z"
}

resource "aws_s3_bucket" "logs" {
  bucket = "logs"
  tags = {
    Team = local.team
  }
}

output "type" {
  value = var.instance_type
}
"#;

    /// The project above, with `other = "y"` in terraform.tfvars.
    fn project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("main.tf"), MAIN).expect("main.tf");
        std::fs::write(dir.path().join("terraform.tfvars"), "other = \"y\"\n").expect("tfvars");
        let project = Project::load(dir.path(), &LoadOptions::default()).expect("loads");
        (dir, project)
    }

    fn attribute(name: &str) -> Unplanned {
        Unplanned {
            intent: "I1".into(),
            resource: "aws_instance.web".into(),
            part: Part::Attribute(name.into()),
            reason: String::new(),
        }
    }

    /// The reason an edit of `path` to `text` is refused when it places `part`.
    fn refused(project: &Project, path: &str, text: &str, part: &Unplanned) -> Option<String> {
        let schema = ProviderSchema::bundled().expect("the bundled schema");
        out_of_bounds(project, schema, path, text, std::slice::from_ref(part))
    }

    /// main.tf with `from` replaced by `to`.
    fn main(from: &str, to: &str) -> String {
        assert!(MAIN.contains(from), "{from}");
        MAIN.replacen(from, to, 1)
    }

    #[test]
    fn placement_may_edit_only_the_blocks_the_value_comes_from() {
        let (_dir, project) = project();
        let size = attribute("instance_type");
        let allowed = [
            ("main.tf", main("\"t3.micro\"", "\"t3.large\"")),
            (
                "main.tf",
                main(
                    "= var.instance_type\n  monitoring",
                    "= \"t3.large\"\n  monitoring",
                ),
            ),
            (
                "main.tf",
                format!("{MAIN}\nvariable \"size\" {{\n  default = \"t3.large\"\n}}\n"),
            ),
            (
                "terraform.tfvars",
                "other = \"y\"\ninstance_type = \"t3.large\"\n".to_owned(),
            ),
        ];
        for (path, text) in allowed {
            assert_eq!(refused(&project, path, &text, &size), None, "{text}");
        }
        for (path, text, what) in [
            ("main.tf", main("\"x\"", "\"z\""), "variable other"),
            ("main.tf", main("\"ami-123\"", "\"ami-456\""), "locals"),
            ("main.tf", main("us-east-1", "eu-west-1"), "provider aws"),
            (
                "main.tf",
                main("value = var.instance_type", "value = 1"),
                "output type",
            ),
            (
                "main.tf",
                main("bucket = \"logs\"", "bucket = \"other\""),
                "resource aws_s3_bucket logs",
            ),
            (
                "terraform.tfvars",
                "other = \"z\"\n".to_owned(),
                "attribute other",
            ),
        ] {
            let reason = refused(&project, path, &text, &size).expect(what);
            assert!(reason.contains(&format!("`{what}`")), "{what}: {reason}");
        }
        let json = refused(&project, "terraform.tfvars.json", "{}", &size).expect("json");
        assert!(json.contains("JSON"), "{json}");
    }

    #[test]
    fn a_computed_value_may_be_placed_where_the_names_it_reads_are_written() {
        let (_dir, project) = project();
        // `ami = local.ami`: the locals block is where the value is written.
        let local = main("\"ami-123\"", "\"ami-456\"");
        assert_eq!(
            refused(&project, "main.tf", &local, &attribute("ami")),
            None
        );
        // `monitoring = var.other == "z"` reads var.other, which terraform.tfvars sets: its
        // entry may change, the declaration's default (which the entry overrides) may not.
        let monitoring = attribute("monitoring");
        let entry = "other = \"z\"\n";
        assert_eq!(
            refused(&project, "terraform.tfvars", entry, &monitoring),
            None
        );
        let default = main("\"x\"", "\"z\"");
        assert!(refused(&project, "main.tf", &default, &monitoring).is_some());
    }

    #[test]
    fn a_file_reached_through_a_link_out_of_the_root_is_a_shared_module_and_a_linked_file_is_never_edited()
     {
        let (dir, _project) = project();
        let root = dir.path();
        let elsewhere = tempfile::tempdir().expect("temp dir");
        std::fs::write(elsewhere.path().join("main.tf"), "# shared\n").expect("module");
        std::os::unix::fs::symlink(elsewhere.path(), root.join("linked")).expect("dir link");
        std::os::unix::fs::symlink(root.join("main.tf"), root.join("alias.tf")).expect("file link");
        let shared = unplaceable(root, "linked/main.tf", false).expect("refused");
        assert!(shared.contains("outside this root"), "{shared}");
        assert_eq!(unplaceable(root, "linked/main.tf", true), None);
        for allowed in [false, true] {
            let linked = unplaceable(root, "alias.tf", allowed).expect("refused");
            assert!(linked.contains("symbolic link"), "{linked}");
        }
        assert_eq!(unplaceable(root, "main.tf", false), None);
        assert!(unplaceable(root, "a/../main.tf", false).is_some());
    }

    #[test]
    fn a_map_entry_may_be_placed_where_the_map_is_written() {
        let dir = tempfile::tempdir().expect("temp dir");
        let main = r#"locals {
  host = "db.internal"
}

variable "other" {
  default = "x"
}

resource "aws_lambda_function" "api" {
  function_name = "api"
  role          = "arn:aws:iam::111122223333:role/api"

  environment {
    variables = {
      DB_HOST = local.host
    }
  }
}
"#;
        std::fs::write(dir.path().join("main.tf"), main).expect("main.tf");
        let project = Project::load(dir.path(), &LoadOptions::default()).expect("loads");
        let part = Unplanned {
            resource: "aws_lambda_function.api".into(),
            ..attribute("environment.variables.DB_HOST")
        };
        // `environment` is a nested block, `variables` a map attribute inside it (by the
        // schema): the entry's value is written in the `locals` block, and `var.other` is off
        // its chain. Read as blocks all the way, `variables` would have no element 0 and the
        // chain would stay empty.
        let host = main.replace("db.internal", "db2.internal");
        assert_eq!(refused(&project, "main.tf", &host, &part), None);
        let other = main.replace("\"x\"", "\"y\"");
        let reason = refused(&project, "main.tf", &other, &part).expect("refused");
        assert!(reason.contains("`variable other`"), "{reason}");
    }

    #[test]
    fn a_tag_may_be_placed_where_its_own_value_is_written() {
        let (_dir, project) = project();
        let tags = Unplanned {
            resource: "aws_s3_bucket.logs".into(),
            part: Part::Tags,
            ..attribute("tags")
        };
        // `Team = local.team`: the locals block that sets `team` is on the tag's chain.
        let local = main("\"data\"", "\"ml\"");
        assert_eq!(refused(&project, "main.tf", &local, &tags), None);
        let own = main("Team = local.team", "Team = \"ml\"");
        assert_eq!(refused(&project, "main.tf", &own, &tags), None);
        let output = main("value = var.instance_type", "value = 1");
        assert!(refused(&project, "main.tf", &output, &tags).is_some());
        let other = main(
            "= var.instance_type\n  monitoring",
            "= \"t3.large\"\n  monitoring",
        );
        assert!(refused(&project, "main.tf", &other, &tags).is_some());
    }
}

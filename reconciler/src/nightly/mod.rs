//! `retrace nightly`: one run for every workspace of `retrace.toml`. The events are read once,
//! from the earliest point any workspace needs (its watermark less the overlap for
//! CloudTrail's delivery delay), and routed to each workspace by account, region and managed
//! resource. Each workspace is reconciled in its own checkout on its branch
//! (`retrace/<name>`), which continues an open pull request or starts again from the base;
//! the patch is committed with the evidence, pushed, and the pull (or merge) request opened
//! or updated, never duplicated. Before that, the fate of the requests earlier runs opened is
//! read and counted against the rules behind their lines. `dry_run` reads everything and
//! changes nothing: no commit pushed, no request opened, nothing recorded.

pub mod body;
pub mod forge;
pub mod git;
pub mod state;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use knowledge::rules::RuleSet;
use knowledge::schema::ProviderSchema;
use knowledge::signals::SignalSet;
use knowledge::store::{Review, ReviewLine, ReviewState, Settlement, StoreError, Watermark};
use serde::Serialize;

use crate::agent::client::Usage;
use crate::agent::{Agent, AgentReport};
use crate::config::{Config, ConfigError, WorkspaceConfig, parse_when};
use crate::ingest::Call;
use crate::pipeline::InputSummary;
use crate::policy::{Policy, PolicyError};
use crate::reconcile::{Outcome, Status};
use crate::record::{Knowledge, RecordError};
use crate::resolve::{Origin, Scope, is_global, touched};
use crate::run::{self, Project, RunError};
use crate::terraform::state::{State, StateIndex};
use crate::validate::Validator;
use body::Told;
use forge::{Fate, Forge, ForgeError, Opened, Proposal};
use git::{Author, Git, GitError};
use state::{ReadStateError, read_state};

/// Why a workspace's nightly run stopped.
#[derive(Debug, thiserror::Error)]
pub enum NightlyError {
    /// A setting of `retrace.toml` is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The workspace's policy does not load.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The forge refused or could not be reached.
    #[error(transparent)]
    Forge(#[from] ForgeError),
    /// The state could not be read.
    #[error(transparent)]
    State(#[from] ReadStateError),
    /// The reconciliation failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The knowledge base failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The knowledge base failed while recording.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The patch could not be written into the checkout.
    #[error("writing the patch into {dir}: {message}")]
    Write {
        /// The checkout's project directory.
        dir: String,
        /// What went wrong.
        message: String,
    },
    /// The forge repository is neither configured nor readable from the remote's URL.
    #[error(
        "workspace {0}: cannot tell the forge repository from the remote URL; set forge_repository"
    )]
    NoForgeRepository(String),
}

/// Makes the validators to run after the built-in check, for a workspace's regions.
pub type Validators<'a> = &'a dyn Fn(&[String]) -> Vec<Box<dyn Validator>>;

/// What a nightly run needs besides the configuration.
pub struct Setup<'a> {
    /// The configuration: `[nightly]`, `[[workspace]]` and the shared sections.
    pub config: &'a Config,
    /// Where repositories are cloned.
    pub checkouts: PathBuf,
    /// Read everything, change nothing.
    pub dry_run: bool,
    /// Read from here for every workspace, instead of each one's watermark.
    pub since: Option<DateTime<Utc>>,
    /// The workspaces to run (empty: all).
    pub only: &'a [String],
    /// The shipped rules, when no knowledge base is used.
    pub rules: &'a RuleSet,
    /// The security signals.
    pub signals: &'a SignalSet,
    /// The provider schema.
    pub schema: &'a ProviderSchema,
    /// The validators to run after the built-in check, for a workspace's regions.
    pub validators: Validators<'a>,
    /// Whether an edit may land in a module outside a project's root.
    pub shared_module_edits: bool,
    /// The agent for calls no rule explains, when `[agent]` is configured; it works on the
    /// workspaces that name an `observed` state.
    pub agent: Option<&'a Agent>,
}

/// What the run did for one workspace.
#[derive(Debug, Serialize)]
pub struct WorkspaceReport {
    /// The workspace.
    pub workspace: String,
    /// The branch of its pull request.
    pub branch: String,
    /// The events read for it, in words.
    pub window: String,
    /// Out-of-band calls routed to it.
    pub calls: usize,
    /// How its reconciliation ended; `None` when it stopped with an error.
    pub status: Option<Status>,
    /// The error that stopped it.
    pub error: Option<String>,
    /// The commit made (or, in a dry run, that would be made).
    pub commit: Option<String>,
    /// What was done about its pull request.
    pub request: Option<RequestReport>,
    /// Earlier pull requests whose fate this run recorded.
    pub reviewed: Vec<Reviewed>,
    /// Tokens the agent spent on the workspace.
    pub tokens: Usage,
    /// The reconciliation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

impl WorkspaceReport {
    /// The exit code of this workspace: 1 for an error, else the reconciliation's.
    pub fn exit_code(&self) -> u8 {
        self.status.map_or(1, Status::exit_code)
    }
}

/// What was done (or would be done) about a workspace's pull request.
#[derive(Debug, Clone, Serialize)]
pub struct RequestReport {
    /// `opened`, `updated`, `commented` (obsolete), or in a dry run `would open`,
    /// `would update`; `pushed` when no forge is configured.
    pub action: String,
    /// Its number.
    pub number: Option<i64>,
    /// Its address.
    pub url: Option<String>,
    /// The title.
    pub title: String,
    /// Whether it is a draft.
    pub draft: bool,
    /// The description (kept in the JSON report; printed in a dry run).
    pub body: String,
}

/// An earlier request's fate, recorded this run.
#[derive(Debug, Clone, Serialize)]
pub struct Reviewed {
    /// Its number.
    pub number: i64,
    /// `merged` or `closed`.
    pub state: ReviewState,
    /// Lines a reviewer changed before merging.
    pub corrected: usize,
}

/// The exit code of a whole run: 1 when a workspace stopped with an error, else 3 when one
/// has drift not all absorbed, else 2 when one was patched, else 0.
pub fn exit_code(reports: &[WorkspaceReport]) -> u8 {
    let codes: BTreeSet<u8> = reports.iter().map(WorkspaceReport::exit_code).collect();
    [1, 3, 2]
        .into_iter()
        .find(|c| codes.contains(c))
        .unwrap_or(0)
}

/// The workspaces to run, with the time each one reads from.
pub fn plan(
    setup: &Setup<'_>,
    knowledge: Option<&Knowledge>,
    now: DateTime<Utc>,
) -> Result<Vec<(WorkspaceConfig, DateTime<Utc>)>, NightlyError> {
    let nightly = &setup.config.nightly;
    let overlap = now - parse_when(&nightly.overlap, now)?;
    let first = parse_when(&nightly.first_window, now)?;
    let mut out = Vec::new();
    for workspace in &setup.config.workspaces {
        if !setup.only.is_empty() && !setup.only.contains(&workspace.name) {
            continue;
        }
        let mark = match knowledge {
            Some(k) => k.store().watermark(&workspace.name)?,
            None => None,
        };
        let from_mark = mark
            .and_then(|m| DateTime::parse_from_rfc3339(&m.event_time).ok())
            .map(|t| t.with_timezone(&Utc) - overlap);
        out.push((
            workspace.clone(),
            setup.since.or(from_mark).unwrap_or(first),
        ));
    }
    Ok(out)
}

/// A workspace ready to reconcile: its checkout on its branch, its forge and open request,
/// and its state.
struct Prepared {
    workspace: WorkspaceConfig,
    since: DateTime<Utc>,
    git: Git,
    forge: Option<Forge>,
    open: Option<Opened>,
    continues: bool,
    base: String,
    project_dir: PathBuf,
    state: State,
}

/// Runs every planned workspace over the calls gathered for all of them: each is prepared
/// (checkout, earlier requests' fate, branch, state), the calls are routed among them, and
/// each is reconciled and published. A workspace that fails is reported and the others go
/// on.
pub async fn run_all(
    setup: &Setup<'_>,
    planned: Vec<(WorkspaceConfig, DateTime<Utc>)>,
    calls: &[Call],
    input: &InputSummary,
    mut knowledge: Option<&mut Knowledge>,
) -> Vec<WorkspaceReport> {
    let mut reports = Vec::new();
    let mut ready = Vec::new();
    for (workspace, since) in planned {
        let mut report = WorkspaceReport {
            workspace: workspace.name.clone(),
            branch: format!("{}{}", setup.config.nightly.branch_prefix, workspace.name),
            window: window_words(since, input.last),
            calls: 0,
            status: None,
            error: None,
            commit: None,
            request: None,
            reviewed: Vec::new(),
            tokens: Usage::default(),
            outcome: None,
        };
        match prepare(
            setup,
            workspace,
            since,
            &mut report,
            knowledge.as_deref_mut(),
        )
        .await
        {
            Ok(prepared) => ready.push(prepared),
            Err(error) => report.error = Some(error.to_string()),
        }
        reports.push(report);
    }
    let indexes: Vec<(String, StateIndex, Scope)> = ready
        .iter()
        .map(|p| {
            let scope =
                Scope::from_state(&p.state).overridden(&p.workspace.accounts, &p.workspace.regions);
            (
                p.workspace.name.clone(),
                StateIndex::new(p.state.clone()),
                scope,
            )
        })
        .collect();
    for prepared in ready {
        let routed = route(calls, &prepared, &indexes);
        let Some(report) = reports
            .iter_mut()
            .find(|r| r.workspace == prepared.workspace.name)
        else {
            continue;
        };
        report.calls = routed.len();
        let done = finish(
            setup,
            prepared,
            &routed,
            input,
            report,
            knowledge.as_deref_mut(),
        )
        .await;
        if let Err(error) = done {
            tracing::warn!(workspace = %report.workspace, %error, "nightly run of a workspace failed");
            report.status = None;
            report.error = Some(error.to_string());
        }
    }
    reports
}

/// Brings the workspace's checkout up to date, records the fate of its earlier requests,
/// starts its branch (continuing an open request, else from the base) and reads its state.
async fn prepare(
    setup: &Setup<'_>,
    workspace: WorkspaceConfig,
    since: DateTime<Utc>,
    report: &mut WorkspaceReport,
    knowledge: Option<&mut Knowledge>,
) -> Result<Prepared, NightlyError> {
    let base = workspace
        .base
        .clone()
        .unwrap_or_else(|| setup.config.nightly.base.clone());
    let git = checkout(setup, &workspace)?;
    let forge = forge_for(setup, &workspace, &git)?;
    if let (Some(forge), Some(k)) = (&forge, knowledge) {
        report.reviewed =
            settle_reviews(forge, &git, k, &workspace.name, &base, setup.dry_run).await?;
    }
    let open = match &forge {
        Some(forge) => forge.find_open(&report.branch).await?,
        None => None,
    };
    let continues = open.is_some() && git.remote_has(&report.branch)?;
    let start = if continues {
        format!("origin/{}", report.branch)
    } else {
        format!("origin/{base}")
    };
    git.start_branch(&report.branch, &start)?;
    let project_dir = match &workspace.project {
        Some(dir) => git.dir().join(dir),
        None => git.dir().to_owned(),
    };
    let state = read_state(&workspace.state, &project_dir).await?;
    Ok(Prepared {
        workspace,
        since,
        git,
        forge,
        open,
        continues,
        base,
        project_dir,
        state,
    })
}

/// Reconciles a prepared workspace over its calls, commits the patch with the evidence,
/// publishes it, and remembers the request and the watermark.
async fn finish(
    setup: &Setup<'_>,
    prepared: Prepared,
    routed: &[Call],
    input: &InputSummary,
    report: &mut WorkspaceReport,
    mut knowledge: Option<&mut Knowledge>,
) -> Result<(), NightlyError> {
    let Prepared {
        workspace,
        git,
        forge,
        open,
        continues,
        base,
        project_dir,
        state,
        ..
    } = prepared;
    let nightly = &setup.config.nightly;
    let (outcome, agent) = reconcile(
        setup,
        &workspace,
        &project_dir,
        state,
        routed,
        input,
        knowledge.as_deref_mut(),
    )
    .await?;
    report.status = Some(outcome.status);
    report.tokens = agent.as_ref().map(|a| a.usage).unwrap_or_default();
    let told = Told {
        workspace: &workspace.name,
        outcome: &outcome,
        window: &report.window,
        title: &nightly.title,
        agent: agent.as_ref(),
    };
    let mut lines = Vec::new();
    if !outcome.changes.is_empty() {
        write_patch(&outcome, &project_dir)?;
        lines = attributed_lines(&outcome, &project_dir, git.dir());
        let author = Author {
            name: nightly.author_name.clone(),
            email: nightly.author_email.clone(),
        };
        report.commit = git.commit_all(&told.commit_message(), &author)?;
    }
    let head = git.head()?;
    let noted =
        match (knowledge.as_deref(), &open) {
            (Some(k), Some(open)) => k.store().open_reviews(&workspace.name)?.iter().any(|r| {
                r.number == open.number && r.obsolete_at.as_deref() == Some(head.as_str())
            }),
            _ => false,
        };
    let obsolete = continues && !noted && git.proposes_nothing(&format!("origin/{base}"))?;
    let publishing = Publishing {
        git: &git,
        forge: forge.as_ref(),
        open,
        base: &base,
        obsolete,
    };
    report.request = publish(setup, &publishing, &told, report).await?;
    if let (Some(k), false) = (knowledge, setup.dry_run) {
        remember(k, forge.as_ref(), report, lines, routed, input)?;
        if let (Some(forge), Some(request)) = (&forge, &report.request)
            && request.action == "commented"
            && let Some(number) = request.number
        {
            k.store_mut()
                .note_obsolete(forge.name(), forge.repository(), number, &head)?;
        }
    }
    report.outcome = Some(outcome);
    Ok(())
}

/// The workspace's checkout under `setup.checkouts`, cloned on first use and fetched after.
fn checkout(setup: &Setup<'_>, workspace: &WorkspaceConfig) -> Result<Git, NightlyError> {
    let dir = absolute(&setup.checkouts.join(&workspace.name));
    let git = if dir.join(".git").exists() {
        Git::at(&dir)
    } else {
        // A local repository is named by its absolute path: git clones from another directory.
        let local = Path::new(&workspace.repository);
        let source = if local.exists() {
            absolute(local).display().to_string()
        } else {
            workspace.repository.clone()
        };
        Git::clone_into(&source, &dir)?
    };
    git.fetch()?;
    Ok(git)
}

/// `path` made absolute from the working directory (unchanged when that cannot be read).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// The forge for the workspace's repository, when `[nightly.forge]` names one.
fn forge_for(
    setup: &Setup<'_>,
    workspace: &WorkspaceConfig,
    git: &Git,
) -> Result<Option<Forge>, NightlyError> {
    let Some(config) = &setup.config.nightly.forge else {
        return Ok(None);
    };
    let repository = match &workspace.forge_repository {
        Some(repository) => repository.clone(),
        None => git::repository_of(&git.origin_url()?)
            .ok_or_else(|| NightlyError::NoForgeRepository(workspace.name.clone()))?,
    };
    Ok(Some(Forge::new(config, &repository)?))
}

/// Reads the fate of the workspace's open requests and records the merged and closed ones:
/// merges, rejections, and the lines a reviewer changed before merging, against the rules
/// behind them. A dry run reads and records nothing.
async fn settle_reviews(
    forge: &Forge,
    git: &Git,
    knowledge: &mut Knowledge,
    workspace: &str,
    base: &str,
    dry_run: bool,
) -> Result<Vec<Reviewed>, NightlyError> {
    let mut out = Vec::new();
    if dry_run {
        return Ok(out);
    }
    for review in knowledge.store().open_reviews(workspace)? {
        let (state, merged_as) = match forge.fate(review.number).await? {
            Fate::Open => continue,
            Fate::Closed => (ReviewState::Closed, None),
            Fate::Merged(commit) => (ReviewState::Merged, Some(commit)),
        };
        let corrected = match merged_as {
            Some(commit) => {
                let at = commit.unwrap_or_else(|| format!("origin/{base}"));
                corrected_lines(git, &at, &review)?
            }
            None => Vec::new(),
        };
        out.push(Reviewed {
            number: review.number,
            state,
            corrected: corrected.len(),
        });
        let settlement = Settlement { state, corrected };
        knowledge
            .store_mut()
            .settle_review(review.id, &settlement)?;
    }
    Ok(out)
}

/// The lines retrace wrote that the merged commit `at` no longer has as written.
fn corrected_lines(git: &Git, at: &str, review: &Review) -> Result<Vec<ReviewLine>, NightlyError> {
    let mut files: BTreeMap<&str, Option<String>> = BTreeMap::new();
    let mut out = Vec::new();
    for line in &review.lines {
        if !files.contains_key(line.file.as_str()) {
            files.insert(&line.file, git.show(at, &line.file)?);
        }
        let kept = files[line.file.as_str()]
            .as_deref()
            .is_some_and(|text| text.lines().any(|l| l == line.text));
        if !kept {
            out.push(line.clone());
        }
    }
    Ok(out)
}

/// The calls of a prepared workspace: made since its start, in its accounts and regions,
/// and, when other workspaces of the run take calls in the same place, touching one of its
/// managed resources, or none of any workspace's (then each of them reports it, so nothing
/// is silent).
fn route(calls: &[Call], prepared: &Prepared, all: &[(String, StateIndex, Scope)]) -> Vec<Call> {
    let name = &prepared.workspace.name;
    calls
        .iter()
        .filter(|call| call.event_time >= prepared.since)
        .filter(|call| {
            let here: Vec<&(String, StateIndex, Scope)> = all
                .iter()
                .filter(|(_, _, scope)| scope.contains(&origin(call)))
                .collect();
            if !here.iter().any(|(n, _, _)| n == name) {
                return false;
            }
            if here.len() == 1 {
                return true;
            }
            let owners: Vec<&String> = here
                .iter()
                .filter(|(_, index, scope)| {
                    touched(call, index, scope)
                        .iter()
                        .any(|t| t.address.is_some())
                })
                .map(|(n, _, _)| n)
                .collect();
            owners.is_empty() || owners.contains(&name)
        })
        .cloned()
        .collect()
}

/// Where a call was made.
fn origin(call: &Call) -> Origin<'_> {
    Origin {
        account: call.account_id(),
        region: &call.aws_region,
        global: is_global(&call.event_source),
    }
}

/// Reconciles the workspace's calls with its project and policy.
async fn reconcile(
    setup: &Setup<'_>,
    workspace: &WorkspaceConfig,
    project_dir: &Path,
    state: State,
    calls: &[Call],
    input: &InputSummary,
    knowledge: Option<&mut Knowledge>,
) -> Result<(Outcome, Option<AgentReport>), NightlyError> {
    let config = setup.config;
    let observed = match &workspace.observed {
        Some(file) => Some(read_observed(&project_dir.join(file))?),
        None => None,
    };
    let policy = Policy::new(
        workspace
            .policy
            .clone()
            .unwrap_or_else(|| config.policy.clone()),
    )?;
    let ownership = workspace
        .ownership
        .clone()
        .unwrap_or_else(|| config.ownership.clone());
    let regions = workspace.regions.clone();
    let validators = || (setup.validators)(&regions);
    let project = Project {
        dir: project_dir,
        var_files: workspace
            .var_files
            .iter()
            .map(|f| project_dir.join(f))
            .collect(),
        state,
        observed,
        accounts: workspace.accounts.clone(),
        regions: workspace.regions.clone(),
        rules: setup.rules,
        signals: setup.signals,
        schema: setup.schema,
        policy: &policy,
        ownership: &ownership,
        validators: &validators,
        shared_module_edits: setup.shared_module_edits,
        agent: setup.agent,
    };
    let record = (!setup.dry_run).then_some(workspace.name.as_str());
    let ran = run::reconcile_calls(calls, input.clone(), &project, knowledge, record).await?;
    if let Some(Err(error)) = ran.recorded {
        return Err(error.into());
    }
    Ok((ran.outcome, ran.agent))
}

/// Reads a workspace's observed state (the cloud as a refresh sees it).
fn read_observed(path: &Path) -> Result<State, NightlyError> {
    Ok(State::read(path).map_err(ReadStateError::from)?)
}

/// Writes the patch into the checkout's project directory.
fn write_patch(outcome: &Outcome, project_dir: &Path) -> Result<(), NightlyError> {
    outcome
        .changes
        .apply(project_dir)
        .map_err(|e| NightlyError::Write {
            dir: project_dir.display().to_string(),
            message: e.to_string(),
        })
}

/// The lines the patch added, relative to the repository, each with the rules of the edits
/// that wrote it: a line belongs to a step when the step's edit alone adds it to that file.
fn attributed_lines(outcome: &Outcome, project_dir: &Path, repo: &Path) -> Vec<ReviewLine> {
    let originals: crate::synthesize::edit::Files = outcome
        .changes
        .changed()
        .filter_map(|(path, change)| {
            Some((path.to_string_lossy().into_owned(), change.old.clone()?))
        })
        .collect();
    let mut by_line: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for step in &outcome.plan.steps {
        let rules = step_rules(outcome, &step.intent, &step.resource);
        let Ok(result) = step.call.run(&originals) else {
            continue;
        };
        for (path, text) in &result.files {
            let old = originals.get(path).map_or("", String::as_str);
            for line in added(old, text) {
                by_line
                    .entry((path.clone(), line))
                    .or_default()
                    .extend(rules.iter().cloned());
            }
        }
    }
    let prefix = project_dir
        .strip_prefix(repo)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut out = Vec::new();
    for (path, change) in outcome.changes.changed() {
        let path = path.to_string_lossy().into_owned();
        let old = change.old.as_deref().unwrap_or("");
        let new = change.new.as_deref().unwrap_or("");
        for line in added(old, new) {
            let rules = by_line
                .get(&(path.clone(), line.clone()))
                .map(|r| r.iter().cloned().collect())
                .unwrap_or_default();
            out.push(ReviewLine {
                file: prefix.join(&path).to_string_lossy().into_owned(),
                text: line,
                rules,
            });
        }
    }
    out
}

/// The rules behind the deltas of intent `intent` on `resource`.
fn step_rules(outcome: &Outcome, intent: &str, resource: &str) -> Vec<String> {
    outcome
        .intents
        .iter()
        .filter(|d| d.intent.id == intent)
        .flat_map(|d| &d.intent.deltas)
        .filter(|delta| {
            delta.address.as_deref() == Some(resource) || delta.resource.to_string() == resource
        })
        .flat_map(|delta| delta.rules.iter().cloned())
        .collect()
}

/// The non-blank lines `new` adds to `old`.
fn added(old: &str, new: &str) -> Vec<String> {
    similar::TextDiff::from_lines(old, new)
        .iter_all_changes()
        .filter(|c| c.tag() == similar::ChangeTag::Insert)
        .map(|c| c.value().trim_end_matches(['\r', '\n']).to_owned())
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// Where a workspace's patch goes: its checkout, forge, open request and base branch, and
/// whether the branch now proposes nothing (the open request is obsolete).
struct Publishing<'a> {
    git: &'a Git,
    forge: Option<&'a Forge>,
    open: Option<Opened>,
    base: &'a str,
    obsolete: bool,
}

/// Pushes the branch and opens, updates or comments on the request; in a dry run, says what
/// would be done.
async fn publish(
    setup: &Setup<'_>,
    to: &Publishing<'_>,
    told: &Told<'_>,
    report: &WorkspaceReport,
) -> Result<Option<RequestReport>, NightlyError> {
    let (git, forge, open, base) = (to.git, to.forge, to.open.clone(), to.base);
    let proposal = Proposal {
        title: told.title(),
        body: told.body(),
        branch: report.branch.clone(),
        base: base.to_owned(),
        labels: setup.config.nightly.labels.clone(),
        draft: told.needs_person(),
    };
    let request = |action: &str, opened: Option<&Opened>| RequestReport {
        action: action.to_owned(),
        number: opened.map(|o| o.number),
        url: opened.map(|o| o.url.clone()),
        title: proposal.title.clone(),
        draft: proposal.draft,
        body: proposal.body.clone(),
    };
    if report.commit.is_none() {
        let Some(open) = open.filter(|_| to.obsolete) else {
            return Ok(None);
        };
        if !setup.dry_run
            && let Some(forge) = forge
        {
            let note = "retrace: the changes this pull request proposed are no longer needed: the cloud and the base branch agree again. It can be closed.";
            forge.comment(open.number, note).await?;
        }
        let action = if setup.dry_run {
            "would comment"
        } else {
            "commented"
        };
        return Ok(Some(request(action, Some(&open))));
    }
    if setup.dry_run {
        let action = if open.is_some() {
            "would update"
        } else {
            "would open"
        };
        return Ok(Some(request(action, open.as_ref())));
    }
    // A branch that continues an open request only grows; one started again from the base
    // replaces whatever an earlier, closed request left there.
    git.push(&report.branch, open.is_none())?;
    let Some(forge) = forge else {
        return Ok(Some(request("pushed", None)));
    };
    Ok(Some(match open {
        Some(open) => {
            forge.update(open.number, &proposal).await?;
            request("updated", Some(&open))
        }
        None => {
            let opened = forge.create(&proposal).await?;
            request("opened", Some(&opened))
        }
    }))
}

/// Records the request opened or updated with the lines its commits added so far, and moves
/// the watermark to the last event read.
fn remember(
    knowledge: &mut Knowledge,
    forge: Option<&Forge>,
    report: &WorkspaceReport,
    lines: Vec<ReviewLine>,
    routed: &[Call],
    input: &InputSummary,
) -> Result<(), NightlyError> {
    if let (Some(forge), Some(request), Some(head)) = (forge, &report.request, &report.commit)
        && let Some(number) = request.number
    {
        let earlier: Vec<ReviewLine> = knowledge
            .store()
            .open_reviews(&report.workspace)?
            .into_iter()
            .filter(|r| r.number == number && r.forge == forge.name())
            .flat_map(|r| r.lines)
            .collect();
        let mut all = earlier;
        all.extend(lines);
        knowledge.store_mut().save_review(&Review {
            id: 0,
            workspace: report.workspace.clone(),
            forge: forge.name().to_owned(),
            repository: forge.repository().to_owned(),
            number,
            url: request.url.clone().unwrap_or_default(),
            branch: report.branch.clone(),
            head: head.clone(),
            lines: all,
            state: ReviewState::Open,
            obsolete_at: None,
        })?;
    }
    if let Some(last) = input.last {
        let at = |c: &&Call| c.event_time == last;
        let mark = Watermark {
            event_time: last.to_rfc3339(),
            event_ids: routed
                .iter()
                .filter(at)
                .map(|c| c.event_id.clone())
                .collect(),
        };
        knowledge
            .store_mut()
            .set_watermark(&report.workspace, &mark)?;
    }
    Ok(())
}

/// The window read, in words.
fn window_words(since: DateTime<Utc>, last: Option<DateTime<Utc>>) -> String {
    let end = last.map_or("the latest event".to_owned(), |l| {
        l.format("%Y-%m-%d %H:%M UTC").to_string()
    });
    format!("{} to {end}", since.format("%Y-%m-%d %H:%M UTC"))
}

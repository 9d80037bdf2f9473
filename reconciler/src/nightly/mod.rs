//! `retrace nightly`: one run for every workspace of `retrace.toml`. The events are read once,
//! from the earliest point any workspace needs, and routed to each workspace by account,
//! region and managed resource.
//!
//! Each workspace's request is a state machine kept in the knowledge base and reconciled
//! against the forge and the remote at the start of every run: the fate of the requests
//! earlier runs opened is read (merged, closed by a reviewer, closed after retrace called it
//! obsolete, or gone from the forge) and counted against the rules behind their lines; an
//! open request for the branch that the store lost is adopted; a branch holding commits
//! retrace did not make is never replaced; a branch that conflicts with its base is rebuilt
//! from the base with everything its request holds. Then the workspace's new events (those
//! after its own watermark, less the ones already handled) are reconciled on the branch, the
//! patch (or, when only something held for a person is new, an empty commit carrying the
//! evidence) is committed and pushed, and the request is opened or brought to what the
//! ledger of the whole branch says: title, description, labels and draft state, repaired
//! whatever the last night left half done. `dry_run` reads everything and changes nothing.

pub mod body;
pub mod forge;
pub mod git;
pub mod ledger;
pub mod lock;
pub mod state;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, Utc};
use knowledge::rules::RuleSet;
use knowledge::schema::ProviderSchema;
use knowledge::signals::SignalSet;
use knowledge::store::{Night, Review, ReviewLine, ReviewState, Settlement, StoreError, Watermark};
use serde::Serialize;

use crate::agent::Agent;
use crate::agent::client::Usage;
use crate::config::{Config, ConfigError, WorkspaceConfig, parse_when};
use crate::ingest::Call;
use crate::pipeline::InputSummary;
use crate::policy::{Decision, Fingerprint, Policy, PolicyError};
use crate::reconcile::{Input, Outcome, Status};
use crate::record::{Knowledge, RecordError};
use crate::resolve::{Origin, Scope, is_global, touched};
use crate::run::{self, Ran, RunError};
use crate::terraform::state::{State, StateIndex};
use crate::validate::{Sandbox, Validator};
use body::Told;
use forge::{Fate, Forge, ForgeError, Opened, Proposal};
use git::{Author, Git, GitError};
use ledger::{Describe, Described, Ledger};
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
    #[error("writing the patch into {dir}: {message}; nothing was committed or recorded")]
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
    /// The branch holds a person's commits and would have to be replaced.
    #[error(
        "the branch {branch} holds commits retrace did not make ({commits}), and {why}; retrace never replaces a person's commits, so nothing was pushed for this workspace: merge those commits into {base} (or move them to another branch and delete {branch}), then run again"
    )]
    Foreign {
        /// The branch.
        branch: String,
        /// The base branch.
        base: String,
        /// The commits, `abc1234 by Name <mail>: subject`, joined.
        commits: String,
        /// Why the branch would have to be replaced.
        why: String,
    },
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
    /// Out-of-band calls routed to it and not handled before.
    pub calls: usize,
    /// How its reconciliation ended, with what its request still waits for; `None` when
    /// it stopped with an error.
    pub status: Option<Status>,
    /// The error that stopped it.
    pub error: Option<String>,
    /// The commit made (or, in a dry run, that would be made).
    pub commit: Option<String>,
    /// What was done about its pull request.
    pub request: Option<RequestReport>,
    /// Earlier pull requests whose fate this run recorded.
    pub reviewed: Vec<Reviewed>,
    /// What reconciling the request with the forge and the remote did, in words.
    pub notes: Vec<String>,
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
    /// `opened`, `updated`, `repaired` (brought to what the branch holds without a new
    /// commit), `commented` (obsolete), or in a dry run `would open`, `would update`;
    /// `pushed` when no forge is configured.
    pub action: String,
    /// `pull request` or `merge request`.
    pub noun: String,
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
    /// `merged`, `closed` (a rejection), `withdrawn` (closed after retrace called it
    /// obsolete) or `gone` (the forge no longer knows it).
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

/// A workspace to run: its window of new events and how far back to read.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The workspace.
    pub workspace: WorkspaceConfig,
    /// Its new events start here: its watermark less the overlap (or `--since`, or the
    /// first window).
    pub since: DateTime<Utc>,
    /// Read from here: `since`, or earlier when its open request holds earlier events (a
    /// branch that conflicts with its base is rebuilt from all of them).
    pub read_from: DateTime<Utc>,
    /// The event ids handled already (those at the end of the last window).
    pub handled: BTreeSet<String>,
}

/// The workspaces to run, with the time each one reads from.
pub fn plan(
    setup: &Setup<'_>,
    knowledge: Option<&Knowledge>,
    now: DateTime<Utc>,
) -> Result<Vec<Planned>, NightlyError> {
    let nightly = &setup.config.nightly;
    let overlap = overlap(setup, now)?;
    let first = parse_when(&nightly.first_window, now)?;
    let mut out = Vec::new();
    for workspace in &setup.config.workspaces {
        if !setup.only.is_empty() && !setup.only.contains(&workspace.name) {
            continue;
        }
        let (mark, ledger) = match knowledge {
            Some(k) => (
                k.store().watermark(&workspace.name)?,
                Ledger::parse(k.store().ledger(&workspace.name)?.as_deref()),
            ),
            None => (None, Ledger::default()),
        };
        let from_mark = mark
            .as_ref()
            .and_then(|m| DateTime::parse_from_rfc3339(&m.event_time).ok())
            .map(|t| t.with_timezone(&Utc) - overlap);
        let since = setup.since.or(from_mark).unwrap_or(first);
        let read_from = ledger.first_event().map_or(since, |t| t.min(since));
        out.push(Planned {
            workspace: workspace.clone(),
            since,
            read_from,
            handled: mark
                .map(|m| m.event_ids.into_iter().collect())
                .unwrap_or_default(),
        });
    }
    Ok(out)
}

/// `[nightly] overlap` as a duration.
fn overlap(setup: &Setup<'_>, now: DateTime<Utc>) -> Result<Duration, NightlyError> {
    Ok(now - parse_when(&setup.config.nightly.overlap, now)?)
}

/// How the branch starts this night.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// From the base: nothing is proposed yet.
    Fresh,
    /// From the remote branch: it continues what its request holds.
    Continue,
    /// From the base again, with everything the request holds: the base moved under the
    /// branch with a conflicting change.
    Rebuild,
}

/// A workspace ready to reconcile: its checkout on its branch, its forge and open request,
/// its ledger and its state.
struct Prepared {
    planned: Planned,
    git: Git,
    forge: Option<Box<dyn Forge>>,
    open: Option<Opened>,
    start: Start,
    ledger: Ledger,
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
    planned: Vec<Planned>,
    calls: &[Call],
    input: &InputSummary,
    mut knowledge: Option<&mut Knowledge>,
) -> Vec<WorkspaceReport> {
    let mut reports = Vec::new();
    let mut ready = Vec::new();
    for planned in planned {
        let mut report = WorkspaceReport {
            workspace: planned.workspace.name.clone(),
            branch: format!(
                "{}{}",
                setup.config.nightly.branch_prefix, planned.workspace.name
            ),
            window: window_words(planned.since, input.last),
            calls: 0,
            status: None,
            error: None,
            commit: None,
            request: None,
            reviewed: Vec::new(),
            notes: Vec::new(),
            tokens: Usage::default(),
            outcome: None,
        };
        match prepare(setup, planned, &mut report, knowledge.as_deref_mut()).await {
            Ok(prepared) => ready.push(prepared),
            Err(error) => report.error = Some(error.to_string()),
        }
        reports.push(report);
    }
    let indexes: Vec<(String, StateIndex, Scope)> = ready
        .iter()
        .map(|p| {
            let w = &p.planned.workspace;
            let scope = Scope::from_state(&p.state).overridden(&w.accounts, &w.regions);
            (w.name.clone(), StateIndex::new(p.state.clone()), scope)
        })
        .collect();
    for prepared in ready {
        let routed = route(calls, &prepared, &indexes);
        let Some(report) = reports
            .iter_mut()
            .find(|r| r.workspace == prepared.planned.workspace.name)
        else {
            continue;
        };
        let done = finish(setup, prepared, &routed, report, knowledge.as_deref_mut()).await;
        if let Err(error) = done {
            tracing::warn!(workspace = %report.workspace, %error, "nightly run of a workspace failed");
            report.status = None;
            report.error = Some(error.to_string());
        }
    }
    reports
}

/// Brings the workspace's checkout up to date, reconciles its request with the forge
/// (earlier requests' fate, adoption) and its branch with the remote (a person's commits,
/// a conflicting base), starts its branch and reads its state.
async fn prepare(
    setup: &Setup<'_>,
    planned: Planned,
    report: &mut WorkspaceReport,
    knowledge: Option<&mut Knowledge>,
) -> Result<Prepared, NightlyError> {
    let workspace = &planned.workspace;
    let base = workspace
        .base
        .clone()
        .unwrap_or_else(|| setup.config.nightly.base.clone());
    let git = checkout(setup, workspace)?;
    let forge = forge_for(setup, workspace, &git)?;
    let mut ledger = match &knowledge {
        Some(k) => Ledger::parse(k.store().ledger(&workspace.name)?.as_deref()),
        None => Ledger::default(),
    };
    if let (Some(forge), Some(k)) = (forge.as_deref(), knowledge) {
        let settling = Settling {
            forge,
            git: &git,
            workspace: &workspace.name,
            base: &base,
            dry_run: setup.dry_run,
        };
        report.reviewed = settle_reviews(&settling, k, &mut ledger).await?;
    }
    let open = match &forge {
        Some(forge) => forge.find_open(&report.branch).await?,
        None => None,
    };
    adopt(open.as_ref(), &mut ledger, forge.as_deref(), report);
    let start = branch_start(setup, &git, &base, open.is_some(), &ledger, report)?;
    let from = match start {
        Start::Continue => format!("origin/{}", report.branch),
        Start::Fresh | Start::Rebuild => format!("origin/{base}"),
    };
    git.start_branch(&report.branch, &from)?;
    if start == Start::Fresh {
        ledger = Ledger {
            number: ledger.number,
            ..Ledger::default()
        };
    }
    let project_dir = match &workspace.project {
        Some(dir) => git.dir().join(dir),
        None => git.dir().to_owned(),
    };
    let state = read_state(&workspace.state, &project_dir).await?;
    Ok(Prepared {
        planned,
        git,
        forge,
        open,
        start,
        ledger,
        base,
        project_dir,
        state,
    })
}

/// Takes the forge's open request for the branch as the workspace's when the store lost
/// it (or never learnt it: a create whose answer was lost); drops the ledger of a request
/// that ended.
fn adopt(
    open: Option<&Opened>,
    ledger: &mut Ledger,
    forge: Option<&dyn Forge>,
    report: &mut WorkspaceReport,
) {
    match open {
        Some(o) if ledger.number != Some(o.number) => {
            let noun = forge.map_or("pull request", |f| f.noun());
            report.notes.push(format!(
                "adopted the open {noun} #{} from {}: the knowledge base did not know it",
                o.number, report.branch
            ));
            ledger.number = Some(o.number);
        }
        None if ledger.number.is_some() => *ledger = Ledger::default(),
        _ => {}
    }
}

/// Where the branch starts: it continues while it holds something retrace proposes (an
/// open request, or a push whose request could not be opened yet), is rebuilt from the base
/// when the base conflicts with it, and otherwise starts from the base. A branch with a
/// person's commits is never replaced.
fn branch_start(
    setup: &Setup<'_>,
    git: &Git,
    base: &str,
    open: bool,
    ledger: &Ledger,
    report: &mut WorkspaceReport,
) -> Result<Start, NightlyError> {
    let branch = report.branch.clone();
    if !git.remote_has(&branch)? {
        return Ok(Start::Fresh);
    }
    let (theirs, ours) = (format!("origin/{base}"), format!("origin/{branch}"));
    // Without a forge nothing ends a ledger but the base coming to hold the branch.
    let ended = setup.config.nightly.forge.is_none() && git.proposes_nothing(&theirs, &ours)?;
    let holds = open || (!ledger.is_empty() && !ended);
    let conflicts = holds && git.conflicts(&theirs, &ours)?;
    if holds && !conflicts {
        return Ok(Start::Continue);
    }
    let email = &setup.config.nightly.author_email;
    let foreign = git.foreign_commits(&theirs, &ours, email)?;
    if !foreign.is_empty() && !git.proposes_nothing(&theirs, &ours)? {
        let why = if conflicts {
            format!(
                "{base} moved under it with a conflicting change, so it would have to be rebuilt"
            )
        } else {
            "no request is open for it, so the next proposal would replace it".to_owned()
        };
        return Err(NightlyError::Foreign {
            branch,
            base: base.to_owned(),
            commits: foreign.join("; "),
            why,
        });
    }
    if conflicts {
        report.notes.push(format!(
            "{base} moved under {branch} with a conflicting change: the branch is rebuilt from {base} with every change it held"
        ));
        return Ok(Start::Rebuild);
    }
    Ok(Start::Fresh)
}

/// Reconciles a prepared workspace over its calls, commits the patch with the evidence,
/// publishes it, and remembers the night.
async fn finish(
    setup: &Setup<'_>,
    prepared: Prepared,
    routed: &[Call],
    report: &mut WorkspaceReport,
    mut knowledge: Option<&mut Knowledge>,
) -> Result<(), NightlyError> {
    let Prepared {
        planned,
        git,
        forge,
        open,
        start,
        mut ledger,
        base,
        project_dir,
        state,
    } = prepared;
    let workspace = &planned.workspace;
    let nightly = &setup.config.nightly;
    let calls = select(routed, &planned, start, &ledger);
    report.calls = calls.len();
    let rejected = match knowledge.as_deref() {
        Some(k) => rejected(k, &workspace.name)?,
        None => Vec::new(),
    };
    let settled = reconcile(
        setup,
        workspace,
        &project_dir,
        state,
        &calls,
        rejected,
        knowledge.as_deref_mut(),
    )
    .await?;
    let outcome = &settled.outcome;
    let agent = settled.agent.as_ref();
    report.tokens = agent.map(|a| a.usage).unwrap_or_default();
    if !outcome.changes.is_empty() {
        write_patch(outcome, &project_dir)?;
    }
    if let (Some(k), false) = (knowledge.as_deref_mut(), setup.dry_run) {
        let tokens = agent.map(|a| a.usage).unwrap_or_default();
        k.record(outcome, &workspace.name, &settled.learned, tokens.into())?;
        forget_rejections(k, &workspace.name, outcome)?;
    }
    let told = Told {
        workspace: &workspace.name,
        outcome,
        window: &report.window,
        title: &nightly.title,
        agent,
    };
    if start == Start::Rebuild {
        ledger = Ledger {
            number: ledger.number,
            ..Ledger::default()
        };
    }
    let new_for_person = ledger.add(&told);
    let author = Author {
        name: nightly.author_name.clone(),
        email: nightly.author_email.clone(),
    };
    if !outcome.changes.is_empty() {
        ledger
            .lines
            .extend(attributed_lines(outcome, &project_dir, git.dir()));
    }
    if !outcome.changes.is_empty() || new_for_person {
        report.commit = git.commit_all(&told.commit_message(), &author, new_for_person)?;
    }
    let mark = watermark(setup, routed, &planned)?;
    let publishing = Publishing {
        setup,
        git: &git,
        forge: forge.as_deref(),
        open,
        base: &base,
        start,
        workspace: &workspace.name,
        mark: mark.as_ref(),
    };
    let status = publish(&publishing, &mut ledger, report, knowledge).await?;
    report.status = Some(worst(outcome.status, status));
    report.outcome = Some(settled.outcome);
    Ok(())
}

/// The night's status, made partial while the request waits for a person.
fn worst(night: Status, request: Option<Status>) -> Status {
    if request == Some(Status::Partial) {
        Status::Partial
    } else {
        night
    }
}

/// The calls to reconcile: the new ones (in the window, not handled before); when the
/// branch is rebuilt, every call its request held as well.
fn select(routed: &[Call], planned: &Planned, start: Start, ledger: &Ledger) -> Vec<Call> {
    let held = if start == Start::Rebuild {
        ledger.event_ids()
    } else {
        BTreeSet::new()
    };
    routed
        .iter()
        .filter(|c| {
            held.contains(&c.event_id)
                || (c.event_time >= planned.since && !planned.handled.contains(&c.event_id))
        })
        .cloned()
        .collect()
}

/// The workspace's new watermark: the latest of its own calls, with the ids of those the
/// next night's overlap will read again; `None` when it read none (the mark stays).
fn watermark(
    setup: &Setup<'_>,
    routed: &[Call],
    planned: &Planned,
) -> Result<Option<Watermark>, NightlyError> {
    let Some(last) = routed.iter().map(|c| c.event_time).max() else {
        return Ok(None);
    };
    if last < planned.since {
        return Ok(None);
    }
    let overlap = overlap(setup, Utc::now())?;
    let mut ids: Vec<String> = routed
        .iter()
        .filter(|c| c.event_time >= last - overlap)
        .map(|c| c.event_id.clone())
        .collect();
    ids.sort();
    ids.dedup();
    Ok(Some(Watermark {
        event_time: last.to_rfc3339(),
        event_ids: ids,
    }))
}

/// The changes reviewers rejected in the workspace, with the reason to give.
fn rejected(k: &Knowledge, workspace: &str) -> Result<Vec<(Fingerprint, String)>, NightlyError> {
    Ok(k.store()
        .rejections(workspace)?
        .into_iter()
        .map(|r| {
            let reason = format!(
                "a reviewer closed request #{} without merging this change; it is not proposed again until the cloud changes it again",
                r.number
            );
            let print = Fingerprint {
                resource: r.resource,
                attribute: r.attribute,
                value: r.value,
            };
            (print, reason)
        })
        .collect())
}

/// Forgets the rejections of attributes the night's calls set to another value: the cloud
/// changed them again.
fn forget_rejections(
    k: &mut Knowledge,
    workspace: &str,
    outcome: &Outcome,
) -> Result<(), NightlyError> {
    for d in &outcome.intents {
        for (delta, rulings) in d.intent.deltas.iter().zip(&d.rulings) {
            for r in rulings.iter().filter(|r| r.decision != Decision::Rejected) {
                let print = Fingerprint::of(delta, &r.part);
                k.store_mut().forget_rejections(
                    workspace,
                    &print.resource,
                    &print.attribute,
                    &print.value,
                )?;
            }
        }
    }
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
) -> Result<Option<Box<dyn Forge>>, NightlyError> {
    let Some(config) = &setup.config.nightly.forge else {
        return Ok(None);
    };
    let repository = match &workspace.forge_repository {
        Some(repository) => repository.clone(),
        None => git::repository_of(&git.origin_url()?)
            .ok_or_else(|| NightlyError::NoForgeRepository(workspace.name.clone()))?,
    };
    Ok(Some(forge::open(config, &repository)?))
}

/// Where earlier requests' fate is read.
struct Settling<'a> {
    forge: &'a dyn Forge,
    git: &'a Git,
    workspace: &'a str,
    base: &'a str,
    dry_run: bool,
}

/// Reads the fate of the workspace's open requests and records the ended ones: a merge
/// (with the lines a reviewer changed before merging), a reviewer's rejection (its changes
/// are remembered and not proposed again), a close after retrace called the request
/// obsolete (no rejection), or a request the forge no longer knows (forgotten: its branch
/// is proposed again in a new request). The ledger of a request that ended otherwise is
/// dropped. A dry run reads and records nothing.
async fn settle_reviews(
    at: &Settling<'_>,
    knowledge: &mut Knowledge,
    ledger: &mut Ledger,
) -> Result<Vec<Reviewed>, NightlyError> {
    let mut out = Vec::new();
    if at.dry_run {
        return Ok(out);
    }
    for review in knowledge.store().open_reviews(at.workspace)? {
        let current = at.forge.read(review.number).await?;
        let (state, corrected) = match current.fate {
            Fate::Open => continue,
            Fate::Merged(commit) => {
                let at_commit = commit.unwrap_or_else(|| format!("origin/{}", at.base));
                let corrected = corrected_lines(at.git, &at_commit, &review)?;
                (ReviewState::Merged, corrected)
            }
            Fate::Closed if review.obsolete_at.is_some() => (ReviewState::Withdrawn, Vec::new()),
            Fate::Closed => (ReviewState::Closed, Vec::new()),
            Fate::Gone => (ReviewState::Gone, Vec::new()),
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
        if ledger.number == Some(review.number) {
            match state {
                // Nobody rejected what the branch holds: a new request proposes it again.
                ReviewState::Gone => ledger.number = None,
                ReviewState::Closed => {
                    let rejected = ledger.rejections(review.number);
                    knowledge
                        .store_mut()
                        .remember_rejections(at.workspace, &rejected)?;
                    *ledger = Ledger::default();
                }
                _ => *ledger = Ledger::default(),
            }
        }
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

/// The calls of a prepared workspace: made since it reads, in its accounts and regions,
/// and, when other workspaces of the run take calls in the same place, touching one of its
/// managed resources, or none of any workspace's (then each of them reports it, so nothing
/// is silent).
fn route(calls: &[Call], prepared: &Prepared, all: &[(String, StateIndex, Scope)]) -> Vec<Call> {
    let name = &prepared.planned.workspace.name;
    calls
        .iter()
        .filter(|call| call.event_time >= prepared.planned.read_from)
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

/// Reconciles the workspace's calls with its project and policy (one [`run::run`]), leaving
/// out the changes reviewers rejected. Nothing is recorded yet: a patch that fails to write is
/// not.
async fn reconcile(
    setup: &Setup<'_>,
    workspace: &WorkspaceConfig,
    project_dir: &Path,
    state: State,
    calls: &[Call],
    rejected: Vec<(Fingerprint, String)>,
    knowledge: Option<&mut Knowledge>,
) -> Result<Ran, NightlyError> {
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
    )?
    .with_rejected(rejected);
    let ownership = workspace
        .ownership
        .clone()
        .unwrap_or_else(|| config.ownership.clone());
    let regions = workspace.regions.clone();
    let validators = || (setup.validators)(&regions);
    let project = Input {
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
        sandbox: Sandbox::new(project_dir),
    };
    let input = run::Input {
        project,
        agent: setup.agent,
        record: None,
    };
    Ok(run::run(calls, &input, knowledge).await?)
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

/// Where a workspace's night goes: its checkout, forge, open request and base branch, how
/// its branch started, the watermark to keep and the lines the night's patch added.
struct Publishing<'a> {
    setup: &'a Setup<'a>,
    git: &'a Git,
    forge: Option<&'a dyn Forge>,
    open: Option<Opened>,
    base: &'a str,
    start: Start,
    workspace: &'a str,
    mark: Option<&'a Watermark>,
}

impl Publishing<'_> {
    fn noun(&self) -> &'static str {
        self.forge.map_or("pull request", |f| f.noun())
    }
}

/// Pushes the branch, keeps the night in the knowledge base, and opens the request or
/// brings the open one to what the ledger says (or comments once that it is obsolete); in a
/// dry run, says what would be done. Returns the request's own status: partial while an
/// item waits for a person.
async fn publish(
    to: &Publishing<'_>,
    ledger: &mut Ledger,
    report: &mut WorkspaceReport,
    knowledge: Option<&mut Knowledge>,
) -> Result<Option<Status>, NightlyError> {
    let setup = to.setup;
    let base = format!("origin/{}", to.base);
    let rebuilt = to.start == Start::Rebuild;
    let pushing = report.commit.is_some() || rebuilt;
    let diff = to.git.diff_since(&base)?;
    let ticked = to
        .open
        .as_ref()
        .map(|o| ledger::ticked(&o.body))
        .unwrap_or_default();
    let described = ledger.describe(&Describe {
        workspace: to.workspace,
        template: &setup.config.nightly.title,
        noun: to.noun(),
        diff: &diff,
        ticked: &ticked,
    });
    let status = (!ledger.is_empty()).then_some(if described.draft {
        Status::Partial
    } else {
        Status::Patched
    });
    let request = |action: &str, opened: Option<&Opened>| RequestReport {
        action: action.to_owned(),
        noun: to.noun().to_owned(),
        number: opened.map(|o| o.number),
        url: opened.map(|o| o.url.clone()),
        title: described.title.clone(),
        draft: described.draft,
        body: described.body.clone(),
    };
    let proposed_code = ledger.entries.iter().any(|e| !e.proposed.is_empty());
    let obsolete = to.open.is_some()
        && !pushing
        && to.start == Start::Continue
        && proposed_code
        && to.git.proposes_nothing(&base, "HEAD")?;
    if setup.dry_run {
        report.request = dry_action(to, pushing, &described).map(|a| request(a, to.open.as_ref()));
        return Ok(status);
    }
    if pushing {
        to.git.push(&report.branch, to.start != Start::Continue)?;
    }
    let Some(k) = knowledge else {
        report.request = pushing.then(|| request("pushed", None));
        return Ok(status);
    };
    keep(k, to, ledger, report, None)?;
    let Some(forge) = to.forge else {
        report.request = pushing.then(|| request("pushed", None));
        return Ok(status);
    };
    if let (true, Some(open)) = (obsolete, to.open.as_ref()) {
        let commented = comment_obsolete(forge, k, open, to, described.draft).await?;
        report.request = commented.map(|a| request(a, Some(open)));
        return Ok(status);
    }
    let proposal = Proposal {
        title: described.title.clone(),
        body: described.body.clone(),
        branch: report.branch.clone(),
        base: to.base.to_owned(),
        labels: setup.config.nightly.labels.clone(),
        draft: described.draft,
    };
    let (action, opened) = match &to.open {
        Some(open) if pushing || differs(open, &proposal, forge) => {
            let updated = forge.update(open, &proposal).await?;
            let action = if pushing { "updated" } else { "repaired" };
            (action, updated)
        }
        Some(open) => ("", open.clone()),
        None if ledger.is_empty() || !(pushing || to.git.remote_has(&report.branch)?) => {
            return Ok(status);
        }
        None => ("opened", forge.create(&proposal).await?),
    };
    if rebuilt && !action.is_empty() {
        let note = format!(
            "retrace rebuilt this branch from `{}`: `{}` moved with a change that conflicts with it, so the branch was started again from it with every change this {} holds. The description tells the whole branch as it now is.",
            to.base,
            to.base,
            forge.noun()
        );
        forge.comment(opened.number, &note).await?;
    }
    ledger.number = Some(opened.number);
    keep(k, to, ledger, report, Some(&opened))?;
    if !action.is_empty() {
        report.request = Some(request(action, Some(&opened)));
    }
    Ok(status)
}

/// What a dry run would do about the request.
fn dry_action(to: &Publishing<'_>, pushing: bool, described: &Described) -> Option<&'static str> {
    match &to.open {
        Some(open) if pushing || open.body != described.body => Some("would update"),
        Some(_) => None,
        None if pushing => Some("would open"),
        None => None,
    }
}

/// Whether the open request differs from the proposal: title, description, draft state or
/// a missing label.
fn differs(open: &Opened, proposal: &Proposal, forge: &dyn Forge) -> bool {
    open.title != forge.title(proposal)
        || open.body != proposal.body
        || open.draft != proposal.draft
        || proposal.labels.iter().any(|l| !open.labels.contains(l))
}

/// Comments once on an open request whose branch the base now holds.
async fn comment_obsolete(
    forge: &dyn Forge,
    k: &mut Knowledge,
    open: &Opened,
    to: &Publishing<'_>,
    waiting: bool,
) -> Result<Option<&'static str>, NightlyError> {
    let head = to.git.head()?;
    let noted = k
        .store()
        .open_reviews(to.workspace)?
        .iter()
        .any(|r| r.number == open.number && r.obsolete_at.as_deref() == Some(head.as_str()));
    if noted {
        return Ok(None);
    }
    let note = if waiting {
        format!(
            "retrace: the code changes this {} proposed are no longer needed: the cloud and the base branch agree again. Only what waits for a person is left: tick each item once it is dealt with; then it can be closed.",
            forge.noun()
        )
    } else {
        format!(
            "retrace: the changes this {} proposed are no longer needed: the cloud and the base branch agree again. It can be closed.",
            forge.noun()
        )
    };
    forge.comment(open.number, &note).await?;
    k.store_mut()
        .note_obsolete(forge.name(), forge.repository(), open.number, &head)?;
    Ok(Some("commented"))
}

/// Keeps the night in one transaction: the ledger, the watermark, and the request with the
/// lines retrace's commits added that the branch still holds (a line retrace itself
/// replaced later is not a reviewer's correction).
fn keep(
    k: &mut Knowledge,
    to: &Publishing<'_>,
    ledger: &Ledger,
    report: &WorkspaceReport,
    opened: Option<&Opened>,
) -> Result<(), NightlyError> {
    let review = match (to.forge, opened) {
        (Some(forge), Some(opened)) => {
            let mut lines = Vec::new();
            for line in &ledger.lines {
                let held = to
                    .git
                    .show("HEAD", &line.file)?
                    .is_some_and(|text| text.lines().any(|l| l == line.text));
                if held && !lines.contains(line) {
                    lines.push(line.clone());
                }
            }
            Some(Review {
                id: 0,
                workspace: to.workspace.to_owned(),
                forge: forge.name().to_owned(),
                repository: forge.repository().to_owned(),
                number: opened.number,
                url: opened.url.clone(),
                branch: report.branch.clone(),
                head: to.git.head()?,
                lines,
                state: ReviewState::Open,
                obsolete_at: None,
            })
        }
        _ => None,
    };
    let text = ledger.to_json();
    k.store_mut().record_night(&Night {
        workspace: to.workspace,
        review: review.as_ref(),
        ledger: (!ledger.is_empty() || ledger.number.is_some()).then_some(text.as_str()),
        mark: to.mark,
    })?;
    Ok(())
}

/// The window read, in words.
fn window_words(since: DateTime<Utc>, last: Option<DateTime<Utc>>) -> String {
    let end = last.map_or("the latest event".to_owned(), |l| {
        l.format("%Y-%m-%d %H:%M UTC").to_string()
    });
    format!("{} to {end}", since.format("%Y-%m-%d %H:%M UTC"))
}

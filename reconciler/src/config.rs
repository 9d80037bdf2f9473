//! `retrace.toml`: which sources to read, which calls to look at, and how to recognise the
//! project's own Terraform calls. Command-line options override it.

use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::agent::AgentConfig;
use crate::attribute::AttributionConfig;
use crate::ingest::Filter;
pub use crate::ingest::athena::AthenaConfig;
pub use crate::ingest::lake::LakeConfig;
pub use crate::ingest::lookup::LookupConfig;
pub use crate::ingest::s3::S3Config;
pub use crate::ingest::sources::SourcesConfig;
use crate::ownership::OwnershipConfig;
use crate::policy::PolicyConfig;

/// The whole configuration file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Where records come from.
    #[serde(default)]
    pub sources: SourcesConfig,
    /// Which calls to consider.
    #[serde(default)]
    pub filter: FilterConfig,
    /// How to recognise the project's own infrastructure-as-code calls.
    #[serde(default)]
    pub attribution: AttributionConfig,
    /// What to do with each kind of change.
    #[serde(default)]
    pub policy: PolicyConfig,
    /// What marks a resource created out of band as this workspace's.
    #[serde(default)]
    pub ownership: OwnershipConfig,
    /// The Terraform project to reconcile.
    #[serde(default)]
    pub project: ProjectConfig,
    /// The knowledge base.
    #[serde(default)]
    pub knowledge: KnowledgeConfig,
    /// The Terraform validator.
    #[serde(default)]
    pub terraform: TerraformConfig,
    /// The language-model agent for calls no rule explains; off when absent.
    #[serde(default)]
    pub agent: Option<AgentConfig>,
    /// How `retrace nightly` commits, pushes and opens pull requests.
    #[serde(default)]
    pub nightly: NightlyConfig,
    /// The workspaces `retrace nightly` serves (`[[workspace]]` tables).
    #[serde(default, rename = "workspace")]
    pub workspaces: Vec<WorkspaceConfig>,
}

/// `[nightly]`: how `retrace nightly` commits, pushes and opens pull requests.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NightlyConfig {
    /// The branch pull requests go into, unless a workspace names its own (default `main`).
    #[serde(default = "main_branch")]
    pub base: String,
    /// The prefix of retrace's branches: one branch per workspace, `PREFIX<workspace>`.
    #[serde(default = "branch_prefix")]
    pub branch_prefix: String,
    /// The commits' author name.
    #[serde(default = "author_name")]
    pub author_name: String,
    /// The commits' author e-mail.
    #[serde(default = "author_email")]
    pub author_email: String,
    /// Labels put on every pull request.
    #[serde(default = "labels")]
    pub labels: Vec<String>,
    /// The title of commits and pull requests; `{workspace}` and `{changes}` (the number of
    /// intents) are filled in.
    #[serde(default = "title")]
    pub title: String,
    /// How far before a workspace's watermark a run starts reading again, for CloudTrail's
    /// delivery delay (a duration such as `15m`; default `15m`).
    #[serde(default = "overlap")]
    pub overlap: String,
    /// How far back the first run of a workspace reads (default `24h`).
    #[serde(default = "first_window")]
    pub first_window: String,
    /// Where repositories given by URL are cloned (relative to the config file; default
    /// `.retrace/checkouts`).
    #[serde(default)]
    pub checkouts: Option<PathBuf>,
    /// The forge pull requests are opened on; none: commits are pushed only.
    #[serde(default)]
    pub forge: Option<ForgeConfig>,
}

impl Default for NightlyConfig {
    fn default() -> Self {
        Self {
            base: main_branch(),
            branch_prefix: branch_prefix(),
            author_name: author_name(),
            author_email: author_email(),
            labels: labels(),
            title: title(),
            overlap: overlap(),
            first_window: first_window(),
            checkouts: None,
            forge: None,
        }
    }
}

fn main_branch() -> String {
    "main".into()
}
fn branch_prefix() -> String {
    "retrace/".into()
}
fn author_name() -> String {
    "retrace".into()
}
fn author_email() -> String {
    "retrace@localhost".into()
}
fn labels() -> Vec<String> {
    vec!["drift".into()]
}
fn title() -> String {
    "retrace: {changes} out-of-band change(s) in {workspace}".into()
}
fn overlap() -> String {
    "15m".into()
}
fn first_window() -> String {
    "24h".into()
}

/// `[nightly.forge]`: where pull (or merge) requests are opened.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ForgeConfig {
    /// `github`, `gitlab` or `gitea` (`forgejo` names it too).
    pub kind: ForgeKind,
    /// The API's base URL (default `https://api.github.com` or `https://gitlab.com/api/v4`;
    /// GitHub Enterprise: `https://HOST/api/v3`; Gitea and Forgejo have no default and need
    /// it: `https://HOST/api/v1`).
    #[serde(default)]
    pub api_url: Option<String>,
    /// The environment variable holding the token (default `GITHUB_TOKEN`, `GITLAB_TOKEN` or
    /// `GITEA_TOKEN`).
    #[serde(default)]
    pub token_env: Option<String>,
    /// How many times a request meeting a rate limit or a server error is sent in all
    /// (default 4).
    #[serde(default = "attempts")]
    pub attempts: u32,
    /// The longest wait between attempts, in seconds (default 60): `Retry-After` is
    /// honoured up to it, else the waits double from 1 second. 0 retries at once.
    #[serde(default = "max_wait_seconds")]
    pub max_wait_seconds: u64,
}

fn attempts() -> u32 {
    4
}
fn max_wait_seconds() -> u64 {
    60
}

/// A kind of forge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    /// GitHub or GitHub Enterprise: pull requests.
    Github,
    /// GitLab: merge requests.
    Gitlab,
    /// Gitea or Forgejo (whose API is Gitea's), self-hosted: pull requests.
    #[serde(alias = "forgejo")]
    Gitea,
}

/// `[[workspace]]`: one Terraform root `retrace nightly` keeps true to the cloud.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceConfig {
    /// A short name: the branch, the watermark and the reports use it.
    pub name: String,
    /// The repository: a local clone's directory (relative to the config file) or a remote
    /// URL, cloned under `[nightly] checkouts`.
    pub repository: String,
    /// The root module's directory inside the repository (default: its top).
    #[serde(default)]
    pub project: Option<PathBuf>,
    /// The repository on the forge (`owner/name`, or a GitLab project path); by default read
    /// from the `origin` remote's URL.
    #[serde(default)]
    pub forge_repository: Option<String>,
    /// The branch pull requests go into (default `[nightly] base`).
    #[serde(default)]
    pub base: Option<String>,
    /// How the state is read.
    pub state: StateSource,
    /// `-var-file` arguments, relative to the project directory.
    #[serde(default)]
    pub var_files: Vec<PathBuf>,
    /// The workspace's AWS accounts (default: those its state's ARNs show).
    #[serde(default)]
    pub accounts: Vec<String>,
    /// The workspace's regions (default: those its state shows).
    #[serde(default)]
    pub regions: Vec<String>,
    /// The workspace's policy (default: the file's `[policy]`).
    #[serde(default)]
    pub policy: Option<PolicyConfig>,
    /// The workspace's ownership rules (default: the file's `[ownership]`).
    #[serde(default)]
    pub ownership: Option<OwnershipConfig>,
    /// The observed state (the cloud as a refresh sees it), relative to the project
    /// directory: with it, rules are learned from the drift and the agent can work.
    #[serde(default)]
    pub observed: Option<PathBuf>,
}

/// Where a workspace's state comes from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum StateSource {
    /// A state file, relative to the project directory: `state = { file = "terraform.tfstate" }`.
    File(PathBuf),
    /// `terraform state pull` in the project directory: `state = "pull"`.
    Pull,
    /// An S3 backend's object: `state = { s3 = { bucket = "...", key = "...", region = "..." } }`.
    S3(S3State),
}

/// A state object in S3, read with the AWS SDK.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct S3State {
    /// The bucket.
    pub bucket: String,
    /// The object key (with the workspace prefix, `env:/NAME/...`, for a non-default one).
    pub key: String,
    /// The bucket's region.
    pub region: String,
    /// A named profile; the default credential chain otherwise.
    #[serde(default)]
    pub profile: Option<String>,
    /// Endpoint override (a VPC endpoint, or a test server).
    #[serde(default)]
    pub endpoint_url: Option<String>,
}

/// `[terraform]`: how the real `terraform` judges a patch.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TerraformConfig {
    /// Whether to run `terraform plan` on every reconcile where it can run (default true).
    #[serde(default = "yes")]
    pub validate: bool,
    /// A directory of provider plugins for `terraform init -plugin-dir` (relative to the
    /// config file), when the project is not initialised.
    #[serde(default)]
    pub plugin_dir: Option<PathBuf>,
}

impl Default for TerraformConfig {
    fn default() -> Self {
        Self {
            validate: true,
            plugin_dir: None,
        }
    }
}

fn yes() -> bool {
    true
}

/// `[knowledge]`: the SQLite knowledge base runs read rules from and record into.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KnowledgeConfig {
    /// The store file (relative to the config file); by default
    /// `$XDG_DATA_HOME/retrace/knowledge.sqlite`.
    #[serde(default)]
    pub store: Option<PathBuf>,
    /// Failures in a row after which a learned rule is demoted (default 2).
    #[serde(default)]
    pub demote_after: Option<u64>,
    /// Shipped rules (`service:Api`) left out of every run, to see how calls without a rule
    /// are handled (the long tail, for evaluation).
    #[serde(default)]
    pub withhold: Vec<String>,
}

/// `[project]`: the Terraform project `retrace reconcile` patches (paths relative to the
/// config file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    /// The root module's directory.
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// The state file (`terraform.tfstate`, `terraform state pull` or `terraform show -json`
    /// output).
    #[serde(default)]
    pub state: Option<PathBuf>,
    /// `-var-file` arguments.
    #[serde(default)]
    pub var_files: Vec<PathBuf>,
    /// A refreshed snapshot of the cloud (`terraform show -json` after a refresh).
    #[serde(default)]
    pub observed: Option<PathBuf>,
    /// The project's AWS accounts (default: those its state's ARNs show). A call in another
    /// account never matches one of its resources, and a grant to an account outside these
    /// is flagged as sharing.
    #[serde(default)]
    pub accounts: Vec<String>,
    /// The project's regions (default: those its state shows).
    #[serde(default)]
    pub regions: Vec<String>,
}

/// `[filter]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FilterConfig {
    /// Start of the window: RFC 3339, a date, or a duration back from now (`24h`, `7d`).
    #[serde(default)]
    pub since: Option<String>,
    /// End of the window, in the same forms.
    #[serde(default)]
    pub until: Option<String>,
    /// Accounts to keep.
    #[serde(default)]
    pub accounts: Vec<String>,
    /// Regions to keep.
    #[serde(default)]
    pub regions: Vec<String>,
}

impl FilterConfig {
    /// The filter these settings describe, with relative times taken from `now`.
    pub fn to_filter(&self, now: DateTime<Utc>) -> Result<Filter, ConfigError> {
        let time = |text: &Option<String>| text.as_deref().map(|t| parse_when(t, now)).transpose();
        Ok(Filter {
            since: time(&self.since)?,
            until: time(&self.until)?,
            accounts: self.accounts.clone(),
            regions: self.regions.clone(),
        })
    }
}

/// A problem with the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown or mistyped keys.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A time is in none of the accepted forms.
    #[error(
        "`{0}` is not a time: use RFC 3339 (2024-07-31T12:00:00Z), a date (2024-07-31) or a duration back from now (90m, 24h, 7d)"
    )]
    Time(String),
}

impl Config {
    /// Reads a configuration file; relative source paths are taken from its folder.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let mut config: Self = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        let project = &mut config.project;
        let paths = config
            .sources
            .files
            .iter_mut()
            .chain(project.var_files.iter_mut())
            .chain(project.dir.iter_mut())
            .chain(project.state.iter_mut())
            .chain(project.observed.iter_mut())
            .chain(config.knowledge.store.iter_mut())
            .chain(config.terraform.plugin_dir.iter_mut())
            .chain(config.nightly.checkouts.iter_mut());
        for file in paths {
            if file.is_relative() {
                *file = base.join(&*file);
            }
        }
        for workspace in &mut config.workspaces {
            let local = !workspace.repository.contains("://")
                && !workspace.repository.contains('@')
                && Path::new(&workspace.repository).is_relative();
            if local {
                workspace.repository = base.join(&workspace.repository).display().to_string();
            }
        }
        Ok(config)
    }
}

/// Parses a point in time: RFC 3339, a plain date (midnight UTC), or a duration back from
/// `now` such as `90m`, `24h` or `7d`.
pub fn parse_when(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, ConfigError> {
    let text = text.trim();
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&Utc));
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(date
            .and_hms_opt(0, 0, 0)
            .map(|d| d.and_utc())
            .unwrap_or(now));
    }
    let bad = || ConfigError::Time(text.to_owned());
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let amount: i64 = text[..split].parse().map_err(|_| bad())?;
    let span = match &text[split..] {
        "s" => chrono::Duration::try_seconds(amount),
        "m" => chrono::Duration::try_minutes(amount),
        "h" => chrono::Duration::try_hours(amount),
        "d" => chrono::Duration::try_days(amount),
        "w" => chrono::Duration::try_weeks(amount),
        _ => None,
    }
    .ok_or_else(bad)?;
    now.checked_sub_signed(span).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 7, 31, 12, 0, 0)
            .single()
            .expect("valid")
    }

    #[test]
    fn times_in_every_form() {
        assert_eq!(
            parse_when("2024-07-30T10:00:00Z", now()).ok(),
            Utc.with_ymd_and_hms(2024, 7, 30, 10, 0, 0).single()
        );
        assert_eq!(
            parse_when("2024-07-30", now()).ok(),
            Utc.with_ymd_and_hms(2024, 7, 30, 0, 0, 0).single()
        );
        assert_eq!(
            parse_when("24h", now()).ok(),
            Utc.with_ymd_and_hms(2024, 7, 30, 12, 0, 0).single()
        );
        assert_eq!(
            parse_when("7d", now()).ok(),
            Utc.with_ymd_and_hms(2024, 7, 24, 12, 0, 0).single()
        );
        assert!(matches!(
            parse_when("yesterday", now()),
            Err(ConfigError::Time(_))
        ));
        assert!(matches!(parse_when("5y", now()), Err(ConfigError::Time(_))));
    }

    #[test]
    fn full_file_parses_and_paths_are_relative_to_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("retrace.toml");
        std::fs::write(
            &path,
            r#"
[sources]
files = ["logs", "/abs/trail.json"]
[sources.lookup]
regions = ["eu-west-1", "us-east-1"]
profile = "prod"
[sources.lake]
event_data_store = "arn:aws:cloudtrail:eu-west-1:111122223333:eventdatastore/abc"
region = "eu-west-1"
[filter]
since = "24h"
accounts = ["111122223333"]
[attribution]
iac_role_arns = ["arn:aws:iam::*:role/terraform-ci"]
iac_session_names = ["gha-*"]
run_token = "retrace-run/7"
[knowledge]
store = "kb/knowledge.sqlite"
demote_after = 3
"#,
        )
        .expect("write");
        let config = Config::load(&path).expect("loads");
        assert_eq!(
            config.sources.files,
            [dir.path().join("logs"), PathBuf::from("/abs/trail.json")]
        );
        assert_eq!(
            config.sources.lookup.as_ref().map(|l| l.regions.len()),
            Some(2)
        );
        assert_eq!(
            config.attribution.run_token.as_deref(),
            Some("retrace-run/7")
        );
        assert_eq!(
            config.knowledge.store,
            Some(dir.path().join("kb/knowledge.sqlite"))
        );
        assert_eq!(config.knowledge.demote_after, Some(3));
        let filter = config.filter.to_filter(now()).expect("filter");
        assert_eq!(
            filter.since,
            Utc.with_ymd_and_hms(2024, 7, 30, 12, 0, 0).single()
        );
    }

    #[test]
    fn unknown_keys_are_errors_with_a_line() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("retrace.toml");
        std::fs::write(&path, "[filter]\nsince = \"1d\"\nregion = \"eu-west-1\"\n").expect("write");
        let message = Config::load(&path).expect_err("unknown key").to_string();
        assert!(message.contains("retrace.toml"), "{message}");
        assert!(message.contains("line 3"), "{message}");
        assert!(message.contains("region"), "{message}");
    }

    #[test]
    fn forgejo_names_the_gitea_forge() {
        for kind in ["gitea", "forgejo"] {
            let text = format!(
                "[nightly.forge]\nkind = \"{kind}\"\napi_url = \"https://codeberg.org/api/v1\"\n"
            );
            let config: Config = toml::from_str(&text).expect("parses");
            let forge = config.nightly.forge.expect("a forge");
            assert_eq!(forge.kind, ForgeKind::Gitea, "{kind}");
        }
    }
}

//! Source and filter options shared by the commands that read CloudTrail.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use reconciler::config::Config;
use reconciler::ingest::Filter;
use reconciler::ingest::Source;
use reconciler::ingest::files::FileSource;

/// Where to read CloudTrail from and which calls to look at. Options given here replace the
/// `[sources]` and `[filter]` settings of the configuration file.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Log files or directories (S3 delivery layout, .json, .json.gz, NDJSON); repeatable.
    #[arg(long = "logs", value_name = "PATH")]
    pub logs: Vec<PathBuf>,
    /// Start of the window: RFC 3339, a date, or a duration back from now (24h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// End of the window (exclusive), in the same forms.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Only calls in this account; repeatable.
    #[arg(long = "account", value_name = "ID")]
    pub accounts: Vec<String>,
    /// Only calls in this region; repeatable.
    #[arg(long = "region", value_name = "REGION")]
    pub regions: Vec<String>,
}

/// Loads the configuration file: the one named, else `./retrace.toml` when present.
pub fn load_config(path: Option<&Path>) -> Result<Config> {
    let default = Path::new("retrace.toml");
    match path {
        Some(path) => Ok(Config::load(path)?),
        None if default.exists() => Ok(Config::load(default)?),
        None => Ok(Config::default()),
    }
}

impl SourceArgs {
    /// The filter from the options, falling back to the configuration.
    pub fn filter(&self, config: &Config) -> Result<Filter> {
        let mut settings = config.filter.clone();
        if self.since.is_some() {
            settings.since.clone_from(&self.since);
        }
        if self.until.is_some() {
            settings.until.clone_from(&self.until);
        }
        if !self.accounts.is_empty() {
            settings.accounts.clone_from(&self.accounts);
        }
        if !self.regions.is_empty() {
            settings.regions.clone_from(&self.regions);
        }
        Ok(settings.to_filter(chrono::Utc::now())?)
    }

    /// The sources from the options, or from the configuration when no option names one.
    pub async fn sources(&self, config: &Config) -> Result<Vec<Box<dyn Source>>> {
        let files = if self.logs.is_empty() {
            &config.sources.files
        } else {
            &self.logs
        };
        let mut sources: Vec<Box<dyn Source>> = Vec::new();
        if !files.is_empty() {
            sources.push(Box::new(
                FileSource::new(files.clone()).with_progress(progress_bar()),
            ));
        }
        if sources.is_empty() {
            anyhow::bail!(
                "no CloudTrail source: give --logs PATH, or set [sources] in retrace.toml"
            );
        }
        Ok(sources)
    }
}

/// A byte-count progress bar on standard error; indicatif hides it when that is not a
/// terminal.
fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} reading logs {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style);
    }
    bar
}

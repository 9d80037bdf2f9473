//! Source and filter options shared by the commands that read CloudTrail.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use reconciler::config::{AthenaConfig, Config, LakeConfig, LookupConfig, S3Config, SourcesConfig};
use reconciler::ingest::Filter;
use reconciler::ingest::Source;
use reconciler::ingest::files::discover;
use reconciler::ingest::lake::arn_region;
use reconciler::pipeline::InputSummary;

/// Where to read CloudTrail from and which calls to look at. Options given here replace the
/// `[sources]` and `[filter]` settings of the configuration file.
#[derive(Debug, Default, Args)]
pub struct SourceArgs {
    /// Log files or directories (S3 delivery layout, .json, .json.gz, NDJSON); repeatable.
    #[arg(long = "logs", value_name = "PATH")]
    pub logs: Vec<PathBuf>,
    /// Read CloudTrail's LookupEvents API (last 90 days of management events) in this
    /// region; repeatable.
    #[arg(long = "lookup", value_name = "REGION")]
    pub lookup: Vec<String>,
    /// Query this CloudTrail Lake event data store (its id or ARN).
    #[arg(long, value_name = "EVENT_DATA_STORE")]
    pub lake: Option<String>,
    /// Region of the --lake event data store (default: the region its ARN names).
    #[arg(long, value_name = "REGION", requires = "lake")]
    pub lake_region: Option<String>,
    /// Query this CloudTrail table in Amazon Athena (`DATABASE.TABLE`, the standard CloudTrail
    /// table with partition projection; `[sources.athena]` in retrace.toml for the rest).
    #[arg(long, value_name = "DATABASE.TABLE")]
    pub athena_table: Option<String>,
    /// Region of Athena and the --athena-table.
    #[arg(long, value_name = "REGION", requires = "athena_table")]
    pub athena_region: Option<String>,
    /// The Athena workgroup (default: primary).
    #[arg(long, value_name = "NAME", requires = "athena_table")]
    pub athena_workgroup: Option<String>,
    /// Where Athena writes query results (s3://bucket/prefix/), unless the workgroup sets it.
    #[arg(long, value_name = "S3_URI", requires = "athena_table")]
    pub athena_output: Option<String>,
    /// Read the log files a trail delivered to this S3 bucket (and key prefix), for the
    /// window's days, the --account and --region given (else every one found);
    /// `[sources.s3]` in retrace.toml for the rest.
    #[arg(long, value_name = "s3://BUCKET[/PREFIX]")]
    pub s3: Option<String>,
    /// Region of the --s3 bucket.
    #[arg(long, value_name = "REGION", requires = "s3")]
    pub s3_region: Option<String>,
    /// The organisation id (o-...) of an organisation trail delivered to the --s3 bucket.
    #[arg(long, value_name = "ORG_ID", requires = "s3")]
    pub s3_organization: Option<String>,
    /// AWS profile for --lookup, --lake, --athena-table and --s3 (default: the standard
    /// credential chain).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Endpoint URL for the AWS APIs (a VPC endpoint or a test server).
    #[arg(long, value_name = "URL", hide = true)]
    pub endpoint_url: Option<String>,
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
    /// Accept a run that reads no log file or no record inside the window (otherwise an
    /// error: a mistyped path must not read as an all-clear).
    #[arg(long)]
    pub allow_empty: bool,
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

    /// The sources from the options, or from the configuration when no option names one,
    /// opened by the library's one factory ([`reconciler::ingest::sources::open`]).
    pub async fn sources(&self, config: &Config) -> Result<Vec<Box<dyn Source>>> {
        let settings = self.source_settings(config)?;
        if !settings.files.is_empty() {
            self.check_files(&settings.files, &self.filter(config)?)?;
        }
        let progress = (!settings.files.is_empty()).then(progress_bar);
        let sources = reconciler::ingest::sources::open(&settings, progress).await?;
        if sources.is_empty() {
            anyhow::bail!(
                "no CloudTrail source: give --logs PATH, --lookup REGION, --lake EVENT_DATA_STORE, \
                 --athena-table DATABASE.TABLE or --s3 s3://BUCKET[/PREFIX], or set [sources] in \
                 retrace.toml"
            );
        }
        Ok(sources)
    }

    /// Refuses files and directories that hold no log file for the window (a mistyped path,
    /// an empty directory), unless `--allow-empty`. Paths that do not exist are reported by
    /// the source itself.
    fn check_files(&self, paths: &[PathBuf], filter: &Filter) -> Result<()> {
        if self.allow_empty || paths.iter().any(|p| !p.exists()) {
            return Ok(());
        }
        let (files, _) = discover(paths, filter);
        if files.is_empty() {
            let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            bail!(
                "no CloudTrail log file under {} for {}: check the path and the time window, or \
                 pass --allow-empty",
                named.join(", "),
                filter.window()
            );
        }
        Ok(())
    }

    /// Refuses a run in which no record fell inside the window (an all-clear nobody should
    /// trust), unless `--allow-empty`.
    pub fn check_read(&self, input: &InputSummary, filter: &Filter) -> Result<()> {
        if !self.allow_empty {
            reconciler::pipeline::require_records(input, filter)?;
        }
        Ok(())
    }

    /// The sources named on the command line, else those of the configuration; --profile and
    /// --endpoint-url apply to the API sources either way.
    fn source_settings(&self, config: &Config) -> Result<SourcesConfig> {
        let named = !self.logs.is_empty()
            || !self.lookup.is_empty()
            || self.lake.is_some()
            || self.athena_table.is_some()
            || self.s3.is_some();
        let mut settings = if named {
            SourcesConfig {
                files: self.logs.clone(),
                lookup: self.lookup_config(),
                lake: self.lake_config()?,
                athena: self.athena_config(config)?,
                s3: self.s3_config(config)?,
            }
        } else {
            config.sources.clone()
        };
        let access = settings
            .lookup
            .iter_mut()
            .map(|l| (&mut l.profile, &mut l.endpoint_url))
            .chain(
                settings
                    .lake
                    .iter_mut()
                    .map(|l| (&mut l.profile, &mut l.endpoint_url)),
            )
            .chain(
                settings
                    .athena
                    .iter_mut()
                    .map(|a| (&mut a.profile, &mut a.endpoint_url)),
            )
            .chain(
                settings
                    .s3
                    .iter_mut()
                    .map(|s| (&mut s.profile, &mut s.endpoint_url)),
            );
        for (profile, endpoint_url) in access {
            if self.profile.is_some() {
                profile.clone_from(&self.profile);
            }
            if self.endpoint_url.is_some() {
                endpoint_url.clone_from(&self.endpoint_url);
            }
        }
        Ok(settings)
    }

    fn lookup_config(&self) -> Option<LookupConfig> {
        (!self.lookup.is_empty()).then(|| LookupConfig {
            regions: self.lookup.clone(),
            ..LookupConfig::default()
        })
    }

    /// `--athena-table` and its options, over `[sources.athena]` (its partition layout kept).
    fn athena_config(&self, config: &Config) -> Result<Option<AthenaConfig>> {
        let Some(table) = &self.athena_table else {
            return Ok(None);
        };
        let (database, table) = table
            .split_once('.')
            .with_context(|| format!("--athena-table {table}: give it as DATABASE.TABLE"))?;
        let mut athena = config.sources.athena.clone().unwrap_or_default();
        athena.database = database.to_owned();
        athena.table = table.to_owned();
        if let Some(region) = &self.athena_region {
            athena.region.clone_from(region);
        }
        if athena.region.is_empty() {
            bail!("--athena-table {database}.{table}: give --athena-region REGION");
        }
        if self.athena_workgroup.is_some() {
            athena.workgroup.clone_from(&self.athena_workgroup);
        }
        if self.athena_output.is_some() {
            athena.output_location.clone_from(&self.athena_output);
        }
        Ok(Some(athena))
    }

    /// `--s3` and its options, over `[sources.s3]` (its accounts and regions kept).
    fn s3_config(&self, config: &Config) -> Result<Option<S3Config>> {
        let Some(uri) = &self.s3 else {
            return Ok(None);
        };
        let (bucket, prefix) = uri
            .strip_prefix("s3://")
            .map(|rest| rest.split_once('/').unwrap_or((rest, "")))
            .filter(|(bucket, _)| !bucket.is_empty())
            .with_context(|| format!("--s3 {uri}: give it as s3://BUCKET[/PREFIX]"))?;
        let mut s3 = config.sources.s3.clone().unwrap_or_default();
        s3.bucket = bucket.to_owned();
        s3.prefix = Some(prefix.to_owned()).filter(|p| !p.trim_matches('/').is_empty());
        if let Some(region) = &self.s3_region {
            s3.region.clone_from(region);
        }
        if s3.region.is_empty() {
            bail!("--s3 {uri}: give --s3-region REGION, the bucket's region");
        }
        if self.s3_organization.is_some() {
            s3.organization_id.clone_from(&self.s3_organization);
        }
        Ok(Some(s3))
    }

    fn lake_config(&self) -> Result<Option<LakeConfig>> {
        let Some(store) = &self.lake else {
            return Ok(None);
        };
        let region = self
            .lake_region
            .as_deref()
            .or_else(|| arn_region(store))
            .with_context(|| {
                format!(
                    "--lake {store}: give --lake-region REGION, or the store's ARN, which names it"
                )
            })?;
        Ok(Some(LakeConfig {
            event_data_store: store.clone(),
            region: region.to_owned(),
            ..LakeConfig::default()
        }))
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        sources: SourceArgs,
    }

    fn settings(args: &[&str], config: &Config) -> Result<SourcesConfig> {
        let cli = Cli::try_parse_from(std::iter::once("retrace").chain(args.iter().copied()))?;
        cli.sources.source_settings(config)
    }

    fn config() -> Config {
        let mut config = Config::default();
        config.sources.files = vec![PathBuf::from("logs")];
        config.sources.lookup = Some(LookupConfig {
            regions: vec!["us-east-1".into()],
            profile: Some("from-config".into()),
            endpoint_url: None,
        });
        config
    }

    #[test]
    fn command_line_sources_replace_the_configured_ones() {
        let arn = "arn:aws:cloudtrail:eu-west-1:111122223333:eventdatastore/abc";
        let got = settings(&["--lookup", "eu-west-1", "--lake", arn], &config()).expect("settings");
        assert!(got.files.is_empty());
        assert_eq!(got.lookup.expect("lookup").regions, ["eu-west-1"]);
        let lake = got.lake.expect("lake");
        assert_eq!(
            (lake.event_data_store.as_str(), lake.region.as_str()),
            (arn, "eu-west-1")
        );
    }

    #[test]
    fn configured_sources_are_used_when_none_is_named() {
        let got = settings(
            &[
                "--profile",
                "prod",
                "--endpoint-url",
                "http://localhost:4566",
            ],
            &config(),
        )
        .expect("settings");
        assert_eq!(got.files, [PathBuf::from("logs")]);
        let lookup = got.lookup.expect("lookup");
        assert_eq!(lookup.regions, ["us-east-1"]);
        assert_eq!(lookup.profile.as_deref(), Some("prod"));
        assert_eq!(
            lookup.endpoint_url.as_deref(),
            Some("http://localhost:4566")
        );
    }

    #[test]
    fn an_s3_bucket_takes_its_prefix_and_organisation_over_the_configured_one() {
        let mut config = config();
        config.sources.s3 = Some(S3Config {
            bucket: "old-trail".into(),
            organization_id: Some("o-abc123def4".into()),
            regions: vec!["us-east-1".into()],
            region: "us-east-1".into(),
            ..S3Config::default()
        });
        let got = settings(
            &[
                "--s3",
                "s3://acme-trail/audit/main/",
                "--s3-region",
                "eu-west-1",
                "--profile",
                "prod",
            ],
            &config,
        )
        .expect("settings");
        assert!(got.files.is_empty() && got.lookup.is_none());
        let s3 = got.s3.expect("s3");
        assert_eq!(
            (s3.bucket.as_str(), s3.prefix.as_deref(), s3.region.as_str()),
            ("acme-trail", Some("audit/main/"), "eu-west-1")
        );
        assert_eq!(s3.organization_id.as_deref(), Some("o-abc123def4"));
        assert_eq!(s3.regions, ["us-east-1"]);
        assert_eq!(s3.profile.as_deref(), Some("prod"));
    }

    #[test]
    fn an_s3_bucket_needs_its_uri_and_region() {
        for bad in ["acme-trail", "s3://", "s3:///audit"] {
            let args = ["--s3", bad, "--s3-region", "eu-west-1"];
            assert!(settings(&args, &Config::default()).is_err(), "{bad}");
        }
        assert!(settings(&["--s3", "s3://acme-trail"], &Config::default()).is_err());
        let got = settings(
            &[
                "--s3",
                "s3://acme-trail",
                "--s3-region",
                "eu-west-1",
                "--s3-organization",
                "o-abc123def4",
            ],
            &Config::default(),
        )
        .expect("settings")
        .s3
        .expect("s3");
        assert_eq!((got.bucket.as_str(), got.prefix), ("acme-trail", None));
        assert_eq!(got.organization_id.as_deref(), Some("o-abc123def4"));
    }

    #[test]
    fn a_lake_id_needs_a_region() {
        assert!(settings(&["--lake", "abc"], &Config::default()).is_err());
        let got = settings(
            &["--lake", "abc", "--lake-region", "eu-west-2"],
            &Config::default(),
        );
        assert_eq!(
            got.expect("settings").lake.expect("lake").region,
            "eu-west-2"
        );
    }
}

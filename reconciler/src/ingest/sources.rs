//! The sources a configuration names, opened: `[sources]` (or the command line's options,
//! made into the same settings) becomes the list of [`Source`]s a run reads. The one place
//! that knows every kind of source; the `retrace` binary and the evaluation both open theirs
//! here.

use std::path::PathBuf;

use indicatif::ProgressBar;

use super::athena::{AthenaConfig, AthenaError};
use super::files::FileSource;
use super::lake::{LakeConfig, LakeError};
use super::lookup::LookupConfig;
use super::s3::{S3Config, S3Error};
use super::source::Source;

/// `[sources]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourcesConfig {
    /// Log files and directories (paths relative to the config file).
    #[serde(default)]
    pub files: Vec<PathBuf>,
    /// The LookupEvents API.
    #[serde(default)]
    pub lookup: Option<LookupConfig>,
    /// A CloudTrail Lake event data store.
    #[serde(default)]
    pub lake: Option<LakeConfig>,
    /// A CloudTrail table in Amazon Athena (an organisation trail in S3).
    #[serde(default)]
    pub athena: Option<AthenaConfig>,
    /// A trail's S3 bucket, its log files read where CloudTrail delivers them.
    #[serde(default)]
    pub s3: Option<S3Config>,
}

/// Why a configured source could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The CloudTrail Lake settings name no valid event data store.
    #[error("invalid CloudTrail Lake source")]
    Lake(#[source] LakeError),
    /// The Athena settings are not usable.
    #[error("invalid Athena source")]
    Athena(#[source] AthenaError),
    /// The S3 bucket's settings are not usable.
    #[error("invalid S3 source")]
    S3(#[source] S3Error),
    /// An AWS API source was named in a build without the `aws` feature.
    #[error("cannot read {0}: this build of retrace has no AWS SDK (the `aws` feature)")]
    NoAws(&'static str),
}

/// Opens every source `settings` names, in a fixed order: the files (reporting the bytes
/// read to `progress`, when given), LookupEvents, CloudTrail Lake, Athena, a trail's S3
/// bucket. Settings that name no source give an empty list.
pub async fn open(
    settings: &SourcesConfig,
    progress: Option<ProgressBar>,
) -> Result<Vec<Box<dyn Source>>, OpenError> {
    let mut sources: Vec<Box<dyn Source>> = Vec::new();
    if !settings.files.is_empty() {
        let files = FileSource::new(settings.files.clone());
        sources.push(Box::new(match progress {
            Some(bar) => files.with_progress(bar),
            None => files,
        }));
    }
    sources.extend(open_apis(settings).await?);
    Ok(sources)
}

/// The AWS API sources `settings` names.
#[cfg(feature = "aws")]
async fn open_apis(settings: &SourcesConfig) -> Result<Vec<Box<dyn Source>>, OpenError> {
    use super::athena::AthenaSource;
    use super::lake::LakeSource;
    use super::lookup::LookupSource;
    use super::s3::S3Source;

    let mut sources: Vec<Box<dyn Source>> = Vec::new();
    if let Some(lookup) = &settings.lookup {
        sources.push(Box::new(LookupSource::from_config(lookup).await));
    }
    if let Some(lake) = &settings.lake {
        let source = LakeSource::from_config(lake)
            .await
            .map_err(OpenError::Lake)?;
        sources.push(Box::new(source));
    }
    if let Some(athena) = &settings.athena {
        let source = AthenaSource::from_config(athena)
            .await
            .map_err(OpenError::Athena)?;
        sources.push(Box::new(source));
    }
    if let Some(s3) = &settings.s3 {
        let source = S3Source::from_config(s3).await.map_err(OpenError::S3)?;
        sources.push(Box::new(source));
    }
    Ok(sources)
}

/// Without the AWS SDK, an API source named is an error.
#[cfg(not(feature = "aws"))]
async fn open_apis(settings: &SourcesConfig) -> Result<Vec<Box<dyn Source>>, OpenError> {
    let named = [
        (settings.lookup.is_some(), "CloudTrail's LookupEvents API"),
        (
            settings.lake.is_some(),
            "a CloudTrail Lake event data store",
        ),
        (settings.athena.is_some(), "an Athena table"),
        (settings.s3.is_some(), "a trail's S3 bucket"),
    ];
    match named.into_iter().find(|(named, _)| *named) {
        Some((_, what)) => Err(OpenError::NoAws(what)),
        None => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths that do not exist still make a file source: the source reports them when read.
    #[tokio::test]
    async fn files_become_one_file_source() {
        let settings = SourcesConfig {
            files: vec![PathBuf::from("a.json"), PathBuf::from("logs")],
            ..SourcesConfig::default()
        };
        let sources = open(&settings, None).await.expect("opened");
        assert_eq!(sources.len(), 1);
        assert_eq!(sources[0].describe(), "files: a.json, logs");
    }

    #[tokio::test]
    async fn no_settings_no_source() {
        let sources = open(&SourcesConfig::default(), None).await.expect("opened");
        assert!(sources.is_empty());
    }

    #[cfg(feature = "aws")]
    #[tokio::test]
    async fn a_bad_lake_store_names_the_source() {
        let settings = SourcesConfig {
            lake: Some(LakeConfig {
                event_data_store: "abc; DROP TABLE x".into(),
                region: "eu-west-1".into(),
                ..LakeConfig::default()
            }),
            ..SourcesConfig::default()
        };
        let error = open(&settings, None).await.err().expect("refused");
        assert!(matches!(error, OpenError::Lake(_)), "{error:?}");
    }

    /// A trail's bucket with a prefix, in an organisation.
    fn s3_settings(organization_id: &str) -> SourcesConfig {
        SourcesConfig {
            s3: Some(S3Config {
                bucket: "acme-trail".into(),
                prefix: Some("audit".into()),
                organization_id: Some(organization_id.into()),
                region: "eu-west-1".into(),
                ..S3Config::default()
            }),
            ..SourcesConfig::default()
        }
    }

    #[cfg(feature = "aws")]
    #[tokio::test]
    async fn a_trail_bucket_becomes_an_s3_source() {
        let sources = open(&s3_settings("o-abc123def4"), None)
            .await
            .expect("opened");
        assert_eq!(sources.len(), 1);
        assert_eq!(
            sources[0].describe(),
            "s3: s3://acme-trail/audit/AWSLogs/o-abc123def4/ (eu-west-1)"
        );
    }

    #[cfg(feature = "aws")]
    #[tokio::test]
    async fn a_bad_organisation_id_names_the_s3_source() {
        let error = open(&s3_settings("abc123def4"), None)
            .await
            .err()
            .expect("refused");
        assert!(matches!(error, OpenError::S3(_)), "{error:?}");
    }

    #[cfg(not(feature = "aws"))]
    #[tokio::test]
    async fn without_the_sdk_a_trail_bucket_is_refused() {
        let error = open(&s3_settings("o-abc123def4"), None)
            .await
            .err()
            .expect("refused");
        assert!(
            matches!(error, OpenError::NoAws("a trail's S3 bucket")),
            "{error:?}"
        );
    }
}

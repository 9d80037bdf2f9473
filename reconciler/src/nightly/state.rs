//! A workspace's state, read the way its `[[workspace]] state` says: a file, `terraform state
//! pull` in the project directory, or the S3 backend's object through the AWS SDK.

use std::path::Path;
use std::process::Command;

#[cfg(feature = "aws")]
use crate::config::S3State;
use crate::config::StateSource;
use crate::terraform::state::{State, StateError};
use crate::validate::terraform_binary;

/// Why a workspace's state could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadStateError {
    /// The state did not parse or the file could not be read.
    #[error(transparent)]
    State(#[from] StateError),
    /// `terraform state pull` could not run or failed.
    #[error("`terraform state pull` in {dir}: {message}")]
    Pull {
        /// The project directory.
        dir: String,
        /// What went wrong.
        message: String,
    },
    /// The S3 object could not be read.
    #[error("reading the state s3://{bucket}/{key}: {message}")]
    S3 {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// What went wrong.
        message: String,
    },
}

/// Reads the state of the project in `project` from `source`.
pub async fn read_state(source: &StateSource, project: &Path) -> Result<State, ReadStateError> {
    match source {
        StateSource::File(file) => Ok(State::read(&project.join(file))?),
        StateSource::Pull => pull(project),
        #[cfg(feature = "aws")]
        StateSource::S3(s3) => {
            let client = s3_client(s3).await;
            from_s3(&client, s3).await
        }
        #[cfg(not(feature = "aws"))]
        StateSource::S3(s3) => Err(ReadStateError::S3 {
            bucket: s3.bucket.clone(),
            key: s3.key.clone(),
            message: "this build of retrace has no AWS support (the `aws` feature)".to_owned(),
        }),
    }
}

/// `terraform state pull` in `project`.
fn pull(project: &Path) -> Result<State, ReadStateError> {
    let fail = |message: String| ReadStateError::Pull {
        dir: project.display().to_string(),
        message,
    };
    let binary = terraform_binary().ok_or_else(|| fail("terraform is not on PATH".into()))?;
    let output = Command::new(binary)
        .args(["state", "pull"])
        .current_dir(project)
        .env("TF_IN_AUTOMATION", "1")
        .output()
        .map_err(|e| fail(e.to_string()))?;
    if !output.status.success() {
        return Err(fail(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ));
    }
    Ok(State::parse(&output.stdout, "terraform state pull")?)
}

#[cfg(feature = "aws")]
/// An S3 client for the state's bucket: the standard credential chain, or the profile.
pub async fn s3_client(s3: &S3State) -> aws_sdk_s3::Client {
    let mut loader = crate::ingest::aws::loader(&s3.region);
    if let Some(profile) = &s3.profile {
        loader = loader.profile_name(profile);
    }
    if let Some(url) = &s3.endpoint_url {
        loader = loader.endpoint_url(url);
    }
    let settings = loader.load().await;
    let config = aws_sdk_s3::config::Builder::from(&settings)
        .force_path_style(s3.endpoint_url.is_some())
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

#[cfg(feature = "aws")]
/// The state object `s3` names, read with `client`.
pub async fn from_s3(client: &aws_sdk_s3::Client, s3: &S3State) -> Result<State, ReadStateError> {
    let fail = |message: String| ReadStateError::S3 {
        bucket: s3.bucket.clone(),
        key: s3.key.clone(),
        message,
    };
    let object = client
        .get_object()
        .bucket(&s3.bucket)
        .key(&s3.key)
        .send()
        .await
        .map_err(|e| fail(aws_sdk_s3::error::DisplayErrorContext(&e).to_string()))?;
    let bytes = object
        .body
        .collect()
        .await
        .map_err(|e| fail(e.to_string()))?
        .into_bytes();
    let origin = format!("s3://{}/{}", s3.bucket, s3.key);
    Ok(State::parse(&bytes, &origin)?)
}

#[cfg(all(test, feature = "aws"))]
mod tests {
    use super::*;
    use aws_sdk_s3::operation::get_object::{GetObjectError, GetObjectOutput};
    use aws_sdk_s3::primitives::ByteStream;
    use aws_sdk_s3::types::error::NoSuchKey;
    use aws_smithy_mocks::{mock, mock_client};

    fn s3() -> S3State {
        S3State {
            bucket: "acme-tfstate".into(),
            key: "env:/prod/shop/terraform.tfstate".into(),
            region: "eu-west-1".into(),
            profile: None,
            endpoint_url: None,
        }
    }

    const STATE: &str = r#"{"version": 4, "terraform_version": "1.11.4", "serial": 3,
        "lineage": "l", "outputs": {}, "resources": [{"mode": "managed",
        "type": "aws_sqs_queue", "name": "jobs",
        "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
        "instances": [{"schema_version": 0, "attributes": {"id": "https://sqs.eu-west-1.amazonaws.com/111122223333/jobs", "name": "jobs"}}]}]}"#;

    #[tokio::test]
    async fn the_state_object_is_read_from_its_bucket_and_key() {
        let get = mock!(aws_sdk_s3::Client::get_object)
            .match_requests(|r| {
                r.bucket() == Some("acme-tfstate")
                    && r.key() == Some("env:/prod/shop/terraform.tfstate")
            })
            .then_output(|| {
                GetObjectOutput::builder()
                    .body(ByteStream::from_static(STATE.as_bytes()))
                    .build()
            });
        let client = mock_client!(aws_sdk_s3, [&get]);
        let state = from_s3(&client, &s3()).await.expect("reads");
        assert_eq!(state.instances.len(), 1);
        assert_eq!(state.instances[0].address, "aws_sqs_queue.jobs");
    }

    #[tokio::test]
    async fn a_missing_object_names_bucket_and_key() {
        let get = mock!(aws_sdk_s3::Client::get_object).then_error(|| {
            GetObjectError::NoSuchKey(
                NoSuchKey::builder()
                    .message("The specified key does not exist.")
                    .build(),
            )
        });
        let client = mock_client!(aws_sdk_s3, [&get]);
        let error = from_s3(&client, &s3())
            .await
            .expect_err("fails")
            .to_string();
        assert!(
            error.contains("s3://acme-tfstate/env:/prod/shop/terraform.tfstate"),
            "{error}"
        );
        assert!(error.contains("does not exist"), "{error}");
    }
}

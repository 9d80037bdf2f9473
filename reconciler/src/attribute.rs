//! Attribution: one verdict and one reason per call, saying whether the call is a candidate
//! for reconciliation (`out-of-band`) or why it is not.
//!
//! The checks run in a fixed order, most certain first: a failed call changed nothing, a data
//! event is not configuration, a read changed nothing, AWS's own calls follow from
//! configuration; then the project's own Terraform identity, run token and user agent, other
//! infrastructure-as-code tools, and finally everything else is out of band.

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::ingest::client::ClientKind;
use crate::ingest::identity::IdentityKind;
use crate::ingest::record::Call;
use crate::ingest::verdict::EarlyVerdict;
pub use crate::ingest::verdict::{Attribution, Verdict, settled_verdict};

/// How to recognise the project's own infrastructure-as-code calls (`[attribution]` in
/// `retrace.toml`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AttributionConfig {
    /// Role ARNs (glob patterns allowed) that the pipeline runs Terraform as, e.g.
    /// `arn:aws:iam::*:role/terraform-ci`. Matched against an assumed role's issuer ARN, and
    /// against the caller's own ARN for IAM users.
    #[serde(default)]
    pub iac_role_arns: Vec<String>,
    /// Session-name glob patterns of the pipeline's sessions, e.g. `gha-terraform-*`.
    #[serde(default)]
    pub iac_session_names: Vec<String>,
    /// A marker the pipeline appends to Terraform's user agent with `TF_APPEND_USER_AGENT`.
    /// When set, a Terraform call without it is treated as out of band: someone applied from
    /// outside the pipeline.
    #[serde(default)]
    pub run_token: Option<String>,
}

/// A configuration problem found when compiling the attribution rules.
#[derive(Debug, thiserror::Error)]
pub enum AttributeError {
    /// A pattern is not a valid glob.
    #[error("invalid pattern `{pattern}` in [attribution]: {source}")]
    Pattern {
        /// The pattern as written.
        pattern: String,
        /// What is wrong with it.
        #[source]
        source: globset::Error,
    },
}

/// Attribution rules compiled for speed.
#[derive(Debug, Clone)]
pub struct Attributor {
    role_arns: GlobSet,
    session_names: GlobSet,
    run_token: Option<String>,
}

impl Default for Attributor {
    fn default() -> Self {
        Self {
            role_arns: GlobSet::empty(),
            session_names: GlobSet::empty(),
            run_token: None,
        }
    }
}

impl crate::ingest::filter::Attribute for Attributor {
    fn verdict(&self, call: &Call) -> Verdict {
        self.attribute(call).verdict
    }
}

impl Attributor {
    /// Compiles the configured patterns.
    pub fn new(config: &AttributionConfig) -> Result<Self, AttributeError> {
        Ok(Self {
            role_arns: glob_set(&config.iac_role_arns)?,
            session_names: glob_set(&config.iac_session_names)?,
            run_token: config.run_token.clone().filter(|t| !t.is_empty()),
        })
    }

    /// Whether a call with Terraform's user agent can still be out of band: true when a run
    /// token is required and the call may lack it.
    pub fn requires_run_token(&self) -> bool {
        self.run_token.is_some()
    }

    /// The verdict for one call, with its reason.
    pub fn attribute(&self, call: &Call) -> Attribution {
        let basics = call.basics();
        if let Some(settled) = EarlyVerdict::of(&basics) {
            return settled.attribution(&basics);
        }
        if let Some(reason) = service_reason(call) {
            return Attribution::new(Verdict::Service, reason);
        }
        if let Some(attribution) = self.pipeline_identity(call) {
            return attribution;
        }
        if let Some(attribution) = self.iac_client(call) {
            return attribution;
        }
        Attribution::new(Verdict::OutOfBand, out_of_band_reason(call))
    }

    fn pipeline_identity(&self, call: &Call) -> Option<Attribution> {
        let identity = &call.identity;
        let arn = identity.role_arn().or(match identity.kind {
            IdentityKind::IamUser => identity.arn.as_deref(),
            _ => None,
        });
        if let Some(arn) = arn.filter(|a| self.role_arns.is_match(a)) {
            return Some(Attribution::new(
                Verdict::IacPrincipal,
                format!("made by {arn}, configured as the Terraform pipeline's identity"),
            ));
        }
        let session = identity
            .session_name()
            .filter(|s| self.session_names.is_match(s))?;
        Some(Attribution::new(
            Verdict::IacPrincipal,
            format!("session `{session}` matches a configured Terraform pipeline session name"),
        ))
    }

    fn iac_client(&self, call: &Call) -> Option<Attribution> {
        let agent = call.user_agent.as_deref().unwrap_or_default();
        if let Some(token) = self.run_token.as_deref().filter(|t| agent.contains(t)) {
            return Some(Attribution::new(
                Verdict::RunToken,
                format!("user agent carries the pipeline's run token `{token}`"),
            ));
        }
        let tool = match &call.client {
            ClientKind::Terraform { .. } => "Terraform",
            ClientKind::OpenTofu { .. } => "OpenTofu",
            ClientKind::CloudFormation => return Some(other_iac("CloudFormation")),
            ClientKind::Pulumi => return Some(other_iac("Pulumi")),
            ClientKind::AckController { .. } => {
                return Some(other_iac("AWS Controllers for Kubernetes"));
            }
            ClientKind::Cdk => return Some(other_iac("the AWS CDK")),
            _ => return None,
        };
        Some(match &self.run_token {
            Some(token) => Attribution::new(
                Verdict::OutOfBand,
                format!(
                    "{tool} call without the run token `{token}`: applied from outside the pipeline"
                ),
            ),
            None => Attribution::new(
                Verdict::Terraform,
                format!("{tool}'s user agent ({})", call.client.label()),
            ),
        })
    }
}

fn other_iac(tool: &str) -> Attribution {
    Attribution::new(
        Verdict::OtherIac,
        format!("made by {tool}, which manages its own state"),
    )
}

fn glob_set(patterns: &[String]) -> Result<GlobSet, AttributeError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|source| AttributeError::Pattern {
            pattern: pattern.clone(),
            source,
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|source| AttributeError::Pattern {
        pattern: patterns.join(", "),
        source,
    })
}

/// AWS's own calls: service events, and calls whose identity is AWS's own (a service
/// principal, a service-linked role). A service calling with a principal's credentials
/// (`invokedBy` beside an IAM user's or a role's identity: the console, or a forward access
/// session for a person's request) is that principal's call, so it is not AWS's own.
fn service_reason(call: &Call) -> Option<String> {
    if call.event_type == "AwsServiceEvent" {
        return Some("service event written by AWS".into());
    }
    let identity = &call.identity;
    if identity.kind == IdentityKind::AwsService {
        return Some(format!("made by the AWS service {}", identity.actor()));
    }
    if let Some(role) = identity.service_linked_role() {
        return Some(format!(
            "made by AWS through its service-linked role {role}"
        ));
    }
    match &call.client {
        ClientKind::ServiceInternal { service } if identity.is_aws_own() => {
            Some(format!("made by AWS ({service}) on its own"))
        }
        _ => None,
    }
}

fn out_of_band_reason(call: &Call) -> String {
    let by = match &call.client {
        ClientKind::ServiceInternal { service } => {
            format!("made for them by {service}")
        }
        client => format!("with {}", client.label()),
    };
    format!(
        "{} by {} {by}, not by the Terraform pipeline",
        call.api_name(),
        call.identity.actor(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::record::Origin;
    use std::sync::Arc;

    fn call(extra: &str) -> Call {
        call_in("Management", false, extra)
    }

    fn call_in(category: &str, read_only: bool, extra: &str) -> Call {
        let text = format!(
            r#"{{"eventVersion":"1.09","eventID":"e","eventTime":"2024-05-01T10:00:00Z",
            "eventSource":"ec2.amazonaws.com","eventName":"AuthorizeSecurityGroupIngress",
            "awsRegion":"eu-west-1","readOnly":{read_only},"eventType":"AwsApiCall",
            "managementEvent":true,"eventCategory":"{category}",{extra}}}"#
        );
        Call::parse(
            text.as_bytes(),
            Origin {
                source: Arc::from("t"),
                index: 0,
                offset: None,
            },
        )
        .expect("test record parses")
    }

    const ROLE: &str = r#""userIdentity":{"type":"AssumedRole",
        "arn":"arn:aws:sts::111122223333:assumed-role/terraform-ci/gha-123",
        "sessionContext":{"sessionIssuer":{"type":"Role","arn":"arn:aws:iam::111122223333:role/terraform-ci","userName":"terraform-ci"}}}"#;
    const USER: &str = r#""userIdentity":{"type":"IAMUser","userName":"alice","arn":"arn:aws:iam::111122223333:user/alice"}"#;
    const TF: &str = r#""userAgent":"APN/1.0 HashiCorp/1.0 Terraform/1.7.5 (+https://www.terraform.io) terraform-provider-aws/5.40.0 (+https://registry.terraform.io/providers/hashicorp/aws) aws-sdk-go-v2/1.25.2 run/nightly-42""#;

    fn verdict(attributor: &Attributor, extra: &str) -> Verdict {
        attributor.attribute(&call(extra)).verdict
    }

    #[test]
    fn each_verdict() {
        let plain = Attributor::default();
        let console = format!(r#"{USER},"userAgent":"console.ec2.amazonaws.com""#);
        assert_eq!(verdict(&plain, &console), Verdict::OutOfBand);
        assert_eq!(
            verdict(
                &plain,
                &format!(r#"{console},"errorCode":"Client.InvalidPermission.Duplicate""#)
            ),
            Verdict::Failed
        );
        assert_eq!(
            verdict(&plain, &format!(r#"{USER},{TF}"#)),
            Verdict::Terraform
        );
        assert_eq!(
            verdict(
                &plain,
                &format!(r#"{USER},"userAgent":"cloudformation.amazonaws.com""#)
            ),
            Verdict::OtherIac
        );
        // An ACK controller keeps its own state in its cluster, as CloudFormation does.
        assert_eq!(
            verdict(
                &plain,
                &format!(
                    r#"{USER},"userAgent":"aws-controllers-k8s/s3-v1.6.0 (GitCommit/4be01c7; CRDKind/Bucket) aws-sdk-go-v2/1.32.2""#
                )
            ),
            Verdict::OtherIac
        );
        assert_eq!(
            verdict(
                &plain,
                r#""userIdentity":{"type":"AWSService","invokedBy":"autoscaling.amazonaws.com"},"userAgent":"autoscaling.amazonaws.com""#
            ),
            Verdict::Service
        );
        let cli = format!(r#"{USER},"userAgent":"aws-cli/2.15.0""#);
        assert_eq!(
            plain.attribute(&call_in("Data", false, &cli)).verdict,
            Verdict::DataEvent
        );
        assert_eq!(
            plain.attribute(&call_in("Management", true, &cli)).verdict,
            Verdict::ReadOnly
        );
        assert_eq!(
            plain.attribute(&call_in("Insight", false, &cli)).verdict,
            Verdict::Service
        );
    }

    /// An assumed-role identity of `role_arn`, with `invokedBy` when given.
    fn role_identity(role_arn: &str, invoked_by: Option<&str>) -> String {
        let invoked = invoked_by.map_or(String::new(), |s| format!(r#","invokedBy":"{s}""#));
        format!(
            r#""userIdentity":{{"type":"AssumedRole","arn":"arn:aws:sts::111122223333:assumed-role/r/s",
            "accountId":"111122223333","sessionContext":{{"sessionIssuer":{{"type":"Role",
            "arn":"{role_arn}","userName":"r"}}}}{invoked}}}"#
        )
    }

    #[test]
    fn console_invokers_are_people() {
        let plain = Attributor::default();
        // The User Guide's StartLogging example: an IAM user in the console.
        let signin = r#""userIdentity":{"type":"IAMUser","userName":"Mary_Major",
            "arn":"arn:aws:iam::123456789012:user/Mary_Major","invokedBy":"signin.amazonaws.com"},
            "userAgent":"signin.amazonaws.com""#;
        let attribution = plain.attribute(&call(signin));
        assert_eq!(attribution.verdict, Verdict::OutOfBand);
        assert!(
            attribution.reason.contains("Mary_Major with console"),
            "{}",
            attribution.reason
        );
        // The root user creating an access key from the console.
        let root = r#""userIdentity":{"type":"Root","arn":"arn:aws:iam::123456789012:root",
            "accountId":"123456789012","invokedBy":"signin.amazonaws.com"},"userAgent":"AWS Internal""#;
        assert_eq!(verdict(&plain, root), Verdict::OutOfBand);
        // AWS Internal inside a console session.
        let internal = format!(
            r#"{},"userAgent":"AWS Internal","sessionCredentialFromConsole":"true""#,
            role_identity("arn:aws:iam::111122223333:role/admin", Some("AWS Internal"))
        );
        assert_eq!(verdict(&plain, &internal), Verdict::OutOfBand);
    }

    #[test]
    fn a_service_acting_for_a_person_is_the_person() {
        let plain = Attributor::default();
        // A forward access session: ELB creating its service-linked role with a person's
        // credentials during their first CreateLoadBalancer.
        let fas = format!(
            r#"{},"userAgent":"elasticloadbalancing.amazonaws.com""#,
            role_identity(
                "arn:aws:iam::111122223333:role/admin",
                Some("elasticloadbalancing.amazonaws.com")
            )
        );
        let attribution = plain.attribute(&call(&fas));
        assert_eq!(attribution.verdict, Verdict::OutOfBand);
        assert!(
            attribution
                .reason
                .contains("made for them by elasticloadbalancing.amazonaws.com"),
            "{}",
            attribution.reason
        );
        // An IAM user's call with AWS Internal as agent and no console session.
        let internal = format!(r#"{USER},"userAgent":"AWS Internal""#);
        assert_eq!(verdict(&plain, &internal), Verdict::OutOfBand);
    }

    #[test]
    fn aws_housekeeping_is_the_service() {
        let plain = Attributor::default();
        // Auto Scaling through its service-linked role.
        let linked = format!(
            r#"{},"userAgent":"autoscaling.amazonaws.com""#,
            role_identity(
                "arn:aws:iam::111122223333:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling",
                Some("autoscaling.amazonaws.com")
            )
        );
        let attribution = plain.attribute(&call(&linked));
        assert_eq!(attribution.verdict, Verdict::Service);
        assert!(
            attribution.reason.contains("AWSServiceRoleForAutoScaling"),
            "{}",
            attribution.reason
        );
        // A service principal, and a service with only an account (the service-event shape).
        let principal = r#""userIdentity":{"type":"AWSService","invokedBy":"config.amazonaws.com"},"userAgent":"config.amazonaws.com""#;
        assert_eq!(verdict(&plain, principal), Verdict::Service);
        let bare = r#""userIdentity":{"accountId":"111122223333","invokedBy":"AWS Internal"},"userAgent":"AWS Internal""#;
        assert_eq!(verdict(&plain, bare), Verdict::Service);
    }

    #[test]
    fn pipeline_identity_by_role_or_session() {
        let by_role = Attributor::new(&AttributionConfig {
            iac_role_arns: vec!["arn:aws:iam::*:role/terraform-*".into()],
            ..AttributionConfig::default()
        })
        .expect("valid");
        let console_by_ci = format!(r#"{ROLE},"userAgent":"console.amazonaws.com""#);
        assert_eq!(verdict(&by_role, &console_by_ci), Verdict::IacPrincipal);
        let by_session = Attributor::new(&AttributionConfig {
            iac_session_names: vec!["gha-*".into()],
            ..AttributionConfig::default()
        })
        .expect("valid");
        assert_eq!(verdict(&by_session, &console_by_ci), Verdict::IacPrincipal);
        assert_eq!(
            verdict(&Attributor::default(), &console_by_ci),
            Verdict::OutOfBand
        );
    }

    #[test]
    fn run_token_is_required_when_configured() {
        let with_token = |token: &str| {
            Attributor::new(&AttributionConfig {
                run_token: Some(token.into()),
                ..AttributionConfig::default()
            })
            .expect("valid")
        };
        assert_eq!(
            verdict(&with_token("run/nightly-42"), &format!("{USER},{TF}")),
            Verdict::RunToken
        );
        let missing = with_token("run/other").attribute(&call(&format!("{USER},{TF}")));
        assert_eq!(missing.verdict, Verdict::OutOfBand);
        assert!(
            missing.reason.contains("without the run token"),
            "{}",
            missing.reason
        );
    }

    #[test]
    fn bad_patterns_are_reported() {
        let err = Attributor::new(&AttributionConfig {
            iac_role_arns: vec!["arn:[".into()],
            ..AttributionConfig::default()
        })
        .expect_err("invalid glob");
        assert!(err.to_string().contains("arn:["));
    }

    #[test]
    fn verdict_names_round_trip() {
        for v in Verdict::ALL {
            assert_eq!(v.name().parse::<Verdict>(), Ok(v));
            assert_eq!(Verdict::from_code(v.code()), Some(v));
        }
    }
}

//! The client that made a call, derived from the `userAgent` string and the identity.
//!
//! User agents are free text, but each AWS tool writes a recognisable product token
//! (`aws-cli/2.15.0`, `Boto3/1.34.0`, `Terraform/1.7.5`, ...). S3 wraps its user agents in
//! brackets (`[aws-cli/2.15.0 ...]`); those are stripped before matching.

use std::cell::RefCell;
use std::collections::HashMap;

use serde::Serialize;

use super::identity::{IdentityKind, UserIdentity};

/// The kind of program that sent a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ClientKind {
    /// The AWS Management Console.
    Console,
    /// The AWS CLI, with its major version and the command when the user agent names it.
    AwsCli {
        /// `1` or `2`.
        major: u8,
        /// Full version, e.g. `2.15.0`.
        version: String,
        /// The command, e.g. `ec2.authorize-security-group-ingress` (CLI v2 records it).
        #[serde(skip_serializing_if = "Option::is_none")]
        command: Option<String>,
    },
    /// Python's boto3 or botocore.
    Boto3 {
        /// Version of boto3, or of botocore when boto3 is absent.
        version: String,
    },
    /// Another AWS SDK, named by its product token (`aws-sdk-go-v2`, `aws-sdk-java`, ...).
    Sdk {
        /// The SDK product token.
        name: String,
        /// The SDK version.
        version: String,
    },
    /// HashiCorp Terraform through the AWS provider.
    Terraform {
        /// Terraform core version, when recorded.
        #[serde(skip_serializing_if = "Option::is_none")]
        version: Option<String>,
        /// `terraform-provider-aws` version, when recorded.
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_version: Option<String>,
    },
    /// OpenTofu through the AWS provider.
    #[serde(rename = "opentofu")]
    OpenTofu {
        /// OpenTofu version, when recorded.
        #[serde(skip_serializing_if = "Option::is_none")]
        version: Option<String>,
        /// `terraform-provider-aws` version, when recorded.
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_version: Option<String>,
    },
    /// Pulumi.
    Pulumi,
    /// An AWS Controllers for Kubernetes (ACK) controller, reconciling Kubernetes resources
    /// into AWS (`aws-controllers-k8s/<service>-<version>`): it keeps its own state in the
    /// cluster.
    AckController {
        /// The controller and its version, the text after the token (`s3-v1.2.3`).
        controller: String,
    },
    /// AWS CloudFormation acting for a stack.
    #[serde(rename = "cloudformation")]
    CloudFormation,
    /// The AWS CDK toolkit.
    Cdk,
    /// An AWS Systems Manager Automation runbook step.
    SsmAutomation,
    /// Stratus Red Team, an adversary emulation tool detonating an attack technique (1.7+
    /// writes `stratus-red-team_<uuid>`, one id per execution).
    StratusRedTeam {
        /// The execution's id, the text after the token.
        execution: String,
    },
    /// An AWS service calling on its own or a principal's behalf (`autoscaling.amazonaws.com`,
    /// `AWS Internal`); the identity tells which (see `attribute`).
    ServiceInternal {
        /// The calling service, e.g. `autoscaling.amazonaws.com`.
        service: String,
    },
    /// A user agent none of the above matched, kept as recorded.
    Other {
        /// The user agent, brackets stripped.
        user_agent: String,
    },
    /// No user agent was recorded.
    Unknown,
}

impl ClientKind {
    /// Classifies a call's client from its user agent, identity and console-session flag.
    pub fn detect(user_agent: Option<&str>, identity: &UserIdentity, from_console: bool) -> Self {
        if let Some(client) = identity
            .invoked_by
            .as_deref()
            .and_then(|invoker| by_invoker(invoker, from_console))
        {
            return client;
        }
        let Some(agent) = user_agent.map(strip_brackets).filter(|a| !a.is_empty()) else {
            return Self::Unknown;
        };
        let by_service = identity.kind == IdentityKind::AwsService;
        remembered(agent, from_console, by_service)
    }

    /// Classifies a non-empty user agent (brackets stripped). `from_console` and `by_service`
    /// (the caller is an AWS service) decide the cases the agent alone leaves open.
    fn by_agent(agent: &str, from_console: bool, by_service: bool) -> Self {
        let parsed = Agent::new(agent);
        if let Some(client) = by_iac_token(&parsed) {
            return client;
        }
        if is_console(&parsed) || (from_console && agent == "AWS Internal") {
            return Self::Console;
        }
        if let Some(client) = by_tool_token(&parsed) {
            return client;
        }
        if let Some(service) = service_host(agent) {
            return by_invoking_service(service).unwrap_or_else(|| Self::ServiceInternal {
                service: service.to_owned(),
            });
        }
        if agent == "AWS Internal" || by_service {
            return Self::ServiceInternal {
                service: agent.to_owned(),
            };
        }
        Self::Other {
            user_agent: agent.to_owned(),
        }
    }

    /// A short label for tables: `console`, `aws-cli/2 ec2.run-instances`, `terraform/1.7.5`.
    pub fn label(&self) -> String {
        match self {
            Self::Console => "console".into(),
            Self::AwsCli {
                major,
                command: Some(c),
                ..
            } => format!("aws-cli/{major} {c}"),
            Self::AwsCli { version, .. } => format!("aws-cli/{version}"),
            Self::Boto3 { version } => format!("boto3/{version}"),
            Self::Sdk { name, version } => format!("{name}/{version}"),
            Self::Terraform { version, .. } => with_version("terraform", version),
            Self::OpenTofu { version, .. } => with_version("opentofu", version),
            Self::Pulumi => "pulumi".into(),
            Self::AckController { controller } => format!("ack {controller}"),
            Self::CloudFormation => "cloudformation".into(),
            Self::Cdk => "cdk".into(),
            Self::SsmAutomation => "ssm-automation".into(),
            Self::StratusRedTeam { .. } => "stratus-red-team".into(),
            Self::ServiceInternal { service } => service.clone(),
            Self::Other { user_agent } => truncate(user_agent, 40),
            Self::Unknown => "-".into(),
        }
    }
}

/// User agents remembered per thread and flag combination; beyond this they start over.
const REMEMBERED_AGENTS: usize = 1024;
/// Longer user agents are classified every time rather than remembered.
const REMEMBERED_AGENT_LEN: usize = 1024;

/// [`ClientKind::by_agent`], remembered. Logs repeat a few user agents endlessly (an
/// application's SDK, the CLI, Terraform) and classifying one takes dozens of substring
/// searches, so each thread keeps the clients of the agents it has seen, in bounded memory.
fn remembered(agent: &str, from_console: bool, by_service: bool) -> ClientKind {
    thread_local! {
        /// One map per combination of the two flags, so lookups borrow the agent text.
        static SEEN: RefCell<[HashMap<Box<str>, ClientKind>; 4]> = RefCell::default();
    }
    if agent.len() > REMEMBERED_AGENT_LEN {
        return ClientKind::by_agent(agent, from_console, by_service);
    }
    SEEN.with_borrow_mut(|maps| {
        let seen = &mut maps[usize::from(from_console) * 2 + usize::from(by_service)];
        if let Some(client) = seen.get(agent) {
            return client.clone();
        }
        let client = ClientKind::by_agent(agent, from_console, by_service);
        if seen.len() >= REMEMBERED_AGENTS {
            seen.clear();
        }
        seen.insert(agent.into(), client.clone());
        client
    })
}

fn with_version(name: &str, version: &Option<String>) -> String {
    match version {
        Some(v) => format!("{name}/{v}"),
        None => name.to_owned(),
    }
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Removes the square brackets S3 puts around user agents: `[aws-cli/2.0 ...]`.
pub fn strip_brackets(agent: &str) -> &str {
    let trimmed = agent.trim();
    trimmed
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .unwrap_or(trimmed)
        .trim()
}

/// A user agent with its lowercase form, computed once, for case-insensitive token search.
struct Agent<'a> {
    text: &'a str,
    lower: String,
}

impl<'a> Agent<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            lower: text.to_ascii_lowercase(),
        }
    }

    /// Whether the lowercase text contains `needle` (given in lowercase).
    fn contains(&self, needle: &str) -> bool {
        self.lower.contains(needle)
    }

    /// Position of `token` (lowercase) where it starts a product: at the start of the text or
    /// after a separator, so `aws-sdk-go/` does not match inside `x-aws-sdk-go/`.
    fn find_token(&self, token: &str) -> Option<usize> {
        let mut from = 0;
        while let Some(pos) = self.lower[from..].find(token) {
            let at = from + pos;
            let boundary = at == 0
                || matches!(
                    self.lower.as_bytes()[at - 1],
                    b' ' | b'[' | b',' | b'(' | b';' | b'\t'
                );
            if boundary {
                return Some(at);
            }
            from = at + token.len();
        }
        None
    }

    /// The version after `token` (lowercase, ending in `/`), up to the next separator.
    fn version(&self, token: &str) -> Option<&'a str> {
        let rest = &self.text[self.find_token(token)? + token.len()..];
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | ')' | ']' | '('))
            .unwrap_or(rest.len());
        Some(&rest[..end]).filter(|v| !v.is_empty())
    }
}

/// The client named by `userIdentity.invokedBy`. CloudTrail names the console's sign-in
/// service there when a person works in the console (the User Guide's `StartLogging` example:
/// `"invokedBy": "signin.amazonaws.com"`), and `AWS Internal` inside a console session;
/// any other service is [`by_invoking_service`].
fn by_invoker(invoker: &str, from_console: bool) -> Option<ClientKind> {
    if is_console_text(&invoker.to_ascii_lowercase()) || (from_console && invoker == "AWS Internal")
    {
        return Some(ClientKind::Console);
    }
    by_invoking_service(invoker)
}

/// Clients named by the service that invoked the call on a principal's behalf.
fn by_invoking_service(service: &str) -> Option<ClientKind> {
    Some(match service {
        "cloudformation.amazonaws.com" => ClientKind::CloudFormation,
        "ssm.amazonaws.com" => ClientKind::SsmAutomation,
        s if s.ends_with(".amazonaws.com") || s == "AWS Internal" => ClientKind::ServiceInternal {
            service: s.to_owned(),
        },
        _ => return None,
    })
}

/// Infrastructure-as-code tools. Pulumi's AWS provider embeds the Terraform provider and its
/// user agent can name both, so Pulumi is checked first.
fn by_iac_token(agent: &Agent) -> Option<ClientKind> {
    if agent.contains("pulumi") {
        return Some(ClientKind::Pulumi);
    }
    if let Some(controller) = agent.version("aws-controllers-k8s/") {
        return Some(ClientKind::AckController {
            controller: controller.to_owned(),
        });
    }
    let owned = |v: Option<&str>| v.map(str::to_owned);
    if agent.contains("opentofu/") {
        return Some(ClientKind::OpenTofu {
            version: owned(agent.version("opentofu/")),
            provider_version: owned(agent.version("terraform-provider-aws/")),
        });
    }
    if agent.contains("terraform/") || agent.contains("terraform-provider-aws/") {
        return Some(ClientKind::Terraform {
            version: owned(agent.version("terraform/")),
            provider_version: owned(agent.version("terraform-provider-aws/")),
        });
    }
    if agent.find_token("aws-cdk/").is_some() {
        return Some(ClientKind::Cdk);
    }
    if agent.lower.starts_with("cloudformation.amazonaws.com") {
        return Some(ClientKind::CloudFormation);
    }
    None
}

/// Console user agents: the generic and per-service console hosts, the sign-in service,
/// and S3's console token.
fn is_console(agent: &Agent) -> bool {
    is_console_text(&agent.lower)
}

/// [`is_console`] on lowercase text.
fn is_console_text(lower: &str) -> bool {
    lower == "console.amazonaws.com"
        || (lower.starts_with("console.") && lower.ends_with(".amazonaws.com"))
        || lower.starts_with("signin.amazonaws.com")
        || lower.starts_with("s3console/")
        || lower.starts_with("aws-console")
        || lower.contains("console.amazonaws.com")
}

/// SDK product tokens, most specific first.
const SDK_TOKENS: [&str; 14] = [
    "aws-sdk-go-v2/",
    "aws-sdk-go/",
    "aws-sdk-java/",
    "aws-sdk-js/",
    "aws-sdk-nodejs/",
    "aws-sdk-dotnet-coreclr/",
    "aws-sdk-dotnet/",
    "aws-sdk-ruby3/",
    "aws-sdk-ruby2/",
    "aws-sdk-ruby/",
    "aws-sdk-php/",
    "aws-sdk-rust/",
    "aws-sdk-cpp/",
    "aws-sdk-kotlin/",
];

/// Command-line tools and SDKs.
fn by_tool_token(agent: &Agent) -> Option<ClientKind> {
    if let Some(execution) = agent.version("stratus-red-team_") {
        return Some(ClientKind::StratusRedTeam {
            execution: execution.to_owned(),
        });
    }
    if let Some(version) = agent.version("aws-cli/") {
        let major = version
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0);
        return Some(ClientKind::AwsCli {
            major,
            version: version.to_owned(),
            // CLI v2 wrote `command/ec2.run-instances`; releases since user agent 2.1 write
            // `md/command#ec2.run-instances`.
            command: agent
                .version("command/")
                .or_else(|| agent.version("md/command#"))
                .map(str::to_owned),
        });
    }
    if agent.contains("exec-env/aws_ssm") || agent.contains("ssm-automation") {
        return Some(ClientKind::SsmAutomation);
    }
    if let Some(version) = agent
        .version("boto3/")
        .or_else(|| agent.version("botocore/"))
    {
        return Some(ClientKind::Boto3 {
            version: version.to_owned(),
        });
    }
    if let Some(version) = agent
        .version("awspowershell/")
        .or_else(|| agent.version("awspowershell.common/"))
    {
        return Some(ClientKind::Sdk {
            name: "aws-powershell".into(),
            version: version.to_owned(),
        });
    }
    SDK_TOKENS.iter().find_map(|token| {
        let version = agent.version(token)?;
        let name = token.trim_end_matches('/');
        Some(ClientKind::Sdk {
            name: name.to_owned(),
            version: version.to_owned(),
        })
    })
}

/// A bare AWS service host used as a user agent, e.g. `autoscaling.amazonaws.com`.
fn service_host(agent: &str) -> Option<&str> {
    let host = agent.split_whitespace().next()?;
    (host.ends_with(".amazonaws.com") && !host.contains('/')).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(agent: &str) -> ClientKind {
        ClientKind::detect(Some(agent), &UserIdentity::default(), false)
    }

    #[test]
    fn terraform_with_versions() {
        let agent = "APN/1.0 HashiCorp/1.0 Terraform/1.7.5 (+https://www.terraform.io) \
            terraform-provider-aws/5.40.0 (+https://registry.terraform.io/providers/hashicorp/aws) \
            aws-sdk-go-v2/1.25.2 os/linux lang/go#1.22.1 md/GOOS#linux md/GOARCH#amd64 api/ec2#1.149.0";
        assert_eq!(
            detect(agent),
            ClientKind::Terraform {
                version: Some("1.7.5".into()),
                provider_version: Some("5.40.0".into())
            }
        );
        // S3 brackets, and the provider token alone (older SDK v1 based providers)
        let bracketed = "[APN/1.0 HashiCorp/1.0 Terraform/1.3.9 (+https://www.terraform.io) terraform-provider-aws/4.67.0 (+https://registry.terraform.io/providers/hashicorp/aws) aws-sdk-go/1.44.261 (go1.19.9; linux; amd64)]";
        assert!(
            matches!(detect(bracketed), ClientKind::Terraform { provider_version: Some(v), .. } if v == "4.67.0")
        );
    }

    #[test]
    fn cli_versions_and_command() {
        assert_eq!(
            detect(
                "aws-cli/2.15.30 Python/3.11.8 Linux/6.5.0 exe/x86_64.ubuntu.22 prompt/off command/ec2.authorize-security-group-ingress"
            ),
            ClientKind::AwsCli {
                major: 2,
                version: "2.15.30".into(),
                command: Some("ec2.authorize-security-group-ingress".into())
            }
        );
        assert!(matches!(
            detect("aws-cli/2.27.0 md/awscrt#0.23.8 ua/2.1 os/linux#6.8 md/arch#x86_64 lang/python#3.12.9 md/pyimpl#CPython m/N cfg/retry-mode#standard md/installer#exe md/distrib#ubuntu.24 md/prompt#off md/command#s3api.put-bucket-versioning"),
            ClientKind::AwsCli { major: 2, command: Some(c), .. } if c == "s3api.put-bucket-versioning"
        ));
        assert!(matches!(
            detect("aws-cli/1.32.0 Python/3.8.10 Linux/5.4.0 botocore/1.34.0"),
            ClientKind::AwsCli {
                major: 1,
                command: None,
                ..
            }
        ));
    }

    #[test]
    fn sdks() {
        assert_eq!(
            detect(
                "Boto3/1.34.11 md/Botocore#1.34.11 ua/2.0 os/linux#6.2 md/arch#x86_64 lang/python#3.11.6 md/pyimpl#CPython cfg/retry-mode#legacy Botocore/1.34.11"
            ),
            ClientKind::Boto3 {
                version: "1.34.11".into()
            }
        );
        assert_eq!(
            detect(
                "aws-sdk-go-v2/1.24.0 os/linux lang/go#1.21.5 md/GOOS#linux md/GOARCH#amd64 api/s3#1.47.7"
            ),
            ClientKind::Sdk {
                name: "aws-sdk-go-v2".into(),
                version: "1.24.0".into()
            }
        );
        assert_eq!(
            detect(
                "aws-sdk-java/2.20.0 Linux/5.10 OpenJDK_64-Bit_Server_VM/17 Java/17 vendor/Amazon.com_Inc. io/sync http/Apache cfg/retry-mode/legacy"
            ),
            ClientKind::Sdk {
                name: "aws-sdk-java".into(),
                version: "2.20.0".into()
            }
        );
    }

    #[test]
    fn console_and_services() {
        assert_eq!(detect("console.ec2.amazonaws.com"), ClientKind::Console);
        assert_eq!(
            detect("[S3Console/0.4, aws-internal/3 aws-sdk-java/1.12.488]"),
            ClientKind::Console
        );
        assert_eq!(detect("signin.amazonaws.com"), ClientKind::Console);
        assert_eq!(
            detect("autoscaling.amazonaws.com"),
            ClientKind::ServiceInternal {
                service: "autoscaling.amazonaws.com".into()
            }
        );
        assert_eq!(
            detect("cloudformation.amazonaws.com"),
            ClientKind::CloudFormation
        );
        assert_eq!(
            detect("AWS Internal"),
            ClientKind::ServiceInternal {
                service: "AWS Internal".into()
            }
        );
        assert_eq!(
            ClientKind::detect(Some("AWS Internal"), &UserIdentity::default(), true),
            ClientKind::Console
        );
    }

    fn invoked(invoker: &str, agent: &str, from_console: bool) -> ClientKind {
        let identity = UserIdentity {
            invoked_by: Some(invoker.to_owned()),
            ..UserIdentity::default()
        };
        ClientKind::detect(Some(agent), &identity, from_console)
    }

    #[test]
    fn console_invokers_are_the_console() {
        // The User Guide's StartLogging example: an IAM user in the CloudTrail console.
        let start_logging = invoked("signin.amazonaws.com", "signin.amazonaws.com", false);
        assert_eq!(start_logging, ClientKind::Console);
        assert_eq!(
            invoked("console.amazonaws.com", "AWS Internal", false),
            ClientKind::Console
        );
        assert_eq!(
            invoked("AWS Internal", "AWS Internal", true),
            ClientKind::Console
        );
    }

    #[test]
    fn service_invokers_are_services() {
        assert_eq!(
            invoked("AWS Internal", "AWS Internal", false),
            ClientKind::ServiceInternal {
                service: "AWS Internal".into()
            }
        );
        assert_eq!(
            invoked(
                "autoscaling.amazonaws.com",
                "autoscaling.amazonaws.com",
                false
            ),
            ClientKind::ServiceInternal {
                service: "autoscaling.amazonaws.com".into()
            }
        );
        assert_eq!(
            invoked(
                "cloudformation.amazonaws.com",
                "cloudformation.amazonaws.com",
                false
            ),
            ClientKind::CloudFormation
        );
    }

    #[test]
    fn other_iac_tools() {
        assert_eq!(
            detect(
                "APN/1.0 HashiCorp/1.0 Terraform/1.6.2 terraform-provider-aws/5.30.0 pulumi-aws/6.18.0"
            ),
            ClientKind::Pulumi
        );
        assert!(matches!(
            detect("APN/1.0 HashiCorp/1.0 OpenTofu/1.6.1 (+https://opentofu.org) terraform-provider-aws/5.31.0"),
            ClientKind::OpenTofu { version: Some(v), .. } if v == "1.6.1"
        ));
        assert_eq!(
            detect("aws-sdk-js/2.1500.0 promise aws-cdk/2.110.0"),
            ClientKind::Cdk
        );
        assert_eq!(
            detect("APN/1.0 Pulumi/1.0 Pulumi-Aws/6.56.1 (+https://www.pulumi.com)"),
            ClientKind::Pulumi
        );
        // ACK's runtime writes `aws-controllers-k8s/<service>-<version>`, then the build and
        // the Kubernetes resource kind, then the Go SDK's own tokens.
        assert_eq!(
            detect(
                "aws-controllers-k8s/rds-v1.4.2 (GitCommit/0f3a9c1; CRDKind/DBInstance; CRDVersion/v1alpha1) aws-sdk-go-v2/1.30.3 os/linux lang/go#1.22.5"
            ),
            ClientKind::AckController {
                controller: "rds-v1.4.2".into()
            }
        );
        assert_eq!(detect("ssm.amazonaws.com"), ClientKind::SsmAutomation);
        assert_eq!(
            detect(
                "Boto3/1.34.0 md/Botocore#1.34.0 ua/2.0 lang/python#3.11 exec-env/AWS_SSM_Automation"
            ),
            ClientKind::SsmAutomation
        );
    }

    /// The whole user agent of the Stratus Red Team detonations recorded in the real samples
    /// (`../shared/cloudtrail-samples`), with an id of the same shape.
    #[test]
    fn stratus_red_team_execution() {
        let execution = "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
        let client = detect(&format!("stratus-red-team_{execution}"));
        assert_eq!(
            client,
            ClientKind::StratusRedTeam {
                execution: execution.into()
            }
        );
        assert_eq!(client.label(), "stratus-red-team");
        // The token must start a product, as the others.
        assert!(matches!(
            detect("x-stratus-red-team_1"),
            ClientKind::Other { .. }
        ));
    }

    #[test]
    fn unknown_agents_are_kept() {
        assert_eq!(
            detect("curl/8.0"),
            ClientKind::Other {
                user_agent: "curl/8.0".into()
            }
        );
        assert_eq!(
            ClientKind::detect(None, &UserIdentity::default(), false),
            ClientKind::Unknown
        );
    }

    #[test]
    fn token_must_start_a_product() {
        assert_eq!(Agent::new("x-aws-cli/2.0 foo").version("aws-cli/"), None);
        assert_eq!(
            Agent::new("(aws-cli/2.0.1)").version("aws-cli/"),
            Some("2.0.1")
        );
    }
}

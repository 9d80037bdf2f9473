//! Who makes a call and with what program: the `userIdentity`, `userAgent`,
//! `sourceIPAddress` and console fields of the record.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::services::Service;

/// The principal behind a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// An IAM user with long-term credentials.
    IamUser {
        /// The user name.
        name: String,
    },
    /// A role session (`arn:aws:sts::<account>:assumed-role/<role>/<session>`).
    AssumedRole {
        /// The role name.
        role: String,
        /// The session name.
        session: String,
    },
    /// An IAM Identity Center user through a permission set's `AWSReservedSSO_...` role.
    Sso {
        /// The permission set, `AdministratorAccess`.
        permission_set: String,
        /// The user's name, usually an e-mail address; it is the session name.
        user: String,
    },
    /// The role an SSM Automation runbook runs as; the session is the execution id.
    AutomationRole {
        /// The role name.
        role: String,
    },
    /// An AWS service acting on its own (`autoscaling.amazonaws.com`).
    AwsService {
        /// The service principal.
        service: String,
    },
}

/// The program that sent a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// The AWS Management Console.
    Console,
    /// The AWS CLI v2.
    Cli,
    /// Python's boto3.
    Boto3,
    /// An SSM Automation runbook step.
    SsmAutomation,
    /// Terraform through the AWS provider.
    Terraform,
    /// The AWS service of an [`Identity::AwsService`].
    Service,
}

/// Who calls, with what, from where and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The principal.
    pub identity: Identity,
    /// The program.
    pub agent: Agent,
    /// The region called; the cloud's default when `None`.
    pub region: Option<String>,
    /// The call time; when `None` the cloud's clock moves on by a few seconds.
    pub time: Option<DateTime<Utc>>,
    /// The caller's IP address; a documentation address when `None`.
    pub source_ip: Option<String>,
    /// The credentials' session (an automation's execution id, a role session's temporary
    /// keys) kept from call to call; a new one per call when `None`.
    pub session: Option<String>,
}

impl Caller {
    /// A caller with the default region, clock and address.
    pub fn new(identity: Identity, agent: Agent) -> Self {
        Self {
            identity,
            agent,
            region: None,
            time: None,
            source_ip: None,
            session: None,
        }
    }

    /// An IAM user using `agent`.
    pub fn user(name: &str, agent: Agent) -> Self {
        Self::new(
            Identity::IamUser {
                name: name.to_owned(),
            },
            agent,
        )
    }

    /// An SSO user in the console through `permission_set`.
    pub fn sso_console(user: &str, permission_set: &str) -> Self {
        Self::new(
            Identity::Sso {
                permission_set: permission_set.to_owned(),
                user: user.to_owned(),
            },
            Agent::Console,
        )
    }

    /// Terraform running as the role `role`.
    pub fn terraform(role: &str) -> Self {
        Self::new(
            Identity::AssumedRole {
                role: role.to_owned(),
                session: "aws-go-sdk-1772442000000000000".to_owned(),
            },
            Agent::Terraform,
        )
    }

    /// An SSM Automation runbook running as `role`.
    pub fn automation(role: &str) -> Self {
        Self::new(
            Identity::AutomationRole {
                role: role.to_owned(),
            },
            Agent::SsmAutomation,
        )
    }

    /// An AWS service acting on its own.
    pub fn service(service: &str) -> Self {
        Self::new(
            Identity::AwsService {
                service: service.to_owned(),
            },
            Agent::Service,
        )
    }

    /// Whether the call came through the console.
    pub(super) fn is_console(&self) -> bool {
        self.agent == Agent::Console
    }

    /// The service host an AWS-side caller reports as address and agent.
    fn service_host(&self) -> Option<&str> {
        match (&self.identity, self.agent) {
            (Identity::AwsService { service }, _) => Some(service),
            (_, Agent::SsmAutomation) => Some("ssm.amazonaws.com"),
            _ => None,
        }
    }

    /// `sourceIPAddress`.
    pub(super) fn source_ip(&self) -> String {
        if let Some(host) = self.service_host() {
            return host.to_owned();
        }
        self.source_ip
            .clone()
            .unwrap_or_else(|| "203.0.113.24".to_owned())
    }

    /// `userIdentity`. `session` is a per-call random value used for automation execution
    /// ids and temporary access keys.
    pub(super) fn identity_json(&self, account: &str, time: &str, session: &str) -> Value {
        match &self.identity {
            Identity::IamUser { name } => {
                let key_prefix = if self.is_console() { "ASIA" } else { "AKIA" };
                json!({
                    "type": "IAMUser",
                    "principalId": format!("AIDA{}", stable_id(name, 17)),
                    "arn": format!("arn:aws:iam::{account}:user/{name}"),
                    "accountId": account,
                    "accessKeyId": format!("{key_prefix}{}", stable_id(&format!("{name}/{key_prefix}"), 16)),
                    "userName": name,
                })
            }
            Identity::AssumedRole {
                role,
                session: name,
            } => role_session(account, role, "/", name, time, session, None),
            Identity::Sso {
                permission_set,
                user,
            } => {
                let role = format!(
                    "AWSReservedSSO_{permission_set}_{}",
                    stable_hex(permission_set, 16)
                );
                let path = "/aws-reserved/sso.amazonaws.com/";
                role_session(account, &role, path, user, time, session, None)
            }
            Identity::AutomationRole { role } => {
                let execution = session.to_owned();
                let invoked = Some("ssm.amazonaws.com");
                role_session(account, role, "/", &execution, time, session, invoked)
            }
            Identity::AwsService { service } => json!({
                "type": "AWSService",
                "invokedBy": service,
            }),
        }
    }

    /// `userAgent` for a call to `service` of the API `api`.
    pub(super) fn user_agent(&self, service: Service, api: &str) -> String {
        if let Some(host) = self.service_host() {
            return host.to_owned();
        }
        let agent = match self.agent {
            Agent::Console => return service.console_agent().to_owned(),
            Agent::SsmAutomation | Agent::Service => "aws-internal/3".to_owned(),
            program => program_agent(
                program,
                service.cli_name(),
                &service.cli_command(api),
                (service.sdk_id(), service.sdk_version()),
            ),
        };
        match service == Service::S3 {
            true => format!("[{agent}]"),
            false => agent,
        }
    }
}

/// The user agent of the CLI, boto3 or Terraform calling the CLI command `command` of the
/// service `cli_name` (Terraform names the SDK's id and version); empty for other callers.
pub(super) fn program_agent(
    agent: Agent,
    cli_name: &str,
    command: &str,
    sdk: (&str, &str),
) -> String {
    match agent {
        Agent::Cli => format!(
            "aws-cli/2.15.30 md/awscrt#0.19.19 ua/2.0 os/linux#6.5.0-1016-aws md/arch#x86_64 \
             lang/python#3.11.8 md/pyimpl#CPython cfg/retry-mode#standard md/installer#exe \
             md/prompt#off md/command#{cli_name}.{command}"
        ),
        Agent::Boto3 => {
            "Boto3/1.34.69 md/Botocore#1.34.69 ua/2.0 os/linux#5.10.213-201.855.amzn2.x86_64 \
             md/arch#x86_64 lang/python#3.11.8 md/pyimpl#CPython cfg/retry-mode#legacy \
             Botocore/1.34.69"
                .to_owned()
        }
        Agent::Terraform => format!(
            "APN/1.0 HashiCorp/1.0 Terraform/1.9.8 (+https://www.terraform.io) \
             terraform-provider-aws/5.80.0 (+https://registry.terraform.io/providers/hashicorp/aws) \
             aws-sdk-go-v2/1.32.6 ua/2.1 os/linux lang/go#1.23.3 md/GOOS#linux md/GOARCH#amd64 \
             api/{}#{} m/C,g",
            sdk.0, sdk.1
        ),
        Agent::Console | Agent::SsmAutomation | Agent::Service => String::new(),
    }
}

/// An `AssumedRole` identity with its session context.
fn role_session(
    account: &str,
    role: &str,
    path: &str,
    session_name: &str,
    time: &str,
    session: &str,
    invoked_by: Option<&str>,
) -> Value {
    let role_id = format!("AROA{}", stable_id(role, 17));
    let mut identity = json!({
        "type": "AssumedRole",
        "principalId": format!("{role_id}:{session_name}"),
        "arn": format!("arn:aws:sts::{account}:assumed-role/{role}/{session_name}"),
        "accountId": account,
        "accessKeyId": format!("ASIA{}", stable_id(session, 16)),
        "sessionContext": {
            "sessionIssuer": {
                "type": "Role",
                "principalId": role_id,
                "arn": format!("arn:aws:iam::{account}:role{path}{role}"),
                "accountId": account,
                "userName": role,
            },
            "webIdFederationData": {},
            "attributes": {"creationDate": time, "mfaAuthenticated": "false"},
        },
    });
    if let (Some(service), Some(map)) = (invoked_by, identity.as_object_mut()) {
        map.insert("invokedBy".to_owned(), json!(service));
    }
    identity
}

/// 64-bit FNV-1a of a text, so an identity's ids stay the same from call to call.
fn fnv(text: &str) -> u64 {
    fnv_more(0xcbf2_9ce4_8422_2325, text.as_bytes())
}

/// FNV-1a continued from `h` over `bytes`: the hash of a text taken piece by piece.
fn fnv_more(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `len` uppercase letters and digits derived from `seed`.
fn stable_id(seed: &str, len: usize) -> String {
    stable_chars(seed, super::ctx::UPPER_ALNUM, len)
}

/// `len` lowercase hex digits derived from `seed`.
fn stable_hex(seed: &str, len: usize) -> String {
    stable_chars(seed, b"0123456789abcdef", len)
}

/// `len` characters of `alphabet` drawn from `seed`: every eighth, the hash is renewed as the
/// FNV-1a of `{seed}#{n}#{h}` (hashed piece by piece: every simulated record asks for a few).
fn stable_chars(seed: &str, alphabet: &[u8], len: usize) -> String {
    let seeded = fnv(seed);
    let mut h = seeded;
    let mut number = itoa::Buffer::new();
    let mut out = String::with_capacity(len);
    for n in 0..len {
        if n % 8 == 0 {
            let at = fnv_more(fnv_more(seeded, b"#"), number.format(n).as_bytes());
            h = fnv_more(fnv_more(at, b"#"), number.format(h).as_bytes());
        }
        out.push(char::from(alphabet[(h % alphabet.len() as u64) as usize]));
        h /= alphabet.len() as u64;
    }
    out
}

#[cfg(test)]
mod stable_tests {
    use super::*;

    #[test]
    fn stable_characters_hash_the_seed_position_and_hash_as_text() {
        let formatted = |seed: &str, alphabet: &[u8], len: usize| -> String {
            let mut h = fnv(seed);
            (0..len)
                .map(|n| {
                    if n % 8 == 0 {
                        h = fnv(&format!("{seed}#{n}#{h}"));
                    }
                    let c = alphabet[(h % alphabet.len() as u64) as usize];
                    h /= alphabet.len() as u64;
                    char::from(c)
                })
                .collect()
        };
        for seed in [
            "",
            "app-task-role",
            "session-7f3a",
            "AWSReservedSSO_Admin/erin",
        ] {
            for len in [1, 8, 16, 17, 40] {
                let upper = super::super::ctx::UPPER_ALNUM;
                assert_eq!(stable_chars(seed, upper, len), formatted(seed, upper, len));
                let hex = b"0123456789abcdef";
                assert_eq!(stable_chars(seed, hex, len), formatted(seed, hex, len));
            }
        }
    }
}

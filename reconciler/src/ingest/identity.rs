//! The typed `userIdentity` of a record, and the human-readable actor derived from it.

use serde::{Deserialize, Serialize};

use super::record::Text;

/// The kind of principal that made a call, as CloudTrail's `userIdentity.type` names it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum IdentityKind {
    /// The account's root user.
    Root,
    /// An IAM user with long-term credentials.
    IamUser,
    /// Temporary credentials from `AssumeRole` (also SSO permission sets, service roles).
    AssumedRole,
    /// Temporary credentials from `GetFederationToken`.
    FederatedUser,
    /// An AWS service principal acting on its own.
    AwsService,
    /// Another AWS account.
    AwsAccount,
    /// A user of IAM Identity Center acting directly (not through a permission set role).
    IdentityCenterUser,
    /// A SAML-federated user (`AssumeRoleWithSAML`).
    SamlUser,
    /// A web-identity user (`AssumeRoleWithWebIdentity`).
    WebIdentityUser,
    /// A directory service user.
    Directory,
    /// The identity was not given.
    #[default]
    Missing,
    /// A kind this version of retrace does not know, kept by name.
    Other(String),
}

impl Serialize for IdentityKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl IdentityKind {
    /// The name CloudTrail uses (`IAMUser`, `AssumedRole`, ...; `-` when missing).
    pub fn name(&self) -> &str {
        match self {
            Self::Root => "Root",
            Self::IamUser => "IAMUser",
            Self::AssumedRole => "AssumedRole",
            Self::FederatedUser => "FederatedUser",
            Self::AwsService => "AWSService",
            Self::AwsAccount => "AWSAccount",
            Self::IdentityCenterUser => "IdentityCenterUser",
            Self::SamlUser => "SAMLUser",
            Self::WebIdentityUser => "WebIdentityUser",
            Self::Directory => "Directory",
            Self::Missing => "-",
            Self::Other(name) => name,
        }
    }

    fn from_type(kind: Option<&str>) -> Self {
        match kind {
            None => Self::Missing,
            Some("Root") => Self::Root,
            Some("IAMUser") => Self::IamUser,
            Some("AssumedRole") => Self::AssumedRole,
            Some("FederatedUser") => Self::FederatedUser,
            Some("AWSService") => Self::AwsService,
            Some("AWSAccount") => Self::AwsAccount,
            Some("IdentityCenterUser") => Self::IdentityCenterUser,
            Some("SAMLUser") => Self::SamlUser,
            Some("WebIdentityUser") => Self::WebIdentityUser,
            Some("Directory") => Self::Directory,
            Some(other) => Self::Other(other.to_owned()),
        }
    }
}

/// The principal that issued a session (`sessionContext.sessionIssuer`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionIssuer<S = String> {
    /// `Role`, `IAMUser` or `Root`.
    #[serde(rename = "type", default)]
    pub kind: Option<S>,
    /// Principal id of the issuer.
    #[serde(default)]
    pub principal_id: Option<S>,
    /// ARN of the issuer, e.g. the role's ARN.
    #[serde(default)]
    pub arn: Option<S>,
    /// Account of the issuer.
    #[serde(default)]
    pub account_id: Option<S>,
    /// Friendly name: the role or user name.
    #[serde(default)]
    pub user_name: Option<S>,
}

/// `sessionContext.attributes`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionAttributes<S = String> {
    /// When the credentials were issued.
    #[serde(default)]
    pub creation_date: Option<S>,
    /// `"true"` when the session was authenticated with MFA.
    #[serde(default)]
    pub mfa_authenticated: Option<S>,
}

/// `userIdentity.sessionContext`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContext<S = String> {
    /// Who issued the temporary credentials.
    #[serde(default)]
    pub session_issuer: Option<SessionIssuer<S>>,
    /// Creation date and MFA flag.
    #[serde(default)]
    pub attributes: Option<SessionAttributes<S>>,
    /// The source identity set on the session, if any.
    #[serde(default)]
    pub source_identity: Option<S>,
    /// Federation data of a web-identity session (kept as JSON).
    #[serde(default)]
    pub web_id_federation_data: Option<serde_json::Value>,
    /// EC2 instance role delivery details (kept as JSON).
    #[serde(default)]
    pub ec2_role_delivery: Option<S>,
}

/// `userIdentity.onBehalfOf` of an Identity Center user.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OnBehalfOf<S = String> {
    /// The Identity Center user id.
    #[serde(default)]
    pub user_id: Option<S>,
    /// The identity store the user belongs to.
    #[serde(default)]
    pub identity_store_arn: Option<S>,
}

/// The `userIdentity` block as recorded, its strings borrowed from the record's text where
/// they need no unescaping.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RawIdentity<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Text<'a>>,
    #[serde(borrow)]
    principal_id: Option<Text<'a>>,
    #[serde(borrow)]
    arn: Option<Text<'a>>,
    #[serde(borrow)]
    account_id: Option<Text<'a>>,
    #[serde(borrow)]
    access_key_id: Option<Text<'a>>,
    #[serde(borrow)]
    user_name: Option<Text<'a>>,
    #[serde(borrow)]
    invoked_by: Option<Text<'a>>,
    #[serde(borrow)]
    session_context: Option<SessionContext<Text<'a>>>,
    #[serde(borrow)]
    identity_provider: Option<Text<'a>>,
    #[serde(borrow)]
    credential_id: Option<Text<'a>>,
    #[serde(borrow)]
    on_behalf_of: Option<OnBehalfOf<Text<'a>>>,
}

impl RawIdentity<'_> {
    /// The principal's account, without copying it.
    pub(crate) fn account_id(&self) -> Option<&str> {
        self.account_id.as_ref().map(Text::as_str)
    }

    /// The principal's ARN, without copying it.
    pub(crate) fn arn(&self) -> Option<&str> {
        self.arn.as_ref().map(Text::as_str)
    }

    /// The typed identity, its strings copied out of the record.
    pub(crate) fn into_identity(self) -> UserIdentity {
        UserIdentity {
            kind: IdentityKind::from_type(self.kind.as_ref().map(Text::as_str)),
            principal_id: Text::owned(self.principal_id),
            arn: Text::owned(self.arn),
            account_id: Text::owned(self.account_id),
            access_key_id: Text::owned(self.access_key_id),
            user_name: Text::owned(self.user_name),
            invoked_by: Text::owned(self.invoked_by),
            session_context: self.session_context.map(SessionContext::into_owned),
            identity_provider: Text::owned(self.identity_provider),
            credential_id: Text::owned(self.credential_id),
            on_behalf_of: self.on_behalf_of.map(|o| OnBehalfOf {
                user_id: Text::owned(o.user_id),
                identity_store_arn: Text::owned(o.identity_store_arn),
            }),
        }
    }
}

impl SessionContext<Text<'_>> {
    fn into_owned(self) -> SessionContext {
        SessionContext {
            session_issuer: self.session_issuer.map(|i| SessionIssuer {
                kind: Text::owned(i.kind),
                principal_id: Text::owned(i.principal_id),
                arn: Text::owned(i.arn),
                account_id: Text::owned(i.account_id),
                user_name: Text::owned(i.user_name),
            }),
            attributes: self.attributes.map(|a| SessionAttributes {
                creation_date: Text::owned(a.creation_date),
                mfa_authenticated: Text::owned(a.mfa_authenticated),
            }),
            source_identity: Text::owned(self.source_identity),
            web_id_federation_data: self.web_id_federation_data,
            ec2_role_delivery: Text::owned(self.ec2_role_delivery),
        }
    }
}

/// Who made a call: CloudTrail's `userIdentity`, typed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserIdentity {
    /// The kind of principal; unknown kinds are kept by name.
    pub kind: IdentityKind,
    /// Principal id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal_id: Option<String>,
    /// ARN of the principal (for an assumed role, the session ARN).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arn: Option<String>,
    /// Account of the principal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// Access key used to sign the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_key_id: Option<String>,
    /// User name of an IAM user, root or Identity Center user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_name: Option<String>,
    /// The AWS service that made the call on the principal's behalf.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invoked_by: Option<String>,
    /// Session details of temporary credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_context: Option<SessionContext>,
    /// Identity provider of a federated or Identity Center user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity_provider: Option<String>,
    /// Identity Center credential id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential_id: Option<String>,
    /// The Identity Center user the call was made for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_behalf_of: Option<OnBehalfOf>,
}

impl<'de> Deserialize<'de> for UserIdentity {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RawIdentity::deserialize(deserializer).map(RawIdentity::into_identity)
    }
}

impl UserIdentity {
    /// The session issuer (for assumed roles and federated users).
    pub fn issuer(&self) -> Option<&SessionIssuer> {
        self.session_context.as_ref()?.session_issuer.as_ref()
    }

    /// ARN of the role behind an assumed-role session.
    pub fn role_arn(&self) -> Option<&str> {
        let issuer = self.issuer()?;
        (issuer.kind.as_deref() == Some("Role"))
            .then_some(issuer.arn.as_deref())
            .flatten()
    }

    /// The name of the service-linked role behind an assumed-role session: a role under the
    /// path `/aws-service-role/` that IAM creates for an AWS service and that only the
    /// service assumes, so its calls are AWS's own.
    pub fn service_linked_role(&self) -> Option<&str> {
        let arn = self.role_arn()?;
        let path = arn.split_once(":role/aws-service-role/")?.1;
        path.rsplit('/').next()
    }

    /// Whether the identity is AWS's own rather than a principal of the account's: an AWS
    /// service principal, a service-linked role, or no principal at all (a service acting
    /// with only `accountId` and `invokedBy`, as in CloudTrail's service-event examples).
    pub fn is_aws_own(&self) -> bool {
        match self.kind {
            IdentityKind::AwsService => true,
            IdentityKind::Missing => self.principal_id.is_none() && self.arn.is_none(),
            _ => self.service_linked_role().is_some(),
        }
    }

    /// The session name of an assumed role: the last part of
    /// `arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION`.
    pub fn session_name(&self) -> Option<&str> {
        if self.kind != IdentityKind::AssumedRole {
            return None;
        }
        let arn = self.arn.as_deref()?;
        let resource = arn.split_once(":assumed-role/")?.1;
        resource.split_once('/').map(|(_, session)| session)
    }

    /// The principal in words: `alice`, `alice@example.com via AdminRole`, `root`,
    /// `autoscaling.amazonaws.com`. Always returns something, even for unknown kinds.
    pub fn actor(&self) -> String {
        let via = |who: &str| match self.issuer().and_then(|i| i.user_name.as_deref()) {
            Some(role) => format!("{who} via {}", friendly_role(role)),
            None => who.to_owned(),
        };
        match &self.kind {
            IdentityKind::Root => "root".to_owned(),
            IdentityKind::IamUser => self.user_name.clone().unwrap_or_else(|| self.fallback()),
            IdentityKind::AssumedRole => match self.session_name() {
                Some(session) => via(session),
                None => via(&self.fallback()),
            },
            IdentityKind::FederatedUser => {
                let name = self
                    .arn
                    .as_deref()
                    .and_then(|a| a.split_once(":federated-user/"))
                    .map(|(_, n)| n.to_owned())
                    .unwrap_or_else(|| self.fallback());
                via(&name)
            }
            IdentityKind::AwsService => self.invoked_by.clone().unwrap_or_else(|| self.fallback()),
            IdentityKind::AwsAccount => match &self.account_id {
                Some(account) => format!("account {account}"),
                None => self.fallback(),
            },
            IdentityKind::IdentityCenterUser => {
                let user = self
                    .user_name
                    .clone()
                    .or_else(|| self.on_behalf_of.as_ref().and_then(|o| o.user_id.clone()));
                format!(
                    "{} (Identity Center)",
                    user.unwrap_or_else(|| self.fallback())
                )
            }
            _ => self.fallback(),
        }
    }

    fn fallback(&self) -> String {
        self.user_name
            .clone()
            .or_else(|| self.arn.clone())
            .or_else(|| self.principal_id.clone())
            .or_else(|| self.invoked_by.clone())
            .or_else(|| self.account_id.clone())
            .unwrap_or_else(|| "unknown".to_owned())
    }
}

/// `AWSReservedSSO_AdminAccess_0123456789abcdef` reads as `AdminAccess (SSO)`.
fn friendly_role(role: &str) -> String {
    match role.strip_prefix("AWSReservedSSO_") {
        Some(rest) => {
            let set = rest.rsplit_once('_').map_or(rest, |(name, _)| name);
            format!("{set} (SSO)")
        }
        None => role.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(json: &str) -> UserIdentity {
        serde_json::from_str(json).expect("identity parses")
    }

    #[test]
    fn assumed_role_actor_names_session_and_role() {
        let id = identity(
            r#"{"type":"AssumedRole","principalId":"AROAEXAMPLE:alice",
            "arn":"arn:aws:sts::111122223333:assumed-role/Admin/alice","accountId":"111122223333",
            "sessionContext":{"sessionIssuer":{"type":"Role","principalId":"AROAEXAMPLE",
            "arn":"arn:aws:iam::111122223333:role/Admin","accountId":"111122223333","userName":"Admin"},
            "attributes":{"creationDate":"2024-01-01T00:00:00Z","mfaAuthenticated":"true"}}}"#,
        );
        assert_eq!(id.kind, IdentityKind::AssumedRole);
        assert_eq!(id.actor(), "alice via Admin");
        assert_eq!(id.role_arn(), Some("arn:aws:iam::111122223333:role/Admin"));
        assert_eq!(id.session_name(), Some("alice"));
    }

    #[test]
    fn sso_permission_set_reads_plainly() {
        let id = identity(
            r#"{"type":"AssumedRole",
            "arn":"arn:aws:sts::111122223333:assumed-role/AWSReservedSSO_PowerUser_0a1b2c3d4e5f6a7b/bob@example.com",
            "sessionContext":{"sessionIssuer":{"type":"Role","userName":"AWSReservedSSO_PowerUser_0a1b2c3d4e5f6a7b"}}}"#,
        );
        assert_eq!(id.actor(), "bob@example.com via PowerUser (SSO)");
    }

    #[test]
    fn other_kinds_have_actors() {
        assert_eq!(
            identity(r#"{"type":"Root","accountId":"1"}"#).actor(),
            "root"
        );
        assert_eq!(
            identity(r#"{"type":"IAMUser","userName":"carol"}"#).actor(),
            "carol"
        );
        assert_eq!(
            identity(r#"{"type":"AWSService","invokedBy":"autoscaling.amazonaws.com"}"#).actor(),
            "autoscaling.amazonaws.com"
        );
        let fed = identity(
            r#"{"type":"FederatedUser","arn":"arn:aws:sts::1:federated-user/dave",
            "sessionContext":{"sessionIssuer":{"type":"IAMUser","userName":"broker"}}}"#,
        );
        assert_eq!(fed.actor(), "dave via broker");
        let center = identity(
            r#"{"type":"IdentityCenterUser","accountId":"1","onBehalfOf":{"userId":"u-123",
            "identityStoreArn":"arn:aws:identitystore::1:identitystore/d-1"},"credentialId":"c"}"#,
        );
        assert_eq!(center.actor(), "u-123 (Identity Center)");
        assert_eq!(center.kind, IdentityKind::IdentityCenterUser);
    }

    #[test]
    fn unknown_kinds_are_kept_by_name() {
        let id = identity(r#"{"type":"QuantumUser","principalId":"Q1"}"#);
        assert_eq!(id.kind, IdentityKind::Other("QuantumUser".into()));
        assert_eq!(id.actor(), "Q1");
    }
}

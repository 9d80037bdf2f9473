//! Where a project lives: its AWS accounts and regions. A call made in another account or
//! region never matches one of the project's resources, even when a name is equal.
//!
//! The accounts and regions come from the state (each managed instance's own ARN, and the
//! `region` attribute some types keep) and the regions of the root module's AWS provider
//! blocks, unless `retrace.toml` or `--account` / `--region`
//! name them. An instance is matched against its own ARN's account and region when it has
//! one, and against the project's otherwise. Calls to global services (IAM, Route 53,
//! CloudFront, Organizations, ...) are logged in one region whatever the resource, so only
//! their account is compared.

use std::collections::BTreeSet;

use crate::terraform::state::{Instance, Mode, State};

/// Event sources of services whose resources have no region.
const GLOBAL_SOURCES: &[&str] = &[
    "iam.amazonaws.com",
    "sts.amazonaws.com",
    "organizations.amazonaws.com",
    "route53.amazonaws.com",
    "route53domains.amazonaws.com",
    "cloudfront.amazonaws.com",
    "globalaccelerator.amazonaws.com",
    "waf.amazonaws.com",
    "shield.amazonaws.com",
    "account.amazonaws.com",
];

/// Whether a service's resources are global (its calls' region says nothing of them).
pub fn is_global(event_source: &str) -> bool {
    GLOBAL_SOURCES.contains(&event_source)
}

/// The account and region a call was made in.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    /// `recipientAccountId`, when the record has it.
    pub account: Option<&'a str>,
    /// `awsRegion`.
    pub region: &'a str,
    /// Whether the service is global.
    pub global: bool,
}

/// The accounts and regions of a project; empty sets mean unknown (everything matches).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    accounts: BTreeSet<String>,
    regions: BTreeSet<String>,
}

impl Scope {
    /// The accounts and regions the state's managed instances show.
    pub fn from_state(state: &State) -> Scope {
        let mut scope = Scope::default();
        for instance in state.instances.iter().filter(|i| i.mode == Mode::Managed) {
            let (account, region) = home(instance);
            scope.accounts.extend(account.map(str::to_owned));
            scope.regions.extend(region.map(str::to_owned));
        }
        scope
    }

    /// This scope with more regions (those the provider blocks name).
    pub fn with_regions(mut self, regions: impl IntoIterator<Item = String>) -> Scope {
        self.regions.extend(regions);
        self
    }

    /// This scope with the given accounts and regions in place of the derived ones (each
    /// list only when it is not empty).
    pub fn overridden(mut self, accounts: &[String], regions: &[String]) -> Scope {
        if !accounts.is_empty() {
            self.accounts = accounts.iter().cloned().collect();
        }
        if !regions.is_empty() {
            self.regions = regions.iter().cloned().collect();
        }
        self
    }

    /// The project's accounts, in order.
    pub fn accounts(&self) -> Vec<String> {
        self.accounts.iter().cloned().collect()
    }

    /// The project's regions, in order.
    pub fn regions(&self) -> Vec<String> {
        self.regions.iter().cloned().collect()
    }

    /// Whether a call was made in one of the project's accounts and regions.
    pub fn contains(&self, origin: &Origin<'_>) -> bool {
        let account = match origin.account {
            Some(a) => self.accounts.is_empty() || self.accounts.contains(a),
            None => true,
        };
        account
            && (origin.global || self.regions.is_empty() || self.regions.contains(origin.region))
    }

    /// Whether a call may have touched this instance: same account and (for a regional
    /// service) same region, by the instance's own ARN when it has one.
    pub fn admits(&self, instance: &Instance, origin: &Origin<'_>) -> bool {
        let (account, region) = home(instance);
        let account_ok = match (origin.account, account) {
            (Some(call), Some(own)) => call == own,
            (Some(call), None) => self.accounts.is_empty() || self.accounts.contains(call),
            (None, _) => true,
        };
        let region_ok = origin.global
            || match region {
                Some(own) => own == origin.region,
                None => self.regions.is_empty() || self.regions.contains(origin.region),
            };
        account_ok && region_ok
    }
}

/// An instance's own account and region: from its ARN (`arn:partition:service:region:account:…`;
/// a global or S3 ARN leaves them empty) and its `region` attribute.
fn home(instance: &Instance) -> (Option<&str>, Option<&str>) {
    let arn = instance.string_attribute("arn").and_then(arn_parts);
    let account = arn.and_then(|(_, a)| a);
    let region = arn
        .and_then(|(r, _)| r)
        .or_else(|| instance.string_attribute("region"));
    (account, region)
}

/// The region and account fields of an ARN, each when not empty.
pub fn arn_parts(arn: &str) -> Option<(Option<&str>, Option<&str>)> {
    let mut fields = arn.splitn(6, ':');
    if fields.next()? != "arn" {
        return None;
    }
    let _partition = fields.next()?;
    let _service = fields.next()?;
    let region = fields.next()?;
    let account = fields.next()?;
    fields.next()?;
    Some((
        non_empty(region),
        non_empty(account).filter(|a| a.bytes().all(|b| b.is_ascii_digit())),
    ))
}

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::state::State;
    use serde_json::json;

    fn state(instances: serde_json::Value) -> State {
        let doc = json!({"version": 4, "terraform_version": "1.11.4", "serial": 1,
            "lineage": "x", "outputs": {}, "resources": instances});
        State::parse(doc.to_string().as_bytes(), "test").expect("state parses")
    }

    fn resource(kind: &str, name: &str, attributes: serde_json::Value) -> serde_json::Value {
        json!({"mode": "managed", "type": kind, "name": name,
            "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
            "instances": [{"schema_version": 0, "attributes": attributes}]})
    }

    fn origin<'a>(account: &'a str, region: &'a str) -> Origin<'a> {
        Origin {
            account: Some(account),
            region,
            global: false,
        }
    }

    #[test]
    fn arns_give_region_and_account() {
        assert_eq!(
            arn_parts("arn:aws:logs:eu-west-1:111122223333:log-group:/app:*"),
            Some((Some("eu-west-1"), Some("111122223333")))
        );
        assert_eq!(arn_parts("arn:aws:s3:::bucket"), Some((None, None)));
        assert_eq!(
            arn_parts("arn:aws:iam::111122223333:role/app"),
            Some((None, Some("111122223333")))
        );
        assert_eq!(arn_parts("sg-0123"), None);
    }

    #[test]
    fn a_call_in_another_account_or_region_does_not_reach_an_instance() {
        let s = state(json!([
            resource(
                "aws_cloudwatch_log_group",
                "app",
                json!({"id": "/app", "name": "/app",
                "arn": "arn:aws:logs:eu-west-1:111122223333:log-group:/app"})
            ),
            resource(
                "aws_security_group",
                "web",
                json!({"id": "sg-1", "name": "web"})
            ),
        ]));
        let scope = Scope::from_state(&s);
        assert_eq!(scope.accounts(), ["111122223333"]);
        assert_eq!(scope.regions(), ["eu-west-1"]);
        let log = &s.instances[0];
        let group = &s.instances[1];
        assert!(scope.admits(log, &origin("111122223333", "eu-west-1")));
        assert!(!scope.admits(log, &origin("999999999999", "eu-west-1")));
        assert!(!scope.admits(log, &origin("111122223333", "us-east-1")));
        // No ARN of its own: the project's accounts and regions decide.
        assert!(scope.admits(group, &origin("111122223333", "eu-west-1")));
        assert!(!scope.admits(group, &origin("111122223333", "us-east-1")));
        let global = Origin {
            global: true,
            ..origin("111122223333", "us-east-1")
        };
        assert!(scope.contains(&global));
        assert!(!scope.contains(&origin("111122223333", "us-east-1")));
    }

    #[test]
    fn configured_accounts_and_regions_replace_the_derived_ones() {
        let scope = Scope::default().overridden(&["1".into()], &[]);
        assert_eq!(scope.accounts(), ["1"]);
        assert!(scope.regions().is_empty());
        assert!(scope.contains(&origin("1", "anywhere")));
        assert!(!scope.contains(&origin("2", "anywhere")));
    }
}

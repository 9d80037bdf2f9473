//! Which calls a run looks at: a time window, accounts and regions, and what a source may
//! drop early on the pipeline's behalf.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::record::Call;
use super::verdict::Verdict;

/// The calls a run considers. Empty lists mean "all".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Filter {
    /// Earliest event time, inclusive.
    pub since: Option<DateTime<Utc>>,
    /// Latest event time, exclusive.
    pub until: Option<DateTime<Utc>>,
    /// Accounts to keep (the recipient account, else the caller's).
    pub accounts: Vec<String>,
    /// Regions to keep.
    pub regions: Vec<String>,
}

impl Filter {
    /// The window in words: `the window 2026-11-20 00:00:00 UTC to now`.
    pub fn window(&self) -> String {
        let at = |t: Option<DateTime<Utc>>, open: &str| {
            t.map_or(open.to_owned(), |t| {
                t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
            })
        };
        format!(
            "the window {} to {}",
            at(self.since, "the beginning"),
            at(self.until, "now")
        )
    }

    /// Whether the call falls inside the window, accounts and regions.
    pub fn matches(&self, call: &Call) -> bool {
        self.matches_parts(call.event_time, call.account_id(), &call.aws_region)
    }

    /// Whether a call with this time, account and region falls inside the filter.
    pub fn matches_parts(&self, time: DateTime<Utc>, account: Option<&str>, region: &str) -> bool {
        self.in_window(time)
            && self.has_account(account.unwrap_or_default())
            && self.has_region(region)
    }

    /// Whether a time is inside the window.
    pub fn in_window(&self, time: DateTime<Utc>) -> bool {
        self.since.is_none_or(|s| time >= s) && self.until.is_none_or(|u| time < u)
    }

    /// Whether an account is selected.
    pub fn has_account(&self, account: &str) -> bool {
        self.accounts.is_empty() || self.accounts.iter().any(|a| a == account)
    }

    /// Whether a region is selected.
    pub fn has_region(&self, region: &str) -> bool {
        self.regions.is_empty() || self.regions.iter().any(|r| r == region)
    }
}

/// What a source may leave out because the pipeline would drop it: the filter always; when
/// `writes_only` is set, read-only and failed calls; when `drop_terraform` is also set,
/// calls with Terraform's user agent. These are the cheap verdicts, so an organisation-wide
/// store is not moved to one machine only to be dropped.
#[derive(Debug, Clone, Default)]
pub struct Pushdown {
    /// The window, accounts and regions.
    pub filter: Filter,
    /// Only successful, mutating calls are wanted.
    pub writes_only: bool,
    /// Calls with Terraform's user agent are not wanted either. False when a run token is
    /// configured: a Terraform call without the token is then out of band.
    pub drop_terraform: bool,
    /// With `writes_only`, the pipeline's attribution: a source that parses records on
    /// several threads settles there every call it would drop (pipeline identity, AWS
    /// service, Terraform client), instead of passing it on to be attributed and freed.
    pub attribution: Option<Arc<dyn Attribute>>,
    /// The calls need not keep their record's text (a reconciliation never prints it): a
    /// source may leave it out rather than copy it.
    pub drop_records: bool,
}

/// The pipeline's verdict on a parsed call (the attribution stage's), as a source may ask
/// for it.
pub trait Attribute: std::fmt::Debug + Send + Sync {
    /// The verdict on `call`.
    fn verdict(&self, call: &Call) -> Verdict;
}

impl Pushdown {
    /// The verdict of a parsed call the pipeline would drop whole: `None` unless writes only
    /// are wanted and the attribution finds the call is not out of band.
    pub fn dropped_verdict(&self, call: &Call) -> Option<Verdict> {
        let attribution = self.attribution.as_ref().filter(|_| self.writes_only)?;
        let verdict = attribution.verdict(call);
        (verdict != Verdict::OutOfBand).then_some(verdict)
    }
}

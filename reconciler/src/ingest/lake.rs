//! A CloudTrail Lake event data store, read with one SQL query: the filter and, when only
//! writes are wanted, the cheap verdicts go into its WHERE clause, so the store does the
//! dropping instead of this machine.

use chrono::{DateTime, TimeDelta, Utc};

use super::filter::Pushdown;

#[cfg(feature = "aws")]
mod source;
#[cfg(feature = "aws")]
pub use source::LakeSource;

/// `[sources.lake]`: a CloudTrail Lake event data store queried with SQL.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LakeConfig {
    /// The event data store's ARN or id.
    pub event_data_store: String,
    /// Region of the event data store.
    pub region: String,
    /// A named profile; the default credential chain otherwise.
    #[serde(default)]
    pub profile: Option<String>,
    /// Endpoint override (a VPC endpoint, or a test server).
    #[serde(default)]
    pub endpoint_url: Option<String>,
}

/// Conditions that keep only successful, mutating calls. Rows where `readOnly` is missing are
/// kept: the pipeline judges those by their event name. An empty error code is a success.
const WRITES_ONLY: [&str; 2] = [
    "(readOnly = false OR readOnly IS NULL)",
    "(errorCode IS NULL OR errorCode = '')",
];

/// The condition that leaves out Terraform's own calls (see [`Pushdown::drop_terraform`]);
/// rows without a user agent are kept.
const NOT_TERRAFORM: &str = "(userAgent IS NULL OR (userAgent NOT LIKE '%HashiCorp/1.0 Terraform/%' \
     AND userAgent NOT LIKE '%terraform-provider-aws/%'))";

/// A problem with the Lake source's settings.
#[derive(Debug, thiserror::Error)]
pub enum LakeError {
    /// The event data store is neither an id nor an event data store ARN.
    #[error(
        "`{0}` is not an event data store: give its id (letters, digits and hyphens) or its ARN"
    )]
    BadStore(String),
}

/// An event data store id, checked to hold only letters, digits and hyphens so that it can
/// stand in SQL as the table name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventDataStoreId(String);

impl EventDataStoreId {
    /// The id in an ARN (`arn:aws:cloudtrail:REGION:ACCOUNT:eventdatastore/ID`), or the text
    /// itself when it is not an ARN.
    pub fn parse(store: &str) -> Result<Self, LakeError> {
        let id = if store.starts_with("arn:") {
            store.split_once(":eventdatastore/").map(|(_, id)| id)
        } else {
            Some(store)
        };
        let safe = |id: &&str| {
            !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        id.filter(safe)
            .map(|id| Self(id.to_owned()))
            .ok_or_else(|| LakeError::BadStore(store.to_owned()))
    }
}

impl std::fmt::Display for EventDataStoreId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The region named in an event data store ARN, if `store` is one.
pub fn arn_region(store: &str) -> Option<&str> {
    let mut parts = store.strip_prefix("arn:")?.split(':');
    parts.nth(2).filter(|region| !region.is_empty())
}

/// The query for the records `pushdown` asks for. The window is widened to whole seconds,
/// which is the precision Lake compares at; the pipeline drops what falls outside.
pub fn query_sql(store: &EventDataStoreId, pushdown: &Pushdown) -> String {
    let filter = &pushdown.filter;
    let mut conditions = Vec::new();
    if let Some(since) = filter.since {
        conditions.push(format!("eventTime >= '{}'", lake_time(since)));
    }
    if let Some(until) = filter.until {
        conditions.push(format!("eventTime < '{}'", lake_time(round_up(until))));
    }
    if !filter.accounts.is_empty() {
        conditions.push(format!(
            "coalesce(recipientAccountId, userIdentity.accountId) IN ({})",
            literals(&filter.accounts)
        ));
    }
    if !filter.regions.is_empty() {
        conditions.push(format!("awsRegion IN ({})", literals(&filter.regions)));
    }
    if pushdown.writes_only {
        conditions.extend(WRITES_ONLY.map(str::to_owned));
        if pushdown.drop_terraform {
            conditions.push(NOT_TERRAFORM.to_owned());
        }
    }
    let mut sql = format!("SELECT eventJson FROM {store}");
    if !conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&conditions.join(" AND "));
    }
    sql
}

/// A time as Lake writes timestamps, to the second.
fn lake_time(time: DateTime<Utc>) -> String {
    time.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// The time, moved up to the next whole second when it has a fraction.
fn round_up(time: DateTime<Utc>) -> DateTime<Utc> {
    if time.timestamp_subsec_nanos() == 0 {
        return time;
    }
    time.checked_add_signed(TimeDelta::seconds(1))
        .unwrap_or(time)
}

/// SQL string literals, quotes doubled, separated by commas.
pub(super) fn literals(values: &[String]) -> String {
    let quoted: Vec<String> = values
        .iter()
        .map(|v| format!("'{}'", v.replace('\'', "''")))
        .collect();
    quoted.join(", ")
}

pub use super::query::Polling;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Filter;
    use chrono::TimeZone;

    fn store() -> EventDataStoreId {
        EventDataStoreId::parse("EXAMPLE-f852-4e8f").expect("valid id")
    }

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> Option<DateTime<Utc>> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s).single()
    }

    #[test]
    fn ids_come_from_arns_or_as_given() {
        let arn = "arn:aws:cloudtrail:eu-west-1:111122223333:eventdatastore/EXAMPLE-f852-4e8f";
        assert_eq!(EventDataStoreId::parse(arn).ok(), Some(store()));
        assert_eq!(
            EventDataStoreId::parse("EXAMPLE-f852-4e8f").ok(),
            Some(store())
        );
        assert_eq!(arn_region(arn), Some("eu-west-1"));
        assert_eq!(arn_region("EXAMPLE-f852-4e8f"), None);
    }

    #[test]
    fn unsafe_ids_are_refused() {
        for bad in [
            "",
            "abc; DROP TABLE x",
            "abc'--",
            "a b",
            "arn:aws:cloudtrail:eu-west-1:111122223333:trail/abc",
            "arn:aws:cloudtrail:eu-west-1:111122223333:eventdatastore/",
            "arn:aws:cloudtrail:eu-west-1:1:eventdatastore/x/../y",
        ] {
            assert!(
                matches!(EventDataStoreId::parse(bad), Err(LakeError::BadStore(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn no_filter_reads_everything() {
        assert_eq!(
            query_sql(&store(), &Pushdown::default()),
            "SELECT eventJson FROM EXAMPLE-f852-4e8f"
        );
    }

    #[test]
    fn window_accounts_and_regions_are_pushed_down() {
        let pushdown = Pushdown {
            filter: Filter {
                since: at(2024, 7, 1, 0, 0, 0),
                until: at(2024, 7, 2, 12, 30, 5),
                accounts: vec!["111122223333".into(), "444455556666".into()],
                regions: vec!["eu-west-1".into()],
            },
            writes_only: false,
            drop_terraform: false,
            attribution: None,
            drop_records: false,
        };
        assert_eq!(
            query_sql(&store(), &pushdown),
            "SELECT eventJson FROM EXAMPLE-f852-4e8f WHERE eventTime >= '2024-07-01 00:00:00' \
             AND eventTime < '2024-07-02 12:30:05' \
             AND coalesce(recipientAccountId, userIdentity.accountId) IN ('111122223333', '444455556666') \
             AND awsRegion IN ('eu-west-1')"
        );
    }

    #[test]
    fn fractional_window_is_widened_to_whole_seconds() {
        let since = at(2024, 7, 1, 0, 0, 0).map(|t| t + TimeDelta::milliseconds(250));
        let until = at(2024, 7, 1, 1, 0, 0).map(|t| t + TimeDelta::milliseconds(1));
        let pushdown = Pushdown {
            filter: Filter {
                since,
                until,
                ..Filter::default()
            },
            writes_only: false,
            drop_terraform: false,
            attribution: None,
            drop_records: false,
        };
        assert_eq!(
            query_sql(&store(), &pushdown),
            "SELECT eventJson FROM EXAMPLE-f852-4e8f WHERE eventTime >= '2024-07-01 00:00:00' \
             AND eventTime < '2024-07-01 01:00:01'"
        );
    }

    #[test]
    fn quotes_in_values_are_doubled() {
        let pushdown = Pushdown {
            filter: Filter {
                regions: vec!["eu-west-1' OR '1'='1".into()],
                ..Filter::default()
            },
            writes_only: false,
            drop_terraform: false,
            attribution: None,
            drop_records: false,
        };
        assert_eq!(
            query_sql(&store(), &pushdown),
            "SELECT eventJson FROM EXAMPLE-f852-4e8f WHERE awsRegion IN ('eu-west-1'' OR ''1''=''1')"
        );
    }

    #[test]
    fn writes_only_drops_reads_failures_and_terraform() {
        let pushdown = Pushdown {
            filter: Filter {
                since: at(2024, 7, 1, 0, 0, 0),
                ..Filter::default()
            },
            writes_only: true,
            drop_terraform: true,
            attribution: None,
            drop_records: false,
        };
        assert_eq!(
            query_sql(&store(), &pushdown),
            "SELECT eventJson FROM EXAMPLE-f852-4e8f WHERE eventTime >= '2024-07-01 00:00:00' \
             AND (readOnly = false OR readOnly IS NULL) AND (errorCode IS NULL OR errorCode = '') \
             AND (userAgent IS NULL OR (userAgent NOT LIKE '%HashiCorp/1.0 Terraform/%' \
             AND userAgent NOT LIKE '%terraform-provider-aws/%'))"
        );
    }

    #[test]
    fn terraform_calls_stay_when_a_run_token_decides() {
        let pushdown = Pushdown {
            filter: Filter::default(),
            writes_only: true,
            drop_terraform: false,
            attribution: None,
            drop_records: false,
        };
        assert_eq!(
            query_sql(&store(), &pushdown),
            "SELECT eventJson FROM EXAMPLE-f852-4e8f WHERE (readOnly = false OR readOnly IS NULL) \
             AND (errorCode IS NULL OR errorCode = '')"
        );
    }
}

//! A trail's S3 bucket, read where CloudTrail delivers it: the log files under
//! `s3://BUCKET/[PREFIX/]AWSLogs/[ORG_ID/]ACCOUNT/CloudTrail/REGION/YYYY/MM/DD/`, listed only
//! for the days, accounts and regions the run asks for, fetched, and read as the file source
//! reads a delivered file ([`super::files`]).

use chrono::{DateTime, Days, NaiveDate, TimeDelta, Utc};

use super::files::is_account_id;
use super::filter::Filter;

#[cfg(feature = "aws")]
mod source;
#[cfg(feature = "aws")]
pub use source::S3Source;

/// `[sources.s3]`: the S3 bucket a trail delivers its log files to.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct S3Config {
    /// The trail's bucket.
    pub bucket: String,
    /// The key prefix the trail was given, if any.
    #[serde(default)]
    pub prefix: Option<String>,
    /// The organisation id (`o-...`) of an organisation trail, whose files sit under
    /// `AWSLogs/ORG_ID/`.
    #[serde(default)]
    pub organization_id: Option<String>,
    /// Accounts to read; none: the run's accounts, else every account folder of the bucket.
    #[serde(default)]
    pub accounts: Vec<String>,
    /// Regions to read; none: the run's regions, else every region folder of each account.
    #[serde(default)]
    pub regions: Vec<String>,
    /// The bucket's region.
    pub region: String,
    /// A named profile; the default credential chain otherwise.
    #[serde(default)]
    pub profile: Option<String>,
    /// Endpoint override (a VPC endpoint, or a test server).
    #[serde(default)]
    pub endpoint_url: Option<String>,
}

/// A problem with the S3 source's settings.
#[derive(Debug, thiserror::Error)]
pub enum S3Error {
    /// No bucket was named.
    #[error("no bucket: name the trail's bucket")]
    NoBucket,
    /// No region was given for the bucket.
    #[error("no region for the bucket {0}: give the region it is in")]
    NoRegion(String),
    /// The organisation id does not look like one.
    #[error("`{0}` is not an organisation id (`o-` and ten to thirty-two letters or digits)")]
    BadOrganization(String),
    /// An account id that is not twelve digits.
    #[error("`{0}` is not an account id (twelve digits)")]
    BadAccount(String),
}

impl S3Config {
    /// Checks that the settings can name folders of the delivery layout.
    pub fn check(&self) -> Result<(), S3Error> {
        if self.bucket.is_empty() {
            return Err(S3Error::NoBucket);
        }
        if self.region.is_empty() {
            return Err(S3Error::NoRegion(self.bucket.clone()));
        }
        if let Some(id) = &self.organization_id
            && !is_organization_id(id)
        {
            return Err(S3Error::BadOrganization(id.clone()));
        }
        match self.accounts.iter().find(|a| !is_account_id(a)) {
            Some(bad) => Err(S3Error::BadAccount(bad.clone())),
            None => Ok(()),
        }
    }

    /// The folder holding the accounts' folders: `[PREFIX/]AWSLogs/[ORG_ID/]`.
    pub fn logs_root(&self) -> String {
        let mut root = String::new();
        if let Some(prefix) = self.prefix.as_deref().map(|p| p.trim_matches('/'))
            && !prefix.is_empty()
        {
            root.push_str(prefix);
            root.push('/');
        }
        root.push_str("AWSLogs/");
        if let Some(organization) = &self.organization_id {
            root.push_str(organization);
            root.push('/');
        }
        root
    }
}

/// Whether `id` is an AWS Organizations id: `o-` and 10 to 32 lower-case letters or digits.
fn is_organization_id(id: &str) -> bool {
    id.strip_prefix("o-").is_some_and(|rest| {
        (10..=32).contains(&rest.len())
            && rest
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    })
}

/// The accounts or regions to read: the configured ones (those the run asks for, when it
/// names any), else the run's, else `None`: every folder found.
pub fn chosen(configured: &[String], wanted: &[String]) -> Option<Vec<String>> {
    if configured.is_empty() {
        return (!wanted.is_empty()).then(|| wanted.to_vec());
    }
    let kept = configured
        .iter()
        .filter(|c| wanted.is_empty() || wanted.contains(c))
        .cloned();
    Some(kept.collect())
}

/// The folder of one account's regions: `ROOT/ACCOUNT/CloudTrail/`.
pub fn regions_folder(root: &str, account: &str) -> String {
    format!("{root}{account}/CloudTrail/")
}

/// The days whose folders can hold records of the window: from the day of its start through
/// the day after its last instant (the end is exclusive; `now` when it has none). A folder is
/// the day its files were delivered, and a file holds records from before its delivery
/// only, so no earlier day can hold a record of the window; the day after is the slack the
/// file source prunes with too, for records delivered after midnight. `None` when the window
/// has no start: every day.
pub fn delivery_days(filter: &Filter, now: DateTime<Utc>) -> Option<Vec<NaiveDate>> {
    let since = filter.since?;
    let until = filter.until.unwrap_or(now);
    if until <= since {
        return Some(Vec::new());
    }
    let last = (until - TimeDelta::nanoseconds(1)).date_naive();
    let end = last.checked_add_days(Days::new(1)).unwrap_or(last);
    Some(
        since
            .date_naive()
            .iter_days()
            .take_while(|d| *d <= end)
            .collect(),
    )
}

/// The folders whose objects are read for one account and region: one per day, or the
/// region's whole folder when `days` is `None`.
pub fn object_folders(
    root: &str,
    account: &str,
    region: &str,
    days: Option<&[NaiveDate]>,
) -> Vec<String> {
    let region_folder = format!("{}{region}/", regions_folder(root, account));
    match days {
        None => vec![region_folder],
        Some(days) => days
            .iter()
            .map(|day| format!("{region_folder}{}/", day.format("%Y/%m/%d")))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> Option<DateTime<Utc>> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).single()
    }

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).expect("a date")
    }

    fn window(since: Option<DateTime<Utc>>, until: Option<DateTime<Utc>>) -> Filter {
        Filter {
            since,
            until,
            ..Filter::default()
        }
    }

    fn config() -> S3Config {
        S3Config {
            bucket: "acme-trail".into(),
            region: "eu-west-1".into(),
            ..S3Config::default()
        }
    }

    #[test]
    fn the_root_has_the_prefix_and_the_organisation() {
        assert_eq!(config().logs_root(), "AWSLogs/");
        let organisation = S3Config {
            prefix: Some("/trails/main/".into()),
            organization_id: Some("o-abc123def4".into()),
            ..config()
        };
        assert_eq!(
            organisation.logs_root(),
            "trails/main/AWSLogs/o-abc123def4/"
        );
        assert_eq!(
            regions_folder(&organisation.logs_root(), "111122223333"),
            "trails/main/AWSLogs/o-abc123def4/111122223333/CloudTrail/"
        );
    }

    #[test]
    fn settings_that_name_no_folder_are_refused() {
        assert!(config().check().is_ok());
        let no_bucket = S3Config {
            bucket: String::new(),
            ..config()
        };
        assert!(matches!(no_bucket.check(), Err(S3Error::NoBucket)));
        let no_region = S3Config {
            region: String::new(),
            ..config()
        };
        assert!(matches!(no_region.check(), Err(S3Error::NoRegion(b)) if b == "acme-trail"));
        for bad in ["abc123def4", "o-short", "o-ABC123DEF4", "o-abc123def4/.."] {
            let organisation = S3Config {
                organization_id: Some(bad.into()),
                ..config()
            };
            assert!(
                matches!(organisation.check(), Err(S3Error::BadOrganization(_))),
                "{bad}"
            );
        }
        let account = S3Config {
            accounts: vec!["111122223333".into(), "11112222333".into()],
            ..config()
        };
        assert!(matches!(account.check(), Err(S3Error::BadAccount(a)) if a == "11112222333"));
    }

    #[test]
    fn a_window_of_two_days_reads_them_and_the_day_after() {
        // 1 July 12:00 to 2 July 06:00: the files delivered on both days, and on 3 July,
        // the slack.
        let filter = window(at(2024, 7, 1, 12, 0), at(2024, 7, 2, 6, 0));
        assert_eq!(
            delivery_days(&filter, Utc::now()),
            Some(vec![day(2024, 7, 1), day(2024, 7, 2), day(2024, 7, 3)])
        );
        // An end at midnight is exclusive: 2 July's last instant is the window's last.
        let filter = window(at(2024, 7, 1, 0, 0), at(2024, 7, 3, 0, 0));
        assert_eq!(
            delivery_days(&filter, Utc::now()),
            Some(vec![day(2024, 7, 1), day(2024, 7, 2), day(2024, 7, 3)])
        );
        // Across the end of a month and a year.
        let filter = window(at(2024, 12, 31, 23, 0), at(2025, 1, 1, 1, 0));
        assert_eq!(
            delivery_days(&filter, Utc::now()),
            Some(vec![day(2024, 12, 31), day(2025, 1, 1), day(2025, 1, 2)])
        );
    }

    #[test]
    fn an_open_end_is_now_and_no_start_is_every_day() {
        let now = at(2024, 7, 2, 9, 30).expect("a time");
        let filter = window(at(2024, 7, 1, 12, 0), None);
        assert_eq!(
            delivery_days(&filter, now),
            Some(vec![day(2024, 7, 1), day(2024, 7, 2), day(2024, 7, 3)])
        );
        assert_eq!(
            delivery_days(&window(None, at(2024, 7, 2, 0, 0)), now),
            None
        );
        let empty = window(at(2024, 7, 2, 0, 0), at(2024, 7, 2, 0, 0));
        assert_eq!(delivery_days(&empty, now), Some(Vec::new()));
    }

    #[test]
    fn folders_are_one_per_day_or_the_whole_region() {
        let days = [day(2024, 7, 1), day(2024, 7, 2)];
        assert_eq!(
            object_folders("AWSLogs/", "111122223333", "eu-west-1", Some(&days)),
            [
                "AWSLogs/111122223333/CloudTrail/eu-west-1/2024/07/01/",
                "AWSLogs/111122223333/CloudTrail/eu-west-1/2024/07/02/",
            ]
        );
        assert_eq!(
            object_folders("AWSLogs/", "111122223333", "eu-west-1", None),
            ["AWSLogs/111122223333/CloudTrail/eu-west-1/"]
        );
    }

    #[test]
    fn configured_lists_are_narrowed_by_the_run_else_the_run_decides() {
        let list = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let configured = list(&["eu-west-1", "us-east-1"]);
        assert_eq!(chosen(&configured, &[]), Some(configured.clone()));
        assert_eq!(
            chosen(&configured, &list(&["us-east-1", "eu-central-1"])),
            Some(list(&["us-east-1"]))
        );
        assert_eq!(
            chosen(&[], &list(&["eu-central-1"])),
            Some(list(&["eu-central-1"]))
        );
        assert_eq!(chosen(&[], &[]), None);
    }
}

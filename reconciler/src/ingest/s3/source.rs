//! The S3 source itself: the bucket's folders listed and its log files fetched through the AWS
//! SDK for S3, each file read on a blocking thread by the file source's framing and parsing.

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_s3::Client;
use chrono::{NaiveDate, Utc};
use futures::StreamExt;
use futures::stream;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::{S3Config, S3Error, chosen, delivery_days, object_folders, regions_folder};
use crate::ingest::aws::{Pacer, Pacing, load_settings};
use crate::ingest::files::{is_account_id, read_bytes};
use crate::ingest::filter::Pushdown;
use crate::ingest::source::{CallStream, Source, SourceError, SourceResult};

/// Log files fetched and read at once.
const OBJECTS_AT_ONCE: usize = 8;

/// Items waiting between the reading task and the stream's consumer.
const WAITING: usize = 256;

/// The largest log file read, as stored: CloudTrail delivers files of a few megabytes every
/// few minutes, so a bigger object is not a trail's log file and is not held in memory.
const MAX_OBJECT_BYTES: usize = 256 << 20;

/// S3 takes thousands of requests a second: no spacing, only the usual backoff on throttling
/// (`SlowDown`) and server errors.
fn pacing() -> Pacing {
    Pacing {
        min_interval: Duration::ZERO,
        ..Pacing::default()
    }
}

/// The log files a trail delivered to an S3 bucket.
#[derive(Debug, Clone)]
pub struct S3Source {
    config: S3Config,
    client: Client,
    pacer: Pacer,
    max_object: usize,
}

impl S3Source {
    /// A client for the bucket's region through the standard credential chain, with the
    /// configured profile and endpoint (path-style addressing for an endpoint override).
    pub async fn from_config(config: &S3Config) -> Result<Self, S3Error> {
        config.check()?;
        let settings = load_settings(
            &config.region,
            config.profile.as_deref(),
            config.endpoint_url.as_deref(),
        )
        .await;
        let s3 = aws_sdk_s3::config::Builder::from(&settings)
            .force_path_style(config.endpoint_url.is_some())
            .build();
        Self::with_client(config, Client::from_conf(s3))
    }

    /// A source over a ready-made client for the bucket's region.
    pub fn with_client(config: &S3Config, client: Client) -> Result<Self, S3Error> {
        config.check()?;
        Ok(Self {
            config: config.clone(),
            client,
            pacer: Pacer::new(pacing()),
            max_object: MAX_OBJECT_BYTES,
        })
    }

    /// Replaces the largest object read (256 MiB): a bigger one is an error naming it.
    pub fn with_max_object(mut self, bytes: usize) -> Self {
        self.max_object = bytes;
        self
    }

    /// Replaces the default backoff.
    pub fn with_pacing(mut self, pacing: Pacing) -> Self {
        self.pacer = Pacer::new(pacing);
        self
    }
}

impl Source for S3Source {
    fn describe(&self) -> String {
        format!(
            "s3: s3://{}/{} ({})",
            self.config.bucket,
            self.config.logs_root(),
            self.config.region
        )
    }

    /// Lists and reads the folders of the window's days (see [`delivery_days`]), of the
    /// configured or the run's accounts and regions, else of every one found; parsing
    /// settles what the pushdown lets it, as the file source does.
    fn calls(&self, pushdown: &Pushdown) -> CallStream {
        let (tx, rx) = mpsc::channel(WAITING);
        let reading = Reading {
            client: self.client.clone(),
            pacer: self.pacer.clone(),
            root: self.config.logs_root(),
            config: self.config.clone(),
            days: delivery_days(&pushdown.filter, Utc::now()),
            pushdown: Arc::new(pushdown.clone()),
            max_object: self.max_object,
        };
        let reading = stream::once(reading.run(tx)).filter_map(|()| async { None });
        stream::select(ReceiverStream::new(rx), reading).boxed()
    }
}

/// One reading of the bucket.
struct Reading {
    client: Client,
    pacer: Pacer,
    config: S3Config,
    root: String,
    days: Option<Vec<NaiveDate>>,
    pushdown: Arc<Pushdown>,
    max_object: usize,
}

/// What one listing found, and the error that cut it short, if any.
#[derive(Default)]
struct Listing {
    keys: Vec<String>,
    folders: Vec<String>,
    error: Option<SourceError>,
}

impl Reading {
    /// Sends every account's, region's and day's records to `tx`; a failed listing or object
    /// is an error in its place, and the others are read all the same.
    async fn run(self, tx: mpsc::Sender<SourceResult>) {
        let filter = &self.pushdown.filter;
        let accounts = match chosen(&self.config.accounts, &filter.accounts) {
            Some(accounts) => accounts,
            None => self.folders(&self.root, &tx).await,
        };
        if self.config.organization_id.is_none() && accounts.iter().any(|a| a.starts_with("o-")) {
            tracing::warn!(
                bucket = %self.config.bucket,
                "the bucket holds an organisation trail's folders: give its organisation id to read them"
            );
        }
        for account in accounts.iter().filter(|a| is_account_id(a)) {
            let regions = match chosen(&self.config.regions, &filter.regions) {
                Some(regions) => regions,
                None => {
                    self.folders(&regions_folder(&self.root, account), &tx)
                        .await
                }
            };
            for region in &regions {
                let folders = object_folders(&self.root, account, region, self.days.as_deref());
                for folder in folders {
                    if !self.read_folder(&folder, &tx).await {
                        return;
                    }
                }
            }
        }
    }

    /// The names of the folders in `folder`; a listing error is sent to `tx`.
    async fn folders(&self, folder: &str, tx: &mpsc::Sender<SourceResult>) -> Vec<String> {
        let listing = self.list(folder, true).await;
        if let Some(error) = listing.error {
            // A consumer that has gone away stops the reading at its next object.
            let _ = tx.send(Err(error)).await;
        }
        listing.folders
    }

    /// Reads every object in `folder` (and below), sending the records to `tx`; `false` once
    /// the consumer has gone away.
    async fn read_folder(&self, folder: &str, tx: &mpsc::Sender<SourceResult>) -> bool {
        let listing = self.list(folder, false).await;
        let error = listing.error.map(Err);
        let mut objects = stream::iter(listing.keys)
            .map(|key| self.object(key))
            .buffered(OBJECTS_AT_ONCE);
        while let Some(items) = objects.next().await {
            for item in items {
                if tx.send(item).await.is_err() {
                    return false;
                }
            }
        }
        match error {
            Some(error) => tx.send(error).await.is_ok(),
            None => true,
        }
    }

    /// Every page of the listing of `prefix`: the object keys (folder markers left out) and,
    /// with `by_folder`, the names of the folders right under it.
    async fn list(&self, prefix: &str, by_folder: bool) -> Listing {
        let name = format!("s3://{}/{prefix}", self.config.bucket);
        let request = self
            .client
            .list_objects_v2()
            .bucket(&self.config.bucket)
            .prefix(prefix)
            .set_delimiter(by_folder.then(|| "/".to_owned()));
        let mut listing = Listing::default();
        let mut token = None;
        loop {
            let page = request.clone().set_continuation_token(token);
            let page = match self
                .pacer
                .send(&name, "ListObjectsV2", || page.clone().send())
                .await
            {
                Ok(page) => page,
                Err(error) => {
                    listing.error = Some(error);
                    return listing;
                }
            };
            let keys = page.contents().iter().filter_map(|object| object.key());
            listing
                .keys
                .extend(keys.filter(|key| !key.ends_with('/')).map(str::to_owned));
            let folders = page.common_prefixes().iter().filter_map(|p| p.prefix());
            listing.folders.extend(
                folders
                    .filter_map(|folder| folder.strip_prefix(prefix))
                    .map(|name| name.trim_end_matches('/').to_owned()),
            );
            token = page
                .next_continuation_token()
                .filter(|t| !t.is_empty())
                .map(str::to_owned);
            if token.is_none() {
                return listing;
            }
        }
    }

    /// One log file's records, read on a blocking thread; a file that cannot be fetched is
    /// one error naming it.
    async fn object(&self, key: String) -> Vec<SourceResult> {
        let name = format!("s3://{}/{key}", self.config.bucket);
        let bytes = match self.fetch(&name, &key).await {
            Ok(bytes) => bytes,
            Err(error) => return vec![Err(error)],
        };
        let pushdown = self.pushdown.clone();
        let source_name = name.clone();
        let reading = tokio::task::spawn_blocking(move || {
            let mut items = Vec::new();
            read_bytes(&bytes, &name, &pushdown, &mut |item| {
                items.push(item);
                true
            });
            items
        });
        reading.await.unwrap_or_else(|error| {
            vec![Err(SourceError::Api {
                source_name,
                message: format!("reading the log file failed: {error}"),
            })]
        })
    }

    /// The object's bytes, as stored (gzipped).
    async fn fetch(&self, name: &str, key: &str) -> Result<Vec<u8>, SourceError> {
        let request = self
            .client
            .get_object()
            .bucket(&self.config.bucket)
            .key(key);
        let object = self
            .pacer
            .send(name, "GetObject", || request.clone().send())
            .await?;
        let failed = |message: String| SourceError::Api {
            source_name: name.to_owned(),
            message,
        };
        let mut body = object.body;
        let mut bytes = Vec::new();
        while let Some(chunk) = body
            .try_next()
            .await
            .map_err(|error| failed(format!("GetObject failed while reading the body: {error}")))?
        {
            if bytes.len() + chunk.len() > self.max_object {
                return Err(failed(format!(
                    "the object is larger than {} bytes, which no CloudTrail log file is; not read",
                    self.max_object
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io::Write;
    use std::sync::Mutex;

    use aws_sdk_s3::config::retry::RetryConfig;
    use aws_sdk_s3::operation::get_object::GetObjectOutput;
    use aws_sdk_s3::operation::list_objects_v2::ListObjectsV2Output;
    use aws_sdk_s3::primitives::ByteStream;
    use aws_sdk_s3::types::{CommonPrefix, Object};
    use aws_smithy_mocks::{Rule, RuleMode, mock, mock_client};
    use chrono::TimeZone;

    use super::*;
    use crate::ingest::Filter;
    use crate::ingest::source::SourceItem;

    const ROOT: &str = "audit/AWSLogs/o-abc123def4/";
    const ACCOUNT: &str = "111122223333";

    /// A ListObjectsV2 request as the test saw it: prefix, continuation token, delimiter.
    type Listed = (String, Option<String>, Option<String>);

    /// A page of a listing: keys, folders, the next page's token.
    type Page = (Vec<&'static str>, Vec<&'static str>, Option<&'static str>);

    /// A write by alice at `time`, as CloudTrail records it.
    fn record(id: &str, time: &str) -> String {
        format!(
            r#"{{"eventVersion":"1.11","userIdentity":{{"type":"IAMUser","accountId":"111122223333","userName":"alice"}},"eventTime":"{time}","eventSource":"sqs.amazonaws.com","eventName":"SetQueueAttributes","awsRegion":"eu-west-1","sourceIPAddress":"203.0.113.7","userAgent":"aws-cli/2.17.46","requestParameters":{{"queueUrl":"https://sqs/q"}},"responseElements":null,"eventID":"{id}","readOnly":false,"eventType":"AwsApiCall","recipientAccountId":"111122223333"}}"#
        )
    }

    /// A delivered log file: the records in CloudTrail's envelope, gzipped.
    fn log_file(records: &[String]) -> Vec<u8> {
        let text = format!("{{\"Records\":[{}]}}", records.join(","));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        gz.finish().unwrap()
    }

    /// The settings of an organisation trail with the prefix `audit`.
    fn config(accounts: &[&str], regions: &[&str]) -> S3Config {
        S3Config {
            bucket: "acme-trail".into(),
            prefix: Some("audit".into()),
            organization_id: Some("o-abc123def4".into()),
            accounts: accounts.iter().map(|a| (*a).to_owned()).collect(),
            regions: regions.iter().map(|r| (*r).to_owned()).collect(),
            region: "eu-west-1".into(),
            ..S3Config::default()
        }
    }

    /// 1 July 2024 12:00 to 2 July 06:00.
    fn two_days() -> Pushdown {
        Pushdown {
            filter: Filter {
                since: Utc.with_ymd_and_hms(2024, 7, 1, 12, 0, 0).single(),
                until: Utc.with_ymd_and_hms(2024, 7, 2, 6, 0, 0).single(),
                ..Filter::default()
            },
            ..Pushdown::default()
        }
    }

    /// Answers ListObjectsV2 from `pages` (prefix and token to keys, folders and the next
    /// token; anything else is an empty folder), recording each request in `listed`.
    fn lister(
        pages: Vec<(&'static str, Option<&'static str>, Page)>,
        listed: Arc<Mutex<Vec<Listed>>>,
    ) -> Rule {
        mock!(Client::list_objects_v2).then_compute_output(move |request| {
            let prefix = request.prefix().unwrap_or_default().to_owned();
            let token = request.continuation_token().map(str::to_owned);
            let delimiter = request.delimiter().map(str::to_owned);
            listed
                .lock()
                .unwrap()
                .push((prefix.clone(), token.clone(), delimiter));
            let page = pages
                .iter()
                .find(|(p, t, _)| *p == prefix && t.map(str::to_owned) == token);
            let mut output = ListObjectsV2Output::builder();
            if let Some((_, _, (keys, folders, next))) = page {
                for key in keys {
                    output = output.contents(Object::builder().key(*key).build());
                }
                for folder in folders {
                    output =
                        output.common_prefixes(CommonPrefix::builder().prefix(*folder).build());
                }
                output = output.set_next_continuation_token(next.map(str::to_owned));
            }
            output.build()
        })
    }

    /// Answers GetObject with `files` (key to bytes).
    fn getter(files: Vec<(&'static str, Vec<u8>)>) -> Rule {
        mock!(Client::get_object).then_compute_output(move |request| {
            let key = request.key().unwrap_or_default();
            let (_, bytes) = files.iter().find(|(k, _)| *k == key).unwrap();
            GetObjectOutput::builder()
                .body(ByteStream::from(bytes.clone()))
                .build()
        })
    }

    fn source(config: &S3Config, rules: &[&Rule]) -> S3Source {
        let client = mock_client!(aws_sdk_s3, RuleMode::MatchAny, rules, |b| b
            .retry_config(RetryConfig::disabled()));
        S3Source::with_client(config, client)
            .unwrap()
            .with_pacing(Pacing {
                min_interval: Duration::ZERO,
                backoff_base: Duration::from_millis(1),
                backoff_max: Duration::from_millis(2),
                max_retries: 1,
            })
    }

    /// What the stream gave, in words: an event id, a skipped record with its file, index
    /// and reason, or an error.
    async fn read(source: &S3Source, pushdown: &Pushdown) -> Vec<String> {
        let items: Vec<SourceResult> = source.calls(pushdown).collect().await;
        items
            .into_iter()
            .map(|item| match item {
                Ok(SourceItem::Call(call)) => call.event_id.clone(),
                Ok(SourceItem::Skipped(bad)) => format!("skipped {bad}"),
                Ok(SourceItem::Settled(_)) => "settled".to_owned(),
                Err(error) => format!("error {error}"),
            })
            .collect()
    }

    fn day_folder(region: &str, day: &str) -> String {
        format!("{ROOT}{ACCOUNT}/CloudTrail/{region}/2024/07/{day}/")
    }

    #[tokio::test]
    async fn two_days_in_two_regions_list_their_folders_and_the_day_after_page_by_page() {
        const FIRST: &str = "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/\
             111122223333_CloudTrail_eu-west-1_20240701T1205Z_a.json.gz";
        const SECOND: &str = "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/\
             111122223333_CloudTrail_eu-west-1_20240701T1210Z_b.json.gz";
        let listed = Arc::new(Mutex::new(Vec::new()));
        let folder = "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/";
        let list = lister(
            vec![
                (folder, None, (vec![FIRST], vec![], Some("page-2"))),
                (folder, Some("page-2"), (vec![SECOND], vec![], None)),
            ],
            listed.clone(),
        );
        let get = getter(vec![
            (FIRST, log_file(&[record("a", "2024-07-01T12:01:00Z")])),
            (SECOND, log_file(&[record("b", "2024-07-01T12:06:00Z")])),
        ]);
        let s3 = source(
            &config(&[ACCOUNT], &["eu-west-1", "us-east-1"]),
            &[&list, &get],
        );

        assert_eq!(read(&s3, &two_days()).await, ["a", "b"]);

        let expected: Vec<Listed> = vec![
            (day_folder("eu-west-1", "01"), None, None),
            (day_folder("eu-west-1", "01"), Some("page-2".into()), None),
            (day_folder("eu-west-1", "02"), None, None),
            (day_folder("eu-west-1", "03"), None, None),
            (day_folder("us-east-1", "01"), None, None),
            (day_folder("us-east-1", "02"), None, None),
            (day_folder("us-east-1", "03"), None, None),
        ];
        assert_eq!(*listed.lock().unwrap(), expected);
        assert_eq!(get.num_calls(), 2);
    }

    #[tokio::test]
    async fn without_accounts_or_regions_their_folders_are_listed() {
        let listed = Arc::new(Mutex::new(Vec::new()));
        let list = lister(
            vec![
                (
                    ROOT,
                    None,
                    (
                        vec![],
                        vec![
                            "audit/AWSLogs/o-abc123def4/111122223333/",
                            "audit/AWSLogs/o-abc123def4/README/",
                        ],
                        None,
                    ),
                ),
                (
                    "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/",
                    None,
                    (
                        vec![],
                        vec!["audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/us-east-1/"],
                        None,
                    ),
                ),
            ],
            listed.clone(),
        );
        let s3 = source(&config(&[], &[]), &[&list]);

        assert!(read(&s3, &two_days()).await.is_empty());

        let slash = Some("/".to_owned());
        let expected: Vec<Listed> = vec![
            (ROOT.to_owned(), None, slash.clone()),
            (format!("{ROOT}{ACCOUNT}/CloudTrail/"), None, slash),
            (day_folder("us-east-1", "01"), None, None),
            (day_folder("us-east-1", "02"), None, None),
            (day_folder("us-east-1", "03"), None, None),
        ];
        assert_eq!(*listed.lock().unwrap(), expected);

        // The run's accounts and regions are read without listing their folders.
        listed.lock().unwrap().clear();
        let mut pushdown = two_days();
        pushdown.filter.accounts = vec!["444455556666".into()];
        pushdown.filter.regions = vec!["eu-west-1".into()];
        assert!(read(&s3, &pushdown).await.is_empty());
        let other = |day: &str| format!("{ROOT}444455556666/CloudTrail/eu-west-1/2024/07/{day}/");
        let expected: Vec<Listed> = ["01", "02", "03"]
            .into_iter()
            .map(|day| (other(day), None, None))
            .collect();
        assert_eq!(*listed.lock().unwrap(), expected);
    }

    /// The folder of 1 July 2024 in eu-west-1 of the one account.
    const ONE_DAY: &str =
        "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/";

    /// 1 July 2024 00:00 to 12:00, in eu-west-1 of the one account: its folder (and 2 July's,
    /// empty) listed.
    fn one_day() -> (S3Config, Pushdown) {
        let pushdown = Pushdown {
            filter: Filter {
                since: Utc.with_ymd_and_hms(2024, 7, 1, 0, 0, 0).single(),
                until: Utc.with_ymd_and_hms(2024, 7, 1, 12, 0, 0).single(),
                ..Filter::default()
            },
            ..Pushdown::default()
        };
        (config(&[ACCOUNT], &["eu-west-1"]), pushdown)
    }

    /// S3's answer when the caller may not read: `AccessDenied`, not retried.
    fn denied<I, O, E>(rule: aws_smithy_mocks::RuleBuilder<I, O, E>) -> Rule
    where
        I: Send + Sync + std::fmt::Debug + 'static,
        O: Send + Sync + std::fmt::Debug + 'static,
        E: Send + Sync + std::fmt::Debug + std::error::Error + 'static,
    {
        let body = "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>";
        rule.sequence()
            .http_status(403, Some(body.to_owned()))
            .repeatedly()
            .build()
    }

    #[tokio::test]
    async fn a_malformed_record_in_a_gzipped_file_is_skipped_with_its_file_and_index() {
        const KEY: &str = "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/\
                           2024/07/01/111122223333_CloudTrail_eu-west-1_20240701T1005Z_m.json.gz";
        let first = record("a", "2024-07-01T10:00:00Z");
        let bad = record("bad", "yesterday");
        let third = record("c", "2024-07-01T10:02:00Z");
        let list = lister(
            vec![(ONE_DAY, None, (vec![KEY], vec![], None))],
            Arc::default(),
        );
        let get = getter(vec![(KEY, log_file(&[first.clone(), bad, third]))]);
        let (config, pushdown) = one_day();
        let s3 = source(&config, &[&list, &get]);

        // The bad record starts after `{"Records":[` (12 bytes), the first record and a comma.
        let offset = 12 + first.len() + 1;
        assert_eq!(
            read(&s3, &pushdown).await,
            [
                "a".to_owned(),
                format!(
                    "skipped s3://acme-trail/{KEY} record #1 (byte {offset}): \
                     eventTime `yesterday` is not an ISO 8601 timestamp"
                ),
                "c".to_owned(),
            ]
        );
    }

    #[tokio::test]
    async fn a_file_that_cannot_be_fetched_is_an_error_naming_it_and_the_others_are_read() {
        const KEYS: [&str; 3] = [
            "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/x.json.gz",
            "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/y.json.gz",
            "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/z.json.gz",
        ];
        let list = lister(
            vec![(ONE_DAY, None, (KEYS.to_vec(), vec![], None))],
            Arc::default(),
        );
        let failing = denied(
            mock!(Client::get_object).match_requests(|request| request.key() == Some(KEYS[1])),
        );
        let get = getter(vec![
            (KEYS[0], log_file(&[record("x", "2024-07-01T10:00:00Z")])),
            (KEYS[2], log_file(&[record("z", "2024-07-01T10:10:00Z")])),
        ]);
        let (config, pushdown) = one_day();
        let s3 = source(&config, &[&list, &failing, &get]);

        assert_eq!(
            read(&s3, &pushdown).await,
            [
                "x".to_owned(),
                format!(
                    "error s3://acme-trail/{}: GetObject failed: AccessDenied: Access Denied",
                    KEYS[1]
                ),
                "z".to_owned(),
            ]
        );
        assert_eq!((failing.num_calls(), get.num_calls()), (1, 2));
    }

    #[tokio::test]
    async fn an_object_larger_than_any_log_file_is_an_error_naming_it_and_not_held() {
        const KEYS: [&str; 2] = [
            "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/x.json.gz",
            "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/y.json.gz",
        ];
        let list = lister(
            vec![(ONE_DAY, None, (KEYS.to_vec(), vec![], None))],
            Arc::default(),
        );
        let small = log_file(&[record("x", "2024-07-01T10:00:00Z")]);
        let limit = small.len() + 16;
        let big = vec![b'x'; limit + 1];
        let get = getter(vec![(KEYS[0], small), (KEYS[1], big)]);
        let (config, pushdown) = one_day();
        let s3 = source(&config, &[&list, &get]).with_max_object(limit);

        assert_eq!(
            read(&s3, &pushdown).await,
            [
                "x".to_owned(),
                format!(
                    "error s3://acme-trail/{}: the object is larger than {limit} bytes, which no CloudTrail log file is; not read",
                    KEYS[1]
                ),
            ]
        );
    }

    #[tokio::test]
    async fn a_listing_that_fails_part_way_keeps_the_files_of_its_first_pages() {
        const KEY: &str =
            "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/x.json.gz";
        let failing = denied(
            mock!(Client::list_objects_v2)
                .match_requests(|request| request.continuation_token() == Some("page-2")),
        );
        let list = lister(
            vec![(ONE_DAY, None, (vec![KEY], vec![], Some("page-2")))],
            Arc::default(),
        );
        let get = getter(vec![(
            KEY,
            log_file(&[record("x", "2024-07-01T10:00:00Z")]),
        )]);
        let (config, pushdown) = one_day();
        let s3 = source(&config, &[&failing, &list, &get]);

        assert_eq!(
            read(&s3, &pushdown).await,
            [
                "x".to_owned(),
                format!(
                    "error s3://acme-trail/{ONE_DAY}: ListObjectsV2 failed: AccessDenied: Access Denied"
                ),
            ]
        );
    }

    #[tokio::test]
    async fn records_outside_the_window_are_dropped_by_the_pipeline_as_for_every_source() {
        const KEY: &str =
            "audit/AWSLogs/o-abc123def4/111122223333/CloudTrail/eu-west-1/2024/07/01/x.json.gz";
        let list = lister(
            vec![(ONE_DAY, None, (vec![KEY], vec![], None))],
            Arc::default(),
        );
        // The window ends at 12:00: the second record, at 13:00, is outside it.
        let get = getter(vec![(
            KEY,
            log_file(&[
                record("inside", "2024-07-01T10:00:00Z"),
                record("after", "2024-07-01T13:00:00Z"),
            ]),
        )]);
        let (config, pushdown) = one_day();
        let sources: Vec<Box<dyn Source>> = vec![Box::new(source(&config, &[&list, &get]))];
        let config = crate::attribute::AttributionConfig::default();
        let attributor = crate::attribute::Attributor::new(&config).unwrap();
        let request = crate::pipeline::Request::new(
            pushdown.filter,
            vec![crate::attribute::Verdict::OutOfBand],
        );

        let gathered = crate::pipeline::gather(&sources, &attributor, &request)
            .await
            .unwrap();

        assert_eq!(gathered.findings.filtered_out, 1);
        let calls = gathered.into_calls().unwrap();
        let ids: Vec<&str> = calls.iter().map(|call| call.event_id.as_str()).collect();
        assert_eq!(ids, ["inside"]);
    }
}

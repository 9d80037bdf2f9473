//! The LookupEvents and CloudTrail Lake sources against mocked CloudTrail clients: paging,
//! what is pushed down to the API, throttling and backoff, and malformed records.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use aws_sdk_cloudtrail::Client;
use aws_sdk_cloudtrail::config::retry::RetryConfig;
use aws_sdk_cloudtrail::operation::cancel_query::CancelQueryOutput;
use aws_sdk_cloudtrail::operation::describe_query::DescribeQueryOutput;
use aws_sdk_cloudtrail::operation::get_query_results::GetQueryResultsOutput;
use aws_sdk_cloudtrail::operation::lookup_events::LookupEventsOutput;
use aws_sdk_cloudtrail::operation::start_query::StartQueryOutput;
use aws_sdk_cloudtrail::types::{Event, LookupAttributeKey, QueryStatus};
use aws_smithy_mocks::{Rule, RuleMode, mock, mock_client};
use chrono::{TimeZone, Utc};
use futures::StreamExt;
use reconciler::ingest::aws::Pacing;
use reconciler::ingest::lake::{LakeSource, Polling};
use reconciler::ingest::lookup::LookupSource;
use reconciler::ingest::{Filter, Pushdown, Source, SourceError, SourceItem};

const THROTTLED: &str = r#"{"__type":"ThrottlingException","message":"Rate exceeded"}"#;
const STORE_ARN: &str =
    "arn:aws:cloudtrail:eu-west-1:111122223333:eventdatastore/EXAMPLE-f852-4e8f";

/// A CloudTrail record as the API returns it in `CloudTrailEvent` or `eventJson`.
fn record(id: &str) -> String {
    format!(
        r#"{{"eventVersion":"1.11","userIdentity":{{"type":"IAMUser","accountId":"111122223333","userName":"alice"}},"eventTime":"2024-07-01T10:00:00Z","eventSource":"ec2.amazonaws.com","eventName":"RunInstances","awsRegion":"eu-west-1","sourceIPAddress":"203.0.113.7","userAgent":"aws-cli/2.17.46","requestParameters":{{}},"responseElements":null,"eventID":"{id}","readOnly":false,"eventType":"AwsApiCall","managementEvent":true,"recipientAccountId":"111122223333","eventCategory":"Management"}}"#
    )
}

fn event(id: &str) -> Event {
    Event::builder()
        .event_id(id)
        .event_name("RunInstances")
        .read_only("false")
        .event_source("ec2.amazonaws.com")
        .cloud_trail_event(record(id))
        .build()
}

fn page(ids: &[&str], next_token: Option<&str>) -> LookupEventsOutput {
    let events = ids.iter().map(|id| event(id)).collect();
    LookupEventsOutput::builder()
        .set_events(Some(events))
        .set_next_token(next_token.map(str::to_owned))
        .build()
}

/// A client answering from `rules` in order, without the SDK's own retries.
fn client(rules: &[&Rule]) -> Client {
    mock_client!(aws_sdk_cloudtrail, RuleMode::Sequential, rules, |b| b
        .retry_config(RetryConfig::disabled()))
}

/// Pacing in milliseconds, so tests are quick but still wait.
fn fast() -> Pacing {
    Pacing {
        min_interval: Duration::from_millis(1),
        backoff_base: Duration::from_millis(4),
        backoff_max: Duration::from_millis(16),
        max_retries: 3,
    }
}

fn lookup(rules: &[&Rule]) -> LookupSource {
    LookupSource::with_clients([("eu-west-1".to_owned(), client(rules))]).with_pacing(fast())
}

async fn collect(source: &dyn Source, pushdown: &Pushdown) -> Vec<Result<SourceItem, SourceError>> {
    source.calls(pushdown).collect().await
}

/// The event ids of the calls, in stream order; fails on anything else.
fn ids(items: &[Result<SourceItem, SourceError>]) -> Vec<String> {
    items
        .iter()
        .map(|item| match item {
            Ok(SourceItem::Call(call)) => call.event_id.clone(),
            other => panic!("expected a call, got {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn lookup_follows_next_token_and_keeps_page_order() {
    let first = mock!(Client::lookup_events)
        .match_requests(|i| i.next_token().is_none() && i.max_results() == Some(50))
        .then_output(|| page(&["a", "b"], Some("t1")));
    let second = mock!(Client::lookup_events)
        .match_requests(|i| i.next_token() == Some("t1") && i.max_results() == Some(50))
        .then_output(|| page(&["c"], Some("t2")));
    let third = mock!(Client::lookup_events)
        .match_requests(|i| i.next_token() == Some("t2"))
        .then_output(|| page(&["d", "e"], None));
    let source = lookup(&[&first, &second, &third]);

    let items = collect(&source, &Pushdown::default()).await;

    assert_eq!(ids(&items), ["a", "b", "c", "d", "e"]);
    assert_eq!(
        [first.num_calls(), second.num_calls(), third.num_calls()],
        [1, 1, 1]
    );
    let Ok(SourceItem::Call(call)) = &items[2] else {
        panic!("a call")
    };
    assert_eq!(&*call.origin.source, "lookup-events:eu-west-1");
    assert_eq!((call.origin.index, call.origin.offset), (2, None));
    assert_eq!(source.describe(), "lookup-events: eu-west-1");
    assert!(source.filters_at_source());
}

#[tokio::test]
async fn lookup_sends_the_window_and_the_read_only_attribute() {
    let since = Utc.with_ymd_and_hms(2024, 7, 1, 0, 0, 0).unwrap();
    let until = Utc.with_ymd_and_hms(2024, 7, 2, 0, 0, 0).unwrap();
    let writes = mock!(Client::lookup_events)
        .match_requests(move |i| {
            let attributes = i.lookup_attributes();
            i.start_time().map(|t| t.secs()) == Some(since.timestamp())
                && i.end_time().map(|t| t.secs()) == Some(until.timestamp())
                && attributes.len() == 1
                && attributes[0].attribute_key() == &LookupAttributeKey::ReadOnly
                && attributes[0].attribute_value() == "false"
        })
        .then_output(|| page(&["a"], None));
    let everything = mock!(Client::lookup_events)
        .match_requests(|i| {
            i.lookup_attributes.is_none() && i.start_time().is_none() && i.end_time().is_none()
        })
        .then_output(|| page(&["b"], None));
    let source = lookup(&[&writes, &everything]);
    let pushdown = Pushdown {
        filter: Filter {
            since: Some(since),
            until: Some(until),
            ..Filter::default()
        },
        writes_only: true,
        drop_terraform: true,
        attribution: None,
        drop_records: false,
    };

    assert_eq!(ids(&collect(&source, &pushdown).await), ["a"]);
    assert_eq!(ids(&collect(&source, &Pushdown::default()).await), ["b"]);
    assert_eq!((writes.num_calls(), everything.num_calls()), (1, 1));
}

#[tokio::test]
async fn lookup_backs_off_when_throttled_then_delivers_everything() {
    let throttled = mock!(Client::lookup_events)
        .match_requests(|i| i.next_token().is_none())
        .sequence()
        .http_status(400, Some(THROTTLED.to_owned()))
        .times(2)
        .build();
    let first = mock!(Client::lookup_events)
        .match_requests(|i| i.next_token().is_none())
        .then_output(|| page(&["a", "b"], Some("t1")));
    let throttled_again = mock!(Client::lookup_events)
        .match_requests(|i| i.next_token() == Some("t1"))
        .sequence()
        .http_status(400, Some(THROTTLED.to_owned()))
        .build();
    let second = mock!(Client::lookup_events)
        .match_requests(|i| i.next_token() == Some("t1"))
        .then_output(|| page(&["c"], None));
    let source = lookup(&[&throttled, &first, &throttled_again, &second]);

    let started = Instant::now();
    let items = collect(&source, &Pushdown::default()).await;

    assert_eq!(ids(&items), ["a", "b", "c"]);
    assert_eq!(throttled.num_calls(), 2);
    assert_eq!(throttled_again.num_calls(), 1);
    // Backoffs of at least 2 ms, 4 ms (first page) and 2 ms (second page) were waited out.
    assert!(
        started.elapsed() >= Duration::from_millis(8),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn lookup_gives_up_after_bounded_retries() {
    let throttled = mock!(Client::lookup_events)
        .sequence()
        .http_status(400, Some(THROTTLED.to_owned()))
        .repeatedly()
        .build();
    let source = lookup(&[&throttled]);

    let items = collect(&source, &Pushdown::default()).await;

    assert_eq!(throttled.num_calls(), 4, "one try and three retries");
    assert_eq!(items.len(), 1);
    match &items[0] {
        Err(SourceError::Api {
            source_name,
            message,
        }) => {
            assert_eq!(source_name, "lookup-events:eu-west-1");
            assert!(message.contains("ThrottlingException"), "{message}");
            assert!(message.contains("Rate exceeded"), "{message}");
            assert!(message.contains("3 retries"), "{message}");
        }
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn lookup_does_not_retry_other_errors() {
    let denied = mock!(Client::lookup_events)
        .sequence()
        .http_status(
            400,
            Some(r#"{"__type":"InvalidTimeRangeException","message":"bad range"}"#.to_owned()),
        )
        .repeatedly()
        .build();
    let source = lookup(&[&denied]);

    let items = collect(&source, &Pushdown::default()).await;

    assert_eq!(denied.num_calls(), 1);
    assert!(
        matches!(&items[..], [Err(SourceError::Api { message, .. })] if message.contains("InvalidTimeRangeException"))
    );
}

#[tokio::test]
async fn lookup_skips_malformed_records_and_goes_on() {
    let rule = mock!(Client::lookup_events).then_output(|| {
        LookupEventsOutput::builder()
            .events(event("a"))
            .events(
                Event::builder()
                    .event_id("broken")
                    .cloud_trail_event(r#"{"eventVersion":"1.11","eventTime":"#)
                    .build(),
            )
            .events(Event::builder().event_id("empty").build())
            .events(event("d"))
            .build()
    });
    let source = lookup(&[&rule]);

    let items = collect(&source, &Pushdown::default()).await;

    assert_eq!(items.len(), 4);
    assert!(matches!(&items[0], Ok(SourceItem::Call(c)) if c.event_id == "a"));
    assert!(matches!(&items[3], Ok(SourceItem::Call(c)) if c.event_id == "d"));
    for (position, item) in [(1, &items[1]), (2, &items[2])] {
        let Ok(SourceItem::Skipped(bad)) = item else {
            panic!("record {position} should be skipped: {item:?}")
        };
        assert_eq!(bad.origin.index, position);
        assert_eq!(&*bad.origin.source, "lookup-events:eu-west-1");
    }
    let Ok(SourceItem::Skipped(bad)) = &items[2] else {
        panic!("skipped")
    };
    assert!(bad.reason.contains("CloudTrailEvent"), "{}", bad.reason);
}

#[tokio::test]
async fn lookup_reads_every_region() {
    let west = mock!(Client::lookup_events).then_output(|| page(&["w1", "w2"], None));
    let east = mock!(Client::lookup_events).then_output(|| page(&["e1"], None));
    let source = LookupSource::with_clients([
        ("eu-west-1".to_owned(), client(&[&west])),
        ("us-east-1".to_owned(), client(&[&east])),
    ])
    .with_pacing(fast());

    let items = collect(&source, &Pushdown::default()).await;

    let mut by_source: Vec<(String, String)> = items
        .iter()
        .map(|item| match item {
            Ok(SourceItem::Call(c)) => (c.origin.source.to_string(), c.event_id.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    by_source.sort();
    assert_eq!(
        by_source,
        [
            ("lookup-events:eu-west-1".to_owned(), "w1".to_owned()),
            ("lookup-events:eu-west-1".to_owned(), "w2".to_owned()),
            ("lookup-events:us-east-1".to_owned(), "e1".to_owned()),
        ]
    );
}

fn lake(rules: &[&Rule]) -> LakeSource {
    let polling = Polling {
        first: Duration::from_millis(1),
        max: Duration::from_millis(2),
    };
    LakeSource::with_client(STORE_ARN, "eu-west-1", client(rules))
        .unwrap()
        .with_timing(fast(), polling)
}

fn status(status: QueryStatus) -> DescribeQueryOutput {
    DescribeQueryOutput::builder()
        .query_id("q-1")
        .query_status(status)
        .build()
}

fn rows(ids: &[&str], next_token: Option<&str>) -> GetQueryResultsOutput {
    let rows = ids
        .iter()
        .map(|id| vec![HashMap::from([("eventJson".to_owned(), record(id))])])
        .collect();
    GetQueryResultsOutput::builder()
        .query_status(QueryStatus::Finished)
        .set_query_result_rows(Some(rows))
        .set_next_token(next_token.map(str::to_owned))
        .build()
}

#[tokio::test]
async fn lake_waits_for_the_query_then_pages_results() {
    let sql = "SELECT eventJson FROM EXAMPLE-f852-4e8f WHERE eventTime >= '2024-07-01 00:00:00' \
               AND awsRegion IN ('eu-west-1') AND (readOnly = false OR readOnly IS NULL) \
               AND (errorCode IS NULL OR errorCode = '') AND (userAgent IS NULL OR (userAgent NOT LIKE \
               '%HashiCorp/1.0 Terraform/%' AND userAgent NOT LIKE '%terraform-provider-aws/%'))";
    let start = mock!(Client::start_query)
        .match_requests(move |i| i.query_statement() == Some(sql))
        .then_output(|| StartQueryOutput::builder().query_id("q-1").build());
    let describe = mock!(Client::describe_query)
        .match_requests(|i| i.query_id() == Some("q-1"))
        .sequence()
        .output(|| status(QueryStatus::Queued))
        .output(|| status(QueryStatus::Running))
        .output(|| status(QueryStatus::Finished))
        .build();
    let first = mock!(Client::get_query_results)
        .match_requests(|i| i.query_id() == Some("q-1") && i.next_token().is_none())
        .then_output(|| rows(&["a", "b"], Some("p2")));
    let second = mock!(Client::get_query_results)
        .match_requests(|i| i.query_id() == Some("q-1") && i.next_token() == Some("p2"))
        .then_output(|| rows(&["c"], None));
    let source = lake(&[&start, &describe, &first, &second]);
    let pushdown = Pushdown {
        filter: Filter {
            since: Utc.with_ymd_and_hms(2024, 7, 1, 0, 0, 0).single(),
            regions: vec!["eu-west-1".into()],
            ..Filter::default()
        },
        writes_only: true,
        drop_terraform: true,
        attribution: None,
        drop_records: false,
    };

    let items = collect(&source, &pushdown).await;

    assert_eq!(ids(&items), ["a", "b", "c"]);
    assert_eq!(start.num_calls(), 1);
    assert_eq!(describe.num_calls(), 3);
    assert_eq!((first.num_calls(), second.num_calls()), (1, 1));
    let Ok(SourceItem::Call(call)) = &items[2] else {
        panic!("a call")
    };
    assert_eq!(&*call.origin.source, "lake:EXAMPLE-f852-4e8f");
    assert_eq!(call.origin.index, 2);
    assert_eq!(source.describe(), "lake: EXAMPLE-f852-4e8f (eu-west-1)");
    assert!(source.filters_at_source());
}

#[tokio::test]
async fn lake_reports_a_failed_query() {
    let start = mock!(Client::start_query)
        .then_output(|| StartQueryOutput::builder().query_id("q-1").build());
    let describe = mock!(Client::describe_query)
        .sequence()
        .output(|| status(QueryStatus::Running))
        .output(|| {
            DescribeQueryOutput::builder()
                .query_id("q-1")
                .query_status(QueryStatus::Failed)
                .error_message("COLUMN_NOT_FOUND: line 1:8: Column 'eventjsn' cannot be resolved")
                .build()
        })
        .build();
    let source = lake(&[&start, &describe]);

    let items = collect(&source, &Pushdown::default()).await;

    assert_eq!(describe.num_calls(), 2);
    match &items[..] {
        [
            Err(SourceError::Api {
                source_name,
                message,
            }),
        ] => {
            assert_eq!(source_name, "lake:EXAMPLE-f852-4e8f");
            assert!(message.contains("FAILED"), "{message}");
            assert!(message.contains("COLUMN_NOT_FOUND"), "{message}");
        }
        other => panic!("expected one API error, got {other:?}"),
    }
}

#[tokio::test]
async fn lake_skips_rows_without_a_record() {
    let start = mock!(Client::start_query)
        .then_output(|| StartQueryOutput::builder().query_id("q-1").build());
    let describe = mock!(Client::describe_query).then_output(|| status(QueryStatus::Finished));
    let results = mock!(Client::get_query_results).then_output(|| {
        GetQueryResultsOutput::builder()
            .query_status(QueryStatus::Finished)
            .query_result_rows(vec![HashMap::from([("eventjson".to_owned(), record("a"))])])
            .query_result_rows(vec![HashMap::from([(
                "eventjson".to_owned(),
                "not json".to_owned(),
            )])])
            .query_result_rows(vec![HashMap::from([(
                "eventName".to_owned(),
                "X".to_owned(),
            )])])
            .build()
    });
    let source = lake(&[&start, &describe, &results]);

    let items = collect(&source, &Pushdown::default()).await;

    assert_eq!(items.len(), 3);
    assert!(matches!(&items[0], Ok(SourceItem::Call(c)) if c.event_id == "a"));
    assert!(matches!(&items[1], Ok(SourceItem::Skipped(b)) if b.origin.index == 1));
    assert!(
        matches!(&items[2], Ok(SourceItem::Skipped(b)) if b.origin.index == 2 && b.reason.contains("eventJson"))
    );
}

#[test]
fn lake_refuses_an_unsafe_store_id() {
    let client = client(&[]);
    assert!(LakeSource::with_client("abc; DROP TABLE x", "eu-west-1", client).is_err());
}

#[tokio::test]
async fn a_query_whose_status_cannot_be_read_is_cancelled() {
    // The query started, then DescribeQuery fails for good (access denied, not retried): the
    // query must not be left running and billed.
    let start = mock!(Client::start_query)
        .then_output(|| StartQueryOutput::builder().query_id("q-7").build());
    let describe = mock!(Client::describe_query)
        .sequence()
        .http_status(
            400,
            Some(r#"{"__type":"AccessDeniedException","message":"not allowed"}"#.to_owned()),
        )
        .build();
    let cancel = mock!(Client::cancel_query)
        .match_requests(|request| request.query_id() == Some("q-7"))
        .then_output(|| {
            CancelQueryOutput::builder()
                .query_id("q-7")
                .query_status(QueryStatus::Cancelled)
                .build()
                .expect("query id and status are set")
        });
    let source = lake(&[&start, &describe, &cancel]);

    let items = collect(&source, &Pushdown::default()).await;

    assert!(
        matches!(&items[..], [Err(SourceError::Api { .. })]),
        "{items:?}"
    );
    assert_eq!(cancel.num_calls(), 1);
}

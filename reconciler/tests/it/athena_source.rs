//! The Athena source against a mocked Athena client: the SQL it sends (window on the column and
//! the date partition, accounts and regions on columns and partitions, writes only), waiting
//! for the query, paging results, and rows rebuilt into the CloudTrail records they came from.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use aws_sdk_athena::Client;
use aws_sdk_athena::config::retry::RetryConfig;
use aws_sdk_athena::operation::get_query_execution::GetQueryExecutionOutput;
use aws_sdk_athena::operation::get_query_results::GetQueryResultsOutput;
use aws_sdk_athena::operation::start_query_execution::StartQueryExecutionOutput;
use aws_sdk_athena::types::{
    ColumnInfo, Datum, QueryExecution, QueryExecutionState, QueryExecutionStatus, ResultSet,
    ResultSetMetadata, Row,
};
use aws_smithy_mocks::{Rule, RuleMode, mock, mock_client};
use chrono::{TimeZone, Utc};
use futures::StreamExt;
use reconciler::ingest::athena::{AthenaConfig, AthenaSource, Partitions, query_sql, record_of};
use reconciler::ingest::aws::Pacing;
use reconciler::ingest::lake::Polling;
use reconciler::ingest::{Filter, Pushdown, Source, SourceItem};
use serde_json::{Value, json};

fn config() -> AthenaConfig {
    AthenaConfig {
        database: "security".into(),
        table: "org_trail".into(),
        workgroup: Some("retrace".into()),
        output_location: Some("s3://acme-athena-results/retrace/".into()),
        region: "eu-west-1".into(),
        profile: None,
        endpoint_url: None,
        partitions: Partitions {
            date: "timestamp".into(),
            account: Some("account".into()),
            region: Some("region".into()),
        },
    }
}

fn pushdown() -> Pushdown {
    Pushdown {
        filter: Filter {
            since: Utc.with_ymd_and_hms(2026, 11, 24, 2, 0, 0).single(),
            until: Utc.with_ymd_and_hms(2026, 11, 25, 2, 0, 0).single(),
            accounts: vec!["111122223333".into()],
            regions: vec!["eu-west-1".into(), "us-east-1".into()],
        },
        writes_only: true,
        drop_terraform: true,
        attribution: None,
        drop_records: false,
    }
}

/// The query pushes everything down, and prunes partitions by day, account and region.
#[test]
fn the_window_accounts_regions_and_verdicts_go_into_the_sql() {
    let sql = query_sql(&config(), &pushdown()).unwrap();
    let expected_where = "WHERE eventtime >= '2026-11-24T02:00:00Z' AND \"timestamp\" >= '2026/11/24' \
        AND eventtime < '2026-11-25T02:00:00Z' AND \"timestamp\" <= '2026/11/26' \
        AND recipientaccountid IN ('111122223333') AND \"account\" IN ('111122223333') \
        AND awsregion IN ('eu-west-1', 'us-east-1') AND \"region\" IN ('eu-west-1', 'us-east-1') \
        AND (readonly = 'false' OR readonly IS NULL) AND (errorcode IS NULL OR errorcode = '') \
        AND (useragent IS NULL OR (useragent NOT LIKE '%HashiCorp/1.0 Terraform/%' \
        AND useragent NOT LIKE '%terraform-provider-aws/%'))";
    assert!(sql.ends_with(expected_where), "{sql}");
    assert!(sql.contains("FROM \"security\".\"org_trail\""), "{sql}");
    assert!(
        sql.contains("json_format(CAST(useridentity AS JSON)) AS useridentity"),
        "{sql}"
    );
}

#[test]
fn values_are_escaped_and_names_checked() {
    let mut odd = pushdown();
    odd.filter.accounts = vec!["1111' OR '1'='1".into()];
    let sql = query_sql(&config(), &odd).unwrap();
    assert!(sql.contains("IN ('1111'' OR ''1''=''1')"), "{sql}");
    let mut bad = config();
    bad.table = "trail\"; DROP TABLE x".into();
    let error = query_sql(&bad, &pushdown()).unwrap_err().to_string();
    assert!(error.contains("not a plain name"), "{error}");
}

/// A CloudTrail record written by hand as CloudTrail delivers it: an assumed-role session
/// with its session context, and a resources array.
fn original() -> Value {
    json!({
        "eventVersion": "1.09",
        "userIdentity": {
            "type": "AssumedRole",
            "principalId": "AROAEXAMPLEID:alice",
            "arn": "arn:aws:sts::111122223333:assumed-role/Admin/alice",
            "accountId": "111122223333",
            "accessKeyId": "ASIAEXAMPLEKEYID01",
            "sessionContext": {
                "sessionIssuer": {"type": "Role", "principalId": "AROAEXAMPLEID",
                    "arn": "arn:aws:iam::111122223333:role/Admin", "accountId": "111122223333",
                    "userName": "Admin"},
                "attributes": {"creationDate": "2026-11-24T09:58:01Z", "mfaAuthenticated": "true"}
            }
        },
        "eventTime": "2026-11-24T10:02:11Z",
        "eventSource": "kms.amazonaws.com",
        "eventName": "ScheduleKeyDeletion",
        "awsRegion": "eu-west-1",
        "sourceIPAddress": "198.51.100.23",
        "userAgent": "aws-cli/2.22.4 md/command#kms.schedule-key-deletion",
        "requestParameters": {"keyId": "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab", "pendingWindowInDays": 7},
        "responseElements": {"keyId": "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab", "deletionDate": "Dec 1, 2026, 12:00:00 AM", "keyState": "PendingDeletion", "pendingWindowInDays": 7},
        "requestID": "b1c2d3e4-0000-4000-8000-000000000001",
        "eventID": "e1f2a3b4-0000-4000-8000-000000000001",
        "readOnly": false,
        "resources": [{"accountId": "111122223333", "type": "AWS::KMS::Key",
            "ARN": "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"}],
        "eventType": "AwsApiCall",
        "recipientAccountId": "111122223333"
    })
}

/// The row Athena returns for `original()`: lower-case column names, structs as JSON with
/// lower-case field names and nulls for what the record lacks, JSON columns as text.
fn row() -> (Vec<String>, Vec<Option<String>>) {
    let r = original();
    let text = |v: &Value| Some(v.to_string());
    let plain = |v: &Value| v.as_str().map(str::to_owned);
    let identity = json!({"type": "AssumedRole", "principalid": "AROAEXAMPLEID:alice",
        "arn": "arn:aws:sts::111122223333:assumed-role/Admin/alice", "accountid": "111122223333",
        "invokedby": null, "accesskeyid": "ASIAEXAMPLEKEYID01", "username": null,
        "sessioncontext": {"attributes": {"mfaauthenticated": "true", "creationdate": "2026-11-24T09:58:01Z"},
            "sessionissuer": {"type": "Role", "principalid": "AROAEXAMPLEID",
                "arn": "arn:aws:iam::111122223333:role/Admin", "accountid": "111122223333", "username": "Admin"},
            "ec2roledelivery": null, "webidfederationdata": null}});
    let resources = json!([{"arn": "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        "accountid": "111122223333", "type": "AWS::KMS::Key"}]);
    let columns = [
        ("eventversion", plain(&r["eventVersion"])),
        ("useridentity", text(&identity)),
        ("eventtime", plain(&r["eventTime"])),
        ("eventsource", plain(&r["eventSource"])),
        ("eventname", plain(&r["eventName"])),
        ("awsregion", plain(&r["awsRegion"])),
        ("sourceipaddress", plain(&r["sourceIPAddress"])),
        ("useragent", plain(&r["userAgent"])),
        ("errorcode", None),
        ("errormessage", None),
        ("requestparameters", text(&r["requestParameters"])),
        ("responseelements", text(&r["responseElements"])),
        ("additionaleventdata", None),
        ("requestid", plain(&r["requestID"])),
        ("eventid", plain(&r["eventID"])),
        ("resources", text(&resources)),
        ("eventtype", plain(&r["eventType"])),
        ("apiversion", None),
        ("readonly", Some("false".to_owned())),
        ("recipientaccountid", plain(&r["recipientAccountId"])),
        ("serviceeventdetails", None),
        ("sharedeventid", None),
        ("vpcendpointid", None),
    ];
    (
        columns.iter().map(|(c, _)| (*c).to_owned()).collect(),
        columns.iter().map(|(_, v)| v.clone()).collect(),
    )
}

#[test]
fn a_row_is_rebuilt_into_the_record_it_came_from() {
    let (columns, values) = row();
    assert_eq!(record_of(&columns, &values), original());
}

fn athena(rules: &[&Rule]) -> AthenaSource {
    let client: Client = mock_client!(aws_sdk_athena, RuleMode::Sequential, rules, |b| b
        .retry_config(RetryConfig::disabled()));
    let fast = Pacing {
        min_interval: Duration::from_millis(1),
        backoff_base: Duration::from_millis(4),
        backoff_max: Duration::from_millis(16),
        max_retries: 3,
    };
    let polling = Polling {
        first: Duration::from_millis(1),
        max: Duration::from_millis(2),
    };
    AthenaSource::with_client(&config(), client)
        .unwrap()
        .with_timing(fast, polling)
}

fn state(state: QueryExecutionState, reason: Option<&str>) -> GetQueryExecutionOutput {
    let status = QueryExecutionStatus::builder()
        .state(state)
        .set_state_change_reason(reason.map(str::to_owned))
        .build();
    GetQueryExecutionOutput::builder()
        .query_execution(
            QueryExecution::builder()
                .query_execution_id("qe-1")
                .status(status)
                .build(),
        )
        .build()
}

fn result_page(header: bool, ids: &[&str], next: Option<&str>) -> GetQueryResultsOutput {
    let (columns, values) = row();
    let datum = |v: &Option<String>| Datum::builder().set_var_char_value(v.clone()).build();
    let mut rows = Vec::new();
    if header {
        rows.push(
            Row::builder()
                .set_data(Some(
                    columns.iter().map(|c| datum(&Some(c.clone()))).collect(),
                ))
                .build(),
        );
    }
    for id in ids {
        let eventid = columns.iter().position(|c| c == "eventid").unwrap();
        let mut values = values.clone();
        values[eventid] = Some((*id).to_owned());
        rows.push(
            Row::builder()
                .set_data(Some(values.iter().map(datum).collect()))
                .build(),
        );
    }
    let metadata = ResultSetMetadata::builder()
        .set_column_info(Some(
            columns
                .iter()
                .map(|c| {
                    ColumnInfo::builder()
                        .name(c)
                        .r#type("varchar")
                        .build()
                        .unwrap()
                })
                .collect(),
        ))
        .build();
    GetQueryResultsOutput::builder()
        .result_set(
            ResultSet::builder()
                .set_rows(Some(rows))
                .result_set_metadata(metadata)
                .build(),
        )
        .set_next_token(next.map(str::to_owned))
        .build()
}

#[tokio::test]
async fn the_source_waits_for_the_query_then_pages_its_rows() {
    let expected = query_sql(&config(), &pushdown()).unwrap();
    let start = mock!(Client::start_query_execution)
        .match_requests(move |i| {
            i.query_string() == Some(expected.as_str())
                && i.work_group() == Some("retrace")
                && i.query_execution_context().and_then(|c| c.database()) == Some("security")
                && i.result_configuration().and_then(|r| r.output_location())
                    == Some("s3://acme-athena-results/retrace/")
        })
        .then_output(|| {
            StartQueryExecutionOutput::builder()
                .query_execution_id("qe-1")
                .build()
        });
    let poll = mock!(Client::get_query_execution)
        .sequence()
        .output(|| state(QueryExecutionState::Queued, None))
        .output(|| state(QueryExecutionState::Running, None))
        .output(|| state(QueryExecutionState::Succeeded, None))
        .build();
    let first = mock!(Client::get_query_results)
        .match_requests(|i| i.next_token().is_none())
        .then_output(|| result_page(true, &["ev-1", "ev-2"], Some("t2")));
    let second = mock!(Client::get_query_results)
        .match_requests(|i| i.next_token() == Some("t2"))
        .then_output(|| result_page(false, &["ev-3"], None));
    let source = athena(&[&start, &poll, &first, &second]);
    let items: Vec<_> = source.calls(&pushdown()).collect().await;
    let ids: Vec<String> = items
        .iter()
        .map(|item| match item {
            Ok(SourceItem::Call(call)) => call.event_id.clone(),
            other => panic!("expected a call, got {other:?}"),
        })
        .collect();
    assert_eq!(ids, ["ev-1", "ev-2", "ev-3"]);
    let Ok(SourceItem::Call(call)) = &items[0] else {
        unreachable!()
    };
    assert_eq!(call.event_name, "ScheduleKeyDeletion");
    assert_eq!(
        call.identity.arn.as_deref(),
        Some("arn:aws:sts::111122223333:assumed-role/Admin/alice")
    );
    assert!(!call.read_only);
}

#[tokio::test]
async fn a_failed_query_is_an_error_with_athenas_reason() {
    let start = mock!(Client::start_query_execution).then_output(|| {
        StartQueryExecutionOutput::builder()
            .query_execution_id("qe-1")
            .build()
    });
    let poll = mock!(Client::get_query_execution).then_output(|| {
        state(
            QueryExecutionState::Failed,
            Some("TABLE_NOT_FOUND: line 1:15: Table awsdatacatalog.security.org_trail does not exist"),
        )
    });
    let stop = mock!(Client::stop_query_execution).then_output(|| {
        aws_sdk_athena::operation::stop_query_execution::StopQueryExecutionOutput::builder().build()
    });
    let source = athena(&[&start, &poll, &stop]);
    let items: Vec<_> = source.calls(&pushdown()).collect().await;
    let error = items[0].as_ref().unwrap_err().to_string();
    assert!(
        error.contains("ended FAILED") && error.contains("TABLE_NOT_FOUND"),
        "{error}"
    );
    assert_eq!(
        stop.num_calls(),
        0,
        "a query that ended is not stopped again"
    );
}

#[tokio::test]
async fn a_query_whose_state_cannot_be_read_is_stopped() {
    // The query started, then GetQueryExecution is refused for good: the query must not be
    // left running and billed.
    let start = mock!(Client::start_query_execution).then_output(|| {
        StartQueryExecutionOutput::builder()
            .query_execution_id("qe-9")
            .build()
    });
    let poll = mock!(Client::get_query_execution)
        .sequence()
        .http_status(
            400,
            Some(r#"{"__type":"AccessDeniedException","Message":"not allowed"}"#.to_owned()),
        )
        .build();
    let stop = mock!(Client::stop_query_execution)
        .match_requests(|request| request.query_execution_id() == Some("qe-9"))
        .then_output(|| {
            aws_sdk_athena::operation::stop_query_execution::StopQueryExecutionOutput::builder()
                .build()
        });
    let source = athena(&[&start, &poll, &stop]);
    let items: Vec<_> = source.calls(&pushdown()).collect().await;
    assert!(items.len() == 1 && items[0].is_err(), "{items:?}");
    assert_eq!(stop.num_calls(), 1);
}

//! An organisation trail in S3, read through Amazon Athena with one SQL query over the
//! standard CloudTrail table (the one the AWS documentation creates, with partition
//! projection): the time window goes both on `eventtime` and on the date partition so Athena
//! reads only the days asked for, accounts and regions go on their columns and partitions, and
//! when only writes are wanted the cheap verdicts go into the WHERE clause too, so the events
//! of a large organisation are filtered where they live.
//!
//! The table's columns are lower case and its nested columns are structs. The query turns the
//! structs into JSON (`json_format(CAST(... AS JSON))`), and each row is rebuilt into a
//! CloudTrail record with CloudTrail's own field names (see [`FIELD_NAMES`]) before
//! [`Call::parse`](super::Call::parse) reads it; the request, response and additional data are
//! JSON text in the table and are embedded as JSON.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use aws_sdk_athena::Client;
use aws_sdk_athena::types::{QueryExecutionContext, QueryExecutionState, ResultConfiguration};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use futures::stream;
use serde_json::{Map, Value};

use super::aws::{Pacer, Pacing, load_settings, record_item};
use super::filter::Pushdown;
use super::lake::literals;
use super::query::{self, Canceller, Polling, Service, State, api_error};
use super::record::Origin;
use super::source::{CallStream, Source, SourceError, SourceItem, SourceResult};

/// `[sources.athena]`: the CloudTrail table in Athena.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct AthenaConfig {
    /// The database (Glue catalog) holding the table.
    pub database: String,
    /// The CloudTrail table.
    pub table: String,
    /// The workgroup (default `primary`).
    #[serde(default)]
    pub workgroup: Option<String>,
    /// Where Athena writes results (`s3://bucket/prefix/`), unless the workgroup sets it.
    #[serde(default)]
    pub output_location: Option<String>,
    /// The region of Athena and the table.
    pub region: String,
    /// A named profile; the default credential chain otherwise.
    #[serde(default)]
    pub profile: Option<String>,
    /// Endpoint override (a VPC endpoint, or a test server).
    #[serde(default)]
    pub endpoint_url: Option<String>,
    /// The partition columns of the table.
    #[serde(default)]
    pub partitions: Partitions,
}

/// The partition columns of a CloudTrail table with partition projection.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Partitions {
    /// The date partition, `yyyy/MM/dd` (the AWS documentation's `timestamp`).
    #[serde(default = "date_column")]
    pub date: String,
    /// The account partition of an organisation trail's table, if it has one.
    #[serde(default)]
    pub account: Option<String>,
    /// The region partition, if the table has one.
    #[serde(default)]
    pub region: Option<String>,
}

impl Default for Partitions {
    fn default() -> Self {
        Self {
            date: date_column(),
            account: None,
            region: None,
        }
    }
}

fn date_column() -> String {
    "timestamp".into()
}

/// A problem with the Athena source's settings.
#[derive(Debug, thiserror::Error)]
pub enum AthenaError {
    /// A database, table or column name that cannot stand in SQL as written.
    #[error(
        "`{0}` is not a plain name: database, table and partition names take letters, digits and underscores"
    )]
    BadName(String),
}

/// The columns read, as the query names them: plain columns, and structs turned into JSON.
const COLUMNS: &[&str] = &[
    "eventversion",
    "json_format(CAST(useridentity AS JSON)) AS useridentity",
    "eventtime",
    "eventsource",
    "eventname",
    "awsregion",
    "sourceipaddress",
    "useragent",
    "errorcode",
    "errormessage",
    "requestparameters",
    "responseelements",
    "additionaleventdata",
    "requestid",
    "eventid",
    "json_format(CAST(resources AS JSON)) AS resources",
    "eventtype",
    "apiversion",
    "readonly",
    "recipientaccountid",
    "serviceeventdetails",
    "sharedeventid",
    "vpcendpointid",
];

/// CloudTrail's field names (the record contents reference), found by their lower-case form:
/// Athena's columns and struct fields are lower case.
pub const FIELD_NAMES: &[&str] = &[
    "eventVersion",
    "userIdentity",
    "eventTime",
    "eventSource",
    "eventName",
    "awsRegion",
    "sourceIPAddress",
    "userAgent",
    "errorCode",
    "errorMessage",
    "requestParameters",
    "responseElements",
    "additionalEventData",
    "requestID",
    "eventID",
    "resources",
    "eventType",
    "apiVersion",
    "readOnly",
    "recipientAccountId",
    "serviceEventDetails",
    "sharedEventID",
    "vpcEndpointId",
    "eventCategory",
    "managementEvent",
    "tlsDetails",
    "type",
    "principalId",
    "arn",
    "accountId",
    "invokedBy",
    "accessKeyId",
    "userName",
    "sessionContext",
    "attributes",
    "mfaAuthenticated",
    "creationDate",
    "sessionIssuer",
    "webIdFederationData",
    "federatedProvider",
    "sourceIdentity",
    "ec2RoleDelivery",
    "ec2IssuedInVPC",
    "identityProvider",
    "credentialId",
    "onBehalfOf",
    "userId",
    "identityStoreArn",
    "tlsVersion",
    "cipherSuite",
    "clientProvidedHostHeader",
];

static BY_LOWER: LazyLock<HashMap<String, &'static str>> = LazyLock::new(|| {
    FIELD_NAMES
        .iter()
        .map(|name| (name.to_ascii_lowercase(), *name))
        .collect()
});

/// Columns holding JSON text, embedded as JSON.
const JSON_TEXT: &[&str] = &[
    "requestparameters",
    "responseelements",
    "additionaleventdata",
    "serviceeventdetails",
];

/// Columns the query made JSON from structs, whose field names are restored.
const STRUCTS: &[&str] = &["useridentity", "resources", "tlsdetails"];

/// Checks a name that stands in SQL unquoted.
fn plain(name: &str) -> Result<&str, AthenaError> {
    let ok = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(name)
    } else {
        Err(AthenaError::BadName(name.to_owned()))
    }
}

/// The query for the records `pushdown` asks for.
pub fn query_sql(config: &AthenaConfig, pushdown: &Pushdown) -> Result<String, AthenaError> {
    let table = format!(
        "\"{}\".\"{}\"",
        plain(&config.database)?,
        plain(&config.table)?
    );
    let date = plain(&config.partitions.date)?;
    let filter = &pushdown.filter;
    let mut conditions = Vec::new();
    if let Some(since) = filter.since {
        conditions.push(format!("eventtime >= '{}'", iso(since)));
        conditions.push(format!("\"{date}\" >= '{}'", day(since)));
    }
    if let Some(until) = filter.until {
        conditions.push(format!("eventtime < '{}'", iso(until)));
        // A log file sits under the day it was delivered, which for an event just before
        // midnight is the next day.
        let delivered = until + chrono::TimeDelta::days(1);
        conditions.push(format!("\"{date}\" <= '{}'", day(delivered)));
    }
    if !filter.accounts.is_empty() {
        let accounts = literals(&filter.accounts);
        conditions.push(format!("recipientaccountid IN ({accounts})"));
        if let Some(column) = &config.partitions.account {
            conditions.push(format!("\"{}\" IN ({accounts})", plain(column)?));
        }
    }
    if !filter.regions.is_empty() {
        let regions = literals(&filter.regions);
        conditions.push(format!("awsregion IN ({regions})"));
        if let Some(column) = &config.partitions.region {
            conditions.push(format!("\"{}\" IN ({regions})", plain(column)?));
        }
    }
    if pushdown.writes_only {
        conditions.push("(readonly = 'false' OR readonly IS NULL)".to_owned());
        conditions.push("(errorcode IS NULL OR errorcode = '')".to_owned());
        if pushdown.drop_terraform {
            conditions.push(
                "(useragent IS NULL OR (useragent NOT LIKE '%HashiCorp/1.0 Terraform/%' \
                 AND useragent NOT LIKE '%terraform-provider-aws/%'))"
                    .to_owned(),
            );
        }
    }
    let mut sql = format!("SELECT {} FROM {table}", COLUMNS.join(", "));
    if !conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&conditions.join(" AND "));
    }
    Ok(sql)
}

/// A time as CloudTrail writes `eventTime` (which compares as text).
fn iso(time: DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The date partition's value for a time.
fn day(time: DateTime<Utc>) -> String {
    time.format("%Y/%m/%d").to_string()
}

/// A CloudTrail record rebuilt from one result row (column names and values).
pub fn record_of(columns: &[String], values: &[Option<String>]) -> Value {
    let mut record = Map::new();
    for (column, value) in columns.iter().zip(values) {
        let Some(value) = value else { continue };
        let column = column.to_ascii_lowercase();
        record.insert(field_name(&column), column_value(&column, value));
    }
    Value::Object(record)
}

/// The record text of one row of an Athena export (NDJSON of the standard CloudTrail table:
/// lower-case column names, structs as objects or JSON text, the request and response as
/// JSON text), rebuilt with CloudTrail's field names; `None` when `bytes` is not such a row
/// (an object with an `eventtime` column).
pub fn record_of_export(bytes: &[u8]) -> Option<Vec<u8>> {
    let Ok(Value::Object(row)) = serde_json::from_slice::<Value>(bytes) else {
        return None;
    };
    if !row.contains_key("eventtime") {
        return None;
    }
    let mut record = Map::new();
    for (column, value) in row {
        let column = column.to_ascii_lowercase();
        let value = match value {
            Value::Null => continue,
            Value::String(text) => column_value(&column, &text),
            other => structured(&column, other),
        };
        record.insert(field_name(&column), value);
    }
    serde_json::to_vec(&Value::Object(record)).ok()
}

/// The JSON of one column's text value.
fn column_value(column: &str, value: &str) -> Value {
    if JSON_TEXT.contains(&column) || STRUCTS.contains(&column) {
        serde_json::from_str::<Value>(value).map_or_else(
            |_| Value::String(value.to_owned()),
            |v| structured(column, v),
        )
    } else if column == "readonly" || column == "managementevent" {
        value
            .parse::<bool>()
            .map_or(Value::String(value.to_owned()), Value::Bool)
    } else {
        Value::String(value.to_owned())
    }
}

/// A column's JSON value with CloudTrail's field names where it is a struct.
fn structured(column: &str, value: Value) -> Value {
    if column == "resources" {
        resources(renamed(value))
    } else if STRUCTS.contains(&column) {
        renamed(value)
    } else {
        value
    }
}

/// CloudTrail's name for a lower-case field name; unknown names are kept.
fn field_name(lower: &str) -> String {
    BY_LOWER
        .get(lower)
        .map_or_else(|| lower.to_owned(), |name| (*name).to_owned())
}

/// The resources array as CloudTrail writes it: each resource's ARN under `ARN`.
fn resources(value: Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|mut item| {
                    if let Some(map) = item.as_object_mut()
                        && let Some(arn) = map.remove("arn")
                    {
                        map.insert("ARN".to_owned(), arn);
                    }
                    item
                })
                .collect(),
        ),
        other => other,
    }
}

/// A struct's JSON with CloudTrail's field names, nulls left out.
fn renamed(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (field_name(&k.to_ascii_lowercase()), renamed(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(renamed).collect()),
        other => other,
    }
}

/// The CloudTrail table in Athena.
#[derive(Debug, Clone)]
pub struct AthenaSource {
    config: AthenaConfig,
    client: Client,
    pacer: Pacer,
    polling: Polling,
}

impl AthenaSource {
    /// A client for the configured region through the standard credential chain, with the
    /// configured profile and endpoint.
    pub async fn from_config(config: &AthenaConfig) -> Result<Self, AthenaError> {
        let settings = load_settings(
            &config.region,
            config.profile.as_deref(),
            config.endpoint_url.as_deref(),
        )
        .await;
        Self::with_client(config, Client::new(&settings))
    }

    /// A source over a ready-made client.
    pub fn with_client(config: &AthenaConfig, client: Client) -> Result<Self, AthenaError> {
        query_sql(config, &Pushdown::default())?;
        Ok(Self {
            config: config.clone(),
            client,
            pacer: Pacer::new(Pacing::default()),
            polling: Polling::default(),
        })
    }

    /// Replaces the default request spacing, backoff and status polling.
    pub fn with_timing(mut self, pacing: Pacing, polling: Polling) -> Self {
        self.pacer = Pacer::new(pacing);
        self.polling = polling;
        self
    }
}

impl Source for AthenaSource {
    fn describe(&self) -> String {
        format!(
            "athena: {}.{} ({})",
            self.config.database, self.config.table, self.config.region
        )
    }

    fn filters_at_source(&self) -> bool {
        true
    }

    fn calls(&self, pushdown: &Pushdown) -> CallStream {
        let name: Arc<str> = Arc::from(format!(
            "athena:{}.{}",
            self.config.database, self.config.table
        ));
        let sql = match query_sql(&self.config, pushdown) {
            Ok(sql) => sql,
            Err(error) => {
                let error = SourceError::Api {
                    source_name: name.to_string(),
                    message: error.to_string(),
                };
                return stream::iter(vec![Err(error)]).boxed();
            }
        };
        let query = Query {
            source: name,
            config: self.config.clone(),
            client: self.client.clone(),
            pacer: self.pacer.clone(),
            sql,
            columns: Vec::new(),
            next_row: 0,
        };
        query::records(query, self.polling)
    }
}

/// One run of the query.
struct Query {
    source: Arc<str>,
    config: AthenaConfig,
    client: Client,
    pacer: Pacer,
    sql: String,
    columns: Vec<String>,
    next_row: u64,
}

impl Service for Query {
    fn name(&self) -> &str {
        &self.source
    }

    async fn start(&self) -> Result<String, SourceError> {
        let context = QueryExecutionContext::builder()
            .database(&self.config.database)
            .build();
        let output = self.config.output_location.as_ref().map(|location| {
            ResultConfiguration::builder()
                .output_location(location)
                .build()
        });
        let started = self
            .pacer
            .send(&self.source, "StartQueryExecution", || {
                self.client
                    .start_query_execution()
                    .query_string(&self.sql)
                    .query_execution_context(context.clone())
                    .set_work_group(self.config.workgroup.clone())
                    .set_result_configuration(output.clone())
                    .send()
            })
            .await?;
        tracing::debug!(source = %self.source, sql = %self.sql, "query sent");
        started.query_execution_id.ok_or_else(|| {
            api_error(
                &self.source,
                "StartQueryExecution returned no query id".to_owned(),
            )
        })
    }

    async fn state(&self, id: &str) -> Result<State, SourceError> {
        let got = self
            .pacer
            .send(&self.source, "GetQueryExecution", || {
                self.client
                    .get_query_execution()
                    .query_execution_id(id)
                    .send()
            })
            .await?;
        let status = got.query_execution.and_then(|q| q.status);
        Ok(match status.as_ref().and_then(|s| s.state.clone()) {
            Some(QueryExecutionState::Succeeded) => State::Done,
            Some(QueryExecutionState::Queued | QueryExecutionState::Running) => State::Pending,
            other => State::Ended(
                other
                    .as_ref()
                    .map_or("without a state", |s| s.as_str())
                    .to_owned(),
                status
                    .and_then(|s| s.state_change_reason)
                    .unwrap_or_else(|| "no reason given".to_owned()),
            ),
        })
    }

    /// Fetches one page of results; returns its records and the token of the next page.
    async fn page(
        &mut self,
        id: &str,
        token: Option<String>,
    ) -> Result<(Vec<SourceResult>, Option<String>), SourceError> {
        let output = self
            .pacer
            .send(&self.source, "GetQueryResults", || {
                self.client
                    .get_query_results()
                    .query_execution_id(id)
                    .set_next_token(token.clone())
                    .send()
            })
            .await?;
        let set = output.result_set;
        if self.columns.is_empty() {
            self.columns = set
                .as_ref()
                .and_then(|s| s.result_set_metadata.as_ref())
                .map(|m| {
                    m.column_info()
                        .iter()
                        .map(|c| c.name().to_owned())
                        .collect()
                })
                .unwrap_or_default();
        }
        let first_page = token.is_none();
        let rows = set.map(|s| s.rows.unwrap_or_default()).unwrap_or_default();
        let items = rows
            .iter()
            // The first row of the first page repeats the column names.
            .skip(usize::from(first_page))
            .map(|row| {
                let values: Vec<Option<String>> = row
                    .data()
                    .iter()
                    .map(|d| d.var_char_value().map(str::to_owned))
                    .collect();
                Ok(self.item(&values))
            })
            .collect();
        Ok((items, output.next_token.filter(|t| !t.is_empty())))
    }

    fn canceller(&self, id: &str) -> Canceller {
        let (client, id) = (self.client.clone(), id.to_owned());
        Box::new(move || Box::pin(stop(client, id)))
    }
}

/// Asks Athena to stop a query; a failure is logged, not raised.
async fn stop(client: Client, id: String) {
    let stopped = client
        .stop_query_execution()
        .query_execution_id(&id)
        .send()
        .await;
    match stopped {
        Ok(_) => tracing::warn!(query = %id, "stopped the Athena query"),
        Err(error) => tracing::debug!(query = %id, %error, "the query could not be stopped"),
    }
}

impl Query {
    /// One row as a call, or a skipped record naming the row.
    fn item(&mut self, values: &[Option<String>]) -> SourceItem {
        let origin = Origin {
            source: self.source.clone(),
            index: self.next_row,
            offset: None,
        };
        self.next_row += 1;
        let record = record_of(&self.columns, values).to_string();
        record_item(Some(&record), origin, "the row is empty")
    }
}

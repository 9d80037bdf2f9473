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
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::filter::Pushdown;
use super::lake::literals;

#[cfg(feature = "aws")]
mod source;
#[cfg(feature = "aws")]
pub use source::AthenaSource;

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

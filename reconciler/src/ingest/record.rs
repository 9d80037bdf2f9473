//! The normalised call model: one CloudTrail record, typed, with its raw text kept.
//!
//! Records of event format versions 1.0 to 1.11 are accepted. Every documented top-level
//! field has a typed slot; fields that later AWS versions add are still kept in the raw text,
//! which is the exact byte sequence read from the source, so nothing is ever lost.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use chrono::{DateTime, Utc};
use knowledge::access::ReadOnlySource;
use memchr::memmem::Finder;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::client::ClientKind;
use super::identity::{RawIdentity, UserIdentity};

/// Where a record was read from: a file and the record's index and byte offset in it, or an
/// API page. Carried so every finding can name the record it is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The file path or API source description (e.g. `lookup-events:eu-west-1`).
    pub source: Arc<str>,
    /// Zero-based index of the record within its source.
    pub index: u64,
    /// Byte offset of the record's first byte, for file sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} record #{}", self.source, self.index)?;
        if let Some(offset) = self.offset {
            write!(f, " (byte {offset})")?;
        }
        Ok(())
    }
}

/// A payload field such as `requestParameters`: CloudTrail writes an object, `null`, a marker
/// string, or a placeholder when the value was too large to record.
#[derive(Debug, Clone)]
pub enum Payload {
    /// The field was absent or `null`.
    Absent,
    /// CloudTrail replaced the value with `HIDDEN_DUE_TO_SECURITY_REASONS`.
    Hidden,
    /// CloudTrail dropped a value too large to record (`{"omitted": true, "originalSize": N}`).
    Omitted {
        /// Size in bytes of the value that was dropped, when CloudTrail gives it.
        original_size: Option<u64>,
    },
    /// Any other JSON value, kept as its exact text.
    Value(Box<RawValue>),
}

/// The key of CloudTrail's placeholder for a dropped value, searched for in every payload
/// object with a searcher built once.
static OMITTED_KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("\"omitted\""));

impl Payload {
    fn from_raw(raw: Option<&RawValue>) -> Self {
        let Some(raw) = raw else { return Self::Absent };
        let text = raw.get();
        if text == "null" {
            return Self::Absent;
        }
        if text == "\"HIDDEN_DUE_TO_SECURITY_REASONS\"" {
            return Self::Hidden;
        }
        if text.starts_with('{') && OMITTED_KEY.find(text.as_bytes()).is_some() {
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct OmittedMarker {
                omitted: bool,
                original_size: Option<u64>,
            }
            if let Ok(marker) = serde_json::from_str::<OmittedMarker>(text)
                && marker.omitted
            {
                return Self::Omitted {
                    original_size: marker.original_size,
                };
            }
        }
        Self::Value(raw.to_owned())
    }

    /// The value parsed as JSON, when there is one.
    pub fn json(&self) -> Option<serde_json::Value> {
        match self {
            Self::Value(raw) => serde_json::from_str(raw.get()).ok(),
            _ => None,
        }
    }

    /// Whether CloudTrail recorded a usable value.
    pub fn is_present(&self) -> bool {
        matches!(self, Self::Value(_))
    }
}

/// One ARN-bearing entry of the record's `resources` list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    /// The resource ARN (CloudTrail spells it `ARN`).
    #[serde(rename = "ARN", alias = "arn", default)]
    pub arn: Option<String>,
    /// The account that owns the resource.
    #[serde(default)]
    pub account_id: Option<String>,
    /// The resource type, e.g. `AWS::S3::Object`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

/// TLS information of the request (event version 1.08 and later).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TlsDetails<S = String> {
    /// TLS version, e.g. `TLSv1.3`.
    #[serde(default)]
    pub tls_version: Option<S>,
    /// Cipher suite negotiated.
    #[serde(default)]
    pub cipher_suite: Option<S>,
    /// Host header the client sent.
    #[serde(default)]
    pub client_provided_host_header: Option<S>,
}

/// A string of a record, borrowed from the record's text unless it holds escapes, so a
/// record is read without a copy of each field.
#[derive(Debug, Default)]
pub(crate) struct Text<'a>(Cow<'a, str>);

impl Text<'_> {
    /// The string.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// An optional field as an owned string.
    pub(crate) fn owned(text: Option<Self>) -> Option<String> {
        text.map(|t| t.0.into_owned())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_string(TextVisitor)
    }
}

/// Reads a string as `String` does (same expectation in errors), borrowing when it can.
struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Borrowed(value)))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(value.to_owned())))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(value)))
    }
}

/// The top-level fields as CloudTrail writes them, borrowed from the record's text; the
/// typed view is built from this.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fields<'a> {
    #[serde(borrow)]
    event_version: Option<Text<'a>>,
    #[serde(borrow)]
    user_identity: Option<RawIdentity<'a>>,
    #[serde(borrow)]
    event_time: Option<Text<'a>>,
    #[serde(borrow)]
    event_source: Option<Text<'a>>,
    #[serde(borrow)]
    event_name: Option<Text<'a>>,
    #[serde(borrow)]
    aws_region: Option<Text<'a>>,
    #[serde(rename = "sourceIPAddress", borrow)]
    source_ip_address: Option<Text<'a>>,
    #[serde(borrow)]
    user_agent: Option<Text<'a>>,
    #[serde(borrow)]
    error_code: Option<Text<'a>>,
    #[serde(borrow)]
    error_message: Option<Text<'a>>,
    #[serde(borrow)]
    request_parameters: Option<&'a RawValue>,
    #[serde(borrow)]
    response_elements: Option<&'a RawValue>,
    #[serde(borrow)]
    additional_event_data: Option<&'a RawValue>,
    #[serde(rename = "requestID", borrow)]
    request_id: Option<Text<'a>>,
    #[serde(rename = "eventID", borrow)]
    event_id: Option<Text<'a>>,
    #[serde(borrow)]
    event_type: Option<Text<'a>>,
    #[serde(borrow)]
    api_version: Option<Text<'a>>,
    management_event: Option<bool>,
    read_only: Option<bool>,
    resources: Option<Vec<ResourceRef>>,
    #[serde(borrow)]
    recipient_account_id: Option<Text<'a>>,
    #[serde(borrow)]
    service_event_details: Option<&'a RawValue>,
    #[serde(rename = "sharedEventID", borrow)]
    shared_event_id: Option<Text<'a>>,
    #[serde(borrow)]
    vpc_endpoint_id: Option<Text<'a>>,
    #[serde(borrow)]
    vpc_endpoint_account_id: Option<Text<'a>>,
    #[serde(borrow)]
    event_category: Option<Text<'a>>,
    #[serde(borrow)]
    addendum: Option<&'a RawValue>,
    session_credential_from_console: Option<BoolOrString>,
    #[serde(borrow)]
    edge_device_details: Option<&'a RawValue>,
    #[serde(borrow)]
    tls_details: Option<TlsDetails<Text<'a>>>,
    #[serde(borrow)]
    insight_details: Option<&'a RawValue>,
}

/// CloudTrail writes `sessionCredentialFromConsole` as the string `"true"`; accept a bool too.
///
/// Read with a visitor rather than as an untagged enum `Bool(bool) | Text(String)`, which
/// buffered the value and built an error for the first variant on every record with the
/// field. Other values fail as that enum failed: after the whole value, with its message.
struct BoolOrString(bool);

impl BoolOrString {
    fn truth(&self) -> bool {
        self.0
    }
}

impl<'de> Deserialize<'de> for BoolOrString {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_any(BoolOrStringVisitor)? {
            Some(truth) => Ok(Self(truth)),
            None => Err(de::Error::custom(
                "data did not match any variant of untagged enum BoolOrString",
            )),
        }
    }
}

/// Reads a bool or a string as its truth; any other value is read whole and gives `None`.
struct BoolOrStringVisitor;

impl<'de> Visitor<'de> for BoolOrStringVisitor {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a boolean or a string")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Option<bool>, E> {
        Ok(Some(value))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Option<bool>, E> {
        Ok(Some(value.eq_ignore_ascii_case("true")))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<bool>, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<bool>, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<bool>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<bool>, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<bool>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<bool>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// Why a record could not be turned into a [`Call`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The text is not JSON or a field has the wrong JSON type.
    #[error("not a valid CloudTrail record: {0}")]
    Json(String),
    /// A field every CloudTrail record has is missing.
    #[error("required field `{0}` is missing")]
    Missing(&'static str),
    /// `eventTime` is not an ISO 8601 UTC timestamp.
    #[error("eventTime `{0}` is not an ISO 8601 timestamp")]
    BadTime(String),
    /// The record is not UTF-8 text.
    #[error("record is not valid UTF-8")]
    NotUtf8,
}

/// One normalised CloudTrail call: typed fields plus the exact raw record.
#[derive(Debug, Clone)]
pub struct Call {
    /// Where the record came from.
    pub origin: Origin,
    /// Event format version, e.g. `1.09`.
    pub event_version: String,
    /// Unique id of the event: `eventID`, or [`derived_event_id`] for a record without one;
    /// duplicates share it.
    pub event_id: String,
    /// When the request completed.
    pub event_time: DateTime<Utc>,
    /// The service endpoint, e.g. `ec2.amazonaws.com`.
    pub event_source: String,
    /// The event name exactly as recorded (Lambda's carry an API version suffix).
    pub event_name: String,
    /// Region the request was made to.
    pub aws_region: String,
    /// Who made the call.
    pub identity: UserIdentity,
    /// Source IP address, or the calling service's name.
    pub source_ip_address: Option<String>,
    /// The `userAgent` as recorded (S3's brackets included).
    pub user_agent: Option<String>,
    /// The client kind derived from the user agent and identity.
    pub client: ClientKind,
    /// Error code of a failed call.
    pub error_code: Option<String>,
    /// Error message of a failed call.
    pub error_message: Option<String>,
    /// The request parameters.
    pub request_parameters: Payload,
    /// The response elements.
    pub response_elements: Payload,
    /// Extra data the service attached.
    pub additional_event_data: Payload,
    /// The request id the service returned.
    pub request_id: Option<String>,
    /// `AwsApiCall`, `AwsServiceEvent`, `AwsConsoleAction`, `AwsConsoleSignIn`, ...
    pub event_type: String,
    /// API version, for services that record it.
    pub api_version: Option<String>,
    /// Whether this is a management event; `None` on records older than 1.06.
    pub management_event: Option<bool>,
    /// Whether the call only reads: as recorded, or from the documentation
    /// ([`read_only_by_documentation`]).
    pub read_only: bool,
    /// Whether `read_only` was derived rather than recorded.
    pub read_only_derived: bool,
    /// Resources CloudTrail listed for the call.
    pub resources: Vec<ResourceRef>,
    /// Account that received the event.
    pub recipient_account_id: Option<String>,
    /// Details of a service event.
    pub service_event_details: Payload,
    /// Shared event id for cross-account events.
    pub shared_event_id: Option<String>,
    /// VPC endpoint the request came through.
    pub vpc_endpoint_id: Option<String>,
    /// Account that owns the VPC endpoint.
    pub vpc_endpoint_account_id: Option<String>,
    /// `Management`, `Data`, `Insight` or `NetworkActivity`.
    pub event_category: Option<String>,
    /// Addendum of a late-delivered or corrected event.
    pub addendum: Payload,
    /// Whether the session credentials came from the console.
    pub session_credential_from_console: bool,
    /// Details of an edge device (Outposts, Snow).
    pub edge_device_details: Payload,
    /// TLS details of the request.
    pub tls_details: Option<TlsDetails>,
    /// Insight details of an Insights event.
    pub insight_details: Payload,
    /// The record exactly as read, unless the run let it go ([`Call::forget_record`]).
    raw: Option<Box<str>>,
}

/// A record read and checked as a [`Call`] is, its strings still borrowed from its text:
/// what the first attribution checks read ([`Record::basics`]) is known before any copy is
/// made, and [`Record::into_call`] makes the call.
pub struct Record<'a> {
    text: &'a str,
    fields: Fields<'a>,
    event_time: DateTime<Utc>,
    /// The id of a record without `eventID` ([`derived_event_id`]).
    derived_id: Option<String>,
}

impl<'a> Record<'a> {
    /// Parses one record's JSON text, rejecting what [`Call::parse`] rejects.
    pub fn parse(text: &'a [u8]) -> Result<Self, RecordError> {
        let text = std::str::from_utf8(text).map_err(|_| RecordError::NotUtf8)?;
        let fields: Fields<'a> =
            serde_json::from_str(text).map_err(|e| RecordError::Json(e.to_string()))?;
        let time = fields
            .event_time
            .as_ref()
            .ok_or(RecordError::Missing("eventTime"))?;
        let event_time = parse_time(time.as_str())?;
        for (field, name) in [
            (&fields.event_name, "eventName"),
            (&fields.event_source, "eventSource"),
        ] {
            field.as_ref().ok_or(RecordError::Missing(name))?;
        }
        let derived_id = fields.event_id.is_none().then(|| derived_event_id(text));
        Ok(Self {
            text,
            fields,
            event_time,
            derived_id,
        })
    }

    /// When the request completed.
    pub fn event_time(&self) -> DateTime<Utc> {
        self.event_time
    }

    /// The event id: `eventID`, or for a record without one, the id derived from its text.
    pub fn event_id(&self) -> &str {
        text(&self.fields.event_id)
            .or(self.derived_id.as_deref())
            .unwrap_or_default()
    }

    /// The account the call acted in, as [`Call::account_id`] gives it.
    pub fn account_id(&self) -> Option<&str> {
        let f = &self.fields;
        let identity = f.user_identity.as_ref();
        acted_in(
            text(&f.recipient_account_id),
            f.resources.as_deref().unwrap_or_default(),
            identity.and_then(|i| i.account_id()),
            identity.and_then(|i| i.arn()),
        )
    }

    /// The region, empty when not recorded (as in [`Call::aws_region`]).
    pub fn aws_region(&self) -> &str {
        text(&self.fields.aws_region).unwrap_or_default()
    }

    /// The fields the first attribution checks read.
    pub fn basics(&self) -> Basics<'_> {
        let f = &self.fields;
        let event_name = text(&f.event_name).unwrap_or_default();
        let event_source = text(&f.event_source).unwrap_or_default();
        Basics {
            event_name,
            event_source,
            error_code: error_code(&f.error_code),
            event_category: text(&f.event_category),
            event_type: text(&f.event_type).unwrap_or(DEFAULT_EVENT_TYPE),
            management_event: f.management_event,
            read_only: f.read_only.unwrap_or_else(|| {
                read_only_by_documentation(event_source, event_name).read_only()
            }),
            read_only_derived: f.read_only.is_none(),
        }
    }

    /// The call, its fields copied out of the text, and the text kept as its raw record when
    /// `keep_record` says so.
    pub fn into_call(self, origin: Origin, keep_record: bool) -> Call {
        let Basics {
            read_only,
            read_only_derived,
            ..
        } = self.basics();
        let f = self.fields;
        let identity = f
            .user_identity
            .map(RawIdentity::into_identity)
            .unwrap_or_default();
        let session_credential_from_console =
            f.session_credential_from_console.is_some_and(|v| v.truth());
        let user_agent = Text::owned(f.user_agent);
        let client = ClientKind::detect(
            user_agent.as_deref(),
            &identity,
            session_credential_from_console,
        );
        let required = |text: Option<Text<'_>>| Text::owned(text).unwrap_or_default();
        Call {
            origin,
            event_version: required(f.event_version),
            event_id: Text::owned(f.event_id)
                .or(self.derived_id)
                .unwrap_or_default(),
            event_time: self.event_time,
            event_source: required(f.event_source),
            event_name: required(f.event_name),
            aws_region: required(f.aws_region),
            identity,
            source_ip_address: Text::owned(f.source_ip_address),
            user_agent,
            client,
            error_code: error_code(&f.error_code).map(str::to_owned),
            error_message: Text::owned(f.error_message),
            request_parameters: Payload::from_raw(f.request_parameters),
            response_elements: Payload::from_raw(f.response_elements),
            additional_event_data: Payload::from_raw(f.additional_event_data),
            request_id: Text::owned(f.request_id),
            event_type: Text::owned(f.event_type).unwrap_or_else(|| DEFAULT_EVENT_TYPE.to_owned()),
            api_version: Text::owned(f.api_version),
            management_event: f.management_event,
            read_only,
            read_only_derived,
            resources: f.resources.unwrap_or_default(),
            recipient_account_id: Text::owned(f.recipient_account_id),
            service_event_details: Payload::from_raw(f.service_event_details),
            shared_event_id: Text::owned(f.shared_event_id),
            vpc_endpoint_id: Text::owned(f.vpc_endpoint_id),
            vpc_endpoint_account_id: Text::owned(f.vpc_endpoint_account_id),
            event_category: Text::owned(f.event_category),
            addendum: Payload::from_raw(f.addendum),
            session_credential_from_console,
            edge_device_details: Payload::from_raw(f.edge_device_details),
            tls_details: f.tls_details.map(|t| TlsDetails {
                tls_version: Text::owned(t.tls_version),
                cipher_suite: Text::owned(t.cipher_suite),
                client_provided_host_header: Text::owned(t.client_provided_host_header),
            }),
            insight_details: Payload::from_raw(f.insight_details),
            raw: keep_record.then(|| self.text.into()),
        }
    }
}

/// The id of a record that has no `eventID`: CloudTrail writes the field from event version
/// 1.01 on, so records of version 1.0 have none. It is `record-` and the first 128 bits of the
/// SHA-256 of the record's text, so a record delivered twice gets the same id (and is counted
/// once) and every run names it alike.
pub fn derived_event_id(text: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(text.trim().as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("record-{hex}")
}

/// An optional borrowed field as a string slice.
fn text<'b>(field: &'b Option<Text<'_>>) -> Option<&'b str> {
    field.as_ref().map(Text::as_str)
}

/// The account a call acted in: `recipientAccountId` (event version 1.02 and later), else the
/// account of the first resource in `resources[]` (its `accountId` or its ARN's), else the
/// caller's (`userIdentity.accountId`, or its ARN's), as older records give only those.
fn acted_in<'b>(
    recipient: Option<&'b str>,
    resources: &'b [ResourceRef],
    caller: Option<&'b str>,
    caller_arn: Option<&'b str>,
) -> Option<&'b str> {
    let resource = || {
        resources.iter().find_map(|r| {
            r.account_id
                .as_deref()
                .filter(|a| !a.is_empty())
                .or_else(|| r.arn.as_deref().and_then(arn_account))
        })
    };
    recipient
        .filter(|a| !a.is_empty())
        .or_else(resource)
        .or(caller.filter(|a| !a.is_empty()))
        .or_else(|| caller_arn.and_then(arn_account))
}

/// The account field of an ARN (`arn:aws:iam::111122223333:user/alice`), when it has one.
pub fn arn_account(arn: &str) -> Option<&str> {
    let account = arn.strip_prefix("arn:")?.split(':').nth(3)?;
    (account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit())).then_some(account)
}

/// The error code of a failed call. CloudTrail writes `errorCode` only when the request
/// returned an error (the record contents reference), so an empty or blank code, as some
/// exports write for every row, is a success.
fn error_code<'b>(field: &'b Option<Text<'_>>) -> Option<&'b str> {
    text(field).filter(|code| !code.trim().is_empty())
}

/// The `eventType` of records that do not give one.
const DEFAULT_EVENT_TYPE: &str = "AwsApiCall";

/// What the first attribution checks read of a call (failed, data event, read-only), which
/// a [`Record`] gives before it becomes a [`Call`].
#[derive(Debug, Clone, Copy)]
pub struct Basics<'a> {
    /// The event name as recorded.
    pub event_name: &'a str,
    /// The service endpoint, e.g. `ec2.amazonaws.com`.
    pub event_source: &'a str,
    /// Error code of a failed call.
    pub error_code: Option<&'a str>,
    /// `Management`, `Data`, `Insight` or `NetworkActivity`.
    pub event_category: Option<&'a str>,
    /// `AwsApiCall`, `AwsServiceEvent`, ...
    pub event_type: &'a str,
    /// Whether this is a management event.
    pub management_event: Option<bool>,
    /// Whether the call only reads: as recorded, or from the documentation
    /// ([`read_only_by_documentation`]).
    pub read_only: bool,
    /// Whether `read_only` was derived rather than recorded.
    pub read_only_derived: bool,
}

impl Call {
    /// Parses one record's JSON text. The text is kept verbatim as the raw record.
    pub fn parse(text: &[u8], origin: Origin) -> Result<Self, RecordError> {
        Record::parse(text).map(|record| record.into_call(origin, true))
    }

    /// The fields the first attribution checks read.
    pub fn basics(&self) -> Basics<'_> {
        Basics {
            event_name: &self.event_name,
            event_source: &self.event_source,
            error_code: self.error_code.as_deref(),
            event_category: self.event_category.as_deref(),
            event_type: &self.event_type,
            management_event: self.management_event,
            read_only: self.read_only,
            read_only_derived: self.read_only_derived,
        }
    }

    /// The record exactly as it was read; `None` once the run let it go.
    pub fn raw(&self) -> Option<&str> {
        self.raw.as_deref()
    }

    /// Lets the record's text go, keeping the parsed call: a run that only reconciles needs
    /// no more, and the text is most of a call's memory.
    pub fn forget_record(&mut self) {
        self.raw = None;
    }

    /// The raw record as a JSON value, for output that embeds it; `None` once let go.
    pub fn raw_json(&self) -> Option<Box<RawValue>> {
        let raw = self.raw.as_deref()?;
        Some(RawValue::from_string(raw.to_owned()).unwrap_or_else(|_| unreachable_raw(raw)))
    }

    /// The API operation name without the version suffix some services add
    /// (Lambda's `UpdateFunctionConfiguration20150331v2` is `UpdateFunctionConfiguration`).
    pub fn api_name(&self) -> &str {
        api_name(&self.event_name)
    }

    /// The service name from the event source: `ec2` for `ec2.amazonaws.com`.
    pub fn service(&self) -> &str {
        self.event_source
            .strip_suffix(".amazonaws.com")
            .unwrap_or(&self.event_source)
    }

    /// The account the call acted in (see [`acted_in`]).
    pub fn account_id(&self) -> Option<&str> {
        acted_in(
            self.recipient_account_id.as_deref(),
            &self.resources,
            self.identity.account_id.as_deref(),
            self.identity.arn.as_deref(),
        )
    }

    /// Short identifiers of the resources the call names, for display: the ARNs CloudTrail
    /// listed, else well-known identifier fields of the request.
    pub fn resource_hints(&self) -> Vec<String> {
        let mut hints: Vec<String> = self
            .resources
            .iter()
            .filter_map(|r| r.arn.clone())
            .collect();
        if hints.is_empty()
            && let Some(serde_json::Value::Object(params)) = self.request_parameters.json()
        {
            collect_identifier_hints(&params, &mut hints);
        }
        hints.dedup();
        hints
    }
}

/// The raw text was validated when parsed; this only guards the type conversion.
fn unreachable_raw(raw: &str) -> Box<RawValue> {
    serde_json::value::to_raw_value(raw).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// Request fields that name the resource a call acts on, across the common services.
const IDENTIFIER_SUFFIXES: [&str; 4] = ["Id", "Name", "Arn", "ARN"];
/// Fields that end like identifiers but name something else.
const NOT_IDENTIFIERS: [&str; 5] = [
    "clientToken",
    "keyName",
    "policyName",
    "versionId",
    "hostName",
];

fn collect_identifier_hints(
    params: &serde_json::Map<String, serde_json::Value>,
    hints: &mut Vec<String>,
) {
    for (key, value) in params {
        if key.ends_with("Set") {
            collect_set_items(value, hints);
            continue;
        }
        let is_identifier = IDENTIFIER_SUFFIXES.iter().any(|s| key.ends_with(s))
            && !NOT_IDENTIFIERS.contains(&key.as_str());
        if !is_identifier {
            continue;
        }
        match value {
            serde_json::Value::String(s) if !s.is_empty() => hints.push(s.clone()),
            serde_json::Value::Array(items) => {
                hints.extend(items.iter().filter_map(|v| v.as_str()).map(str::to_owned))
            }
            _ => {}
        }
    }
}

/// EC2 wraps lists as `{"resourcesSet": {"items": [{"resourceId": "i-..."}]}}`; the ids in
/// such items name resources too.
fn collect_set_items(value: &serde_json::Value, hints: &mut Vec<String>) {
    let items = value
        .get("items")
        .and_then(|i| i.as_array())
        .into_iter()
        .flatten();
    for item in items.filter_map(|i| i.as_object()) {
        let ids = item.iter().filter(|(k, _)| k.ends_with("Id"));
        hints.extend(ids.filter_map(|(_, v)| v.as_str()).map(str::to_owned));
    }
}

/// Parses CloudTrail's `eventTime` (`2024-07-31T12:46:41Z`, fractional seconds allowed).
pub fn parse_time(text: &str) -> Result<DateTime<Utc>, RecordError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| RecordError::BadTime(text.to_owned()))
}

/// Strips the date-and-version suffix of versioned event names
/// (`CreateFunction20150331`, `UpdateFunctionConfiguration20150331v2`).
pub fn api_name(event_name: &str) -> &str {
    let bytes = event_name.as_bytes();
    let mut end = bytes.len();
    // optional `v<digits>`
    let digits_end = end;
    while end > 0 && bytes[end - 1].is_ascii_digit() {
        end -= 1;
    }
    if end < digits_end && end > 0 && bytes[end - 1] == b'v' {
        end -= 1;
    } else {
        end = digits_end;
    }
    let date_end = end;
    while end > 0 && bytes[end - 1].is_ascii_digit() {
        end -= 1;
    }
    if date_end - end == 8 && end > 0 {
        &event_name[..end]
    } else {
        event_name
    }
}

/// How to judge whether a call only reads when its record has no `readOnly` field (event
/// versions before 1.01, some exports): CloudTrail's documentation, else the IAM Service
/// Authorization Reference's access level of the API ([`knowledge::access`]); a call neither
/// knows is taken for a change, so it is reported rather than dropped.
pub fn read_only_by_documentation(event_source: &str, event_name: &str) -> ReadOnlySource {
    knowledge::access::read_only_source(event_source, api_name(event_name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            source: Arc::from("test"),
            index: 0,
            offset: None,
        }
    }

    #[test]
    fn versioned_lambda_names_are_stripped() {
        assert_eq!(
            api_name("UpdateFunctionConfiguration20150331v2"),
            "UpdateFunctionConfiguration"
        );
        assert_eq!(api_name("CreateFunction20150331"), "CreateFunction");
        assert_eq!(api_name("AddPermission20150331v2"), "AddPermission");
        assert_eq!(api_name("PutBucketAcl"), "PutBucketAcl");
        assert_eq!(api_name("Ec2V2"), "Ec2V2");
        assert_eq!(api_name("20150331"), "20150331");
        assert_eq!(api_name("GetV1234"), "GetV1234");
    }

    #[test]
    fn read_only_is_derived_from_the_documentation() {
        let read_only = |source, name| read_only_by_documentation(source, name).read_only();
        assert!(read_only("ec2.amazonaws.com", "DescribeInstances"));
        assert!(read_only("lambda.amazonaws.com", "GetFunction20150331v2"));
        assert!(read_only("s3.amazonaws.com", "ListBuckets"));
        assert!(read_only("sts.amazonaws.com", "AssumeRole"));
        assert!(read_only("kms.amazonaws.com", "Decrypt"));
        assert!(!read_only(
            "ec2.amazonaws.com",
            "AuthorizeSecurityGroupIngress"
        ));
        assert!(!read_only("s3.amazonaws.com", "PutBucketVersioning"));
        assert!(!read_only(
            "lambda.amazonaws.com",
            "UpdateFunctionCode20150331v2"
        ));
        // A call no documentation names is a change, never dropped as a read.
        assert!(!read_only("example.amazonaws.com", "DescribeWidgets"));
    }

    #[test]
    fn a_read_only_trail_without_the_field_stays_read_only() {
        // Event version 1.0 records of a role assumption and a decryption, as the IAM and KMS
        // guides show them, without `readOnly`.
        for (source, name) in [
            ("sts.amazonaws.com", "AssumeRole"),
            ("kms.amazonaws.com", "Decrypt"),
            ("kms.amazonaws.com", "GenerateDataKey"),
        ] {
            let text = format!(
                r#"{{"eventVersion":"1.0","eventID":"e1","eventTime":"2014-06-01T00:00:00Z",
                "eventSource":"{source}","eventName":"{name}","awsRegion":"us-east-1",
                "userIdentity":{{"type":"IAMUser","userName":"alice"}}}}"#
            );
            let call = Call::parse(text.as_bytes(), origin()).expect("parses");
            assert!(call.read_only && call.read_only_derived, "{name}");
        }
    }

    #[test]
    fn missing_read_only_is_derived_and_marked() {
        let text = br#"{"eventVersion":"1.02","eventID":"e1","eventTime":"2015-01-01T00:00:00Z",
            "eventSource":"ec2.amazonaws.com","eventName":"DescribeVpcs","awsRegion":"us-east-1",
            "userIdentity":{"type":"Root","accountId":"111122223333"}}"#;
        let call = Call::parse(text, origin()).expect("parses");
        assert!(call.read_only);
        assert!(call.read_only_derived);
        assert_eq!(call.management_event, None);
    }

    #[test]
    fn an_empty_or_null_error_code_is_a_success() {
        let with = |code: &str| {
            let text = format!(
                r#"{{"eventVersion":"1.08","eventID":"e1","eventTime":"2024-01-01T00:00:00Z",
                "eventSource":"s3.amazonaws.com","eventName":"PutBucketVersioning",
                "readOnly":false{code}}}"#
            );
            Call::parse(text.as_bytes(), origin()).expect("parses")
        };
        for success in [
            "",
            r#","errorCode":"""#,
            r#","errorCode":null"#,
            r#","errorCode":" ""#,
        ] {
            let call = with(success);
            assert_eq!(call.error_code, None, "{success}");
            assert_eq!(call.basics().error_code, None, "{success}");
        }
        let failed = with(r#","errorCode":"AccessDenied""#);
        assert_eq!(failed.error_code.as_deref(), Some("AccessDenied"));
    }

    #[test]
    fn the_account_is_found_without_recipient_account_id() {
        let with = |rest: &str| {
            let text = format!(
                r#"{{"eventVersion":"1.0","eventID":"e1","eventTime":"2014-01-01T00:00:00Z",
                "eventSource":"iam.amazonaws.com","eventName":"CreateAccessKey"{rest}}}"#
            );
            Call::parse(text.as_bytes(), origin()).expect("parses")
        };
        let recipient = with(
            r#","recipientAccountId":"111122223333","userIdentity":{"accountId":"444455556666"}"#,
        );
        assert_eq!(recipient.account_id(), Some("111122223333"));
        let caller = with(r#","userIdentity":{"type":"Root","accountId":"444455556666"}"#);
        assert_eq!(caller.account_id(), Some("444455556666"));
        let by_arn =
            with(r#","userIdentity":{"type":"IAMUser","arn":"arn:aws:iam::777788889999:user/a"}"#);
        assert_eq!(by_arn.account_id(), Some("777788889999"));
        // The resource's account wins over the caller's: a cross-account call acts there.
        let resource = with(
            r#","userIdentity":{"accountId":"444455556666"},
            "resources":[{"ARN":"arn:aws:s3:::logs","accountId":"111122223333"}]"#,
        );
        assert_eq!(resource.account_id(), Some("111122223333"));
        let resource_arn =
            with(r#","resources":[{"ARN":"arn:aws:kms:eu-west-1:111122223333:key/k"}]"#);
        assert_eq!(resource_arn.account_id(), Some("111122223333"));
        assert_eq!(with("").account_id(), None);
        assert_eq!(arn_account("arn:aws:s3:::logs"), None);
    }

    #[test]
    fn payload_markers_are_recognised() {
        let text = br#"{"eventID":"e1","eventTime":"2024-01-01T00:00:00.123Z","eventSource":"s3.amazonaws.com",
            "eventName":"PutBucketPolicy","requestParameters":{"omitted":true,"originalSize":12345},
            "responseElements":"HIDDEN_DUE_TO_SECURITY_REASONS","additionalEventData":null}"#;
        let call = Call::parse(text, origin()).expect("parses");
        assert!(matches!(
            call.request_parameters,
            Payload::Omitted {
                original_size: Some(12345)
            }
        ));
        assert!(matches!(call.response_elements, Payload::Hidden));
        assert!(matches!(call.additional_event_data, Payload::Absent));
        assert_eq!(call.event_time.timestamp_subsec_millis(), 123);
    }

    /// A record as CloudTrail wrote them at event version 1.0: no `eventID`, `requestID`,
    /// `readOnly`, `resources` (all from 1.01), `eventType` or `recipientAccountId` (1.02).
    fn version_1_0(event_name: &str, instance: &str) -> String {
        format!(
            r#"{{"eventVersion":"1.0","userIdentity":{{"type":"IAMUser","principalId":"AIDAEXAMPLE",
            "arn":"arn:aws:iam::444455556666:user/ops","accountId":"444455556666",
            "accessKeyId":"AKIAEXAMPLE","userName":"ops"}},"eventTime":"2014-03-06T21:22:54Z",
            "eventSource":"ec2.amazonaws.com","eventName":"{event_name}","awsRegion":"us-east-1",
            "sourceIPAddress":"198.51.100.7","userAgent":"ec2-api-tools 1.6.12.2",
            "requestParameters":{{"instancesSet":{{"items":[{{"instanceId":"{instance}"}}]}}}},
            "responseElements":null}}"#
        )
    }

    #[test]
    fn a_version_1_0_record_is_read_with_an_id_account_and_verdict_of_its_own() {
        let stop = version_1_0("StopInstances", "i-0abc");
        let call = Call::parse(stop.as_bytes(), origin()).expect("a 1.0 record parses");
        assert_eq!(call.event_version, "1.0");
        assert!(call.event_id.starts_with("record-"), "{}", call.event_id);
        assert_eq!(call.event_id.len(), "record-".len() + 32);
        assert_eq!(call.account_id(), Some("444455556666"));
        assert!(!call.read_only && call.read_only_derived);
        assert_eq!(call.event_type, "AwsApiCall");
        let describe = version_1_0("DescribeInstances", "i-0abc");
        assert!(
            Call::parse(describe.as_bytes(), origin())
                .expect("parses")
                .read_only
        );
        let record = Record::parse(stop.as_bytes()).expect("parses");
        assert_eq!(record.event_id(), call.event_id);
    }

    #[test]
    fn a_derived_id_names_the_same_record_alike_and_other_records_apart() {
        let id = |text: &str| {
            Call::parse(text.as_bytes(), origin())
                .expect("parses")
                .event_id
        };
        let stop = version_1_0("StopInstances", "i-0abc");
        assert_eq!(id(&stop), id(&format!("  {stop}\n")));
        assert_ne!(id(&stop), id(&version_1_0("StopInstances", "i-0abd")));
        assert_ne!(id(&stop), id(&version_1_0("StartInstances", "i-0abc")));
        let with_id = stop.replacen('{', r#"{"eventID":"e-1","#, 1);
        assert_eq!(id(&with_id), "e-1");
    }

    #[test]
    fn a_record_without_event_time_is_rejected() {
        let err = Call::parse(
            br#"{"eventID":"x","eventName":"A","eventSource":"b"}"#,
            origin(),
        );
        assert_eq!(err.err(), Some(RecordError::Missing("eventTime")));
    }

    #[test]
    fn a_bad_time_is_rejected_with_the_value() {
        let err = Call::parse(
            br#"{"eventID":"x","eventName":"A","eventSource":"b","eventTime":"yesterday"}"#,
            origin(),
        );
        assert_eq!(err.err(), Some(RecordError::BadTime("yesterday".into())));
    }

    #[test]
    fn raw_text_is_kept_byte_for_byte() {
        let text = br#"{ "eventID" : "x", "eventName":"A","eventSource":"b","eventTime":"2020-01-01T00:00:00Z", "futureField": [1, 2.50, {"k": null}] }"#;
        let call = Call::parse(text, origin()).expect("parses");
        assert_eq!(call.raw().map(str::as_bytes), Some(&text[..]));
    }

    #[test]
    fn console_flag_is_a_string_or_a_bool() {
        let flag = |value: &str| {
            let text = format!(
                r#"{{"eventID":"x","eventName":"A","eventSource":"b","eventTime":"2020-01-01T00:00:00Z","sessionCredentialFromConsole":{value}}}"#
            );
            Call::parse(text.as_bytes(), origin()).map(|c| c.session_credential_from_console)
        };
        assert_eq!(flag(r#""true""#), Ok(true));
        assert_eq!(flag(r#""TRUE""#), Ok(true));
        assert_eq!(flag(r#""tr\u0075e""#), Ok(true));
        assert_eq!(flag("true"), Ok(true));
        assert_eq!(flag(r#""false""#), Ok(false));
        assert_eq!(flag("false"), Ok(false));
        assert_eq!(flag("null"), Ok(false));
        for bad in ["1", "[true]", r#"{"a":true}"#] {
            let err = flag(bad).expect_err(bad).to_string();
            assert!(err.contains("did not match any variant"), "{bad}: {err}");
        }
    }
}

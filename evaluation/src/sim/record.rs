//! The CloudTrail record of a simulated call.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use super::ctx::{self, ApiError};
use super::services::Service;
use super::{Caller, Cloud};

/// What the record is about.
pub struct Call<'a> {
    pub service: Service,
    pub event_name: &'a str,
    pub request: &'a Value,
    pub response: Value,
    pub error: Option<&'a ApiError>,
    pub read_only: bool,
    pub region: &'a str,
    pub time: DateTime<Utc>,
}

/// Request parameters CloudTrail does not log in clear.
const HIDDEN: [(Service, &str); 3] = [
    (Service::Ssm, "value"),
    (Service::SecretsManager, "secretString"),
    (Service::SecretsManager, "secretBinary"),
];

/// Builds the record; draws its request and event ids from the cloud's generator.
pub fn build(cloud: &mut Cloud, call: &Call<'_>, caller: &Caller) -> Value {
    let time = call.time.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let request_id = match call.service {
        Service::S3 => ctx::random_chars(&mut cloud.rng, ctx::UPPER_ALNUM, 16),
        _ => ctx::uuid(&mut cloud.rng),
    };
    let event_id = ctx::uuid(&mut cloud.rng);
    let fresh = ctx::uuid(&mut cloud.rng);
    let session = caller.session.clone().unwrap_or(fresh);
    let api = call.service.api_name(call.event_name);
    let mut record = Map::new();
    let mut put = |k: &str, v: Value| {
        record.insert(k.to_owned(), v);
    };
    put("eventVersion", json!(event_version(call.service)));
    put(
        "userIdentity",
        caller.identity_json(&cloud.account_id, &time, &session),
    );
    put("eventTime", json!(time));
    put("eventSource", json!(call.service.source()));
    put("eventName", json!(call.event_name));
    put("awsRegion", json!(call.region));
    put("sourceIPAddress", json!(caller.source_ip()));
    put("userAgent", json!(caller.user_agent(call.service, api)));
    if let Some(error) = call.error {
        put("errorCode", json!(error.code));
        put("errorMessage", json!(error.message));
    }
    put("requestParameters", logged_request(call));
    put("responseElements", response(call, &request_id));
    if call.service == Service::S3 {
        let id2 = ctx::random_chars(&mut cloud.rng, BASE64, 76);
        put("additionalEventData", s3_additional(call.request, &id2));
        if let Some(bucket) = call.request.get("bucketName").and_then(Value::as_str) {
            put(
                "resources",
                json!([{"accountId": cloud.account_id, "type": "AWS::S3::Bucket", "ARN": format!("arn:aws:s3:::{bucket}")}]),
            );
        }
    }
    if call.service == Service::Route53 {
        put("apiVersion", json!("2013-04-01"));
        if api == "ChangeResourceRecordSets" {
            put(
                "additionalEventData",
                json!({"Note": "Do not use to reconstruct hosted zone"}),
            );
        }
    }
    put("requestID", json!(request_id));
    put("eventID", json!(event_id));
    put("readOnly", json!(call.read_only));
    put("eventType", json!("AwsApiCall"));
    put("managementEvent", json!(true));
    put("recipientAccountId", json!(cloud.account_id));
    put("eventCategory", json!("Management"));
    if caller.is_console() {
        put("sessionCredentialFromConsole", json!("true"));
    }
    if !matches!(
        caller.agent,
        super::Agent::SsmAutomation | super::Agent::Service
    ) {
        put(
            "tlsDetails",
            json!({
                "tlsVersion": "TLSv1.3",
                "cipherSuite": "TLS_AES_128_GCM_SHA256",
                "clientProvidedHostHeader": call.service.host(call.region, call.request),
            }),
        );
    }
    Value::Object(record)
}

/// Characters of base64 text.
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The event version each service writes today.
fn event_version(service: Service) -> &'static str {
    match service {
        Service::Lambda | Service::Route53 | Service::Ssm => "1.08",
        Service::S3 => "1.10",
        _ => "1.09",
    }
}

/// The request parameters as logged: secret values replaced; reads with none logged `null`.
fn logged_request(call: &Call<'_>) -> Value {
    let mut request = call.request.clone();
    if let Some(map) = request.as_object_mut() {
        for (service, key) in HIDDEN {
            if service == call.service && map.contains_key(key) {
                map.insert(key.to_owned(), json!("HIDDEN_DUE_TO_SECURITY_REASONS"));
            }
        }
    }
    match &request {
        Value::Object(map) if map.is_empty() => Value::Null,
        _ => request,
    }
}

/// The response elements: `null` for failed calls and reads; EC2 adds its request id.
fn response(call: &Call<'_>, request_id: &str) -> Value {
    if call.error.is_some() || call.read_only {
        return Value::Null;
    }
    match (call.service, call.response.clone()) {
        (Service::Ec2, Value::Object(mut map)) => {
            map.insert("requestId".to_owned(), json!(request_id));
            Value::Object(map)
        }
        (_, response) => response,
    }
}

/// S3's `additionalEventData`.
fn s3_additional(request: &Value, id2: &str) -> Value {
    let size = request.to_string().len();
    json!({
        "SignatureVersion": "SigV4",
        "CipherSuite": "TLS_AES_128_GCM_SHA256",
        "bytesTransferredIn": size,
        "AuthenticationMethod": "AuthHeader",
        "x-amz-id-2": id2,
        "bytesTransferredOut": 0,
    })
}

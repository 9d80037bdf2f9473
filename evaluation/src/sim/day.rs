//! Records the model does not run through a handler: calls AWS refused before they reached
//! a resource, and calls whose effect lies outside any Terraform state (AWS service events,
//! data events, calls to services the simulator does not model, calls in other accounts).
//! The background day and the account-level security events are made of them.

use serde_json::{Map, Value, json};

use super::caller::program_agent;
use super::ctx::{self, ApiError};
use super::record;
use super::services::Service;
use super::{Agent, Caller, Cloud, Request, SimError};

/// A call given as its CloudTrail parts, for services and events the model does not run.
#[derive(Debug, Clone, PartialEq)]
pub struct Foreign {
    /// `eventSource`, `cloudtrail.amazonaws.com`.
    pub event_source: String,
    /// `eventName`.
    pub event_name: String,
    /// `requestParameters` as logged (`null` when empty).
    pub request: Value,
    /// `responseElements` as logged.
    pub response: Value,
    /// `readOnly`.
    pub read_only: bool,
    /// `Management` or `Data`.
    pub category: &'static str,
    /// `AwsApiCall` or `AwsServiceEvent`.
    pub event_type: &'static str,
    /// `resources`, when the event names them.
    pub resources: Vec<Value>,
    /// `serviceEventDetails` of a service event, or `additionalEventData` of a call.
    pub details: Option<Value>,
    /// The account the call was made in, when it is not the model's.
    pub account: Option<String>,
}

impl Foreign {
    /// A management API call.
    pub fn call(event_source: &str, event_name: &str, request: Value, response: Value) -> Foreign {
        let read_only = super::reads::is_read(event_source, event_name);
        Foreign {
            event_source: event_source.to_owned(),
            event_name: event_name.to_owned(),
            request,
            response,
            read_only,
            category: "Management",
            event_type: "AwsApiCall",
            resources: Vec::new(),
            details: None,
            account: None,
        }
    }
}

impl Cloud {
    /// The record of `request` refused with `error` before it changed anything (an
    /// `AccessDenied`, a throttled call): the model is left as it was.
    pub fn refused(
        &mut self,
        request: &Request,
        caller: &Caller,
        error: &ApiError,
    ) -> Result<Value, SimError> {
        self.unrun(request, caller, Value::Null, Some(error))
    }

    /// The record of a successful call to a modelled service whose effect no Terraform state
    /// holds (a manual snapshot, a queue purged), answered with `response`; the model is
    /// left as it was.
    pub fn unmodelled(
        &mut self,
        request: &Request,
        caller: &Caller,
        response: Value,
    ) -> Result<Value, SimError> {
        self.unrun(request, caller, response, None)
    }

    fn unrun(
        &mut self,
        request: &Request,
        caller: &Caller,
        response: Value,
        error: Option<&ApiError>,
    ) -> Result<Value, SimError> {
        let service = Service::from_source(&request.event_source)
            .ok_or_else(|| SimError::UnknownService(request.event_source.clone()))?;
        let event_name = service.event_name(&request.event_name);
        let time = self.tick(caller);
        let region = service.region(caller.region.as_deref().unwrap_or(&self.region));
        let call = record::Call {
            service,
            event_name: &event_name,
            request: &request.request_parameters,
            response,
            error,
            read_only: super::reads::is_read(&request.event_source, &event_name),
            region: &region,
            time,
        };
        Ok(record::build(self, &call, caller))
    }

    /// Whether the simulator knows the event source (its records take the service's shape).
    pub fn models(event_source: &str) -> bool {
        Service::from_source(event_source).is_some()
    }

    /// The record of a call given by its parts. A service event carries AWS's own identity
    /// (`invokedBy`), address and agent, and no TLS details.
    pub fn foreign(&mut self, call: &Foreign, caller: &Caller) -> Value {
        let time = self.tick(caller).format("%Y-%m-%dT%H:%M:%SZ").to_string();
        let account = call
            .account
            .clone()
            .unwrap_or_else(|| self.account_id.clone());
        let region = caller.region.clone().unwrap_or_else(|| self.region.clone());
        let request_id = ctx::uuid(&mut self.rng);
        let event_id = ctx::uuid(&mut self.rng);
        let session = ctx::uuid(&mut self.rng);
        let service_event = call.event_type == "AwsServiceEvent";
        let mut record = Map::new();
        let mut put = |k: &str, v: Value| {
            record.insert(k.to_owned(), v);
        };
        put(
            "eventVersion",
            json!(if call.category == "Data" {
                "1.10"
            } else {
                "1.09"
            }),
        );
        let identity = match service_event {
            true => json!({"accountId": account, "invokedBy": "AWS Internal"}),
            false => caller.identity_json(&account, &time, &session),
        };
        put("userIdentity", identity);
        put("eventTime", json!(time));
        put("eventSource", json!(call.event_source));
        put("eventName", json!(call.event_name));
        put("awsRegion", json!(region));
        let (address, agent) = match service_event {
            true => ("AWS Internal".to_owned(), "AWS Internal".to_owned()),
            false => (caller.source_ip(), foreign_agent(caller, call)),
        };
        put("sourceIPAddress", json!(address));
        put("userAgent", json!(agent));
        put("requestParameters", call.request.clone());
        put("responseElements", call.response.clone());
        if let (Some(details), false) = (&call.details, service_event) {
            put("additionalEventData", details.clone());
        }
        if !service_event {
            put("requestID", json!(request_id));
        }
        put("eventID", json!(event_id));
        put("readOnly", json!(call.read_only));
        if !call.resources.is_empty() {
            put("resources", json!(call.resources));
        }
        put("eventType", json!(call.event_type));
        put("managementEvent", json!(call.category == "Management"));
        put("recipientAccountId", json!(account));
        if let (Some(details), true) = (&call.details, service_event) {
            put("serviceEventDetails", details.clone());
        }
        put("eventCategory", json!(call.category));
        if caller.is_console() && !service_event {
            put("sessionCredentialFromConsole", json!("true"));
        }
        if !service_event && !matches!(caller.agent, Agent::SsmAutomation | Agent::Service) {
            let host = format!(
                "{}.{region}.amazonaws.com",
                call.event_source.trim_end_matches(".amazonaws.com")
            );
            put(
                "tlsDetails",
                json!({"tlsVersion": "TLSv1.3", "cipherSuite": "TLS_AES_128_GCM_SHA256",
                       "clientProvidedHostHeader": host}),
            );
        }
        Value::Object(record)
    }
}

/// The user agent of a call to a service the model does not know: the caller's program
/// with the service's CLI name.
fn foreign_agent(caller: &Caller, call: &Foreign) -> String {
    let service = call.event_source.trim_end_matches(".amazonaws.com");
    match caller.agent {
        Agent::Console => "console.amazonaws.com".to_owned(),
        Agent::SsmAutomation | Agent::Service => caller.source_ip(),
        program => program_agent(
            program,
            service,
            &kebab(&call.event_name),
            (service, "1.0.0"),
        ),
    }
}

/// `StopLogging` as the CLI names it: `stop-logging`.
fn kebab(name: &str) -> String {
    let mut out = String::new();
    for (n, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && n > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Settings;
    use reconciler::terraform::state::State;

    fn cloud() -> Cloud {
        let state = State::parse(
            br#"{"version":4,"terraform_version":"1.9.0","serial":1,"lineage":"l","resources":[]}"#,
            "test",
        )
        .expect("an empty state parses");
        Cloud::from_state(&state, &Settings::default())
    }

    #[test]
    fn a_service_event_carries_aws_identity_and_details() {
        let mut cloud = cloud();
        let mut event = Foreign::call("kms.amazonaws.com", "RotateKey", Value::Null, Value::Null);
        event.event_type = "AwsServiceEvent";
        event.details = Some(json!({"rotationType": "AUTOMATIC", "keyId": "k"}));
        let record = cloud.foreign(&event, &Caller::service("kms.amazonaws.com"));
        assert_eq!(record["userIdentity"]["invokedBy"], "AWS Internal");
        assert_eq!(record["serviceEventDetails"]["rotationType"], "AUTOMATIC");
        assert_eq!(record["eventType"], "AwsServiceEvent");
        assert_eq!(record["readOnly"], false);
        assert!(record.get("tlsDetails").is_none() && record.get("requestID").is_none());
    }

    #[test]
    fn a_refused_call_leaves_the_model_and_records_the_code() {
        let mut cloud = cloud();
        let request = Request::new(
            "sqs.amazonaws.com",
            "SetQueueAttributes",
            json!({"queueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/q"}),
        );
        let error = ApiError::new("AccessDenied", "not authorized");
        let record = cloud
            .refused(&request, &Caller::user("bob", Agent::Cli), &error)
            .expect("sqs is modelled");
        assert_eq!(record["errorCode"], "AccessDenied");
        assert_eq!(record["responseElements"], Value::Null);
        assert_eq!(kebab("StopLogging"), "stop-logging");
    }
}

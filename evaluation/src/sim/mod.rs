//! The cloud simulator: a model of one AWS account's resources, with attributes in the shape
//! the Terraform AWS provider writes to state, seeded from a Terraform state.
//!
//! [`Cloud::execute`] runs one AWS call given as CloudTrail records it (event source, event
//! name and `requestParameters`), changes the model as AWS would, and returns the CloudTrail
//! record the call leaves. A call AWS would refuse leaves the model untouched and its record
//! carries `errorCode` and `errorMessage`. [`Cloud::snapshot`] returns the model as a
//! Terraform [`State`], so a validator can compare it with what the code describes.
//!
//! Everything random (ids, request and event ids, the clock) comes from one seeded ChaCha
//! generator, so a seed and a sequence of calls always give the same records and state.

mod caller;
mod ctx;
mod day;
mod noise;
mod params;
pub mod reads;
mod record;
mod services;

use chrono::{DateTime, Duration, TimeZone, Utc};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reconciler::terraform::state::{Instance, Mode, State};
use serde_json::Value;

pub use caller::{Agent, Caller, Identity};
pub use ctx::ApiError;
use ctx::Ctx;
pub use day::Foreign;
pub use reconciler::terraform::state::tfstate_json;
use services::Service;
/// The PutMetricAlarm request fields and the alarm attributes they set.
pub use services::cloudwatch::ALARM_FIELDS;

/// The account the simulator stands for, and the seed of everything random.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The seed of ids, event ids and the clock.
    pub seed: u64,
    /// The account id; when `None`, taken from the state (an ARN or `aws_caller_identity`).
    pub account_id: Option<String>,
    /// The default region; when `None`, taken from the state or `us-east-1`.
    pub region: Option<String>,
    /// The time of the first call.
    pub start: DateTime<Utc>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            seed: 0,
            account_id: None,
            region: None,
            start: Utc
                .with_ymd_and_hms(2026, 3, 2, 9, 0, 0)
                .single()
                .unwrap_or_default(),
        }
    }
}

/// One AWS call, in the shape CloudTrail records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The service endpoint, `ec2.amazonaws.com`.
    pub event_source: String,
    /// The event name as CloudTrail logs it (`UpdateFunctionConfiguration20150331v2`); Lambda
    /// names given without their version suffix get the one CloudTrail writes.
    pub event_name: String,
    /// `requestParameters` exactly as CloudTrail logs them.
    pub request_parameters: Value,
    /// The region the call goes to when not the caller's (a multi-Region key's replica).
    pub region: Option<String>,
}

impl Request {
    /// A request from its three parts.
    pub fn new(event_source: &str, event_name: &str, request_parameters: Value) -> Self {
        Self {
            event_source: event_source.to_owned(),
            event_name: event_name.to_owned(),
            request_parameters,
            region: None,
        }
    }

    /// The same call sent to `region`'s endpoint.
    pub fn in_region(mut self, region: &str) -> Self {
        self.region = Some(region.to_owned());
        self
    }
}

/// What a call did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The CloudTrail record the call leaves.
    pub record: Value,
    /// The error AWS answered with; `None` when the call succeeded.
    pub error: Option<ApiError>,
    /// Addresses of the instances the call created, changed or deleted.
    pub touched: Vec<String>,
}

/// A call the simulator cannot run at all (as opposed to one AWS refuses, an [`ApiError`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The event source names no service the simulator models.
    #[error("unsupported event source `{0}`")]
    UnknownService(String),
    /// The service is modelled but this write call is not.
    #[error("{service}: `{event_name}` is not simulated")]
    UnsupportedCall {
        /// The event source.
        service: String,
        /// The event name.
        event_name: String,
    },
}

/// A simulated AWS account.
#[derive(Debug, Clone)]
pub struct Cloud {
    account_id: String,
    region: String,
    base: State,
    resources: Vec<Instance>,
    rng: ChaCha8Rng,
    clock: DateTime<Utc>,
    created: u64,
    policy_versions: std::collections::BTreeMap<String, u32>,
}

impl Cloud {
    /// A cloud holding the managed resources of `state`.
    pub fn from_state(state: &State, settings: &Settings) -> Cloud {
        let account_id = settings
            .account_id
            .clone()
            .or_else(|| account_from_state(state))
            .unwrap_or_else(|| "123456789012".to_owned());
        let region = settings
            .region
            .clone()
            .or_else(|| region_from_state(state))
            .unwrap_or_else(|| "us-east-1".to_owned());
        let resources = state
            .instances
            .iter()
            .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
            .cloned()
            .collect();
        Cloud {
            account_id,
            region,
            base: state.clone(),
            resources,
            rng: ChaCha8Rng::seed_from_u64(settings.seed),
            clock: settings.start,
            created: 0,
            policy_versions: Default::default(),
        }
    }

    /// The account id.
    pub fn account_id(&self) -> &str {
        &self.account_id
    }

    /// The default region.
    pub fn region(&self) -> &str {
        &self.region
    }

    /// The resources as they are now.
    pub fn resources(&self) -> &[Instance] {
        &self.resources
    }

    /// Runs one call. AWS's refusals are an [`Outcome`] with an error (and an unchanged
    /// model); only a call the simulator does not model is a [`SimError`].
    pub fn execute(&mut self, request: &Request, caller: &Caller) -> Result<Outcome, SimError> {
        let service = Service::from_source(&request.event_source)
            .ok_or_else(|| SimError::UnknownService(request.event_source.clone()))?;
        let event_name = service.event_name(&request.event_name);
        let api = service.api_name(&event_name).to_owned();
        let read_only = reads::is_read(&request.event_source, &event_name);
        let handler = match read_only {
            true => None,
            false => Some(
                service
                    .handler(&api)
                    .ok_or_else(|| SimError::UnsupportedCall {
                        service: request.event_source.clone(),
                        event_name: event_name.clone(),
                    })?,
            ),
        };
        let time = self.tick(caller);
        let region = service.region(
            request
                .region
                .as_deref()
                .or(caller.region.as_deref())
                .unwrap_or(&self.region),
        );
        // Reads change nothing, so only writes keep a copy to restore when refused.
        let before = (!read_only).then(|| self.resources.clone());
        let mut ctx = Ctx::new(self, region.clone(), time);
        let result = match handler {
            Some(handler) => handler(&mut ctx, &request.request_parameters),
            None => Ok(Value::Null),
        };
        let touched = ctx.into_touched();
        let (response, error, touched) = match result {
            Ok(response) => (response, None, touched),
            Err(error) => {
                if let Some(before) = before {
                    self.resources = before;
                }
                (Value::Null, Some(error), Vec::new())
            }
        };
        let call = record::Call {
            service,
            event_name: &event_name,
            request: &request.request_parameters,
            response,
            error: error.as_ref(),
            read_only,
            region: &region,
            time,
        };
        let record = record::build(self, &call, caller);
        Ok(Outcome {
            record,
            error,
            touched,
        })
    }

    /// The model as a Terraform state: the seed state's outputs and data sources, and every
    /// managed resource as it is now (created ones under `<type>.unmanaged_<n>` addresses).
    pub fn snapshot(&self) -> State {
        let mut state = self.base.clone();
        let data = self
            .base
            .instances
            .iter()
            .filter(|i| i.mode == Mode::Data)
            .cloned();
        state.instances = data.chain(self.resources.iter().cloned()).collect();
        state.origin = format!("simulated cloud from {}", self.base.origin);
        state.serial = self.base.serial.map(|s| s + 1);
        state
    }

    /// Advances the clock: to the caller's time when given, otherwise by 5 to 120 seconds.
    fn tick(&mut self, caller: &Caller) -> DateTime<Utc> {
        let gap = Duration::seconds(self.rng.random_range(5..=120));
        self.clock = match caller.time {
            Some(time) => time,
            None => self.clock + gap,
        };
        self.clock
    }
}

/// A JSON document as text with every object's keys sorted: policy documents the simulator
/// stores and the generators send, written the same whether or not a build enables
/// `serde_json`'s `preserve_order` (feature unification in a workspace build can).
pub fn canonical_json(value: &Value) -> String {
    serde_json::to_string(&sorted(value)).unwrap_or_default()
}

/// The value with every object's keys in sorted order.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The account in the first ARN of the state, or the `aws_caller_identity` data source.
fn account_from_state(state: &State) -> Option<String> {
    let from_identity = state
        .instances
        .iter()
        .find(|i| i.resource_type == "aws_caller_identity")
        .and_then(|i| i.string_attribute("account_id"))
        .map(str::to_owned);
    from_identity.or_else(|| {
        state.instances.iter().find_map(|i| {
            let arn = i.string_attribute("arn")?;
            let account = arn.split(':').nth(4)?;
            (account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit()))
                .then(|| account.to_owned())
        })
    })
}

/// The region in the first regional ARN of the state.
fn region_from_state(state: &State) -> Option<String> {
    state.instances.iter().find_map(|i| {
        let arn = i.string_attribute("arn")?;
        let region = arn.split(':').nth(3)?;
        (!region.is_empty()).then(|| region.to_owned())
    })
}

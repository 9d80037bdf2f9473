//! Plumbing shared by the sources that call CloudTrail's APIs: building clients from the
//! standard credential chain, pacing requests under the API's rate limit, retrying throttled
//! and transient failures with jittered exponential backoff, and turning record text into
//! source items.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_cloudtrail::Client;
use aws_sdk_cloudtrail::config::retry::RetryConfig;
use aws_sdk_cloudtrail::error::{ProvideErrorMetadata, SdkError};
use aws_smithy_types::retry::{ErrorKind, ProvideErrorKind};
use tokio::time::Instant;

use super::record::{Call, Origin};
use super::source::{BadRecord, SourceError, SourceItem};

/// Error codes AWS services use for "slow down", besides what the SDK models as throttling.
const THROTTLING_CODES: &[&str] = &[
    "ThrottlingException",
    "Throttling",
    "TooManyRequestsException",
    "RequestLimitExceeded",
];

/// How an API source spaces its requests and backs off when AWS pushes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// Least time between the starts of two requests through one client. LookupEvents allows
    /// two requests per second per account and region, hence 500 ms by default.
    pub min_interval: Duration,
    /// Backoff ceiling for the first retry; it doubles with every further retry.
    pub backoff_base: Duration,
    /// Upper bound for a single backoff.
    pub backoff_max: Duration,
    /// Retries of one request before the source gives up.
    pub max_retries: u32,
}

impl Default for Pacing {
    fn default() -> Self {
        Self {
            min_interval: Duration::from_millis(500),
            backoff_base: Duration::from_secs(1),
            backoff_max: Duration::from_secs(10),
            max_retries: 8,
        }
    }
}

impl Pacing {
    /// The wait before retry number `retry` (from 0): between half and all of
    /// `backoff_base * 2^retry`, capped at `backoff_max`, chosen at random so that clients
    /// throttled together do not retry together.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry).unwrap_or(u32::MAX);
        let ceiling = self
            .backoff_base
            .saturating_mul(factor)
            .min(self.backoff_max);
        let half = ceiling / 2;
        half + half.mul_f64(unit_random())
    }
}

/// A number in `[0, 1)` from the standard library's randomly keyed hasher.
fn unit_random() -> f64 {
    let bits = RandomState::new().build_hasher().finish() >> 11;
    bits as f64 / (1u64 << 53) as f64
}

/// Spaces the requests of one client and retries those AWS throttles or fails transiently.
/// Clones share the schedule, so every stream over the same client respects one rate.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    pacing: Pacing,
    next_slot: Arc<Mutex<Option<Instant>>>,
}

impl Pacer {
    /// A pacer with an empty schedule.
    pub(crate) fn new(pacing: Pacing) -> Self {
        Self {
            pacing,
            next_slot: Arc::new(Mutex::new(None)),
        }
    }

    /// Waits for this client's next free request slot and books the one after it.
    async fn wait_turn(&self) {
        let slot = {
            let mut next = self
                .next_slot
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let now = Instant::now();
            let slot = next.map_or(now, |n| n.max(now));
            *next = Some(slot + self.pacing.min_interval);
            slot
        };
        tokio::time::sleep_until(slot).await;
    }

    /// Sends a request built by `request`, paced, retrying throttled and transient failures
    /// up to `max_retries` times; a failure that remains becomes [`SourceError::Api`] naming
    /// `source_name` and the `operation`.
    pub(crate) async fn send<T, E, F, Fut>(
        &self,
        source_name: &str,
        operation: &str,
        mut request: F,
    ) -> Result<T, SourceError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, SdkError<E>>>,
        E: ProvideErrorKind + ProvideErrorMetadata + std::error::Error + 'static,
    {
        let mut retry = 0;
        loop {
            self.wait_turn().await;
            let error = match request().await {
                Ok(output) => return Ok(output),
                Err(error) => error,
            };
            if retry >= self.pacing.max_retries || !is_retryable(&error) {
                return Err(give_up(source_name, operation, retry, &error));
            }
            let delay = self.pacing.backoff(retry);
            let error = error_message(&error);
            tracing::warn!(source = source_name, operation, retry, ?delay, %error, "backing off");
            tokio::time::sleep(delay).await;
            retry += 1;
        }
    }
}

/// The error a source reports when a request failed for good.
fn give_up<E>(source_name: &str, operation: &str, retries: u32, error: &SdkError<E>) -> SourceError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let after = match retries {
        0 => String::new(),
        n => format!(" (after {n} retries)"),
    };
    SourceError::Api {
        source_name: source_name.to_owned(),
        message: format!("{operation} failed{after}: {}", error_message(error)),
    }
}

/// Whether a failed request may succeed when sent again: throttling (by error code, the
/// SDK's classification or HTTP 429), server errors, timeouts and broken connections.
fn is_retryable<E: ProvideErrorKind>(error: &SdkError<E>) -> bool {
    match error {
        SdkError::TimeoutError(_) | SdkError::ResponseError(_) => true,
        SdkError::DispatchFailure(failure) => failure.is_io() || failure.is_timeout(),
        SdkError::ServiceError(service) => {
            let status = service.raw().status();
            let kind = service.err().retryable_error_kind();
            let code = ProvideErrorKind::code(service.err()).unwrap_or_default();
            THROTTLING_CODES.contains(&code)
                || status.as_u16() == 429
                || status.is_server_error()
                || matches!(
                    kind,
                    Some(
                        ErrorKind::ThrottlingError
                            | ErrorKind::TransientError
                            | ErrorKind::ServerError
                    )
                )
        }
        _ => false,
    }
}

/// The service's error code and message when it sent them, else the chain of causes.
fn error_message<E>(error: &SdkError<E>) -> String
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    match (
        ProvideErrorMetadata::code(error),
        ProvideErrorMetadata::message(error),
    ) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (Some(code), None) => code.to_owned(),
        _ => {
            let causes =
                std::iter::successors(Some(error as &dyn std::error::Error), |e| e.source());
            causes
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(": ")
        }
    }
}

/// Loads the shared AWS settings through the standard credential chain for `region`, with a
/// named profile and an endpoint override when given. The SDK's own retries are turned off:
/// [`Pacer`] retries, so that one policy governs how hard the API is pushed.
pub(crate) async fn load_settings(
    region: &str,
    profile: Option<&str>,
    endpoint_url: Option<&str>,
) -> SdkConfig {
    let mut loader = self::loader(region).retry_config(RetryConfig::disabled());
    if let Some(profile) = profile {
        loader = loader.profile_name(profile);
    }
    if let Some(url) = endpoint_url {
        loader = loader.endpoint_url(url);
    }
    loader.load().await
}

/// The standard settings loader for `region` with the HTTPS client every AWS client and
/// credential provider then uses: rustls with ring and the system's trusted roots (endpoint
/// overrides may be plain HTTP).
pub fn loader(region: &str) -> aws_config::ConfigLoader {
    use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};
    let https = aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https();
    aws_config::defaults(BehaviorVersion::latest())
        .http_client(https)
        .region(Region::new(region.to_owned()))
}

/// A CloudTrail client for one region from loaded settings.
pub(crate) fn regional_client(settings: &SdkConfig, region: &str) -> Client {
    let config = aws_sdk_cloudtrail::config::Builder::from(settings)
        .region(Region::new(region.to_owned()))
        .build();
    Client::from_conf(config)
}

/// Parses one record's JSON text into a call; text that does not parse, or no text at all
/// (`missing` says what was absent), becomes a skipped record so the source can go on.
pub(crate) fn record_item(text: Option<&str>, origin: Origin, missing: &str) -> SourceItem {
    let Some(text) = text else {
        return SourceItem::Skipped(BadRecord {
            origin,
            reason: missing.to_owned(),
        });
    };
    match Call::parse(text.as_bytes(), origin.clone()) {
        Ok(call) => SourceItem::Call(Box::new(call)),
        Err(error) => SourceItem::Skipped(BadRecord {
            origin,
            reason: error.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_stays_under_the_cap() {
        let pacing = Pacing {
            backoff_base: Duration::from_millis(100),
            backoff_max: Duration::from_millis(1000),
            ..Pacing::default()
        };
        let bounds = [(50, 100), (100, 200), (200, 400), (400, 800), (500, 1000)];
        for (retry, (low, high)) in (0u32..).zip(bounds) {
            for _ in 0..50 {
                let delay = pacing.backoff(retry);
                assert!(
                    delay >= Duration::from_millis(low) && delay <= Duration::from_millis(high),
                    "retry {retry}: {delay:?}"
                );
            }
        }
        assert!(pacing.backoff(40) <= Duration::from_millis(1000));
    }

    #[test]
    fn backoff_varies() {
        let pacing = Pacing::default();
        let delays: std::collections::HashSet<Duration> =
            (0..20).map(|_| pacing.backoff(3)).collect();
        assert!(delays.len() > 1);
    }

    #[tokio::test]
    async fn pacer_spaces_requests() {
        let pacer = Pacer::new(Pacing {
            min_interval: Duration::from_millis(20),
            ..Pacing::default()
        });
        let start = Instant::now();
        for _ in 0..3 {
            pacer.wait_turn().await;
        }
        assert!(start.elapsed() >= Duration::from_millis(40));
    }

    #[test]
    fn missing_and_malformed_text_are_skipped() {
        let origin = Origin {
            source: Arc::from("test"),
            index: 3,
            offset: None,
        };
        let missing = record_item(None, origin.clone(), "no text");
        assert!(matches!(missing, SourceItem::Skipped(ref bad) if bad.reason == "no text"));
        let bad = record_item(Some("{oops"), origin.clone(), "no text");
        assert!(matches!(bad, SourceItem::Skipped(ref b) if b.origin == origin));
    }
}

//! CloudTrail's LookupEvents API: the last 90 days of management events of one account,
//! queried region by region, 50 events a page, within the API's rate limit.

#[cfg(feature = "aws")]
mod source;
#[cfg(feature = "aws")]
pub use source::LookupSource;

/// `[sources.lookup]`: CloudTrail's LookupEvents API (the last 90 days of management events).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LookupConfig {
    /// Regions to query; each is queried separately.
    pub regions: Vec<String>,
    /// A named profile from the AWS config files; the default credential chain otherwise.
    #[serde(default)]
    pub profile: Option<String>,
    /// Endpoint override (a VPC endpoint, or a test server).
    #[serde(default)]
    pub endpoint_url: Option<String>,
}

//! The LookupEvents source itself: region by region through the AWS SDK, paced.

use std::sync::Arc;

use aws_sdk_cloudtrail::Client;
use aws_sdk_cloudtrail::operation::lookup_events::builders::LookupEventsFluentBuilder;
use aws_sdk_cloudtrail::types::{Event, LookupAttribute, LookupAttributeKey};
use aws_smithy_types::DateTime as SmithyTime;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use futures::stream;

use crate::ingest::aws::{Pacer, Pacing, load_settings, record_item, regional_client};
use crate::ingest::filter::Pushdown;
use crate::ingest::record::Origin;
use crate::ingest::source::{CallStream, Source, SourceError, SourceItem, SourceResult};

use super::LookupConfig;

/// Largest page LookupEvents returns.
const PAGE_SIZE: i32 = 50;

/// LookupEvents in one or more regions of one account.
#[derive(Debug, Clone)]
pub struct LookupSource {
    regions: Vec<RegionClient>,
}

/// One region's client and the pacer that keeps it under the rate limit.
#[derive(Debug, Clone)]
struct RegionClient {
    name: String,
    client: Client,
    pacer: Pacer,
}

impl LookupSource {
    /// Clients for the configured regions through the standard credential chain, with the
    /// configured profile and endpoint; credentials are resolved once, in the first region.
    pub async fn from_config(config: &LookupConfig) -> Self {
        let Some(first) = config.regions.first() else {
            return Self::with_clients([]);
        };
        let settings = load_settings(
            first,
            config.profile.as_deref(),
            config.endpoint_url.as_deref(),
        )
        .await;
        Self::with_clients(
            config
                .regions
                .iter()
                .map(|region| (region.clone(), regional_client(&settings, region))),
        )
    }

    /// A source over ready-made clients, one per region (named by the first element).
    pub fn with_clients(clients: impl IntoIterator<Item = (String, Client)>) -> Self {
        let regions = clients
            .into_iter()
            .map(|(name, client)| RegionClient {
                name,
                client,
                pacer: Pacer::new(Pacing::default()),
            })
            .collect();
        Self { regions }
    }

    /// Replaces the default request spacing and backoff.
    pub fn with_pacing(mut self, pacing: Pacing) -> Self {
        for region in &mut self.regions {
            region.pacer = Pacer::new(pacing);
        }
        self
    }
}

impl Source for LookupSource {
    fn describe(&self) -> String {
        let names: Vec<&str> = self.regions.iter().map(|r| r.name.as_str()).collect();
        format!("lookup-events: {}", names.join(", "))
    }

    fn filters_at_source(&self) -> bool {
        true
    }

    fn calls(&self, pushdown: &Pushdown) -> CallStream {
        let streams = self
            .regions
            .iter()
            .map(|region| region_calls(region, pushdown));
        stream::select_all(streams).boxed()
    }
}

/// Where one region's paging stands.
struct Pages {
    source: Arc<str>,
    pacer: Pacer,
    request: LookupEventsFluentBuilder,
    next_token: Option<String>,
    index: u64,
}

/// The calls of one region, page after page.
fn region_calls(region: &RegionClient, pushdown: &Pushdown) -> CallStream {
    let source: Arc<str> = Arc::from(format!("lookup-events:{}", region.name));
    let request = match request_for(&region.client, pushdown) {
        Ok(request) => request,
        Err(error) => {
            let error = SourceError::Api {
                source_name: source.to_string(),
                message: error.to_string(),
            };
            return stream::iter([Err(error)]).boxed();
        }
    };
    let pages = Pages {
        source,
        pacer: region.pacer.clone(),
        request,
        next_token: None,
        index: 0,
    };
    stream::unfold(
        Some(pages),
        |pages| async move { Some(next_page(pages?).await) },
    )
    .flat_map(stream::iter)
    .boxed()
}

/// The request every page repeats: page size, time window, and the read-only attribute when
/// only writes are wanted (LookupEvents accepts a single attribute).
fn request_for(
    client: &Client,
    pushdown: &Pushdown,
) -> Result<LookupEventsFluentBuilder, aws_sdk_cloudtrail::error::BuildError> {
    let attribute = if pushdown.writes_only {
        let writes = LookupAttribute::builder()
            .attribute_key(LookupAttributeKey::ReadOnly)
            .attribute_value("false")
            .build()?;
        Some(vec![writes])
    } else {
        None
    };
    Ok(client
        .lookup_events()
        .max_results(PAGE_SIZE)
        .set_start_time(pushdown.filter.since.map(smithy_time))
        .set_end_time(pushdown.filter.until.map(smithy_time))
        .set_lookup_attributes(attribute))
}

fn smithy_time(time: DateTime<Utc>) -> SmithyTime {
    SmithyTime::from_secs_and_nanos(time.timestamp(), time.timestamp_subsec_nanos())
}

/// Fetches one page; returns its items and the state for the next page, if there is one.
async fn next_page(mut pages: Pages) -> (Vec<SourceResult>, Option<Pages>) {
    let request = pages
        .request
        .clone()
        .set_next_token(pages.next_token.take());
    let sent = pages
        .pacer
        .send(&pages.source, "LookupEvents", || request.clone().send())
        .await;
    let output = match sent {
        Ok(output) => output,
        Err(error) => return (vec![Err(error)], None),
    };
    let items = output
        .events
        .unwrap_or_default()
        .into_iter()
        .map(|event| Ok(pages.item(event)))
        .collect();
    pages.next_token = output.next_token.filter(|t| !t.is_empty());
    let more = pages.next_token.is_some().then_some(pages);
    (items, more)
}

impl Pages {
    /// The event's CloudTrail record as a call, or a skipped record.
    fn item(&mut self, event: Event) -> SourceItem {
        let origin = Origin {
            source: self.source.clone(),
            index: self.index,
            offset: None,
        };
        self.index += 1;
        record_item(
            event.cloud_trail_event.as_deref(),
            origin,
            "the event has no CloudTrailEvent record",
        )
    }
}

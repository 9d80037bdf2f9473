//! The Lake source itself: the query through the AWS SDK, paced and polled.

use std::collections::HashMap;
use std::sync::Arc;

use aws_sdk_cloudtrail::Client;
use aws_sdk_cloudtrail::types::QueryStatus;

use super::{EventDataStoreId, LakeConfig, LakeError, query_sql};
use crate::ingest::aws::{Pacer, Pacing, load_settings, record_item, regional_client};
use crate::ingest::filter::Pushdown;
use crate::ingest::query::{self, Canceller, Polling, Service, State, api_error};
use crate::ingest::record::Origin;
use crate::ingest::source::{CallStream, Source, SourceError, SourceItem, SourceResult};

/// The column holding the whole original record (Lake returns column names in lower case).
const RECORD_COLUMN: &str = "eventjson";

/// An event data store of CloudTrail Lake.
#[derive(Debug, Clone)]
pub struct LakeSource {
    store: EventDataStoreId,
    region: String,
    client: Client,
    pacer: Pacer,
    polling: Polling,
}

impl LakeSource {
    /// A client for the configured store's region through the standard credential chain,
    /// with the configured profile and endpoint.
    pub async fn from_config(config: &LakeConfig) -> Result<Self, LakeError> {
        let settings = load_settings(
            &config.region,
            config.profile.as_deref(),
            config.endpoint_url.as_deref(),
        )
        .await;
        let client = regional_client(&settings, &config.region);
        Self::with_client(&config.event_data_store, &config.region, client)
    }

    /// A source over a ready-made client for the store's region.
    pub fn with_client(
        event_data_store: &str,
        region: &str,
        client: Client,
    ) -> Result<Self, LakeError> {
        Ok(Self {
            store: EventDataStoreId::parse(event_data_store)?,
            region: region.to_owned(),
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

impl Source for LakeSource {
    fn describe(&self) -> String {
        format!("lake: {} ({})", self.store, self.region)
    }

    fn filters_at_source(&self) -> bool {
        true
    }

    fn calls(&self, pushdown: &Pushdown) -> CallStream {
        let query = Query {
            source: Arc::from(format!("lake:{}", self.store)),
            client: self.client.clone(),
            pacer: self.pacer.clone(),
            sql: query_sql(&self.store, pushdown),
            next_row: 0,
        };
        query::records(query, self.polling)
    }
}

/// Asks CloudTrail Lake to cancel a query; a failure is logged, not raised.
async fn cancel(client: Client, id: String) {
    match client.cancel_query().query_id(&id).send().await {
        Ok(_) => tracing::warn!(query = %id, "cancelled the CloudTrail Lake query"),
        Err(error) => tracing::debug!(query = %id, %error, "the query could not be cancelled"),
    }
}

/// One run of the query.
struct Query {
    source: Arc<str>,
    client: Client,
    pacer: Pacer,
    sql: String,
    next_row: u64,
}

impl Service for Query {
    fn name(&self) -> &str {
        &self.source
    }

    async fn start(&self) -> Result<String, SourceError> {
        let started = self
            .pacer
            .send(&self.source, "StartQuery", || {
                self.client.start_query().query_statement(&self.sql).send()
            })
            .await?;
        tracing::debug!(source = %self.source, sql = %self.sql, "query sent");
        started
            .query_id
            .ok_or_else(|| api_error(&self.source, "StartQuery returned no query id".to_owned()))
    }

    async fn state(&self, id: &str) -> Result<State, SourceError> {
        let described = self
            .pacer
            .send(&self.source, "DescribeQuery", || {
                self.client.describe_query().query_id(id).send()
            })
            .await?;
        Ok(match described.query_status {
            Some(QueryStatus::Finished) => State::Done,
            Some(QueryStatus::Queued | QueryStatus::Running) => State::Pending,
            other => State::Ended(
                other
                    .as_ref()
                    .map_or("without a status", |s| s.as_str())
                    .to_owned(),
                described
                    .error_message
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
                    .query_id(id)
                    .set_next_token(token.clone())
                    .send()
            })
            .await?;
        let items = output
            .query_result_rows
            .unwrap_or_default()
            .iter()
            .map(|row| Ok(self.item(row)))
            .collect();
        Ok((items, output.next_token.filter(|t| !t.is_empty())))
    }

    fn canceller(&self, id: &str) -> Canceller {
        let (client, id) = (self.client.clone(), id.to_owned());
        Box::new(move || Box::pin(cancel(client, id)))
    }
}

impl Query {
    /// One result row's record as a call, or a skipped record.
    fn item(&mut self, row: &[HashMap<String, String>]) -> SourceItem {
        let origin = Origin {
            source: self.source.clone(),
            index: self.next_row,
            offset: None,
        };
        self.next_row += 1;
        let text = row
            .iter()
            .flat_map(|column| column.iter())
            .find(|(name, _)| name.eq_ignore_ascii_case(RECORD_COLUMN))
            .map(|(_, value)| value.as_str());
        record_item(text, origin, "the result row has no eventJson column")
    }
}

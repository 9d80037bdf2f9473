//! The Athena source itself: the query through the AWS SDK, paced and polled.

use std::sync::Arc;

use aws_sdk_athena::Client;
use aws_sdk_athena::types::{QueryExecutionContext, QueryExecutionState, ResultConfiguration};
use futures::StreamExt;
use futures::stream;

use super::{AthenaConfig, AthenaError, query_sql, record_of};
use crate::ingest::aws::{Pacer, Pacing, load_settings, record_item};
use crate::ingest::filter::Pushdown;
use crate::ingest::query::{self, Canceller, Polling, Service, State, api_error};
use crate::ingest::record::Origin;
use crate::ingest::source::{CallStream, Source, SourceError, SourceItem, SourceResult};

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

//! One SQL query run by a service that answers in pages (CloudTrail Lake, Amazon Athena):
//! start it, poll its state at doubling intervals, read its pages as records. A query whose
//! state can no longer be read, and every query still running when a run is interrupted
//! ([`cancel_running`]), is cancelled, so no billable query is left behind.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{StreamExt, stream};

use super::source::{CallStream, SourceError, SourceResult};

/// How often a running query is checked: first after `first`, then at doubling intervals
/// up to `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Polling {
    /// Wait before the second status check.
    pub first: Duration,
    /// Longest wait between two checks.
    pub max: Duration,
}

impl Default for Polling {
    fn default() -> Self {
        Self {
            first: Duration::from_secs(1),
            max: Duration::from_secs(10),
        }
    }
}

/// Where a query stands, as its service reports it.
pub enum State {
    /// It finished and its results can be read.
    Done,
    /// Queued or running.
    Pending,
    /// It ended any other way: the state's name and the service's reason.
    Ended(String, String),
}

/// Asks a service to cancel one query; made when it starts, run at most once.
pub type Canceller = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// The calls a query service answers, for one query.
pub trait Service: Send + Sync + 'static {
    /// The source's name, for errors and logs.
    fn name(&self) -> &str;
    /// Starts the query; returns its id.
    fn start(&self) -> impl Future<Output = Result<String, SourceError>> + Send;
    /// The query's state.
    fn state(&self, id: &str) -> impl Future<Output = Result<State, SourceError>> + Send;
    /// One page of results (the first when `token` is `None`) and the next page's token.
    fn page(
        &mut self,
        id: &str,
        token: Option<String>,
    ) -> impl Future<Output = Result<(Vec<SourceResult>, Option<String>), SourceError>> + Send;
    /// What cancels the query with this id.
    fn canceller(&self, id: &str) -> Canceller;
}

/// The records of one run of the query, page by page; an error ends the stream.
pub fn records<S: Service>(service: S, polling: Polling) -> CallStream {
    stream::unfold(Some(Step::Start(service)), move |step| async move {
        Some(step?.advance(polling).await)
    })
    .flat_map(stream::iter)
    .boxed()
}

/// Where a run stands: not started, or finished with result pages to fetch.
enum Step<S> {
    Start(S),
    Fetch {
        service: S,
        id: String,
        token: Option<String>,
    },
}

impl<S: Service> Step<S> {
    /// Takes the next step; returns the records it produced and the step after it.
    async fn advance(self, polling: Polling) -> (Vec<SourceResult>, Option<Step<S>>) {
        let outcome = match self {
            Self::Start(service) => run(&service, polling).await.map(|id| {
                let next = Self::Fetch {
                    service,
                    id,
                    token: None,
                };
                (Vec::new(), Some(next))
            }),
            Self::Fetch {
                mut service,
                id,
                token,
            } => service.page(&id, token).await.map(|(items, more)| {
                let next = more.map(|token| Self::Fetch {
                    service,
                    id,
                    token: Some(token),
                });
                (items, next)
            }),
        };
        outcome.unwrap_or_else(|error| (vec![Err(error)], None))
    }
}

/// Starts the query and waits for it to finish; returns its id. A query whose state cannot
/// be read any more is cancelled rather than left running (and billed).
async fn run<S: Service>(service: &S, polling: Polling) -> Result<String, SourceError> {
    let id = service.start().await?;
    tracing::info!(source = %service.name(), query = %id, "query started");
    register(&id, service.canceller(&id));
    let waited = wait(service, &id, polling).await;
    let canceller = unregister(&id);
    match waited {
        Ok(()) => Ok(id),
        Err(Stopped { error, ended }) => {
            if let (false, Some(cancel)) = (ended, canceller) {
                cancel().await;
            }
            Err(error)
        }
    }
}

/// Why waiting for a query stopped: the error, and whether the query itself ended (failed,
/// cancelled, timed out) or may still be running.
struct Stopped {
    error: SourceError,
    ended: bool,
}

/// Polls the query's state until it has finished, failing if it ends any other way or its
/// state cannot be read.
async fn wait<S: Service>(service: &S, id: &str, polling: Polling) -> Result<(), Stopped> {
    let mut interval = polling.first;
    loop {
        let state = service.state(id).await.map_err(|error| Stopped {
            error,
            ended: false,
        })?;
        match state {
            State::Done => return Ok(()),
            State::Pending => {}
            State::Ended(state, reason) => {
                return Err(Stopped {
                    error: SourceError::Api {
                        source_name: service.name().to_owned(),
                        message: format!("query {id} ended {state}: {reason}"),
                    },
                    ended: true,
                });
            }
        }
        tokio::time::sleep(interval).await;
        interval = (interval * 2).min(polling.max);
    }
}

/// Queries started and not yet finished, so an interrupted run can cancel them.
static RUNNING: Mutex<Vec<(String, Canceller)>> = Mutex::new(Vec::new());

fn register(id: &str, canceller: Canceller) {
    if let Ok(mut running) = RUNNING.lock() {
        running.push((id.to_owned(), canceller));
    }
}

/// Forgets a query; returns what would have cancelled it.
fn unregister(id: &str) -> Option<Canceller> {
    let mut running = RUNNING.lock().ok()?;
    let at = running.iter().position(|(other, _)| other == id)?;
    Some(running.remove(at).1)
}

/// Cancels every query this process started and has not finished waiting for: called when a
/// run is interrupted (Ctrl-C), so no billable query is left running.
pub async fn cancel_running() {
    let running: Vec<(String, Canceller)> = match RUNNING.lock() {
        Ok(mut running) => std::mem::take(&mut *running),
        Err(_) => Vec::new(),
    };
    for (_, cancel) in running {
        cancel().await;
    }
}

/// A [`Service`] error naming the source.
pub fn api_error(name: &str, message: String) -> SourceError {
    SourceError::Api {
        source_name: name.to_owned(),
        message,
    }
}

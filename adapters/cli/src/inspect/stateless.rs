//! The inspector's 2026-07-28 path: the `client` command's stateless wires (stdio or
//! Streamable HTTP) probed with `server/discover`, then serving the page's requests one at a
//! time from a bounded queue. The server's input requests (elicitation, sampling, roots) come
//! back inside a call's rounds and reach the page through the same handlers as a session's.

use std::time::Duration;

use mcp_sansio::app::client::stateless::{era_from_probe, Era};
use mcp_sansio::jsonrpc;
use serde_json::Value;
use smol::channel::{Receiver, Sender, TrySendError};

use crate::args::EraArg;
use crate::client_stateless::{collect_pages, Calls};

/// Requests of the page waiting for the stateless worker at most; more are refused.
const MAX_QUEUED: usize = 32;

/// One request of the page and where its outcome goes.
pub(crate) struct Job {
    method: String,
    params: Option<Value>,
    reply: std::sync::mpsc::Sender<Result<Value, String>>,
}

/// The page's side of the worker's queue; cloning shares it.
#[derive(Clone)]
pub(crate) struct Jobs(Sender<Job>);

/// The worker's side of the queue.
pub(crate) type JobQueue = Receiver<Job>;

/// A queue of at most [`MAX_QUEUED`] requests.
pub(crate) fn queue() -> (Jobs, JobQueue) {
    let (tx, rx) = smol::channel::bounded(MAX_QUEUED);
    (Jobs(tx), rx)
}

impl Jobs {
    /// Runs `method` with `params` on the worker and waits for its outcome (the wire's
    /// timeout bounds every attempt of it).
    pub(crate) fn request(&self, method: &str, params: Option<Value>) -> Result<Value, String> {
        let (reply, outcome) = std::sync::mpsc::channel();
        let job = Job {
            method: method.to_owned(),
            params,
            reply,
        };
        self.0.try_send(job).map_err(|e| match e {
            TrySendError::Full(_) => format!("{method}: {MAX_QUEUED} requests already wait"),
            TrySendError::Closed(_) => format!("{method}: the connection is closed"),
        })?;
        outcome
            .recv()
            .map_err(|_| format!("{method}: the connection is closed"))?
    }
}

/// What the probe found.
pub(crate) enum Probe {
    /// The server speaks 2026-07-28: the agreed version and the `server/discover` result.
    Stateless(String, Value),
    /// Only the `initialize` handshake (with `--era auto`): why.
    Stateful(String),
    /// `--era stateless` and the server did not answer `server/discover`: why.
    Failed(String),
}

/// Sends `server/discover`, bounded by `probe` under `--era auto` (a handshake-era server may
/// never answer it) and by `timeout` otherwise.
pub(crate) async fn probe<T: Calls>(
    wire: &mut T,
    era: EraArg,
    probe: Duration,
    timeout: Duration,
) -> Probe {
    let auto = era == EraArg::Auto;
    wire.set_timeout(if auto { timeout.min(probe) } else { timeout });
    let outcome = wire.request("server/discover", None).await;
    wire.set_timeout(timeout);
    match (era_from_probe(&outcome, wire.client().version()), outcome) {
        (Era::Stateless(version), Ok(discover)) => Probe::Stateless(version, discover),
        (Era::Stateful(why), _) if auto => Probe::Stateful(why),
        (Era::Stateful(why), _) => Probe::Failed(format!("server/discover: {why}")),
        (Era::Stateless(_), Err(e)) => Probe::Failed(format!("server/discover: {e}")),
    }
}

/// Serves the page's requests from `jobs`, one at a time, until every [`Jobs`] is gone.
pub(crate) async fn serve<T: Calls>(wire: &mut T, jobs: JobQueue) {
    // Bounded by the page: each job ends within the wire's timeouts.
    while let Ok(job) = jobs.recv().await {
        let outcome = perform(wire, &job.method, job.params).await;
        let _ = job.reply.send(outcome);
    }
}

/// One request: lists followed to their end, a tool call made a task waited for.
async fn perform<T: Calls>(
    wire: &mut T,
    method: &str,
    params: Option<Value>,
) -> Result<Value, String> {
    if method.ends_with("/list") {
        return collect_pages(wire, method, params).await;
    }
    let result = wire
        .request(method, params)
        .await
        .map_err(|e| format!("{method}: {e}"))?;
    if method == jsonrpc::TOOLS_CALL {
        return crate::client_tasks::finish_tool_call(wire, result).await;
    }
    Ok(result)
}

//! What the server sends the client: its requests (roots through the roots handler run as
//! a job, or inline from the fixed list; sampling and elicitation through their policies and
//! the registered handlers, run as jobs; anything else -32601) and its notifications (turned into `ClientEvent`s).

use std::time::Instant;

use super::admission::Refusal;
use super::types::{ClientEvent, HandlerContext};
use super::{Client, ClientItem};
use crate::jsonrpc::{self as m, ErrorObject, Method, RawJson, RequestId};
use crate::model::{ListRootsResult, LoggingMessageParams};
use crate::runtime::{first_poll, lock, BoxFuture, CancelToken, CatchPanic, Job};

impl Client {
    pub(super) fn notification(&mut self, method: &Method, params: Option<RawJson>) {
        let event = match method.as_ref() {
            m::NOTIFICATIONS_MESSAGE => {
                match params.as_ref().map(|p| p.parse::<LoggingMessageParams>()) {
                    Some(Ok(log)) => ClientEvent::Log(log),
                    _ => raw_notification(method, params),
                }
            }
            m::NOTIFICATIONS_TOOLS_LIST_CHANGED => ClientEvent::ToolsListChanged,
            m::NOTIFICATIONS_RESOURCES_LIST_CHANGED => ClientEvent::ResourcesListChanged,
            m::NOTIFICATIONS_PROMPTS_LIST_CHANGED => ClientEvent::PromptsListChanged,
            m::NOTIFICATIONS_RESOURCES_UPDATED => {
                let uri = params
                    .as_ref()
                    .and_then(|p| p.to_value().ok())
                    .and_then(|v| v.get("uri").and_then(|u| u.as_str()).map(str::to_owned));
                match uri {
                    Some(uri) => ClientEvent::ResourceUpdated { uri },
                    None => raw_notification(method, params),
                }
            }
            _ => raw_notification(method, params),
        };
        self.push_event(event);
    }

    /// Answers one of the server's requests: roots by the handler as a job (or inline from
    /// the fixed list), sampling and elicitation through
    /// their policies (admission.rs) and handlers as jobs, anything else `-32601`. `now`
    /// drives the policies' rate limits.
    pub(super) fn dispatch(
        &mut self,
        now: Instant,
        id: RequestId,
        method: &Method,
        params: Option<RawJson>,
    ) {
        let ctx = HandlerContext {
            id: id.clone(),
            cancel: CancelToken::new(),
        };
        let job = match method.as_ref() {
            m::ROOTS_LIST => match self.handlers.roots_handler.clone() {
                Some(h) => Some(Ok(self.job(&id, CatchPanic::start(|| h((), ctx.clone()))))),
                None => return self.answer_roots(&id),
            },
            m::SAMPLING_CREATE_MESSAGE => self.handlers.sampling.clone().map(|h| {
                let params = parse(params).map_err(Refusal::Error)?;
                let (params, place) = self.admission.sampling(now, &id, params)?;
                self.admission.lineages.sampling_started(id.clone(), place);
                Ok(self.job(&id, CatchPanic::start(|| h(params, ctx.clone()))))
            }),
            m::ELICITATION_CREATE => self.handlers.elicitation.clone().map(|h| {
                let params = parse(params).map_err(Refusal::Error)?;
                let params = self.admission.elicitation(now, &id, params)?;
                Ok(self.job(&id, CatchPanic::start(|| h(params, ctx.clone()))))
            }),
            _ => None,
        };
        match job {
            Some(Ok(job)) => {
                self.running.insert(id, ctx.cancel);
                if let Some(pending) = first_poll(job) {
                    self.jobs.push_back(pending);
                }
            }
            Some(Err(Refusal::Error(error))) => {
                let _ = self.session.respond_error(&id, error);
            }
            Some(Err(Refusal::Answer(result))) => {
                let _ = self.session.respond(&id, result);
            }
            None => {
                let _ = self
                    .session
                    .respond_error(&id, ErrorObject::method_not_found(method));
            }
        }
    }

    /// Wraps a handler's future into a job that pushes its reply.
    fn job<R>(&self, id: &RequestId, future: CatchPanic<BoxFuture<Result<R, ErrorObject>>>) -> Job
    where
        R: serde::Serialize + Send + 'static,
    {
        let outbox = self.outbox.clone();
        let id = id.clone();
        Box::pin(async move {
            let outcome = future.await.and_then(|result| {
                RawJson::from_serialize(&result)
                    .map_err(|e| ErrorObject::internal(format!("unencodable result: {e}")))
            });
            outbox.push_required(ClientItem::Reply { id, outcome });
        })
    }

    fn answer_roots(&mut self, id: &RequestId) {
        let Some(shared) = &self.handlers.roots else {
            let _ = self
                .session
                .respond_error(id, ErrorObject::method_not_found(m::ROOTS_LIST));
            return;
        };
        let result = ListRootsResult {
            roots: lock(shared).clone(),
            meta: None,
            extra: Default::default(),
        };
        let _ = match RawJson::from_serialize(&result) {
            Ok(raw) => self.session.respond(id, raw),
            Err(e) => self
                .session
                .respond_error(id, ErrorObject::internal(e.to_string())),
        };
    }
}

/// A request's params as `P`, or the -32602 the server gets.
fn parse<P: serde::de::DeserializeOwned>(params: Option<RawJson>) -> Result<P, ErrorObject> {
    params
        .ok_or_else(|| ErrorObject::invalid_params("Invalid params: missing"))?
        .parse::<P>()
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}")))
}

fn raw_notification(method: &Method, params: Option<RawJson>) -> ClientEvent {
    ClientEvent::Notification {
        method: method.to_string(),
        params: params
            .and_then(|p| p.to_value().ok())
            .unwrap_or(serde_json::Value::Null),
    }
}

//! What the server sends the client: its requests (roots answered inline; sampling and
//! elicitation through the registered handlers, run as jobs; anything else -32601) and its
//! notifications (turned into `ClientEvent`s).

use super::types::{ClientEvent, HandlerContext};
use super::{Client, ClientItem};
use crate::jsonrpc::{self as m, ErrorObject, Method, RawJson, RequestId};
use crate::model::{ListRootsResult, LoggingMessageParams};
use crate::runtime::{first_poll, lock, BoxFuture, CancelToken, Job};

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

    /// Answers one of the server's requests: roots inline, sampling and elicitation through
    /// their handlers as jobs, anything else `-32601`.
    pub(super) fn dispatch(&mut self, id: RequestId, method: &Method, params: Option<RawJson>) {
        let ctx = HandlerContext {
            id: id.clone(),
            cancel: CancelToken::new(),
        };
        let job = match method.as_ref() {
            m::ROOTS_LIST => return self.answer_roots(&id),
            m::SAMPLING_CREATE_MESSAGE => self
                .handlers
                .sampling
                .clone()
                .map(|h| self.job(&id, params, ctx.clone(), move |p, c| h(p, c))),
            m::ELICITATION_CREATE => self
                .handlers
                .elicitation
                .clone()
                .map(|h| self.job(&id, params, ctx.clone(), move |p, c| h(p, c))),
            _ => None,
        };
        match job {
            Some(Ok(job)) => {
                self.running.insert(id, ctx.cancel);
                if let Some(pending) = first_poll(job) {
                    self.jobs.push_back(pending);
                }
            }
            Some(Err(error)) => {
                let _ = self.session.respond_error(&id, error);
            }
            None => {
                let _ = self
                    .session
                    .respond_error(&id, ErrorObject::method_not_found(method));
            }
        }
    }

    /// Parses `params`, and wraps the handler's future into a job that pushes its reply.
    fn job<P, R, F>(
        &self,
        id: &RequestId,
        params: Option<RawJson>,
        ctx: HandlerContext,
        handler: F,
    ) -> Result<Job, ErrorObject>
    where
        P: serde::de::DeserializeOwned,
        R: serde::Serialize + Send + 'static,
        F: FnOnce(P, HandlerContext) -> BoxFuture<Result<R, ErrorObject>>,
    {
        let params = params
            .ok_or_else(|| ErrorObject::invalid_params("Invalid params: missing"))?
            .parse::<P>()
            .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}")))?;
        let future = handler(params, ctx);
        let outbox = self.outbox.clone();
        let id = id.clone();
        Ok(Box::pin(async move {
            let outcome = future.await.and_then(|result| {
                RawJson::from_serialize(&result)
                    .map_err(|e| ErrorObject::internal(format!("unencodable result: {e}")))
            });
            outbox.push_required(ClientItem::Reply { id, outcome });
        }))
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

fn raw_notification(method: &Method, params: Option<RawJson>) -> ClientEvent {
    ClientEvent::Notification {
        method: method.to_string(),
        params: params
            .and_then(|p| p.to_value().ok())
            .unwrap_or(serde_json::Value::Null),
    }
}

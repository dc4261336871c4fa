//! Handler plumbing shared by every registration: the type-erased handler, the `handler` /
//! `sync_handler` setters, and small JSON helpers for wire forms.

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::context::RequestContext;
use crate::app::runtime::BoxFuture;
use crate::jsonrpc::ErrorObject;
use crate::model::Icon;

/// What a handler returns: its result, or a JSON-RPC error for the caller.
pub type HandlerResult<T> = Result<T, ErrorObject>;

/// A type-erased async handler taking `I` and answering `O`.
pub type HandlerFn<I, O> =
    Arc<dyn Fn(I, RequestContext) -> BoxFuture<HandlerResult<O>> + Send + Sync + 'static>;

pub(crate) fn boxed<I, O, F, Fut>(f: F) -> HandlerFn<I, O>
where
    F: Fn(I, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<O>> + Send + 'static,
{
    Arc::new(move |i, ctx| Box::pin(f(i, ctx)))
}

pub(crate) fn boxed_sync<I, O, F>(f: F) -> HandlerFn<I, O>
where
    F: Fn(I, &RequestContext) -> HandlerResult<O> + Send + Sync + 'static,
    O: Send + 'static,
{
    Arc::new(move |i, ctx| Box::pin(std::future::ready(f(i, &ctx))))
}

/// Generates `handler` (async) and `sync_handler` setters for a registration type.
macro_rules! handler_setters {
    ($input:ty, $output:ty) => {
        /// Sets an async handler (its future runs as a job; see `Server::poll_job`).
        pub fn handler<F, Fut>(mut self, f: F) -> Self
        where
            F: Fn($input, RequestContext) -> Fut + Send + Sync + 'static,
            Fut: ::std::future::Future<Output = $crate::app::server::HandlerResult<$output>>
                + Send
                + 'static,
        {
            self.handler = Some($crate::app::server::types::boxed(f));
            self
        }

        /// Sets a sync handler (it finishes inside the server's inline first poll).
        pub fn sync_handler<F>(mut self, f: F) -> Self
        where
            F: Fn($input, &RequestContext) -> $crate::app::server::HandlerResult<$output>
                + Send
                + Sync
                + 'static,
        {
            self.handler = Some($crate::app::server::types::boxed_sync(f));
            self
        }
    };
}

pub(crate) fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.to_owned(), v);
    }
}

pub(crate) fn icons_json(icons: &Option<Vec<Icon>>) -> Option<Value> {
    icons.as_ref().and_then(|i| serde_json::to_value(i).ok())
}

pub(crate) use handler_setters;

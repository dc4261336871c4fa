//! Answers the input requests of an input-required result with the handlers the application
//! registered on its [`crate::app::client::ClientBuilder`]: `elicitation/create` and
//! `sampling/createMessage` go to the same handlers as in a stateful session, `roots/list` to
//! the roots handler or else to the registered roots.

use serde::Serialize;
use serde_json::{json, Value};

use super::ClientError;
use crate::app::client::builder::{ClientHandlerFn, Handlers};
use crate::app::client::HandlerContext;
use crate::jsonrpc::RequestId;
use crate::model::stateless::{InputKind, InputRequest, InputRequests, InputResponses};
use crate::runtime::{CancelToken, CatchPanic};

/// Input requests answered at most per round (a larger round fails the call).
pub(super) const MAX_INPUTS_PER_ROUND: usize = 64;

/// Every answer of one round, by key.
pub(super) async fn answer(
    handlers: &Handlers,
    requests: &InputRequests,
) -> Result<InputResponses, ClientError> {
    if requests.len() > MAX_INPUTS_PER_ROUND {
        return Err(ClientError::Input(format!(
            "{} input requests in one round (limit {MAX_INPUTS_PER_ROUND})",
            requests.len()
        )));
    }
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let answer = answer_one(handlers, key, request).await?;
        responses.insert(key.clone(), answer);
    }
    Ok(responses)
}

async fn answer_one(
    handlers: &Handlers,
    key: &str,
    request: &InputRequest,
) -> Result<Value, ClientError> {
    let fail = |why: String| ClientError::Input(format!("`{key}` ({}): {why}", request.method));
    // Embedded requests have no JSON-RPC id of their own: the handler sees the input key.
    let context = HandlerContext {
        id: RequestId::string(key),
        cancel: CancelToken::new(),
    };
    match request.kind() {
        Some(InputKind::Elicitation) => {
            let params = request.elicit_params();
            let handler = handlers.elicitation.as_ref();
            run_handler(handler, params, "elicitation", context, fail).await
        }
        Some(InputKind::Sampling) => {
            let params = request.sample_params();
            run_handler(
                handlers.sampling.as_ref(),
                params,
                "sampling",
                context,
                fail,
            )
            .await
        }
        Some(InputKind::Roots) if handlers.roots_handler.is_some() => {
            let handler = handlers.roots_handler.as_ref();
            run_handler(handler, Some(Ok(())), "roots", context, fail).await
        }
        Some(InputKind::Roots) => {
            let roots = handlers
                .roots
                .as_ref()
                .ok_or_else(|| fail("no roots declared".into()))?;
            let roots = roots.lock().unwrap_or_else(|p| p.into_inner()).clone();
            Ok(json!({ "roots": roots }))
        }
        None => Err(fail("not an input kind of 2026-07-28".into())),
    }
}

/// Runs the handler registered for one input kind (`what`) on the request's typed params and
/// encodes its result; a missing handler, invalid params or a panicking handler fail the call.
async fn run_handler<P, R: Serialize>(
    handler: Option<&ClientHandlerFn<P, R>>,
    params: Option<Result<P, serde_json::Error>>,
    what: &str,
    context: HandlerContext,
    fail: impl Fn(String) -> ClientError,
) -> Result<Value, ClientError> {
    let handler = handler.ok_or_else(|| fail(format!("no {what} handler")))?;
    let params = params
        .and_then(Result::ok)
        .ok_or_else(|| fail("invalid params".into()))?;
    let result = CatchPanic::start(|| handler(params, context))
        .await
        .map_err(|e| fail(e.message))?;
    serde_json::to_value(result).map_err(|e| fail(e.to_string()))
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use super::*;
    use crate::app::client::Client;
    use crate::jsonrpc::ErrorObject;
    use crate::model::{Implementation, ListRootsResult, Root};

    /// Polls a future whose handlers never wait.
    fn ready<F: Future>(f: F) -> F::Output {
        let mut f = pin!(f);
        match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(out) => out,
            Poll::Pending => panic!("the answer waited"),
        }
    }

    fn roots_round(handlers: &Handlers) -> Result<InputResponses, ClientError> {
        let requests = InputRequests::from([("r".to_owned(), InputRequest::list_roots())]);
        ready(answer(handlers, &requests))
    }

    #[test]
    fn roots_go_to_the_handler_before_the_fixed_list() {
        let fixed = Root {
            uri: "file:///fixed".into(),
            ..Default::default()
        };
        let builder = Client::builder(Implementation::new("c", "1")).roots(vec![fixed]);
        let (_, _, handlers) = builder.stateless_parts();
        let answered = roots_round(&handlers).expect("the fixed list");
        assert_eq!(answered["r"], json!({"roots": [{"uri": "file:///fixed"}]}));

        let builder = builder.roots_handler_sync(|ctx| {
            Ok(ListRootsResult {
                roots: vec![Root {
                    uri: format!("file:///asked/{}", ctx.request_id()),
                    ..Default::default()
                }],
                ..Default::default()
            })
        });
        let (_, _, handlers) = builder.stateless_parts();
        let answered = roots_round(&handlers).expect("the handler's answer");
        let expected = format!("file:///asked/{}", RequestId::string("r"));
        assert_eq!(answered["r"]["roots"][0]["uri"], expected.as_str());

        let refusing = Client::builder(Implementation::new("c", "1"))
            .roots_handler_sync(|_| Err(ErrorObject::new(-1, "private")));
        let (_, _, handlers) = refusing.stateless_parts();
        let refused = roots_round(&handlers).expect_err("the handler refused");
        assert!(refused.to_string().contains("private"), "{refused}");
    }
}

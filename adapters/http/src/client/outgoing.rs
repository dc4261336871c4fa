//! Performs one request of the detector or the legacy client (an [`OutgoingRequest`]: its own
//! path and query, and headers chosen by the core) and streams the response back to the loop,
//! keyed by its [`RequestKey`](mcp_sansio::http::legacy::RequestKey) number.

use std::rc::Rc;

use http_body_util::{BodyExt, Full};
use mcp_sansio::http::legacy::OutgoingRequest;
use mcp_sansio::http::{ExchangeId, HttpMethod};

use super::authorize::send_authorized;
use super::exchange::{Input, Streamed, Target};
use super::inflight::Inputs;
use super::pool::Pool;

/// Runs `request` and reports its response to `inputs`.
pub(crate) async fn run(
    pool: Rc<Pool>,
    target: Rc<Target>,
    request: OutgoingRequest,
    inputs: Rc<Inputs>,
) {
    let id = ExchangeId(request.key.0);
    if let Err(reason) = perform(&pool, &target, request, id, &inputs).await {
        inputs
            .send(Input::Streamed(Streamed::Failed { id, reason }))
            .await;
    }
}

async fn perform(
    pool: &Pool,
    target: &Target,
    request: OutgoingRequest,
    id: ExchangeId,
    inputs: &Inputs,
) -> Result<(), String> {
    let method = match request.head.method {
        HttpMethod::Post => hyper::Method::POST,
        HttpMethod::Get => hyper::Method::GET,
        HttpMethod::Delete => hyper::Method::DELETE,
        HttpMethod::Other => return Err("unsupported method".into()),
    };
    // The core resolved the path on the URL's own origin, so the pool's server is the one.
    let make = |authorization: Option<&str>| {
        let mut builder = hyper::Request::builder()
            .method(method.clone())
            .uri(request.head.path.as_str())
            .header(hyper::header::HOST, target.authority.as_str());
        for (name, value) in &request.head.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        if let Some(auth) = authorization {
            builder = builder.header(hyper::header::AUTHORIZATION, auth);
        }
        builder
            .body(Full::new(request.body.clone()))
            .map_err(|e| format!("invalid request: {e}"))
    };
    let (sender, response) = send_authorized(pool, target, make).await?;
    let (parts, mut body) = response.into_parts();
    let headers = parts.headers;
    let status = parts.status.as_u16();
    let head = Input::Streamed(Streamed::Head {
        id,
        status,
        headers,
    });
    inputs.send(head).await;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| format!("response body broke: {e}"))?;
        if let Ok(chunk) = frame.into_data() {
            inputs
                .send(Input::Streamed(Streamed::Body { id, chunk }))
                .await;
        }
    }
    pool.checkin(sender);
    inputs.send(Input::Streamed(Streamed::End { id })).await;
    Ok(())
}

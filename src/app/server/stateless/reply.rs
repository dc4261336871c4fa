//! How a stateless exchange ends and what it sends meanwhile: the handler's reply in its
//! 2026-07-28 shape (`resultType`, cache hints, `serverInfo`), input-required results with a
//! minted `requestState`, -32021 for a missing client capability, and the request-scoped
//! progress and log notifications, all queued for `poll_transmit`.

use serde_json::{json, Map, Value};

use super::mrtr::Round;
use super::Exchange;
use crate::app::server::outbox::OutboxItem;
use crate::app::server::Server;
use crate::jsonrpc::{self as m, code, ErrorObject, RawJson, RequestId};
use crate::model::stateless::{InputRequiredResult, SERVER_INFO_KEY};
use crate::model::LoggingLevel;
use crate::session::{Transmit, TransmitKind};
use crate::stateless::missing_capabilities_error;

impl Server {
    /// Takes the outbox items that belong to stateless exchanges; hands back the others.
    pub(in crate::app::server) fn stateless_apply(
        &mut self,
        item: OutboxItem,
    ) -> Option<OutboxItem> {
        if self.stateless.exchanges.is_empty() {
            return Some(item);
        }
        match item {
            OutboxItem::Reply { id, outcome } if self.stateless.exchanges.contains_key(&id) => {
                self.running.remove(&id);
                self.finish_stateless(id, outcome);
            }
            OutboxItem::Progress {
                id,
                progress,
                total,
                message,
            } if self.stateless.exchanges.contains_key(&id) => {
                let token = self
                    .stateless
                    .exchanges
                    .get(&id)
                    .and_then(|exchange| exchange.progress_token.clone());
                if let Some(token) = token {
                    let mut params = Map::new();
                    params.insert("progressToken".to_owned(), json!(token));
                    params.insert("progress".to_owned(), json!(progress));
                    if let Some(total) = total {
                        params.insert("total".to_owned(), json!(total));
                    }
                    if let Some(message) = message {
                        params.insert("message".to_owned(), json!(message));
                    }
                    let params = Value::Object(params);
                    self.push_notification(id, m::NOTIFICATIONS_PROGRESS, &params);
                }
            }
            OutboxItem::Notify {
                related: Some(id),
                method,
                params,
            } if self.stateless.exchanges.contains_key(&id) => {
                // Only request-scoped log messages, and only at the level the request asked
                // for; list changes and the like travel on listen streams, not here.
                let min = self
                    .stateless
                    .exchanges
                    .get(&id)
                    .and_then(|exchange| exchange.log_level);
                if method == m::NOTIFICATIONS_MESSAGE {
                    let params = params.and_then(|p| p.to_value().ok());
                    let level = params
                        .as_ref()
                        .and_then(|p| p.get("level")?.as_str())
                        .and_then(LoggingLevel::parse);
                    if let (Some(min), Some(level), Some(params)) = (min, level, params) {
                        if level >= min {
                            self.push_notification(id, method, &params);
                        }
                    }
                }
            }
            OutboxItem::CloseStream { id } if self.stateless.exchanges.contains_key(&id) => {}
            other => return Some(other),
        }
        None
    }

    fn push_notification(&mut self, id: RequestId, method: &str, params: &Value) {
        let Ok(raw) = RawJson::try_from(params) else {
            return;
        };
        let mut buf = Vec::new();
        m::encode_notification(&mut buf, method, Some(&raw));
        self.stateless.push(buf, TransmitKind::Notification, id);
    }

    /// The handler's reply (or the stand-in of a run that needs input) ends the exchange.
    fn finish_stateless(&mut self, id: RequestId, outcome: Result<RawJson, ErrorObject>) {
        let Some(exchange) = self.stateless.exchanges.remove(&id) else {
            return;
        };
        if let Some(input) = exchange.input.clone() {
            let round = input.take_round();
            if !round.missing.is_empty() || !round.requests.is_empty() {
                return self.ask_input(id, &exchange, round, input.answers());
            }
        }
        match outcome {
            Ok(raw) => match raw.to_value() {
                Ok(Value::Object(body)) => {
                    let body = self.stateless_result(&exchange, body);
                    self.push_result(id, &body);
                }
                _ => {
                    let e = ErrorObject::internal("handler result is not an object");
                    self.stateless.push_error(id, &e, None);
                }
            },
            Err(mut error) => {
                // 2026-07-28 reports an unknown resource as invalid params.
                if error.code == code::RESOURCE_NOT_FOUND {
                    error.code = code::INVALID_PARAMS;
                }
                self.stateless.push_error(id, &error, None);
            }
        }
    }

    /// A complete result: `resultType`, cache hints on cacheable methods, `serverInfo`.
    fn stateless_result(&self, exchange: &Exchange, mut body: Map<String, Value>) -> Value {
        body.entry("resultType").or_insert(json!("complete"));
        if exchange.method.cacheable {
            let cache = self.stateless.cache;
            body.insert("ttlMs".into(), json!(cache.ttl_ms));
            body.insert("cacheScope".into(), json!(cache.cache_scope));
        }
        self.add_server_info(&mut body);
        Value::Object(body)
    }

    pub(super) fn add_server_info(&self, body: &mut Map<String, Value>) {
        let info = serde_json::to_value(&self.stateless.profile.info).unwrap_or(Value::Null);
        let meta = body.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.insert(SERVER_INFO_KEY.into(), info);
        }
    }

    /// Ends a run that needs input: -32021 if an input needs a capability the request did not
    /// declare, else an input-required result with the inputs and, when the application set
    /// a key, a `requestState` carrying every answer so far.
    fn ask_input(
        &mut self,
        id: RequestId,
        exchange: &Exchange,
        round: Round,
        answers: &Map<String, Value>,
    ) {
        if !round.missing.is_empty() {
            let error = missing_capabilities_error(&round.missing);
            return self.stateless.push_error(id, &error, Some(400));
        }
        let now_ms = self.stateless.unix_ms(self.last_now);
        let state = self
            .stateless
            .state_key
            .as_ref()
            .and_then(|k| k.mint(&exchange.binding, answers, now_ms));
        let result = InputRequiredResult::new(round.requests, state);
        let mut body = match serde_json::to_value(&result) {
            Ok(Value::Object(body)) => body,
            _ => Map::new(),
        };
        self.add_server_info(&mut body);
        self.push_result(id, &Value::Object(body));
    }

    /// The next queued message of a stateless exchange.
    pub(in crate::app::server) fn poll_stateless_transmit(
        &mut self,
        buf: &mut Vec<u8>,
    ) -> Option<Transmit> {
        let queued = self.stateless.queue.pop_front()?;
        buf.extend_from_slice(&queued.bytes);
        Some(Transmit {
            len: queued.bytes.len(),
            kind: queued.kind,
            related: Some(queued.related),
        })
    }
}

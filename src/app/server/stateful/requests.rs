//! The requests only a stateful session has: `resources/subscribe` / `resources/unsubscribe`
//! (the session's subscribed URIs, bounded in number and length) with the
//! `notifications/resources/updated` they lead to, and `logging/setLevel`; and the
//! list_changed notifications a registration change sends on a ready session.

use serde_json::{json, Map, Value};

use crate::app::server::{Server, MAX_SUBSCRIPTION_URI};
use crate::jsonrpc::{self as m, ErrorObject, RawJson};
use crate::model::LoggingLevel;
use crate::session::State;

type Params = Map<String, Value>;

/// Resource subscriptions held at most per session.
pub(in crate::app::server) const MAX_SUBSCRIPTIONS: usize = 1024;

impl Server {
    /// `resources/subscribe` (`on`) and `resources/unsubscribe`.
    pub(in crate::app::server) fn subscribe(
        &mut self,
        params: &Params,
        on: bool,
    ) -> Result<Value, ErrorObject> {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| ErrorObject::invalid_params("missing uri"))?;
        if !on {
            self.stateful.subscriptions.remove(uri);
        } else if uri.len() > MAX_SUBSCRIPTION_URI {
            return Err(ErrorObject::invalid_params(format!(
                "uri longer than {MAX_SUBSCRIPTION_URI} bytes"
            )));
        } else if self.stateful.subscriptions.len() >= MAX_SUBSCRIPTIONS
            && !self.stateful.subscriptions.contains(uri)
        {
            return Err(ErrorObject::internal(format!(
                "too many subscriptions (at most {MAX_SUBSCRIPTIONS} per session)"
            )));
        } else {
            self.stateful.subscriptions.insert(uri.to_owned());
        }
        self.stateful.changes += 1;
        Ok(json!({}))
    }

    /// `logging/setLevel`: the least severity handlers' log messages go out at.
    pub(in crate::app::server) fn set_level(
        &mut self,
        params: &Params,
    ) -> Result<Value, ErrorObject> {
        let level = params
            .get("level")
            .and_then(Value::as_str)
            .and_then(LoggingLevel::parse)
            .ok_or_else(|| ErrorObject::invalid_params("unknown logging level"))?;
        self.shared.set_level(level);
        self.stateful.changes += 1;
        Ok(json!({}))
    }

    /// Sends `notifications/resources/updated` for `uri` if the client subscribed to it.
    pub(in crate::app::server) fn notify_subscribers(&mut self, uri: &str) {
        if self.stateful.subscriptions.contains(uri) {
            let params = RawJson::try_from(&json!({ "uri": uri })).ok();
            let _ = self
                .session
                .notify(m::NOTIFICATIONS_RESOURCES_UPDATED, params);
        }
    }

    /// A registration changed: the list_changed notification `method`. Before initialization
    /// the client has not listed anything yet; the session also refuses the notification when
    /// the capability was not declared.
    pub(in crate::app::server) fn notify_list_changed(&mut self, method: &'static str) {
        if self.session.state() == State::Ready {
            let _ = self.session.notify(method, None);
        }
    }
}

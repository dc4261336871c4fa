//! The server's requests waiting for the person at the page (elicitation, sampling, roots):
//! each is listed with its params until the page answers it, the wait times out, or the table
//! is full (then the request is refused at once).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};

use super::feed::Feed;

/// Requests waiting at most at once; more are refused.
const MAX_PENDING: usize = 32;

/// A page's answer: a JSON result, or a refusal with its message.
pub(crate) type Reply = Result<Value, String>;

/// The table of waiting requests; cloning shares it.
#[derive(Clone)]
pub(crate) struct Pending {
    table: Arc<Mutex<Table>>,
    feed: Feed,
    wait: Duration,
}

#[derive(Default)]
struct Table {
    next: u64,
    entries: BTreeMap<u64, Entry>,
}

struct Entry {
    kind: &'static str,
    params: Value,
    reply: smol::channel::Sender<Reply>,
}

impl Pending {
    /// A table announcing its changes on `feed`; a request waits at most `wait`.
    pub(crate) fn new(feed: Feed, wait: Duration) -> Self {
        Pending {
            table: Arc::default(),
            feed,
            wait,
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lists a request of `kind` and waits for the page's answer (or a refusal when the
    /// table is full or nobody answers within the wait).
    pub(crate) async fn ask(&self, kind: &'static str, params: Value) -> Reply {
        let (tx, rx) = smol::channel::bounded(1);
        let id = {
            let mut table = self.table();
            if table.entries.len() >= MAX_PENDING {
                return Err(format!(
                    "the inspector already holds {MAX_PENDING} unanswered requests"
                ));
            }
            let id = table.next;
            table.next += 1;
            let reply = tx;
            table.entries.insert(
                id,
                Entry {
                    kind,
                    params,
                    reply,
                },
            );
            id
        };
        self.feed.event("pending", json!({"id": id, "kind": kind}));
        let timeout = async {
            smol::Timer::after(self.wait).await;
            Err("nobody answered in the inspector".to_owned())
        };
        let answer = async { rx.recv().await.unwrap_or_else(|_| Err("dropped".into())) };
        let reply = smol::future::or(answer, timeout).await;
        self.table().entries.remove(&id);
        self.feed.event("answered", json!({"id": id, "kind": kind}));
        reply
    }

    /// Every waiting request: `[{id, kind, params}]`.
    pub(crate) fn list(&self) -> Value {
        let table = self.table();
        let items: Vec<Value> = table
            .entries
            .iter()
            .map(|(id, e)| json!({"id": id, "kind": e.kind, "params": e.params}))
            .collect();
        Value::Array(items)
    }

    /// Hands `reply` to request `id`; false when no such request waits.
    pub(crate) fn answer(&self, id: u64, reply: Reply) -> bool {
        let Some(entry) = self.table().entries.remove(&id) else {
            return false;
        };
        entry.reply.try_send(reply).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_reaches_the_waiting_request_once() {
        let pending = Pending::new(Feed::new(), Duration::from_secs(5));
        let asker = pending.clone();
        let waiting = std::thread::spawn(move || {
            smol::block_on(asker.ask("elicitation", json!({"message": "name?"})))
        });
        let id = (0..500)
            .find_map(|_| {
                std::thread::sleep(Duration::from_millis(10));
                pending.list()[0]["id"].as_u64()
            })
            .expect("the request is listed");
        assert_eq!(pending.list()[0]["params"]["message"], "name?");
        assert!(pending.answer(id, Ok(json!({"action": "decline"}))));
        assert!(!pending.answer(id, Ok(json!({}))));
        let reply = waiting.join().expect("no panic");
        assert_eq!(reply, Ok(json!({"action": "decline"})));
        assert_eq!(pending.list(), json!([]));
    }
}

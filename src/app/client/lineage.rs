//! Which top-level tool call a server request belongs to, and how deeply it is nested.
//!
//! A `tools/call` we send is top-level (depth 0, its own root) unless it is made while
//! handling a sampling request: named by `CallOptions::parent`, or, without one, the only
//! sampling request whose handler is running. Such a call inherits that request's root and
//! depth. A server request is attributed to the most recently sent pending `tools/call` (the
//! innermost one of a nested chain; a guess when unrelated tool calls run at once, since
//! neither stdio nor the session says which call a server request serves): its depth is that
//! call's plus one, its root that call's root. A server request while no tool call is pending
//! has depth 1 and no root.

use std::collections::HashMap;

use crate::jsonrpc::RequestId;

/// Tool calls and sampling requests tracked at most each; beyond, new ones count as
/// top-level (the session's own limits on pending requests come first in practice).
const MAX_TRACKED: usize = 4096;

/// The root and depth of a tool call or a server request.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Place {
    pub(crate) root: Option<RequestId>,
    pub(crate) depth: u32,
}

/// The lineage table of one client.
#[derive(Debug, Default)]
pub(crate) struct Lineages {
    /// Our pending `tools/call` requests, in the order sent.
    calls: Vec<(RequestId, Place)>,
    /// The server's sampling requests whose handler runs.
    sampling: HashMap<RequestId, Place>,
    /// `maxTokens` approved so far per top-level tool call.
    spent: HashMap<RequestId, u64>,
}

impl Lineages {
    /// We sent `tools/call` `id`, made while handling the server's request `parent` if given.
    pub(crate) fn call_sent(&mut self, id: RequestId, parent: Option<&RequestId>) {
        if self.calls.len() >= MAX_TRACKED {
            return;
        }
        let inherited = match parent {
            Some(parent) => self.sampling.get(parent),
            None if self.sampling.len() == 1 => self.sampling.values().next(),
            None => None,
        };
        let place = match inherited {
            Some(place) => place.clone(),
            None => Place {
                root: Some(id.clone()),
                depth: 0,
            },
        };
        self.calls.push((id, place));
    }

    /// Our request `id` completed (any method; only tool calls are tracked).
    pub(crate) fn call_done(&mut self, id: &RequestId) {
        if let Some(at) = self.calls.iter().position(|(c, _)| c == id) {
            self.calls.remove(at);
            self.spent.remove(id);
        }
    }

    /// Where a server request arriving now stands.
    pub(crate) fn place_of_new(&self) -> Place {
        match self.calls.last() {
            Some((_, call)) => Place {
                root: call.root.clone(),
                depth: call.depth.saturating_add(1),
            },
            None => Place {
                root: None,
                depth: 1,
            },
        }
    }

    /// The handler of sampling request `id` started.
    pub(crate) fn sampling_started(&mut self, id: RequestId, place: Place) {
        if self.sampling.len() < MAX_TRACKED {
            self.sampling.insert(id, place);
        }
    }

    /// The handler of the server's request `id` answered.
    pub(crate) fn sampling_done(&mut self, id: &RequestId) {
        self.sampling.remove(id);
    }

    /// Adds `tokens` to what tool call `root` spent, unless that would pass `budget`.
    pub(crate) fn charge(&mut self, root: &RequestId, tokens: u64, budget: u64) -> bool {
        if !self.calls.iter().any(|(c, _)| c == root) && !self.spent.contains_key(root) {
            // The root completed already: nothing left to attribute to, nothing to store.
            return tokens <= budget;
        }
        let spent = self.spent.entry(root.clone()).or_insert(0);
        match spent.checked_add(tokens) {
            Some(total) if total <= budget => {
                *spent = total;
                true
            }
            _ => false,
        }
    }

    /// The session closed.
    pub(crate) fn clear(&mut self) {
        self.calls.clear();
        self.sampling.clear();
        self.spent.clear();
    }
}

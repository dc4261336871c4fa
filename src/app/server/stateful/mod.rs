//! The stateful front end of the server (revisions 2025-03-26 to 2025-11-25): a `Session`
//! carries the conversation, and these files turn its events into dispatches and the
//! handlers' outbox items into its responses, notifications and server→client requests
//! (`session.rs`), and answer the requests only a session has: `resources/subscribe`,
//! `resources/unsubscribe`, `logging/setLevel` (`requests.rs`).
//!
//! It shares the registry, the dispatch and the handler context with the stateless front end
//! (`super::stateless`) and uses nothing of it; `super` routes each frame and outbox item to
//! one of the two.

mod requests;
mod session;

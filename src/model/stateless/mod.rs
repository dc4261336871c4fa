//! Types of the stateless revision 2026-07-28: per-request `_meta`, `resultType` and cache
//! hints, `server/discover`, input-required results, `subscriptions/listen` and the new error
//! data, plus this revision's method table.
//!
//! Like the rest of [`crate::model`], every type keeps `_meta` and unknown members.

mod discover;
mod errors;
mod input;
mod meta;
// Public items only for the `testing` re-export (the schema tests check the table).
#[cfg_attr(not(feature = "testing"), allow(unreachable_pub))]
pub(crate) mod methods;
mod result;
mod subscriptions;

pub use discover::*;
pub use errors::*;
pub use input::*;
pub use meta::*;
pub use methods::is_subscription_notification;
pub(crate) use methods::stateless_method;
pub use result::*;
pub use subscriptions::*;

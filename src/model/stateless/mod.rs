//! Types of the stateless revision 2026-07-28: per-request `_meta`, `resultType` and cache
//! hints, `server/discover`, input-required results, `subscriptions/listen` and the new error
//! data, plus this revision's method table.
//!
//! Like the rest of [`crate::model`], every type keeps `_meta` and unknown members.

mod discover;
mod errors;
mod input;
mod meta;
mod methods;
mod result;
mod subscriptions;

pub use discover::*;
pub use errors::*;
pub use input::*;
pub use meta::*;
pub use methods::*;
pub use result::*;
pub use subscriptions::*;

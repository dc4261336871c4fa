//! The HTTP-shaped values below every HTTP-speaking module: a request method
//! ([`HttpMethod`]) and the text of a header field or request target ([`HttpText`]).
//! [`crate::outgoing`], [`crate::auth`] and [`crate::http`] share them; users reach them as
//! `http::HttpMethod` and `http::HttpText`.

mod method;
mod text;

pub use method::HttpMethod;
pub use text::HttpText;

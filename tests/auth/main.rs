//! Authorization: the OAuth client flow, the grants, the parsers of server metadata and
//! challenges, and the protected-resource side.

mod flow;
mod grants;
mod parsers;
mod resource;

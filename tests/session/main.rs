//! The protocol session (`mcp_sansio::session`) driven as a client/server pair: handshake
//! and lifecycle rules, answers, responding with typed and raw results, queue bounds, and
//! property tests over random message sequences.

mod answers;
#[path = "../common/mod.rs"]
mod common;
mod pair_bounds;
mod props;
mod respond_serialize;
mod respond_with;
mod rules;

//! The application layer: the app `Client` and `Server` (handlers, jobs, typed tools) over
//! an in-memory wire on a virtual clock, with every frame checked against the official schema.

mod client;
mod client_frames;
#[path = "../common/mod.rs"]
mod common;
mod complete_params;
mod input_end;
mod sampling_policy;
mod server;
mod unreadable;

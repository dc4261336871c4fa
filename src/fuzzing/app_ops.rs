//! Fuzz body for the application-layer `Server` with a tiny registry (a sync echo tool, a
//! resource, a template, a prompt) fed arbitrary frames and time.

use std::sync::OnceLock;
use std::time::Instant;

use serde_json::json;

use super::ops::{self, Cursor};
use super::session_ops::config_of;
use crate::app::server::{
    CallToolResult, GetPromptResult, Prompt, Resource, ResourceContents, ResourceTemplate, Server,
    ServerBuilder, ServerFactory, Tool,
};
use crate::config::Config;
use crate::model::Implementation;
use crate::runtime::first_poll;

/// The tiny registry's definitions for the limits of one input byte (see
/// [`config_of`]), built once per byte and shared by every run: compiling the tools' schemas
/// for each input would spend most of a run's time outside the code under test.
pub(crate) fn registry_factory(config_byte: u8) -> ServerFactory {
    static FACTORIES: [OnceLock<ServerFactory>; 256] = [const { OnceLock::new() }; 256];
    let build = || registry_builder(config_of(config_byte)).build_factory();
    match FACTORIES.get(usize::from(config_byte)) {
        Some(slot) => slot.get_or_init(build).clone(),
        None => build(),
    }
}

/// The tiny registry: a sync echo tool, a resource, a template, a prompt.
fn registry_builder(config: Config) -> ServerBuilder {
    let echo = Tool::new("echo", json!({"type": "object"}))
        .sync_handler(|call, _| Ok(CallToolResult::text(format!("{:?}", call.arguments))));
    let resource = Resource::new("test://static", "static")
        .sync_handler(|read, _| Ok(vec![ResourceContents::text(read.uri, "hello")]));
    let template = ResourceTemplate::new("test://template/{id}/data", "templated")
        .expect("a valid template")
        .sync_handler(|read, _| {
            let id = read.variable("id").unwrap_or_default().to_owned();
            Ok(vec![ResourceContents::text(read.uri, id)])
        });
    let prompt = Prompt::new("greet")
        .argument("name", true)
        .sync_handler(|req, _| Ok(GetPromptResult::user_text(format!("{:?}", req.arguments))));
    Server::builder(Implementation::new("fuzz-app", "0"))
        .config(config)
        .tool(echo)
        .resource(resource)
        .resource_template(template)
        .prompt(prompt)
}

/// An app server fed arbitrary frames and time: no panic, every output is one valid JSON-RPC
/// message on one line. The first byte picks the limits, the second whether the handshake
/// happens up front.
pub fn app_server(data: &[u8]) {
    let mut c = Cursor::new(data);
    let mut now = Instant::now();
    let mut server = registry_factory(c.byte()).server(now);
    if c.byte() & 1 == 1 {
        for frame in ops::client_handshake() {
            server.handle_input(now, frame);
        }
    }
    drain(&mut server);
    while !c.is_empty() {
        match c.below(8) {
            0..=4 => server.handle_input(now, ops::frame(&mut c)),
            5 => now += c.pick(ops::JUMPS),
            6 => {
                if let Some(t) = server.poll_timeout() {
                    now = now.max(t);
                }
                server.handle_timeout(now);
            }
            _ => match c.below(4) {
                0 => server.close(now),
                1 => server.handle_input_end(now),
                _ => server.notify_resource_updated("test://static"),
            },
        }
        drain(&mut server);
    }
}

fn drain(server: &mut Server) {
    // Sync handlers finish in their first poll; anything else is polled once more and dropped.
    while let Some(job) = server.poll_job() {
        let _ = first_poll(job);
    }
    let mut buf = Vec::new();
    while server.poll_transmit(&mut buf).is_some() {
        ops::check_transmit(&buf);
        buf.clear();
    }
    while server.poll_event().is_some() {}
    let session = server.session();
    assert!(session.inflight_inbound() <= session.config().max_inflight_inbound);
}

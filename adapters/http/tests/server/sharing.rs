//! Two servers of one process sharing one in-memory `SessionStore`: a session opened on one
//! is served by the other, and a DELETE on either ends it on both.

use mcp_sansio::app::server::Server;
use mcp_sansio::model::Implementation;
use mcp_sansio_http::server::{HttpServerOptions, SessionStore};
use serde_json::json;

use super::rig::Running;

fn app(now: std::time::Instant) -> Server {
    Server::builder(Implementation::new("sharing-test", "1")).build(now)
}

#[test]
fn two_servers_on_one_memory_store_serve_the_same_session() {
    let store = SessionStore::memory();
    let options = || HttpServerOptions {
        store: Some(store.clone()),
        ..HttpServerOptions::default()
    };
    let (mut a, mut b) = (
        Running::start(options(), app),
        Running::start(options(), app),
    );
    let (mut on_a, mut on_b) = (a.connect(), b.connect());
    let sid = on_a.open_session();
    let ping = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    let reply = on_b.post(Some(&sid), &ping(1));
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.json()["id"], 1);
    on_b.send("DELETE", "/mcp", &[("Mcp-Session-Id", sid.as_str())], "");
    assert_eq!(on_b.reply().status, 200);
    assert_eq!(on_a.post(Some(&sid), &ping(2)).status, 404);
    assert_eq!(on_b.post(Some(&sid), &ping(3)).status, 404);
    drop((on_a, on_b));
    a.shutdown();
    b.shutdown();
}

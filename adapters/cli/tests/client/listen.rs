//! The 2026-07-28 client's listen streams against our own `serve --http`: two streams (one
//! for tool list changes, one for prompt list changes) opened with
//! `StatelessHttp::listen`, each acknowledged with its agreed filter; a tool that changes
//! the tool list, called on another connection, reaches only the tools stream, tagged for it,
//! and makes the client's cached `tools/list` stale; the prompt change reaches only the
//! prompts stream; cancelling a stream closes it.

use std::time::Duration;

use mcp_sansio::app::client::stateless::{CallId, ListenEvent, ListenFilter, StatelessClient};
use mcp_sansio::app::client::Client;
use mcp_sansio::app::client::ClientError;
use mcp_sansio::app::server::{CallToolResult, Resource, ResourceContents, Server, Tool};
use mcp_sansio::model::Implementation;
use mcp_sansio::stateless::ListenChange as Announced;
use mcp_sansio_http::client::{block_on_stateless_http, HttpClientOptions, StatelessHttp};
use mcp_sansio_http::server::{HttpServer, HttpServerOptions};
use serde_json::json;

use crate::http_fixture;

use http_fixture::HttpFixture;

/// Every wait for an event gives up after this.
const EVENT_WAIT: Duration = Duration::from_secs(10);

/// The next event, or `None` when none came within `wait`.
async fn next(wire: &mut StatelessHttp, stream: CallId, wait: Duration) -> Option<ListenEvent> {
    smol::future::or(
        async {
            Some(
                wire.next_listen_event(stream)
                    .await
                    .expect("listen stream read"),
            )
        },
        async {
            smol::Timer::after(wait).await;
            None
        },
    )
    .await
}

#[test]
fn two_listen_streams_get_only_their_own_changes_over_http() {
    let fixture = HttpFixture::start(&[]);
    let builder = Client::builder(Implementation::new("listen-test", "1"));
    let outcome = block_on_stateless_http(
        &fixture.url,
        &HttpClientOptions::default(),
        StatelessClient::new(&builder),
        EVENT_WAIT,
        |mut wire| async move {
            let tools_filter = ListenFilter {
                tools: true,
                ..Default::default()
            };
            let prompts_filter = ListenFilter {
                prompts: true,
                ..Default::default()
            };
            let tools = wire.listen(&tools_filter);
            let prompts = wire.listen(&prompts_filter);
            match next(&mut wire, tools, EVENT_WAIT).await {
                Some(ListenEvent::Acknowledged(agreed)) => {
                    assert_eq!(agreed.tools_list_changed, Some(true));
                    assert_eq!(agreed.prompts_list_changed, None);
                }
                other => panic!("tools stream opened with {other:?}"),
            }
            match next(&mut wire, prompts, EVENT_WAIT).await {
                Some(ListenEvent::Acknowledged(agreed)) => {
                    assert_eq!(agreed.prompts_list_changed, Some(true));
                    assert_eq!(agreed.tools_list_changed, None);
                }
                other => panic!("prompts stream opened with {other:?}"),
            }

            let call = json!({"name": "test_trigger_tool_change", "arguments": {}});
            wire.request("tools/call", Some(call)).await?;
            let event = next(&mut wire, tools, EVENT_WAIT).await;
            assert_eq!(event, Some(ListenEvent::ToolsListChanged));
            assert_eq!(
                next(&mut wire, prompts, Duration::from_millis(300)).await,
                None
            );

            let call = json!({"name": "test_trigger_prompt_change", "arguments": {}});
            wire.request("tools/call", Some(call)).await?;
            let event = next(&mut wire, prompts, EVENT_WAIT).await;
            assert_eq!(event, Some(ListenEvent::PromptsListChanged));
            assert_eq!(
                next(&mut wire, tools, Duration::from_millis(300)).await,
                None
            );

            // Closing one stream leaves the other working.
            wire.cancel(prompts);
            let call = json!({"name": "test_trigger_tool_change", "arguments": {}});
            wire.request("tools/call", Some(call)).await?;
            let event = next(&mut wire, tools, EVENT_WAIT).await;
            assert_eq!(event, Some(ListenEvent::ToolsListChanged));
            Ok::<_, ClientError>(())
        },
    )
    .expect("client runtime");
    outcome.expect("listen session");
}

#[test]
fn an_announcement_from_outside_any_exchange_reaches_the_listen_streams_over_http() {
    let app = |now| {
        Server::builder(Implementation::new("announce-test", "1"))
            .tool(
                Tool::new("echo", json!({"type": "object"}))
                    .sync_handler(|_, _| Ok(CallToolResult::text("hi"))),
            )
            .resource(
                Resource::new("test://watched", "watched")
                    .sync_handler(|r, _| Ok(vec![ResourceContents::text(r.uri, "v")])),
            )
            .build(now)
    };
    let server = HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        HttpServerOptions::default(),
        app,
    )
    .expect("bind loopback");
    let url = server.url();
    let stop = server.shutdown_handle();
    let announcer = server.announcer();
    let thread = std::thread::spawn(move || server.run());
    let builder = Client::builder(Implementation::new("listen-test", "1"));
    let outcome = block_on_stateless_http(
        &url,
        &HttpClientOptions::default(),
        StatelessClient::new(&builder),
        EVENT_WAIT,
        |mut wire| async move {
            let tools_filter = ListenFilter {
                tools: true,
                ..Default::default()
            };
            let watch_filter = ListenFilter {
                resource_uris: vec!["test://watched".into()],
                ..Default::default()
            };
            let tools = wire.listen(&tools_filter);
            let watch = wire.listen(&watch_filter);
            for stream in [tools, watch] {
                let ack = next(&mut wire, stream, EVENT_WAIT).await;
                assert!(matches!(ack, Some(ListenEvent::Acknowledged(_))), "{ack:?}");
            }
            assert!(announcer.announce(Announced::ToolsListChanged));
            assert_eq!(
                next(&mut wire, tools, EVENT_WAIT).await,
                Some(ListenEvent::ToolsListChanged)
            );
            assert_eq!(
                next(&mut wire, watch, Duration::from_millis(300)).await,
                None
            );
            let updated = Announced::ResourceUpdated {
                uri: "test://watched".into(),
            };
            assert!(announcer.announce(updated));
            assert_eq!(
                next(&mut wire, watch, EVENT_WAIT).await,
                Some(ListenEvent::ResourceUpdated("test://watched".into()))
            );
            assert_eq!(
                next(&mut wire, tools, Duration::from_millis(300)).await,
                None
            );
            Ok::<_, ClientError>(())
        },
    )
    .expect("client runtime");
    stop.shutdown();
    let report = thread.join().expect("server thread").expect("server run");
    assert!(report.connections >= 2);
    outcome.expect("listen session");
}

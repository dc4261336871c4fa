//! The application-layer client driven against the application-layer server in memory, on a
//! virtual clock, with a tiny single-threaded executor (a flag-setting waker per task).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{json, Map, Value};

use mcp_sansio::app::client::{
    CallOptions, Client, ClientError, ClientEvent, ClientHandle, Progress,
};
use mcp_sansio::app::server::{
    completion_handler, CallToolResult, Completion, GetPromptResult, Prompt, Resource,
    ResourceContents, ResourceTemplate, Server, Tool,
};
use mcp_sansio::config::Config;
use mcp_sansio::jsonrpc::{code, ErrorObject, RawJson};
use mcp_sansio::model::{
    CompleteParams, CompletionArgument, CompletionReference, ContentBlock, CreateMessageResult,
    Implementation, ListRootsResult, LoggingLevel, PromptReference, Role, Root, SamplingContent,
    SamplingContentList,
};
use mcp_sansio::runtime::CancelToken;
use mcp_sansio::session::{CloseReason, Event};

struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

struct Task {
    future: Pin<Box<dyn Future<Output = ()>>>,
    flag: Arc<Flag>,
}

/// A client and a server wired together, a virtual clock and the executor's tasks.
struct Harness {
    now: Instant,
    client: Client,
    server: Server,
    tasks: Vec<Task>,
    /// Every frame the client sent, as text.
    to_server: Vec<String>,
}

impl Harness {
    fn new(client: Client, server: Server, now: Instant) -> Self {
        Harness {
            now,
            client,
            server,
            tasks: Vec::new(),
            to_server: Vec::new(),
        }
    }

    fn spawn<T: 'static>(
        &mut self,
        future: impl Future<Output = T> + 'static,
    ) -> Rc<RefCell<Option<T>>> {
        let slot = Rc::new(RefCell::new(None));
        let out = slot.clone();
        self.tasks.push(Task {
            future: Box::pin(async move {
                *out.borrow_mut() = Some(future.await);
            }),
            flag: Arc::new(Flag(AtomicBool::new(true))),
        });
        slot
    }

    /// Moves frames, runs jobs and polls woken tasks until nothing happens.
    fn run(&mut self) {
        for _ in 0..10_000 {
            let mut progressed = false;
            let mut buf = Vec::new();
            while self.client.poll_transmit(&mut buf).is_some() {
                self.to_server.push(String::from_utf8(buf.clone()).unwrap());
                self.server
                    .handle_input(self.now, Bytes::from(std::mem::take(&mut buf)));
                progressed = true;
            }
            while self.server.poll_transmit(&mut buf).is_some() {
                self.client
                    .handle_input(self.now, Bytes::from(std::mem::take(&mut buf)));
                progressed = true;
            }
            while let Some(job) = self.server.poll_job() {
                self.spawn(job);
                progressed = true;
            }
            while let Some(job) = self.client.poll_job() {
                self.spawn(job);
                progressed = true;
            }
            let mut i = 0;
            while i < self.tasks.len() {
                let task = &mut self.tasks[i];
                if task.flag.0.swap(false, Ordering::SeqCst) {
                    progressed = true;
                    let waker = Waker::from(task.flag.clone());
                    if task
                        .future
                        .as_mut()
                        .poll(&mut Context::from_waker(&waker))
                        .is_ready()
                    {
                        self.tasks.swap_remove(i);
                        continue;
                    }
                }
                i += 1;
            }
            if !progressed {
                return;
            }
        }
        panic!("the harness did not settle");
    }

    fn block_on<T: 'static>(&mut self, future: impl Future<Output = T> + 'static) -> T {
        let slot = self.spawn(future);
        self.run();
        let value = slot.borrow_mut().take();
        value.expect("the future did not finish")
    }

    fn advance(&mut self, by: Duration) {
        self.now += by;
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        self.run();
    }

    fn cancellations_sent(&self) -> usize {
        self.to_server
            .iter()
            .filter(|f| f.contains("notifications/cancelled"))
            .count()
    }

    fn client_events(&mut self) -> Vec<ClientEvent> {
        std::iter::from_fn(|| self.client.poll_event()).collect()
    }
}

fn text_of(result: &mcp_sansio::model::CallToolResult) -> String {
    match &result.content[0] {
        ContentBlock::Text(t) => t.text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn server(now: Instant, page_size: usize) -> Server {
    let schema =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
    let mut builder = Server::builder(Implementation::new("test-server", "1.2.3"))
        .instructions("be nice")
        .config(Config {
            page_size,
            ..Config::default()
        })
        .tool(Tool::new("echo", schema).sync_handler(|call, _| {
            Ok(CallToolResult::text(call.arguments["text"].as_str().unwrap_or_default()))
        }))
        .tool(Tool::new("slow", json!({"type": "object"})).handler(|_, ctx| async move {
            ctx.cancelled().await;
            Ok(CallToolResult::text("cancelled"))
        }))
        .tool(Tool::new("progress", json!({"type": "object"})).sync_handler(|_, ctx| {
            ctx.progress(1.0, Some(2.0), Some("half".into()));
            Ok(CallToolResult::text("done"))
        }))
        .tool(Tool::new("log", json!({"type": "object"})).sync_handler(|_, ctx| {
            ctx.log(mcp_sansio::model::LoggingLevel::Debug, None, json!("debug line"));
            ctx.log(mcp_sansio::model::LoggingLevel::Error, Some("t"), json!("error line"));
            Ok(CallToolResult::text("logged"))
        }))
        .tool(Tool::new("sample", json!({"type": "object"})).handler(|_, ctx| async move {
            let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10});
            match ctx.sample(params).await {
                Ok(v) => Ok(CallToolResult::text(v["content"]["text"].as_str().unwrap_or("?").to_owned())),
                Err(e) => Ok(CallToolResult::error(e.to_string())),
            }
        }))
        .tool(Tool::new("elicit", json!({"type": "object"})).handler(|_, ctx| async move {
            let params = json!({"message": "who?", "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "Ada"}, "age": {"type": "integer", "default": 36}}}});
            match ctx.elicit(params).await {
                Ok(v) => Ok(CallToolResult::text(v.to_string())),
                Err(e) => Ok(CallToolResult::error(e.to_string())),
            }
        }))
        .tool(Tool::new("roots", json!({"type": "object"})).handler(|_, ctx| async move {
            match ctx.list_roots().await {
                Ok(v) => Ok(CallToolResult::text(v["roots"].to_string())),
                Err(e) => Ok(CallToolResult::error(e.to_string())),
            }
        }))
        .resource(
            Resource::new("test://static", "static")
                .mime_type("text/plain")
                .sync_handler(|read, _| Ok(vec![ResourceContents::text(read.uri, "static text")])),
        )
        .resource_template(
            ResourceTemplate::new("test://item/{id}", "item")
                .unwrap()
                .sync_handler(|read, _| {
                    let id = read.variable("id").unwrap_or("?").to_owned();
                    Ok(vec![ResourceContents::text(read.uri, format!("item {id}"))])
                }),
        )
        .prompt(
            Prompt::new("greet")
                .argument("name", true)
                .sync_handler(|req, _| Ok(GetPromptResult::user_text(format!("hello {}", req.arguments["name"])))),
        )
        .completion(completion_handler(|_, _| async move {
            Ok(Completion {
                values: vec!["alpha".into(), "beta".into()],
                total: Some(2),
                has_more: Some(false),
                ..Default::default()
            })
        }));
    for i in 0..3 {
        builder = builder.tool(Tool::new(format!("extra{i}"), json!({"type": "object"})));
    }
    builder.build(now)
}

fn full_client(now: Instant) -> Client {
    Client::builder(Implementation::new("test-client", "0.1"))
        .sampling_sync(|params, _| {
            assert_eq!(params.max_tokens, 10);
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContentList::One(SamplingContent::text("sampled")),
                model: "m".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
                extra: Default::default(),
            })
        })
        .elicitation_with_defaults()
        .roots(vec![Root {
            uri: "file:///tmp".into(),
            name: Some("tmp".into()),
            meta: None,
            extra: Default::default(),
        }])
        .build(now)
}

fn connected(client: Client, page_size: usize) -> (Harness, ClientHandle) {
    let now = Instant::now();
    let mut h = Harness::new(client, server(now, page_size), now);
    let handle = h.client.handle();
    let init = handle.clone();
    let result = h.block_on(async move { init.initialize().await });
    let result = result.expect("handshake");
    assert_eq!(result.server_info.name, "test-server");
    (h, handle)
}

#[test]
fn handshake_declares_capabilities_from_registrations() {
    let (mut h, _) = connected(full_client(Instant::now()), 100);
    let caps = h
        .server
        .session()
        .peer_client_capabilities()
        .unwrap()
        .clone();
    assert!(caps.sampling.is_some());
    let elicitation = caps.elicitation.unwrap();
    assert!(elicitation.supports_form() && !elicitation.supports_url());
    assert_eq!(caps.roots.unwrap().list_changed, Some(true));
    assert_eq!(h.client.session().server_instructions(), Some("be nice"));
    let events = h.client_events();
    assert!(
        matches!(events.as_slice(), [ClientEvent::Initialized { .. }]),
        "{events:?}"
    );

    // A bare client declares nothing.
    let bare = Client::builder(Implementation::new("c", "1")).build(Instant::now());
    let (h, _) = connected(bare, 100);
    let caps = h.server.session().peer_client_capabilities().unwrap();
    assert!(caps.sampling.is_none() && caps.elicitation.is_none() && caps.roots.is_none());
}

#[test]
fn every_typed_call_round_trips() {
    let (mut h, c) = connected(full_client(Instant::now()), 100);
    let r = h.block_on({
        let c = c.clone();
        async move {
            c.ping().await.unwrap();
            let tools = c.list_tools(None).await.unwrap();
            let echo = c.call_tool("echo", json!({"text": "hey"})).await.unwrap();
            let resources = c.list_resources(None).await.unwrap();
            let read = c.read_resource("test://static").await.unwrap();
            let templates = c.list_resource_templates(None).await.unwrap();
            let item = c.read_resource("test://item/42").await.unwrap();
            let prompts = c.list_prompts(None).await.unwrap();
            let mut args = Map::new();
            args.insert("name".into(), json!("Bob"));
            let prompt = c.get_prompt("greet", Some(args)).await.unwrap();
            let complete = c
                .complete(CompleteParams {
                    reference: CompletionReference::Prompt(PromptReference {
                        name: "greet".into(),
                        ..Default::default()
                    }),
                    argument: CompletionArgument {
                        name: "name".into(),
                        value: "a".into(),
                        ..Default::default()
                    },
                    context: None,
                    meta: None,
                    extra: Default::default(),
                })
                .await
                .unwrap();
            c.set_level(LoggingLevel::Info).await.unwrap();
            (
                tools, echo, resources, read, templates, item, prompts, prompt, complete,
            )
        }
    });
    let (tools, echo, resources, read, templates, item, prompts, prompt, complete) = r;
    assert_eq!(tools.tools.len(), 10);
    assert!(tools.next_cursor.is_none());
    assert_eq!(text_of(&echo), "hey");
    assert_eq!(echo.is_error, None);
    assert_eq!(resources.resources[0].uri, "test://static");
    assert_eq!(read.contents[0].text.as_deref(), Some("static text"));
    assert_eq!(
        templates.resource_templates[0].uri_template,
        "test://item/{id}"
    );
    assert_eq!(item.contents[0].text.as_deref(), Some("item 42"));
    assert_eq!(prompts.prompts[0].name, "greet");
    assert_eq!(
        serde_json::to_value(&prompt.messages[0].content).unwrap()["text"],
        json!("hello Bob")
    );
    assert_eq!(complete.completion.values, vec!["alpha", "beta"]);

    // Log messages at or above the level set pass; the debug one is dropped by the server.
    let logged = h.block_on({
        let c = c.clone();
        async move { c.call_tool("log", json!({})).await }
    });
    assert_eq!(text_of(&logged.unwrap()), "logged");
    let logs: Vec<_> = h
        .client_events()
        .into_iter()
        .filter_map(|e| match e {
            ClientEvent::Log(l) => Some(l),
            _ => None,
        })
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert_eq!(logs[0].level, LoggingLevel::Error);
    assert_eq!(logs[0].data, json!("error line"));
}

#[test]
fn call_tool_raw_answers_as_call_tool() {
    let (mut h, c) = connected(full_client(Instant::now()), 100);
    // Plain text (read by the text-only reader), a `\u` escape (left to serde), no arguments.
    let texts = ["hey \"you\"\n\\", "ctl \u{1} é"];
    let r = h.block_on(async move {
        let mut answers = Vec::new();
        for text in texts {
            let args = json!({ "text": text });
            let raw = RawJson::from_serialize(&args).unwrap();
            let by_raw = c.call_tool_raw("echo", &raw).await.unwrap();
            answers.push((by_raw, c.call_tool("echo", args).await.unwrap()));
        }
        let by_raw = c.call_tool_raw("progress", &RawJson::null()).await.unwrap();
        answers.push((by_raw, c.call_tool("progress", Value::Null).await.unwrap()));
        let unknown = c.call_tool_raw("nope", &RawJson::empty_object()).await;
        (answers, unknown)
    });
    let (answers, unknown) = r;
    assert_eq!(text_of(&answers[0].0), texts[0]);
    assert_eq!(text_of(&answers[1].0), texts[1]);
    assert_eq!(text_of(&answers[2].0), "done");
    for (by_raw, by_value) in &answers {
        assert_eq!(by_raw, by_value);
    }
    assert!(unknown.is_err(), "{unknown:?}");
}

#[test]
fn subscriptions_deliver_resource_updates() {
    let (mut h, c) = connected(full_client(Instant::now()), 100);
    let c2 = c.clone();
    h.block_on(async move { c2.subscribe("test://static").await })
        .unwrap();
    h.server.notify_resource_updated("test://static");
    h.server.notify_resource_updated("test://item/1");
    h.run();
    let events = h.client_events();
    assert!(events.contains(&ClientEvent::ResourceUpdated {
        uri: "test://static".into()
    }));
    assert!(!events.contains(&ClientEvent::ResourceUpdated {
        uri: "test://item/1".into()
    }));
    let c2 = c.clone();
    h.block_on(async move { c2.unsubscribe("test://static").await })
        .unwrap();
    h.server.notify_resource_updated("test://static");
    h.run();
    assert!(h.client_events().is_empty());
}

#[test]
fn pagination_helper_follows_next_cursor() {
    let (mut h, c) = connected(full_client(Instant::now()), 3);
    let c2 = c.clone();
    let (first, all) = h.block_on(async move {
        (
            c2.list_tools(None).await.unwrap(),
            c2.list_all_tools().await.unwrap(),
        )
    });
    assert_eq!(first.tools.len(), 3);
    assert!(first.next_cursor.is_some());
    let mut names: Vec<_> = all.iter().map(|t| t.name.clone()).collect();
    assert_eq!(names.len(), 10);
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 10, "pages overlap");
    // A page fetched with a bogus cursor is an invalid-params error.
    let err = h
        .block_on(async move { c.list_tools(Some("bogus".into())).await })
        .unwrap_err();
    assert!(err.is_invalid_params(), "{err}");
}

#[test]
fn errors_are_mapped() {
    let (mut h, c) = connected(full_client(Instant::now()), 100);
    let c2 = c.clone();
    let (unknown_tool, missing_arg, unknown_method, bad_args) = h.block_on(async move {
        (
            c2.call_tool("nope", json!({})).await,
            c2.get_prompt("greet", None).await,
            c2.request_raw("tools/nonexistent", None, CallOptions::default())
                .await,
            c2.call_tool("echo", json!({"text": 5})).await,
        )
    });
    let e = unknown_tool.unwrap_err();
    assert_eq!(e.rpc_code(), Some(code::INVALID_PARAMS));
    assert!(e.to_string().contains("error"), "{e}");
    assert!(missing_arg.unwrap_err().is_invalid_params());
    let e = unknown_method.unwrap_err();
    assert!(e.is_method_not_found(), "{e:?}");
    // Invalid tool input is a tool error result, not a protocol error.
    assert_eq!(bad_args.unwrap().is_error, Some(true));
}

#[test]
fn a_timeout_fails_the_call_and_cancels_it_on_the_wire() {
    let (mut h, c) = connected(full_client(Instant::now()), 100);
    let options = CallOptions {
        timeout: Some(Duration::from_secs(5)),
        ..Default::default()
    };
    let slot = h.spawn(async move { c.call_tool_with("slow", json!({}), options).await });
    h.run();
    assert!(slot.borrow().is_none());
    h.advance(Duration::from_secs(4));
    assert!(slot.borrow().is_none());
    assert_eq!(h.cancellations_sent(), 0);
    h.advance(Duration::from_secs(2));
    assert_eq!(
        slot.borrow_mut().take().unwrap().unwrap_err(),
        ClientError::TimedOut
    );
    assert_eq!(h.cancellations_sent(), 1);
}

#[test]
fn cancelling_the_token_sends_cancelled_and_stops_the_handler() {
    let (mut h, c) = connected(full_client(Instant::now()), 100);
    let token = CancelToken::new();
    let options = CallOptions {
        cancel: Some(token.clone()),
        ..Default::default()
    };
    let slot = h.spawn(async move { c.call_tool_with("slow", json!({}), options).await });
    h.run();
    assert!(slot.borrow().is_none());
    token.cancel();
    h.run();
    assert_eq!(
        slot.borrow_mut().take().unwrap().unwrap_err(),
        ClientError::Cancelled
    );
    assert_eq!(h.cancellations_sent(), 1);
    let sent = h
        .to_server
        .iter()
        .find(|f| f.contains("notifications/cancelled"))
        .unwrap();
    assert!(sent.contains("\"requestId\""), "{sent}");
    // The server's handler saw the cancellation and finished (no job left pending).
    assert!(h.tasks.is_empty());
}

#[test]
fn dropping_a_pending_call_cancels_it() {
    let (mut h, c) = connected(full_client(Instant::now()), 100);
    let mut call = Box::pin(c.call_tool("slow", json!({})));
    assert!(poll_now(&mut call).is_pending());
    h.run();
    assert_eq!(h.cancellations_sent(), 0);
    drop(call);
    h.run();
    assert_eq!(h.cancellations_sent(), 1);
    assert!(h.tasks.is_empty());
}

#[test]
fn progress_goes_to_the_callback_or_to_events() {
    let (mut h, c) = connected(full_client(Instant::now()), 100);
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let options = CallOptions {
        progress: Some(Arc::new(move |p| sink.lock().unwrap().push(p))),
        ..Default::default()
    };
    let c2 = c.clone();
    let r = h.block_on(async move { c2.call_tool_with("progress", json!({}), options).await });
    assert_eq!(text_of(&r.unwrap()), "done");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].progress, seen[0].total), (1.0, Some(2.0)));
    assert_eq!(seen[0].message.as_deref(), Some("half"));
    assert!(h
        .client_events()
        .iter()
        .all(|e| !matches!(e, ClientEvent::Progress(_))));

    // Without a callback no progressToken is attached, so the server sends none.
    let r = h.block_on(async move { c.call_tool("progress", json!({})).await });
    assert_eq!(text_of(&r.unwrap()), "done");
    assert!(h
        .client_events()
        .iter()
        .all(|e| !matches!(e, ClientEvent::Progress(_))));
}

#[test]
fn sync_handlers_answer_sampling_elicitation_and_roots() {
    let (mut h, c) = connected(full_client(Instant::now()), 100);
    let c2 = c.clone();
    let (sampled, elicited, roots) = h.block_on(async move {
        (
            c2.call_tool("sample", json!({})).await.unwrap(),
            c2.call_tool("elicit", json!({})).await.unwrap(),
            c2.call_tool("roots", json!({})).await.unwrap(),
        )
    });
    assert_eq!(text_of(&sampled), "sampled");
    let elicited: Value = serde_json::from_str(&text_of(&elicited)).unwrap();
    assert_eq!(
        elicited,
        json!({"action": "accept", "content": {"name": "Ada", "age": 36}})
    );
    let roots: Value = serde_json::from_str(&text_of(&roots)).unwrap();
    assert_eq!(roots, json!([{"uri": "file:///tmp", "name": "tmp"}]));

    // set_roots notifies the server and changes the next answer.
    c.set_roots(vec![Root {
        uri: "file:///home".into(),
        name: None,
        meta: None,
        extra: Default::default(),
    }]);
    h.run();
    let server_events: Vec<_> = std::iter::from_fn(|| h.server.poll_event()).collect();
    assert!(
        server_events.iter().any(|e| matches!(e, Event::Notification { method, .. } if method == "notifications/roots/list_changed")),
        "{server_events:?}"
    );
    let r = h.block_on(async move { c.call_tool("roots", json!({})).await.unwrap() });
    assert!(text_of(&r).contains("file:///home"));
}

#[test]
fn a_roots_handler_answers_roots_list_as_a_job() {
    let asked = Arc::new(AtomicUsize::new(0));
    let a = asked.clone();
    let client = Client::builder(Implementation::new("c", "1"))
        .roots_handler(move |ctx| {
            let a = a.clone();
            async move {
                mcp_sansio::runtime::yield_now().await;
                let n = a.fetch_add(1, Ordering::SeqCst);
                assert!(!ctx.is_cancelled());
                Ok(ListRootsResult {
                    roots: vec![Root {
                        uri: format!("file:///asked/{n}"),
                        name: Some(format!("{:?}", ctx.request_id())),
                        meta: None,
                        extra: Default::default(),
                    }],
                    meta: None,
                    extra: Default::default(),
                })
            }
        })
        .build(Instant::now());
    let (mut h, c) = connected(client, 100);
    let caps = h.server.session().peer_client_capabilities().unwrap();
    assert_eq!(caps.roots.as_ref().unwrap().list_changed, Some(true));
    let c2 = c.clone();
    let (first, second) = h.block_on(async move {
        (
            c2.call_tool("roots", json!({})).await.unwrap(),
            c2.call_tool("roots", json!({})).await.unwrap(),
        )
    });
    let first: Value = serde_json::from_str(&text_of(&first)).unwrap();
    let second: Value = serde_json::from_str(&text_of(&second)).unwrap();
    assert_eq!(first[0]["uri"], "file:///asked/0");
    assert_eq!(second[0]["uri"], "file:///asked/1");
    assert_ne!(
        first[0]["name"], second[0]["name"],
        "each request has its id"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 2);

    // With only a handler, set_roots still tells the server the list changed.
    c.set_roots(Vec::new());
    h.run();
    let server_events: Vec<_> = std::iter::from_fn(|| h.server.poll_event()).collect();
    assert!(
        server_events.iter().any(|e| matches!(e, Event::Notification { method, .. } if method == "notifications/roots/list_changed")),
        "{server_events:?}"
    );
}

#[test]
fn a_roots_handler_refusal_or_panic_reaches_the_server() {
    let refusing = Client::builder(Implementation::new("c", "1"))
        .roots(vec![Root {
            uri: "file:///fixed".into(),
            ..Default::default()
        }])
        .roots_handler_sync(|_| Err(ErrorObject::new(-1, "the user keeps the roots private")))
        .build(Instant::now());
    let (mut h, c) = connected(refusing, 100);
    let r = h.block_on(async move { c.call_tool("roots", json!({})).await.unwrap() });
    assert_eq!(r.is_error, Some(true));
    let text = text_of(&r);
    assert!(text.contains("keeps the roots private"), "{text}");
    assert!(
        !text.contains("file:///fixed"),
        "the handler answers, not the list"
    );

    let panicking = Client::builder(Implementation::new("c", "1"))
        .roots_handler_sync(|_| panic!("a bug in the roots handler"))
        .build(Instant::now());
    assert_handler_panic_is_contained(panicking, "roots");
}

#[test]
fn async_handlers_run_as_jobs() {
    let polls = Arc::new(AtomicUsize::new(0));
    let p = polls.clone();
    let client = Client::builder(Implementation::new("c", "1"))
        .sampling(move |_, ctx| {
            let p = p.clone();
            async move {
                mcp_sansio::runtime::yield_now().await;
                p.fetch_add(1, Ordering::SeqCst);
                assert!(!ctx.is_cancelled());
                Ok(CreateMessageResult {
                    role: Role::Assistant,
                    content: SamplingContentList::One(SamplingContent::text("async sampled")),
                    model: "m".into(),
                    stop_reason: None,
                    meta: None,
                    extra: Default::default(),
                })
            }
        })
        .elicitation(|params, _| async move {
            mcp_sansio::runtime::yield_now().await;
            let mut content = Map::new();
            content.insert("name".into(), json!("Zed"));
            Ok(mcp_sansio::app::client::elicitation::accept_with_defaults(
                &params, content,
            ))
        })
        .build(Instant::now());
    let (mut h, c) = connected(client, 100);
    let (sampled, elicited) = h.block_on(async move {
        (
            c.call_tool("sample", json!({})).await.unwrap(),
            c.call_tool("elicit", json!({})).await.unwrap(),
        )
    });
    assert_eq!(text_of(&sampled), "async sampled");
    assert_eq!(polls.load(Ordering::SeqCst), 1);
    let elicited: Value = serde_json::from_str(&text_of(&elicited)).unwrap();
    assert_eq!(elicited["content"], json!({"name": "Zed", "age": 36}));
}

#[test]
fn handler_errors_and_missing_capabilities_reach_the_server() {
    let client = Client::builder(Implementation::new("c", "1"))
        .sampling_sync(|_, _| Err(ErrorObject::new(-1, "user rejected sampling")))
        .build(Instant::now());
    let (mut h, c) = connected(client, 100);
    let (sampled, elicited) = h.block_on(async move {
        (
            c.call_tool("sample", json!({})).await.unwrap(),
            c.call_tool("elicit", json!({})).await.unwrap(),
        )
    });
    assert_eq!(sampled.is_error, Some(true));
    assert!(
        text_of(&sampled).contains("user rejected sampling"),
        "{}",
        text_of(&sampled)
    );
    assert_eq!(elicited.is_error, Some(true));
    assert!(
        text_of(&elicited).contains("elicitation"),
        "{}",
        text_of(&elicited)
    );
}

#[test]
fn a_panicking_handler_answers_the_server_with_an_internal_error() {
    let client = Client::builder(Implementation::new("c", "1"))
        .sampling_sync(|_, _| panic!("a bug in the sampling handler"))
        .build(Instant::now());
    assert_handler_panic_is_contained(client, "sample");
}

/// Calls the fixture's `tool`, which asks `client` something its handler panics on: the tool
/// reports the error the client answered, without the panic's message, and the client goes
/// on serving.
fn assert_handler_panic_is_contained(client: Client, tool: &str) {
    let (mut h, c) = connected(client, 100);
    let tool = tool.to_owned();
    let (answered, listed) = h.block_on(async move {
        (
            c.call_tool(&tool, json!({})).await.unwrap(),
            c.list_tools(None).await,
        )
    });
    assert_eq!(answered.is_error, Some(true));
    let text = text_of(&answered);
    assert!(
        text.contains("panicked") && !text.contains("a bug"),
        "{text}"
    );
    assert!(listed.is_ok(), "the client goes on: {listed:?}");
}

/// Polls `fut` once with a waker that does nothing.
fn poll_now<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    Pin::new(fut).poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn version_mismatch_closes_with_a_clear_event() {
    let now = Instant::now();
    let mut client = Client::builder(Implementation::new("c", "1")).build(now);
    let handle = client.handle();
    let mut init = Box::pin(async move { handle.initialize().await });
    assert!(poll_now(&mut init).is_pending());
    let mut buf = Vec::new();
    assert!(client.poll_transmit(&mut buf).is_some());
    let request: Value = serde_json::from_slice(&buf).unwrap();
    assert_eq!(request["method"], "initialize");
    let response = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "protocolVersion": "1999-01-01", "capabilities": {},
        "serverInfo": {"name": "old", "version": "0"}}});
    client.handle_input(now, Bytes::from(response.to_string()));
    let Poll::Ready(result) = poll_now(&mut init) else {
        panic!("initialize still pending");
    };
    let err = result.unwrap_err();
    assert!(
        matches!(&err, ClientError::Closed(Some(CloseReason::UnsupportedVersion { server_version })) if server_version == "1999-01-01")
    );
    assert!(err.to_string().contains("1999-01-01"), "{err}");
    let events: Vec<_> = std::iter::from_fn(|| client.poll_event()).collect();
    assert_eq!(events.len(), 1, "{events:?}");
    let description = events[0].close_description().unwrap();
    assert!(description.contains("does not support"), "{description}");
    // Later calls fail at once without touching the wire.
    let handle = client.handle();
    let mut ping = Box::pin(async move { handle.ping().await });
    assert!(poll_now(&mut ping).is_pending());
    assert!(client.poll_transmit(&mut buf).is_none());
    let Poll::Ready(Err(ClientError::NotSent(_))) = poll_now(&mut ping) else {
        panic!("ping was not refused");
    };
}

#[test]
fn closing_fails_pending_calls() {
    let (mut h, c) = connected(full_client(Instant::now()), 100);
    let slot = h.spawn(async move { c.call_tool("slow", json!({})).await });
    h.run();
    let now = h.now;
    h.client.close(now);
    h.run();
    let err = slot.borrow_mut().take().unwrap().unwrap_err();
    assert!(matches!(err, ClientError::Closed(_)), "{err:?}");
    assert!(h.client_events().iter().any(|e| matches!(
        e,
        ClientEvent::Closed {
            reason: CloseReason::Local
        }
    )));
}

#[test]
fn handles_and_their_futures_are_send_and_sync() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: &T) {}
    let client = Client::builder(Implementation::new("c", "1")).build(Instant::now());
    let handle = client.handle();
    send_sync(&handle);
    let f = handle.call_tool("x", Value::Null);
    send(&f);
    let g = handle.list_all_tools();
    send(&g);
    let _ = obj(json!({}));
}

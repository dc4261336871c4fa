//! `mcp-sansio client --sampling ask|deny|auto` and `--sampling-rate N/min`: the core's
//! `SamplingPolicy` in front of the sampling handler. `ask` shows each request on stderr and
//! reads one answer line from stdin: `y` approves, `n` (or end of input) refuses, `e` edits
//! (then one line for the max tokens and one for the text of the last message, an empty line
//! keeping each). Approved requests are answered with `--sample-text`, or else a fixed text
//! from the model `mcp-sansio-cli`.

use std::io::{BufRead, Write};

use mcp_sansio::app::client::{
    ClientBuilder, Decision, RateLimit, RequestLineage, SamplingPolicy, USER_REJECTED,
};
use mcp_sansio::jsonrpc::{ErrorObject, RawJson};
use mcp_sansio::model::{CreateMessageParams, CreateMessageResult, SamplingContentList};
use serde_json::json;

use crate::client_inputs::InputArgs;
use crate::Failure;

/// The answer of `--sampling auto|ask` without `--sample-text`.
const FIXED_TEXT: &str = "This is a fixed answer from mcp-sansio-cli, which has no model.";
/// Wrong answers to the `ask` prompt before the request is refused.
const ASK_ATTEMPTS: usize = 3;

/// What `--sampling` does with each request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SamplingArg {
    /// Show the request on stderr and read y/n/e from stdin.
    Ask,
    /// Refuse every request.
    Deny,
    /// Approve every request.
    Auto,
}

/// Registers the sampling handler and the policy `args` asks for (only with `--sampling`).
pub(crate) fn register(builder: ClientBuilder, args: &InputArgs) -> Result<ClientBuilder, Failure> {
    let Some(mode) = args.sampling else {
        return Ok(builder);
    };
    let mut policy = SamplingPolicy::new();
    if let Some(rate) = &args.sampling_rate {
        policy = policy.rate(Some(parse_rate(rate)?));
    }
    if mode != SamplingArg::Auto {
        policy = policy.hook(move |params, lineage| decide(mode, params, lineage));
    }
    let text = answer_text(args);
    Ok(builder
        .sampling_sync(move |_, _| answer(&text))
        .sampling_policy(policy))
}

/// For the 2026-07-28 client, which takes handlers and no policy: the decision runs inside
/// the handler (no rate limit, no depth), a refusal is the same error -1 `data.limit` `hook`.
pub(crate) fn register_guarded(
    builder: ClientBuilder,
    args: &InputArgs,
) -> Result<ClientBuilder, Failure> {
    let Some(mode) = args.sampling else {
        return Ok(builder);
    };
    if let Some(rate) = &args.sampling_rate {
        parse_rate(rate)?;
    }
    let text = answer_text(args);
    Ok(builder.sampling_sync(move |params, ctx| {
        let lineage = RequestLineage {
            id: ctx.request_id().clone(),
            depth: 1,
            tool_call: None,
        };
        match decide(mode, &params, &lineage) {
            Decision::Refuse(reason) => Err(refusal(&reason)),
            Decision::Approve | Decision::Edit(_) => answer(&text),
        }
    }))
}

/// What `mode` decides about one request.
fn decide(
    mode: SamplingArg,
    params: &CreateMessageParams,
    lineage: &RequestLineage,
) -> Decision<CreateMessageParams> {
    match mode {
        SamplingArg::Auto => Decision::Approve,
        SamplingArg::Deny => Decision::Refuse("denied by --sampling deny".into()),
        SamplingArg::Ask => ask(params, lineage),
    }
}

/// The error the core's policy answers a hook's refusal with.
fn refusal(reason: &str) -> ErrorObject {
    let error = ErrorObject::new(
        USER_REJECTED,
        format!("User rejected sampling request: {reason}"),
    );
    match RawJson::from_serialize(&json!({"limit": "hook"})) {
        Ok(data) => error.with_data(data),
        Err(_) => error,
    }
}

/// `--sample-text`, or the fixed text.
fn answer_text(args: &InputArgs) -> String {
    args.sample_text
        .clone()
        .unwrap_or_else(|| FIXED_TEXT.to_owned())
}

/// `N/min` (or a bare `N`): N requests per minute, burst `min(N, 20)`.
pub(crate) fn parse_rate(text: &str) -> Result<RateLimit, Failure> {
    let count = text.strip_suffix("/min").unwrap_or(text);
    match count.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(RateLimit::per_minute(n, n.min(20))),
        _ => Err(Failure::Usage(format!(
            "--sampling-rate {text}: expected N/min with N at least 1"
        ))),
    }
}

/// The assistant's answer with `text`.
fn answer(text: &str) -> Result<CreateMessageResult, ErrorObject> {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "mcp-sansio-cli",
        "stopReason": "endTurn",
    }))
    .map_err(|e| ErrorObject::internal(e.to_string()))
}

/// The `ask` hook: the request on stderr, the decision from stdin.
fn ask(params: &CreateMessageParams, lineage: &RequestLineage) -> Decision<CreateMessageParams> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", describe(params, lineage));
    for _ in 0..ASK_ATTEMPTS {
        let _ = write!(err, "approve? [y]es / [n]o / [e]dit: ");
        let _ = err.flush();
        let Some(line) = read_line(&mut input) else {
            return Decision::Refuse("no answer on stdin".into());
        };
        match line.to_ascii_lowercase().as_str() {
            "y" | "yes" => return Decision::Approve,
            "n" | "no" => return Decision::Refuse("refused by the user".into()),
            "e" | "edit" => return Decision::Edit(edit(params, &mut input, &mut err)),
            _ => {}
        }
    }
    Decision::Refuse("no valid answer on stdin".into())
}

/// Asks for the max tokens and the last message's text; an empty line keeps each.
fn edit(
    params: &CreateMessageParams,
    input: &mut impl BufRead,
    err: &mut impl Write,
) -> CreateMessageParams {
    let mut edited = params.clone();
    let _ = write!(err, "max tokens [{}]: ", params.max_tokens);
    let _ = err.flush();
    if let Some(n) = read_line(input).and_then(|l| l.parse::<u64>().ok()) {
        edited.max_tokens = n;
    }
    let _ = write!(err, "text of the last message (empty keeps it): ");
    let _ = err.flush();
    if let (Some(text), Some(last)) = (
        read_line(input).filter(|l| !l.is_empty()),
        edited.messages.last_mut(),
    ) {
        if let Ok(content) = serde_json::from_value(json!({"type": "text", "text": text})) {
            last.content = SamplingContentList::One(content);
        }
    }
    edited
}

/// One trimmed line, `None` at end of input.
fn read_line(input: &mut impl BufRead) -> Option<String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

/// A request as shown to the user: its lineage, the messages, the model hints and limits.
fn describe(params: &CreateMessageParams, lineage: &RequestLineage) -> String {
    let mut out = format!(
        "the server asks for a sampling (request {}, depth {}):",
        RawJson::from_serialize(&lineage.id).map_or_else(|_| "?".into(), |r| r.to_string()),
        lineage.depth
    );
    if let Some(system) = &params.system_prompt {
        out.push_str(&format!("\n  system: {system}"));
    }
    for message in &params.messages {
        let content = serde_json::to_string(&message.content).unwrap_or_default();
        let role = serde_json::to_value(message.role).unwrap_or_default();
        out.push_str(&format!("\n  {}: {content}", role.as_str().unwrap_or("?")));
    }
    if let Some(prefs) = &params.model_preferences {
        let prefs = serde_json::to_string(prefs).unwrap_or_default();
        out.push_str(&format!("\n  model preferences: {prefs}"));
    }
    if let Some(tools) = &params.tools {
        out.push_str(&format!("\n  tools offered: {}", tools.len()));
    }
    out.push_str(&format!("\n  max tokens: {}", params.max_tokens));
    out
}

//! How `mcp-sansio client` answers a server's input requests (2026-07-28 input-required
//! results, and the same requests inside a 2025-11-25 session): elicitation by `--elicit`
//! (default decline) with `--elicit-content`, roots from `--root`, sampling with the fixed
//! `--sample-text` or else an error, or as `--sampling` decides (client_sampling.rs). Only
//! registrations on the core's `ClientBuilder`: the core decides when to call them.

use std::path::Path;

use mcp_sansio::app::client::elicitation::accept_with_defaults;
use mcp_sansio::app::client::ClientBuilder;
use mcp_sansio::app::server::Schema;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::model::{CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, Root};
use serde_json::{json, Map, Value};

use crate::Failure;

/// The answer to every elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ElicitArg {
    /// Accept, with `--elicit-content` as the form's content.
    Accept,
    /// Decline (the default).
    Decline,
    /// Cancel.
    Cancel,
}

/// The input answering flags of `mcp-sansio client`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct InputArgs {
    /// Answer every elicitation request with this action.
    #[arg(long, value_enum, value_name = "ACTION", default_value_t = ElicitArg::Decline)]
    pub(crate) elicit: ElicitArg,
    /// With `--elicit accept`: the form content, a JSON object (default `{}`); the requested
    /// schema's defaults fill what it lacks, and content that still does not satisfy the
    /// schema is declined instead (the reason on stderr).
    #[arg(long, value_name = "JSON")]
    pub(crate) elicit_content: Option<String>,
    /// A root to offer the server (a directory path or a `file://` URI); repeatable. Without
    /// any, the client declares no roots.
    #[arg(long = "root", value_name = "PATH")]
    pub(crate) roots: Vec<String>,
    /// Answer every sampling request with this text (model `mcp-sansio-cli`); without it,
    /// sampling requests get an error (with `--sampling auto|ask`: a fixed text).
    #[arg(long, value_name = "TEXT")]
    pub(crate) sample_text: Option<String>,
    /// Decide on each sampling request before answering it: ask (show it on stderr, read
    /// y/n/e from stdin; e asks for the max tokens and the text of the last message), deny
    /// (refuse with error -1), auto (approve). Approved requests get `--sample-text`, or else
    /// a fixed text from the model `mcp-sansio-cli`. In the handshake era it also declares
    /// the sampling capability and applies the rate limit and the nesting depth (3).
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) sampling: Option<crate::client_sampling::SamplingArg>,
    /// With `--sampling`: at most N sampling requests per minute, up to min(N, 20) at once
    /// (default 60/min, burst 20). Handshake era only.
    #[arg(long, value_name = "N/min", requires = "sampling")]
    pub(crate) sampling_rate: Option<String>,
}

/// Registers the handlers `args` describe on `builder`.
pub(crate) fn register(builder: ClientBuilder, args: &InputArgs) -> Result<ClientBuilder, Failure> {
    let content = match &args.elicit_content {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            _ => {
                return Err(Failure::Usage(
                    "--elicit-content must be a JSON object".into(),
                ))
            }
        },
    };
    if args.elicit_content.is_some() && args.elicit != ElicitArg::Accept {
        return Err(Failure::Usage(
            "--elicit-content goes with --elicit accept".into(),
        ));
    }
    let action = args.elicit;
    let sample = args.sample_text.clone();
    let mut builder = builder.elicitation_sync(move |params, _| {
        Ok(match action {
            ElicitArg::Accept => accept(&params, content.clone()),
            ElicitArg::Decline => answer(ElicitAction::Decline),
            ElicitArg::Cancel => answer(ElicitAction::Cancel),
        })
    });
    if args.sampling.is_some() {
        // `--sampling`: the policy's hook decides, then the fixed answer.
        builder = crate::client_sampling::register_guarded(builder, args)?;
    } else {
        builder = builder.sampling_sync(move |_, _| match &sample {
            Some(text) => serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": text},
                "model": "mcp-sansio-cli",
                "stopReason": "endTurn",
            }))
            .map_err(|e| ErrorObject::new(-32603, e.to_string())),
            None => Err(ErrorObject::new(
                -1,
                "sampling is not available in mcp-sansio client (pass --sample-text TEXT)",
            )),
        });
    }
    if !args.roots.is_empty() {
        let roots = args
            .roots
            .iter()
            .map(|r| root(r))
            .collect::<Result<_, _>>()?;
        builder = builder.roots(roots);
    }
    Ok(builder)
}

/// An answer without content.
fn answer(action: ElicitAction) -> ElicitResult {
    ElicitResult {
        action,
        content: None,
        meta: None,
        extra: Default::default(),
    }
}

/// `--elicit accept`: `content` with the requested schema's defaults filled in, or decline
/// (saying why on stderr) when that still does not satisfy the schema: a form never goes
/// back with a required field missing or a value of the wrong type. URL-mode requests are
/// declined.
fn accept(params: &ElicitParams, content: Map<String, Value>) -> ElicitResult {
    let result = accept_with_defaults(params, content);
    let (Some(schema), Some(content)) = (&params.requested_schema, &result.content) else {
        return result;
    };
    let schema = Schema::new(schema.to_value().unwrap_or(Value::Bool(true)));
    match schema.validate(&Value::Object(content.clone())) {
        Ok(()) => result,
        Err(errors) => {
            let reasons: Vec<String> = errors.iter().map(ToString::to_string).collect();
            eprintln!(
                "elicitation declined: --elicit-content does not satisfy the requested schema: {}",
                reasons.join("; ")
            );
            answer(ElicitAction::Decline)
        }
    }
}

/// A `--root` value as a root: a `file://` URI as given, a path made absolute.
pub(crate) fn root(value: &str) -> Result<Root, Failure> {
    let uri = if value.starts_with("file://") {
        value.to_owned()
    } else {
        let path = std::path::absolute(Path::new(value))
            .map_err(|e| Failure::Usage(format!("--root {value}: {e}")))?;
        format!("file://{}", path.display())
    };
    let name = uri
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .map(str::to_owned);
    serde_json::from_value(json!({"uri": uri, "name": name}))
        .map_err(|e| Failure::Usage(format!("--root {value}: {e}")))
}

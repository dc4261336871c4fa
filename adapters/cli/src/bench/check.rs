//! Judges every answer: a call counts as a success only when its result has the shape its
//! method promises (`ping` → `{}`, `tools/call` → a `content` array and no `isError: true`,
//! `resources/read` → a `contents` array). Anything else is a counted, described error.
//!
//! Correlation (this answer belongs to this request) is the session's job: it matches response
//! ids to its pending requests and counts what matches none; the report shows those counters.

use mcp_sansio::app::client::ClientError;
use mcp_sansio::http::client::TRANSPORT_ERROR;
use mcp_sansio::jsonrpc::{ErrorObject, RawJson};
use serde_json::Value;

use super::mix::Op;

/// The kinds of failure, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// A JSON-RPC error response.
    Rpc,
    /// A tool result with `isError: true`.
    ToolError,
    /// A result without the shape of its method's result.
    InvalidResult,
    /// No answer within the timeout.
    Timeout,
    /// The session closed or refused to send (the server went away).
    Closed,
    /// No connection to the server (refused, unreachable).
    Connect,
    /// The connection broke before the answer (reset, closed by the server).
    Reset,
    /// The server answered with an HTTP error status instead of JSON-RPC.
    HttpStatus,
}

impl ErrorKind {
    /// Every kind, in report order.
    pub(crate) const ALL: [ErrorKind; 8] = [
        ErrorKind::Rpc,
        ErrorKind::ToolError,
        ErrorKind::InvalidResult,
        ErrorKind::Timeout,
        ErrorKind::Closed,
        ErrorKind::Connect,
        ErrorKind::Reset,
        ErrorKind::HttpStatus,
    ];

    /// The name used in the table and the JSON report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ErrorKind::Rpc => "rpc_error",
            ErrorKind::ToolError => "tool_is_error",
            ErrorKind::InvalidResult => "invalid_result",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Closed => "closed",
            ErrorKind::Connect => "connect",
            ErrorKind::Reset => "reset",
            ErrorKind::HttpStatus => "http_status",
        }
    }

    /// Whether a call failing this way still got its answer from the server (a JSON-RPC
    /// error or a result the checks refused).
    pub(crate) fn answered(self) -> bool {
        matches!(
            self,
            ErrorKind::Rpc | ErrorKind::ToolError | ErrorKind::InvalidResult
        )
    }

    /// Position in [`ErrorKind::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// A failed call: its kind and a one-line description (grouped in the report's samples).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CallError {
    pub(crate) kind: ErrorKind,
    pub(crate) message: String,
}

impl CallError {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// Checks the answer to a call of `op`.
pub(crate) fn check(op: &Op, answer: Result<RawJson, ClientError>) -> Result<(), CallError> {
    let result = answer.map_err(|e| from_client_error(op, &e))?;
    let invalid =
        |why: &str| CallError::new(ErrorKind::InvalidResult, format!("{}: {why}", op.label()));
    if matches!(op, Op::Ping) && result.get() == "{}" {
        return Ok(()); // the common case, without building a tree
    }
    let Ok(Value::Object(object)) = result.to_value() else {
        return Err(invalid("the result is not a JSON object"));
    };
    match op {
        Op::Ping if object.keys().all(|k| k == "_meta") => Ok(()),
        Op::Ping => Err(invalid("a ping result must be empty")),
        Op::Tool(_) => {
            if !object.get("content").is_some_and(Value::is_array) {
                return Err(invalid("the tool result has no `content` array"));
            }
            match object.get("isError") {
                Some(Value::Bool(true)) => Err(CallError::new(
                    ErrorKind::ToolError,
                    format!("{}: isError: true{}", op.label(), first_text(&object)),
                )),
                None | Some(Value::Bool(false)) => Ok(()),
                Some(_) => Err(invalid("`isError` is not a boolean")),
            }
        }
        Op::Read(_) if object.get("contents").is_some_and(Value::is_array) => Ok(()),
        Op::Read(_) => Err(invalid("the read result has no `contents` array")),
    }
}

/// A call the transport could not get an answer for (see `Target::server_gone`): `closed`.
pub(crate) fn no_answer(op: &Op, error: &ClientError) -> CallError {
    let why = match error {
        ClientError::Rpc(e) => e.message.clone(),
        other => other.to_string(),
    };
    let kind = match error {
        ClientError::Rpc(e) => transport_kind(e).unwrap_or(ErrorKind::Closed),
        _ => ErrorKind::Closed,
    };
    CallError::new(kind, format!("{}: no answer: {why}", op.label()))
}

/// The kind of an error the HTTP client transport synthesized (code [`TRANSPORT_ERROR`]):
/// an HTTP error status (its `data` has `httpStatus`), no connection, a broken connection.
/// `None` for a server's own JSON-RPC error and for a session the transport gave up on.
fn transport_kind(error: &ErrorObject) -> Option<ErrorKind> {
    if error.code != TRANSPORT_ERROR {
        return None;
    }
    if let Some(data) = &error.data {
        return data
            .get()
            .contains("\"httpStatus\"")
            .then_some(ErrorKind::HttpStatus);
    }
    let failed = error.message.strip_prefix("the HTTP request failed")?;
    if failed.starts_with(": cannot connect") {
        Some(ErrorKind::Connect)
    } else {
        Some(ErrorKind::Reset)
    }
}

/// `: <text>` of the first text content block, cut to 120 characters ("" if none).
fn first_text(result: &serde_json::Map<String, Value>) -> String {
    let text = result
        .get("content")
        .and_then(Value::as_array)
        .and_then(|blocks| blocks.iter().find_map(|b| b.get("text")?.as_str()));
    match text {
        Some(text) => format!(" ({})", text.chars().take(120).collect::<String>()),
        None => String::new(),
    }
}

fn from_client_error(op: &Op, error: &ClientError) -> CallError {
    let label = op.label();
    match error {
        ClientError::Rpc(e) => CallError::new(
            transport_kind(e).unwrap_or(ErrorKind::Rpc),
            format!("{label}: JSON-RPC error {}: {}", e.code, e.message),
        ),
        ClientError::TimedOut => CallError::new(ErrorKind::Timeout, format!("{label}: timed out")),
        ClientError::Closed(_) | ClientError::NotSent(_) | ClientError::ClientGone => {
            CallError::new(ErrorKind::Closed, format!("{label}: {error}"))
        }
        ClientError::InvalidResult(e) => {
            CallError::new(ErrorKind::InvalidResult, format!("{label}: {e}"))
        }
        ClientError::Cancelled => CallError::new(ErrorKind::Closed, format!("{label}: cancelled")),
        ClientError::Http { .. } => {
            CallError::new(ErrorKind::HttpStatus, format!("{label}: {error}"))
        }
        ClientError::Transport(_) => CallError::new(ErrorKind::Reset, format!("{label}: {error}")),
        ClientError::TooManyRounds(_) | ClientError::Input(_) | ClientError::Limit(_) => {
            CallError::new(ErrorKind::Closed, format!("{label}: {error}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Result<RawJson, ClientError> {
        Ok(RawJson::from_text(text.to_owned()).unwrap())
    }

    fn kind(op: &Op, answer: Result<RawJson, ClientError>) -> Option<ErrorKind> {
        check(op, answer).err().map(|e| e.kind)
    }

    #[test]
    fn ping_must_be_an_empty_object() {
        assert_eq!(kind(&Op::Ping, raw("{}")), None);
        assert_eq!(kind(&Op::Ping, raw(r#"{ "_meta": {} }"#)), None);
        assert_eq!(
            kind(&Op::Ping, raw(r#"{"x":1}"#)),
            Some(ErrorKind::InvalidResult)
        );
        assert_eq!(kind(&Op::Ping, raw("[]")), Some(ErrorKind::InvalidResult));
    }

    #[test]
    fn tool_results_need_content_and_is_error_counts() {
        let tool = Op::Tool("t".into());
        assert_eq!(kind(&tool, raw(r#"{"content":[]}"#)), None);
        assert_eq!(kind(&tool, raw(r#"{"content":[],"isError":false}"#)), None);
        let failed = check(
            &tool,
            raw(r#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#),
        );
        assert_eq!(
            failed,
            Err(CallError::new(
                ErrorKind::ToolError,
                "tool:t: isError: true (boom)"
            ))
        );
        assert_eq!(
            kind(&tool, raw(r#"{"isError":false}"#)),
            Some(ErrorKind::InvalidResult)
        );
        assert_eq!(
            kind(&tool, raw(r#"{"content":[],"isError":"yes"}"#)),
            Some(ErrorKind::InvalidResult)
        );
    }

    #[test]
    fn read_results_need_contents() {
        let read = Op::Read("u".into());
        assert_eq!(
            kind(&read, raw(r#"{"contents":[{"uri":"u","text":""}]}"#)),
            None
        );
        assert_eq!(
            kind(&read, raw(r#"{"content":[]}"#)),
            Some(ErrorKind::InvalidResult)
        );
    }

    #[test]
    fn client_errors_map_to_kinds_with_their_code() {
        let rpc = ClientError::Rpc(ErrorObject::new(-32602, "Unknown tool: nope"));
        let error = check(&Op::Tool("nope".into()), Err(rpc)).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Rpc);
        assert_eq!(
            error.message,
            "tool:nope: JSON-RPC error -32602: Unknown tool: nope"
        );
        assert_eq!(
            kind(&Op::Ping, Err(ClientError::TimedOut)),
            Some(ErrorKind::Timeout)
        );
        assert_eq!(
            kind(&Op::Ping, Err(ClientError::Closed(None))),
            Some(ErrorKind::Closed)
        );
    }

    #[test]
    fn transport_errors_are_told_apart() {
        let transport = |message: &str| ErrorObject::new(TRANSPORT_ERROR, message);
        let refused = transport("the HTTP request failed: cannot connect to 127.0.0.1:9: refused");
        assert_eq!(transport_kind(&refused), Some(ErrorKind::Connect));
        let reset = transport("the HTTP request failed: request failed: connection reset");
        assert_eq!(transport_kind(&reset), Some(ErrorKind::Reset));
        let status = transport("the HTTP request failed: 503")
            .with_data(RawJson::from_text(String::from(r#"{"httpStatus":503}"#)).unwrap());
        assert_eq!(transport_kind(&status), Some(ErrorKind::HttpStatus));
        assert_eq!(
            kind(&Op::Ping, Err(ClientError::Rpc(status))),
            Some(ErrorKind::HttpStatus)
        );
        let lost = transport("the HTTP session is closed or lost");
        assert_eq!(transport_kind(&lost), None);
        assert_eq!(
            no_answer(&Op::Ping, &ClientError::Rpc(lost)).kind,
            ErrorKind::Closed
        );
        assert_eq!(
            no_answer(&Op::Ping, &ClientError::Rpc(refused)).kind,
            ErrorKind::Connect
        );
        assert_eq!(transport_kind(&ErrorObject::new(-32602, "bad")), None);
        assert!(ErrorKind::Rpc.answered() && !ErrorKind::Reset.answered());
    }

    #[test]
    fn kinds_index_their_position() {
        for (i, k) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i);
        }
    }
}

//! The per-request checks of 2026-07-28, in the order a server applies them: params and
//! `_meta` shape (-32602), protocol version (-32022), method and server capability (-32601).
//! Client capabilities (-32021) are checked later, once a handler asks for one.

use serde::Deserialize;

use super::{ServerProfile, StatelessError};
use crate::jsonrpc::RawJson;
use crate::model::stateless::{
    stateless_method, RequestMeta, CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY,
};
use crate::model::{
    server_capability_for, ClientCapabilities, Meta, MethodInfo, MethodKind, ProtocolVersion,
};

/// A request that passed the stateless checks, with its protocol fields typed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ValidatedRequest {
    /// The revision the request uses.
    pub(crate) version: ProtocolVersion,
    /// What the revision says about the method.
    pub(crate) method: &'static MethodInfo,
    /// The client capabilities the request declared.
    pub(crate) client_capabilities: ClientCapabilities,
    /// The whole typed `_meta` (client info, log level, other keys).
    pub(crate) meta: RequestMeta,
}

/// Only `_meta` of the params; the method's own members are the handler's business.
#[derive(Deserialize)]
struct ParamsMeta {
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

/// Checks one decoded request (`method`, raw `params`) against `profile`.
pub(crate) fn validate_request(
    profile: &ServerProfile,
    method: &str,
    params: Option<&RawJson>,
) -> Result<ValidatedRequest, StatelessError> {
    let (version, meta) = validate_meta(profile, params)?;
    let info = stateless_method(method)
        .filter(|i| i.kind == MethodKind::Request)
        .ok_or_else(|| StatelessError::MethodNotFound(method.to_owned()))?;
    if let Some(key) = server_capability_for(method, version) {
        if !key.is_declared(&profile.capabilities) {
            return Err(StatelessError::MethodNotFound(method.to_owned()));
        }
    }
    let client_capabilities = meta.client_capabilities.clone().unwrap_or_default();
    Ok(ValidatedRequest {
        version,
        method: info,
        client_capabilities,
        meta,
    })
}

/// Steps 1 and 2 of [`validate_request`] alone (the `_meta` fields, then the version), for
/// methods outside the core table (extensions such as `tasks/*`).
pub(crate) fn validate_meta(
    profile: &ServerProfile,
    params: Option<&RawJson>,
) -> Result<(ProtocolVersion, RequestMeta), StatelessError> {
    let meta = request_meta(params)?;
    let requested = meta.protocol_version.as_deref().unwrap_or_default();
    let version = ProtocolVersion::parse(requested)
        .filter(|&v| profile.serves_statelessly(v))
        .ok_or_else(|| StatelessError::UnsupportedVersion {
            requested: requested.to_owned(),
            supported: profile.supported_strings(),
        })?;
    Ok((version, meta))
}

/// The typed `_meta` of `params`, refusing a request without its required fields.
fn request_meta(params: Option<&RawJson>) -> Result<RequestMeta, StatelessError> {
    let invalid = |why: &str| StatelessError::InvalidParams(why.to_owned());
    let params = params.ok_or_else(|| invalid("Missing params: every request carries _meta"))?;
    if !params.is_object() {
        return Err(invalid("Params must be an object"));
    }
    let meta = params
        .parse::<ParamsMeta>()
        .map_err(|_| invalid("_meta must be an object"))?
        .meta
        .ok_or_else(|| invalid("Missing _meta: every request carries protocol fields"))?;
    for key in [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY] {
        if meta.get(key).is_none_or(|v| v.is_null()) {
            return Err(StatelessError::InvalidParams(format!(
                "Missing required _meta field {key}"
            )));
        }
    }
    RequestMeta::from_meta(&meta)
        .map_err(|e| StatelessError::InvalidParams(format!("Invalid _meta: {e}")))
}

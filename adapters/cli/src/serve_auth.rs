//! `serve --http --auth-issuer URL ...`: protects the demo server as an OAuth resource with
//! static tokens, for demos and tests of clients' authorization. The core
//! `ProtectedResource` makes every decision; this module turns flags into its configuration
//! and the static token table into the validation callback.

use std::collections::HashMap;

use clap::Args;
use mcp_sansio::auth::{ProtectedResource, Secret, TokenInfo, TokenValidation};
use mcp_sansio_http::server::BearerAuth;

use crate::Failure;

/// The `--auth-*` options of `serve --http`.
#[derive(Debug, Args, Default)]
#[group(skip)] // not part of `serve`'s one-of group (--stdio | --http)
pub(crate) struct ServeAuthArgs {
    /// Protect the HTTP server as an OAuth resource of this authorization server (issuer
    /// URL): its metadata is served at /.well-known/oauth-protected-resource[/mcp] and every
    /// request needs a bearer token.
    #[arg(long, value_name = "URL", requires = "http")]
    pub(crate) auth_issuer: Option<String>,
    /// A token the server accepts, with the scopes it grants (repeatable), e.g.
    /// `--auth-token t1:mcp:read,mcp:admin` (scopes after the first `:`, comma-separated).
    #[arg(long, value_name = "TOKEN[:SCOPES]", requires = "auth_issuer")]
    pub(crate) auth_token: Vec<String>,
    /// A scope every request needs (repeatable).
    #[arg(long, value_name = "SCOPE", requires = "auth_issuer")]
    pub(crate) auth_scope: Vec<String>,
    /// Scopes a call of one tool needs (repeatable), e.g. `--auth-tool-scope add=math:write`.
    #[arg(long, value_name = "TOOL=SCOPES", requires = "auth_issuer")]
    pub(crate) auth_tool_scope: Vec<String>,
    /// The resource identifier tokens must be issued for (default: the server's /mcp URL).
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub(crate) auth_resource: Option<String>,
}

fn scope_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn add_unique(all: &mut Vec<String>, more: &[String]) {
    for scope in more {
        if !all.contains(scope) {
            all.push(scope.clone());
        }
    }
}

impl ServeAuthArgs {
    /// The bearer guard for a server at `server_url`, or `None` without `--auth-issuer`.
    pub(crate) fn bearer_auth(&self, server_url: &str) -> Result<Option<BearerAuth>, Failure> {
        let Some(issuer) = &self.auth_issuer else {
            return Ok(None);
        };
        let resource_url = self.auth_resource.as_deref().unwrap_or(server_url);
        let mut resource = ProtectedResource::new(resource_url, [issuer.as_str()])
            .map_err(|e| Failure::Usage(format!("--auth-issuer/--auth-resource: {e}")))?
            .resource_name("mcp-sansio demo server");
        let mut supported = self.auth_scope.clone();
        for rule in &self.auth_tool_scope {
            let (tool, scopes) = rule.split_once('=').ok_or_else(|| {
                Failure::Usage(format!("--auth-tool-scope wants TOOL=SCOPES, got {rule:?}"))
            })?;
            let scopes = scope_list(scopes);
            add_unique(&mut supported, &scopes);
            resource = resource.tool_scopes(tool, scopes);
        }
        let audience = vec![resource.resource().to_owned()];
        let mut tokens = HashMap::new();
        for entry in &self.auth_token {
            let (token, scopes) = entry.split_once(':').unwrap_or((entry.as_str(), ""));
            if token.is_empty() {
                return Err(Failure::Usage("--auth-token wants TOKEN[:SCOPES]".into()));
            }
            let scopes = scope_list(scopes);
            add_unique(&mut supported, &scopes);
            let info = TokenInfo {
                subject: format!("static-token-{}", tokens.len() + 1),
                scopes,
                audience: audience.clone(),
            };
            tokens.insert(token.to_owned(), info);
        }
        let resource = resource
            .required_scopes(self.auth_scope.clone())
            .scopes_supported(supported);
        eprintln!(
            "protected resource {} (metadata at {})",
            resource.resource(),
            resource.metadata_url()
        );
        let validate = move |token: &Secret| {
            tokens
                .get(token.expose())
                .cloned()
                .map_or(TokenValidation::Invalid, TokenValidation::Valid)
        };
        Ok(Some(BearerAuth::protect(resource, validate)))
    }
}

//! The OAuth options of `mcp-sansio client URL` and their mapping onto the core's
//! `AuthConfig` (flags first, then the `MCP_*` environment variables). The flow itself runs in
//! the HTTP adapter's authorizer; nothing here decides anything about OAuth.

use clap::{Args, ValueEnum};
use mcp_sansio::auth::{AuthConfig, ClientAuthMethod, ClientCredentials, JwtSigningKey, Secret};
use mcp_sansio_http::client::ClientAuthorization;

use crate::Failure;

/// The redirect URI registered when none is given (never opened by the no-browser step).
const DEFAULT_REDIRECT_URI: &str = "http://127.0.0.1:8976/callback";

/// OAuth flags of `client URL`.
#[derive(Debug, Args)]
pub(crate) struct OAuthArgs {
    /// OAuth: a pre-registered client id (else a --client-metadata-url or dynamic
    /// registration). Env: MCP_CLIENT_ID.
    #[arg(long, value_name = "ID", requires = "url")]
    pub(crate) client_id: Option<String>,
    /// OAuth: the pre-registered client's secret. Env: MCP_CLIENT_SECRET.
    #[arg(long, value_name = "SECRET", requires = "client_id")]
    pub(crate) client_secret: Option<String>,
    /// OAuth: how the pre-registered client authenticates at the token endpoint (default:
    /// basic with a secret, private-key-jwt with a key, else none).
    #[arg(long, value_enum, value_name = "METHOD", requires = "client_id")]
    pub(crate) client_auth: Option<ClientAuthArg>,
    /// OAuth: PKCS#8 PEM P-256 key for private_key_jwt (ES256). Env: MCP_CLIENT_KEY_FILE.
    #[arg(long, value_name = "FILE", requires = "client_id")]
    pub(crate) client_key_file: Option<String>,
    /// OAuth: machine to machine: the client_credentials grant with the pre-registered
    /// client, no user step.
    #[arg(long, requires = "client_id")]
    pub(crate) client_credentials: bool,
    /// OAuth: the redirect URI to register and send. Env: MCP_REDIRECT_URI.
    #[arg(long, value_name = "URI", requires = "url")]
    pub(crate) redirect_uri: Option<String>,
    /// OAuth: the scope to ask for when the challenge names none (default: the server's
    /// scopes_supported). Env: MCP_OAUTH_SCOPE.
    #[arg(long, value_name = "SCOPES", requires = "url")]
    pub(crate) scope: Option<String>,
    /// OAuth: an https URL of this client's ID metadata document, used as client_id where the
    /// authorization server supports it. Env: MCP_CLIENT_METADATA_URL.
    #[arg(long, value_name = "URL", requires = "url")]
    pub(crate) client_metadata_url: Option<String>,
    /// Never run OAuth: a 401 fails the request.
    #[arg(long, conflicts_with_all = ["client_id", "client_credentials"])]
    pub(crate) no_oauth: bool,
}

/// `--client-auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ClientAuthArg {
    /// client_secret_basic.
    Basic,
    /// client_secret_post.
    Post,
    /// A public client.
    None,
    /// private_key_jwt (needs --client-key-file).
    PrivateKeyJwt,
}

fn flag_or_env(flag: &Option<String>, name: &str) -> Option<String> {
    flag.clone()
        .or_else(|| std::env::var(name).ok().filter(|v| !v.is_empty()))
}

/// The OAuth settings for `url`, or `None` with `--no-oauth` or a static `--bearer-token`.
pub(crate) fn authorization(
    args: &OAuthArgs,
    url: &str,
    bearer_token: bool,
) -> Result<Option<ClientAuthorization>, Failure> {
    if args.no_oauth || bearer_token {
        return Ok(None);
    }
    let redirect = flag_or_env(&args.redirect_uri, "MCP_REDIRECT_URI")
        .unwrap_or_else(|| DEFAULT_REDIRECT_URI.to_owned());
    let mut config = AuthConfig::new(url, redirect);
    config.scope = flag_or_env(&args.scope, "MCP_OAUTH_SCOPE");
    config.client_metadata_url = flag_or_env(&args.client_metadata_url, "MCP_CLIENT_METADATA_URL");
    if let Some(file) = flag_or_env(&args.client_key_file, "MCP_CLIENT_KEY_FILE") {
        let pem = std::fs::read_to_string(&file)
            .map_err(|e| Failure::Usage(format!("cannot read {file}: {e}")))?;
        config.signing_key = Some(
            JwtSigningKey::from_pkcs8_pem(&pem)
                .map_err(|e| Failure::Usage(format!("{file}: {e}")))?,
        );
    }
    if let Some(client_id) = flag_or_env(&args.client_id, "MCP_CLIENT_ID") {
        let secret = flag_or_env(&args.client_secret, "MCP_CLIENT_SECRET").map(Secret::new);
        let method = match args.client_auth {
            Some(ClientAuthArg::Basic) => ClientAuthMethod::ClientSecretBasic,
            Some(ClientAuthArg::Post) => ClientAuthMethod::ClientSecretPost,
            Some(ClientAuthArg::None) => ClientAuthMethod::None,
            Some(ClientAuthArg::PrivateKeyJwt) => ClientAuthMethod::PrivateKeyJwt,
            None if config.signing_key.is_some() => ClientAuthMethod::PrivateKeyJwt,
            None if secret.is_some() => ClientAuthMethod::ClientSecretBasic,
            None => ClientAuthMethod::None,
        };
        if method == ClientAuthMethod::PrivateKeyJwt && config.signing_key.is_none() {
            return Err(Failure::Usage(
                "--client-auth private-key-jwt needs --client-key-file".into(),
            ));
        }
        config.pre_registered = Some(ClientCredentials {
            client_id,
            client_secret: secret,
            auth_method: method,
        });
        config.client_credentials_grant = args.client_credentials;
    }
    Ok(Some(ClientAuthorization::new(config)))
}

//! [`AuthFlow`]: the MCP client's authorization as a state machine. It turns a 401/403 from
//! the MCP server into a sequence of HTTP requests (protected-resource metadata, authorization
//! server metadata, registration, token), an authorization URL for the user agent, and finally
//! a bearer token; it refreshes that token when it expires. Nothing here performs IO.
//!
//! Drive loop: `handle_challenge` (with fresh random bytes), then repeat `poll_request` →
//! perform it → `handle_response`, and `poll_event` for `Authorize` (open the URL, come back
//! with `handle_redirect`), `Authorized` or `Failed`.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::challenge::BearerChallenge;
use super::cross_app::{parse_exchange_response, TOKEN_TYPE_ID_JAG, TOKEN_TYPE_ID_TOKEN};
use super::discovery::{
    authorization_server_metadata_urls, legacy_metadata_url, protected_resource_metadata_urls,
};
use super::flow_rules::{
    choose_auth_method, status_text, token_error, union_scopes, unreadable_challenge,
    with_offline_access,
};
use super::flow_types::{AuthConfig, AuthEvent, Registration, Token};
use super::jwt::client_assertion;
use super::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
use super::pkce::Pkce;
use super::request::{
    authorization_url, parse_redirect, parse_registration, parse_token_response,
    registration_request, select_scope, token_request, token_request_with_assertion,
    AuthorizationParams, ClientAuthMethod, ClientCredentials, Grant, RegistrationParams,
    TokenResponse,
};
use super::secret::Secret;
use super::AuthError;
use crate::encoding::base64url;
use crate::http::{HttpMethod, HttpText};
use crate::outgoing::{ExchangeId, OutgoingRequest, ReceivedResponse};
use crate::url::HttpUrl;
use crate::url::{query_param, resource_covers};

#[derive(Debug)]
enum Phase {
    Idle,
    ResourceMetadata {
        urls: Vec<String>,
        next: usize,
    },
    ServerMetadata {
        urls: Vec<String>,
        next: usize,
        legacy_origin: Option<String>,
    },
    Register {
        method: ClientAuthMethod,
    },
    AwaitRedirect {
        pkce: Pkce,
        state: String,
    },
    IdpExchange,
    Exchange,
    Refresh,
    Ready,
    Failed,
}

/// The client side of MCP authorization as a sans-IO state machine.
#[derive(Debug)]
pub struct AuthFlow {
    config: AuthConfig,
    phase: Phase,
    outgoing: Option<OutgoingRequest>,
    in_flight: bool,
    /// The id of the next request (each one gets its own).
    next_id: u64,
    events: VecDeque<AuthEvent>,
    challenge_scope: Option<String>,
    /// The last 401's `WWW-Authenticate`, quoted, when no Bearer challenge could be read from
    /// it: named in the error should discovery without it fail.
    unreadable_challenge: Option<String>,
    scope: Option<String>,
    resource_metadata: Option<ProtectedResourceMetadata>,
    server_metadata: Option<AuthorizationServerMetadata>,
    /// The issuer the awaited authorization server metadata must name (RFC 8414 §3.3): the
    /// one its well-known URL was built from; `None` on the 2025-03-26 root fallback.
    metadata_issuer: Option<String>,
    resource: Option<String>,
    client: Option<ClientCredentials>,
    token: Option<Token>,
    pending_refresh: Option<Secret>,
    /// The refresh token to use once a 401's rediscovery finds the same authorization server.
    refresh_after_discovery: Option<Secret>,
    authorizations: u32,
    entropy: [u8; 48],
    unix_time: u64,
    assertions: u64,
}

impl AuthFlow {
    /// A flow with no token yet.
    #[must_use]
    pub fn new(config: AuthConfig) -> Self {
        Self {
            config,
            phase: Phase::Idle,
            outgoing: None,
            in_flight: false,
            next_id: 0,
            events: VecDeque::new(),
            challenge_scope: None,
            unreadable_challenge: None,
            scope: None,
            resource_metadata: None,
            server_metadata: None,
            metadata_issuer: None,
            resource: None,
            client: None,
            token: None,
            pending_refresh: None,
            refresh_after_discovery: None,
            authorizations: 0,
            entropy: [0; 48],
            unix_time: 0,
            assertions: 0,
        }
    }

    /// The wall-clock time (seconds since the Unix epoch) for signed assertions (`iat`,
    /// `exp` of a `private_key_jwt`); set it before `handle_challenge` and `handle_response`.
    /// `Instant` cannot give it, and the core reads no clock.
    pub fn set_unix_time(&mut self, unix_seconds: u64) {
        self.unix_time = unix_seconds;
    }

    /// Feeds the MCP server's 401 or 403 answer. `entropy` must be fresh random bytes: the
    /// first 32 become the PKCE verifier, the last 16 the `state`. A 401 refreshes the token
    /// if it can, else (re)authorizes; a 403 `insufficient_scope` re-authorizes with the
    /// challenged scope (step-up). Errors only when a flow is already under way or the status
    /// is neither.
    pub fn handle_challenge(
        &mut self,
        now: Instant,
        response: &ReceivedResponse,
        entropy: &[u8; 48],
    ) -> Result<(), AuthError> {
        if !matches!(self.phase, Phase::Idle | Phase::Ready | Phase::Failed) {
            return Err(AuthError::UnexpectedInput(
                "authorization already under way",
            ));
        }
        self.entropy = *entropy;
        let challenge = BearerChallenge::find(response.header_values("www-authenticate"));
        self.unreadable_challenge = unreadable_challenge(response, challenge.as_ref());
        match response.status {
            401 => {
                let refresh = self.token.as_ref().and_then(|t| t.refresh.clone());
                let challenge = challenge.unwrap_or_default();
                self.challenge_scope = challenge.scope.clone();
                self.token = None;
                // Discover again first: the resource may have moved to another authorization
                // server (SEP-2352), whose client and tokens must not be reused; the same
                // server keeps its registered client and refreshes if it can.
                self.refresh_after_discovery = refresh.filter(|_| self.server_metadata.is_some());
                self.start_discovery(challenge.resource_metadata.as_deref());
                Ok(())
            }
            403 => {
                let Some(challenge) =
                    challenge.filter(|c| c.error.as_deref() == Some("insufficient_scope"))
                else {
                    return Err(AuthError::UnexpectedInput("403 without insufficient_scope"));
                };
                self.challenge_scope = Some(union_scopes(
                    self.scope.as_deref(),
                    challenge.scope.as_deref(),
                ));
                if self.server_metadata.is_some() && self.client.is_some() {
                    self.authorize(now);
                } else {
                    self.start_discovery(challenge.resource_metadata.as_deref());
                }
                Ok(())
            }
            _ => Err(AuthError::UnexpectedInput(
                "challenge status is not 401 or 403",
            )),
        }
    }

    /// The next HTTP request to perform, if any; at most one is outstanding.
    #[must_use]
    pub fn poll_request(&mut self) -> Option<OutgoingRequest> {
        let mut request = self.outgoing.take()?;
        request.id = ExchangeId(self.next_id);
        self.next_id = self.next_id.wrapping_add(1);
        self.in_flight = true;
        Some(request)
    }

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<AuthEvent> {
        self.events.pop_front()
    }

    /// The answer to the request last returned by [`poll_request`](Self::poll_request).
    pub fn handle_response(
        &mut self,
        now: Instant,
        response: ReceivedResponse,
    ) -> Result<(), AuthError> {
        if !self.in_flight {
            return Err(AuthError::UnexpectedInput("no request in flight"));
        }
        self.in_flight = false;
        let ok = (200..300).contains(&response.status);
        match std::mem::replace(&mut self.phase, Phase::Failed) {
            Phase::ResourceMetadata { .. } if ok => self.on_resource_metadata(&response.body),
            Phase::ResourceMetadata { urls, next } => self.next_resource_metadata(urls, next + 1),
            Phase::ServerMetadata { .. } if ok => {
                match AuthorizationServerMetadata::parse(&response.body) {
                    Ok(meta) => match &self.metadata_issuer {
                        // Metadata naming another issuer could steer tokens elsewhere.
                        Some(expected) if *expected != meta.issuer => {
                            let error = AuthError::BadMetadata(format!(
                                "authorization server metadata names issuer {}, not {expected}",
                                meta.issuer
                            ));
                            self.fail(error);
                        }
                        _ => self.on_server_metadata(now, meta),
                    },
                    Err(e) => self.fail(e),
                }
            }
            Phase::ServerMetadata {
                urls,
                next,
                legacy_origin,
            } => {
                self.next_server_metadata(now, urls, next + 1, legacy_origin);
            }
            Phase::Register { method } if ok => match parse_registration(&response.body, method) {
                Ok(mut client) => {
                    if client.client_secret.is_none() {
                        client.auth_method = ClientAuthMethod::None;
                    }
                    self.client = Some(client);
                    self.events
                        .push_back(AuthEvent::Registered(Registration::Dynamic));
                    self.authorize(now);
                }
                Err(e) => self.fail(AuthError::RegistrationFailed(e.to_string())),
            },
            Phase::Register { .. } => {
                self.fail(AuthError::RegistrationFailed(status_text(&response)))
            }
            Phase::IdpExchange if ok => match parse_exchange_response(&response.body) {
                Ok(grant) => self.present_grant(&grant),
                Err(e) => self.fail(e),
            },
            Phase::IdpExchange => self.fail(AuthError::BadTokenResponse(format!(
                "identity provider: {}",
                token_error(&response)
            ))),
            Phase::Exchange | Phase::Refresh if ok => match parse_token_response(&response.body) {
                Ok(token) => self.on_token(now, token),
                Err(e) => self.fail(e),
            },
            Phase::Exchange | Phase::Refresh => {
                // A refused refresh token must not be tried again.
                if let Some(token) = &mut self.token {
                    token.refresh = None;
                }
                self.pending_refresh = None;
                self.fail(AuthError::BadTokenResponse(token_error(&response)));
            }
            other => {
                self.phase = other;
                return Err(AuthError::UnexpectedInput(
                    "response in a phase without a request",
                ));
            }
        }
        Ok(())
    }

    /// Where the user agent was redirected after authorization (the `Location` of the
    /// authorization endpoint's answer): reads `code` and `state`, checks the state and asks
    /// for the token.
    pub fn handle_redirect(&mut self, location: &str) -> Result<(), AuthError> {
        if !matches!(self.phase, Phase::AwaitRedirect { .. }) {
            return Err(AuthError::UnexpectedInput("no authorization pending"));
        }
        if let Err(e) = self.check_issuer(query_param(location, "iss")) {
            self.fail(e);
            return Ok(());
        }
        match parse_redirect(location) {
            Ok((code, state)) => self.handle_authorization_code(code, state.as_deref()),
            Err(e) => {
                self.fail(e);
                Ok(())
            }
        }
    }

    /// The authorization code and `state` the application read itself.
    pub fn handle_authorization_code(
        &mut self,
        code: Secret,
        state: Option<&str>,
    ) -> Result<(), AuthError> {
        let Phase::AwaitRedirect { pkce, state: sent } =
            std::mem::replace(&mut self.phase, Phase::Exchange)
        else {
            return Err(AuthError::UnexpectedInput("no authorization pending"));
        };
        if state != Some(sent.as_str()) {
            self.fail(AuthError::StateMismatch);
            return Ok(());
        }
        let (Some(meta), Some(client)) = (&self.server_metadata, &self.client) else {
            self.fail(AuthError::UnexpectedInput("no metadata"));
            return Ok(());
        };
        let _ = (meta, client);
        let grant = Grant::AuthorizationCode {
            code: &code,
            verifier: &pkce.verifier,
            redirect_uri: &self.config.redirect_uri.clone(),
        };
        self.send_token_request(&grant);
        Ok(())
    }

    /// The access token, if one is held and not expired at `now`.
    #[must_use]
    pub fn access_token(&self, now: Instant) -> Option<&Secret> {
        let token = self.token.as_ref()?;
        match token.expires_at {
            Some(at) if now >= at => None,
            _ => Some(&token.access),
        }
    }

    /// The current token and its metadata.
    #[must_use]
    pub fn token(&self) -> Option<&Token> {
        self.token.as_ref()
    }

    /// The RFC 8707 resource indicator in use, once discovered.
    #[must_use]
    pub fn resource(&self) -> Option<&str> {
        self.resource.as_deref()
    }

    /// The client identity in use, once registered.
    #[must_use]
    pub fn client(&self) -> Option<&ClientCredentials> {
        self.client.as_ref()
    }

    /// How many authorizations ran since creation or [`reset_attempts`](Self::reset_attempts).
    #[must_use]
    pub fn authorizations(&self) -> u32 {
        self.authorizations
    }

    /// Forgets past attempts; call after an MCP request succeeded with the token.
    pub fn reset_attempts(&mut self) {
        self.authorizations = 0;
    }

    /// When the token should be refreshed (expiry minus the margin), if it can be.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if !matches!(self.phase, Phase::Ready) {
            return None;
        }
        let token = self.token.as_ref()?;
        token.refresh.as_ref()?;
        let at = token.expires_at?;
        Some(at.checked_sub(self.config.refresh_margin).unwrap_or(at))
    }

    /// Refreshes the token if its deadline has passed.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.poll_timeout().is_some_and(|at| now >= at) {
            if let Some(refresh) = self.token.as_ref().and_then(|t| t.refresh.clone()) {
                self.start_refresh(&refresh);
            }
        }
    }

    fn fail(&mut self, error: AuthError) {
        self.phase = Phase::Failed;
        self.outgoing = None;
        // Discovery went on without the challenge it could not read: say so, or the error
        // (often a registration refused by a default endpoint) would hide the cause.
        let error = match self.unreadable_challenge.take() {
            Some(header) => AuthError::UnreadableChallenge {
                header,
                then: Box::new(error),
            },
            None => error,
        };
        self.events.push_back(AuthEvent::Failed(error));
    }

    fn get(&mut self, url: String) {
        self.outgoing = Some(OutgoingRequest {
            id: ExchangeId(0),
            method: HttpMethod::Get,
            url: Some(url.into()),
            headers: vec![("accept", HttpText::from_static("application/json"))],
            named_headers: Vec::new(),
            body: bytes::Bytes::new(),
        });
    }

    fn start_discovery(&mut self, from_challenge: Option<&str>) {
        let urls = protected_resource_metadata_urls(&self.config.server_url, from_challenge);
        if urls.is_empty() {
            return self.fail(AuthError::DiscoveryFailed(
                "server URL is not http(s)".into(),
            ));
        }
        self.next_resource_metadata(urls, 0);
    }

    fn next_resource_metadata(&mut self, urls: Vec<String>, next: usize) {
        if let Some(url) = urls.get(next).cloned() {
            self.phase = Phase::ResourceMetadata { urls, next };
            return self.get(url);
        }
        // 2025-03-26: no PRM; the server's origin is the authorization base URL.
        match legacy_metadata_url(&self.config.server_url) {
            Some((url, origin)) => {
                self.resource = HttpUrl::parse(&self.config.server_url)
                    .ok()
                    .map(|u| u.canonical());
                self.metadata_issuer = None;
                self.phase = Phase::ServerMetadata {
                    urls: vec![url.clone()],
                    next: 0,
                    legacy_origin: Some(origin),
                };
                self.get(url);
            }
            None => self.fail(AuthError::DiscoveryFailed("no resource metadata".into())),
        }
    }

    fn on_resource_metadata(&mut self, body: &[u8]) {
        let meta = match ProtectedResourceMetadata::parse(body) {
            Ok(meta) => meta,
            Err(e) => return self.fail(e),
        };
        if !resource_covers(&meta.resource, &self.config.server_url) {
            return self.fail(AuthError::ResourceMismatch {
                resource: meta.resource,
                server: self.config.server_url.clone(),
            });
        }
        self.resource = Some(meta.resource.clone());
        let Some(issuer) = meta.authorization_servers.first().cloned() else {
            return self.fail(AuthError::BadMetadata(
                "protected resource metadata lists no authorization_servers".into(),
            ));
        };
        let urls = authorization_server_metadata_urls(&issuer);
        self.metadata_issuer = Some(issuer);
        self.resource_metadata = Some(meta);
        if urls.is_empty() {
            return self.fail(AuthError::BadMetadata(
                "authorization server is not http(s)".into(),
            ));
        }
        self.request_server_metadata(urls, 0, None);
    }

    fn request_server_metadata(&mut self, urls: Vec<String>, next: usize, legacy: Option<String>) {
        let Some(url) = urls.get(next).cloned() else {
            return self.fail(AuthError::BadMetadata(
                "no authorization server metadata URL left to try".into(),
            ));
        };
        self.phase = Phase::ServerMetadata {
            urls,
            next,
            legacy_origin: legacy,
        };
        self.get(url);
    }

    fn next_server_metadata(
        &mut self,
        now: Instant,
        urls: Vec<String>,
        next: usize,
        legacy: Option<String>,
    ) {
        if next < urls.len() {
            return self.request_server_metadata(urls, next, legacy);
        }
        match legacy {
            Some(origin) => {
                self.on_server_metadata(
                    now,
                    AuthorizationServerMetadata::default_endpoints(&origin),
                );
            }
            None => self.fail(AuthError::DiscoveryFailed(
                "no authorization server metadata".into(),
            )),
        }
    }

    fn on_server_metadata(&mut self, now: Instant, meta: AuthorizationServerMetadata) {
        self.scope = self.wanted_scope();
        let metadata_url = self
            .config
            .client_metadata_url
            .clone()
            .filter(|_| meta.client_id_metadata_document_supported == Some(true));
        let registration_endpoint = meta.registration_endpoint.clone();
        let method = choose_auth_method(meta.token_endpoint_auth_methods_supported.as_deref());
        let same_server = self
            .server_metadata
            .as_ref()
            .is_some_and(|known| known.issuer == meta.issuer);
        self.server_metadata = Some(meta);
        let refresh = self.refresh_after_discovery.take();
        if same_server && self.client.is_some() {
            // Rediscovered the authorization server we registered with: keep the client.
            if let Some(refresh) = refresh {
                return self.start_refresh(&refresh);
            }
        } else if let Some(client) = self.config.pre_registered.clone() {
            self.client = Some(client);
            self.events
                .push_back(AuthEvent::Registered(Registration::PreRegistered));
        } else if let Some(url) = metadata_url {
            self.client = Some(ClientCredentials {
                client_id: url,
                client_secret: None,
                auth_method: ClientAuthMethod::None,
            });
            self.events
                .push_back(AuthEvent::Registered(Registration::MetadataDocument));
        } else if let Some(endpoint) = registration_endpoint {
            let params = RegistrationParams {
                client_name: &self.config.client_name,
                redirect_uri: &self.config.redirect_uri,
                auth_method: method,
                scope: self.scope.as_deref(),
            };
            self.outgoing = Some(registration_request(&endpoint, &params));
            self.phase = Phase::Register { method };
            return;
        } else {
            return self.fail(AuthError::RegistrationUnavailable);
        }
        self.authorize(now);
    }

    /// RFC 9207: a redirect's `iss` must be the metadata's issuer, and must be there when the
    /// server says it sends one (mix-up attack defence).
    fn check_issuer(&self, iss: Option<String>) -> Result<(), AuthError> {
        let Some(meta) = &self.server_metadata else {
            return Ok(());
        };
        let required = meta
            .extra
            .get("authorization_response_iss_parameter_supported")
            .and_then(serde_json::Value::as_bool)
            == Some(true);
        match iss {
            Some(got) if got != meta.issuer => Err(AuthError::IssuerMismatch {
                expected: meta.issuer.clone(),
                got: Some(got),
            }),
            None if required => Err(AuthError::IssuerMismatch {
                expected: meta.issuer.clone(),
                got: None,
            }),
            _ => Ok(()),
        }
    }

    /// The scope to ask for: the challenge's, else the configured one, else the PRM's.
    fn wanted_scope(&self) -> Option<String> {
        let prm_scopes = self
            .resource_metadata
            .as_ref()
            .and_then(|m| m.scopes_supported.as_deref());
        let configured = self
            .config
            .scope
            .as_deref()
            .filter(|s| !s.trim().is_empty());
        match (&self.challenge_scope, configured) {
            (None, Some(scope)) => Some(scope.to_owned()),
            _ => select_scope(self.challenge_scope.as_deref(), prm_scopes),
        }
    }

    /// The token request for `grant` at the authorization server, signed with a fresh
    /// `private_key_jwt` assertion when the client authenticates that way.
    fn send_token_request(&mut self, grant: &Grant<'_>) {
        let (Some(meta), Some(client)) = (&self.server_metadata, &self.client) else {
            return self.fail(AuthError::UnexpectedInput("token request without metadata"));
        };
        let endpoint = meta.token_endpoint.clone().unwrap_or_default();
        let assertion = if client.auth_method == ClientAuthMethod::PrivateKeyJwt {
            let Some(key) = &self.config.signing_key else {
                return self.fail(AuthError::BadKey("private_key_jwt without a key".into()));
            };
            // RFC 7523: the audience is the authorization server (its issuer identifier).
            let audience = if meta.issuer.is_empty() {
                endpoint.as_str()
            } else {
                meta.issuer.as_str()
            };
            let mut jti = self.entropy[32..].to_vec();
            jti.extend_from_slice(&self.assertions.to_be_bytes());
            self.assertions += 1;
            Some(client_assertion(
                key,
                &client.client_id,
                audience,
                self.unix_time,
                &jti,
            ))
        } else {
            None
        };
        self.outgoing = Some(token_request_with_assertion(
            &endpoint,
            grant,
            client,
            self.resource.as_deref(),
            assertion.as_ref(),
        ));
    }

    /// SEP-990 step 1: the ID token for an ID-JAG at the IdP, for this authorization server
    /// and resource.
    fn start_token_exchange(&mut self) {
        let (Some(cross), Some(meta)) = (&self.config.cross_app, &self.server_metadata) else {
            return self.fail(AuthError::UnexpectedInput(
                "cross-app access without metadata",
            ));
        };
        let idp = ClientCredentials {
            client_id: cross.idp_client_id.clone(),
            client_secret: cross.idp_client_secret.clone(),
            auth_method: if cross.idp_client_secret.is_some() {
                ClientAuthMethod::ClientSecretBasic
            } else {
                ClientAuthMethod::None
            },
        };
        let grant = Grant::TokenExchange {
            subject_token: &cross.id_token,
            subject_token_type: TOKEN_TYPE_ID_TOKEN,
            requested_token_type: TOKEN_TYPE_ID_JAG,
            audience: &meta.issuer,
            scope: self.scope.as_deref(),
        };
        let resource = self
            .resource
            .clone()
            .unwrap_or_else(|| self.config.server_url.clone());
        self.outgoing = Some(token_request(
            &cross.idp_token_endpoint,
            &grant,
            &idp,
            Some(&resource),
        ));
        self.phase = Phase::IdpExchange;
    }

    /// SEP-990 step 2: the ID-JAG as an RFC 7523 jwt-bearer grant at the authorization server.
    fn present_grant(&mut self, grant: &Secret) {
        let scope = self.scope.clone();
        self.send_token_request(&Grant::JwtBearer {
            assertion: grant,
            scope: scope.as_deref(),
        });
        self.phase = Phase::Exchange;
    }

    fn start_client_credentials(&mut self) {
        let (Some(meta), Some(client)) = (&self.server_metadata, &self.client) else {
            return self.fail(AuthError::RegistrationUnavailable);
        };
        let _ = (meta, client);
        let scope = self.scope.clone();
        let grant = Grant::ClientCredentials {
            scope: scope.as_deref(),
        };
        self.send_token_request(&grant);
        self.phase = Phase::Exchange;
    }

    fn authorize(&mut self, _now: Instant) {
        if self.config.client_credentials_grant {
            return self.start_client_credentials();
        }
        if self.config.cross_app.is_some() {
            return self.start_token_exchange();
        }
        if self.authorizations >= self.config.max_authorizations {
            return self.fail(AuthError::RetryLimit(self.authorizations));
        }
        self.authorizations += 1;
        let (Some(meta), Some(client)) = (&self.server_metadata, &self.client) else {
            return self.fail(AuthError::RegistrationUnavailable);
        };
        let scope = with_offline_access(self.wanted_scope(), meta);
        let mut verifier = [0u8; 32];
        verifier.copy_from_slice(&self.entropy[..32]);
        let pkce = Pkce::from_random(&verifier);
        let state = base64url(&self.entropy[32..]);
        let resource = self
            .resource
            .clone()
            .unwrap_or_else(|| self.config.server_url.clone());
        let url = authorization_url(
            meta.authorization_endpoint.as_deref().unwrap_or_default(),
            &AuthorizationParams {
                client_id: &client.client_id,
                redirect_uri: &self.config.redirect_uri,
                pkce: &pkce,
                state: &state,
                scope: scope.as_deref(),
                resource: &resource,
            },
        );
        self.scope = scope;
        self.phase = Phase::AwaitRedirect { pkce, state };
        self.events.push_back(AuthEvent::Authorize { url });
    }

    fn start_refresh(&mut self, refresh: &Secret) {
        let (Some(meta), Some(client)) = (&self.server_metadata, &self.client) else {
            return self.fail(AuthError::UnexpectedInput("refresh without metadata"));
        };
        let _ = (meta, client);
        self.send_token_request(&Grant::RefreshToken(refresh));
        self.phase = Phase::Refresh;
        // Kept for the new token: a server need not rotate it.
        self.pending_refresh = Some(refresh.clone());
    }

    fn on_token(&mut self, now: Instant, response: TokenResponse) {
        self.unreadable_challenge = None;
        let old_refresh = self.pending_refresh.take();
        self.token = Some(Token {
            access: response.access_token,
            refresh: response.refresh_token.or(old_refresh),
            expires_at: response
                .expires_in
                .and_then(|s| now.checked_add(Duration::from_secs(s))),
            scope: response.scope.or_else(|| self.scope.clone()),
        });
        self.phase = Phase::Ready;
        self.events.push_back(AuthEvent::Authorized);
    }
}

//! The connector's OAuth 2.1 authorization server: metadata (RFC 8414, RFC 9728), dynamic client
//! registration (RFC 7591), the authorization code grant with PKCE S256 only, access tokens bound
//! to the connector (RFC 8707), rotating refresh tokens and revocation (RFC 7009). A consent
//! makes a connection: an API key of the account, unusable except through this connection's
//! tokens, whose spend cap is the limit the person chose. A token therefore spends exactly as a
//! key does, and its tasks are the connection's.

use crate::{Caller, Console, Service, ServiceError};
use domain::keys::hash_secret;
use domain::oauth::{self, CheckedRegistration, ClientRegistration, OAuthError, TokenRequest};
use domain::Usd;
use serde::{Deserialize, Serialize};
use storage::{token_kind, AgentGrant, NewToken, OAuthClient, Redemption};

/// How long a refresh token may be exchanged.
pub const REFRESH_TOKEN_SECS: i64 = 30 * 86_400;
/// How long an authorization code may be redeemed.
pub const CODE_SECS: i64 = 300;
/// The spend limit the consent page proposes, USD.
pub const DEFAULT_CONNECTION_CAP: &str = "10";

/// Why an OAuth request was refused, with its HTTP status; or a failure of the service.
#[derive(Debug, thiserror::Error)]
pub enum OAuthFailure {
    /// The OAuth error to answer, with its status (400, or 401 for client authentication).
    #[error("{0}")]
    Refused(OAuthError, u16),
    /// The service failed (the database is away).
    #[error(transparent)]
    Service(#[from] ServiceError),
}

impl From<storage::StorageError> for OAuthFailure {
    fn from(e: storage::StorageError) -> Self {
        OAuthFailure::Service(e.into())
    }
}

fn refused(code: &str, description: impl Into<String>) -> OAuthFailure {
    OAuthFailure::Refused(OAuthError::new(code, description), 400)
}

/// Authorization server metadata (RFC 8414).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuthorizationServerMetadata {
    /// The issuer: the service's base URL.
    pub issuer: String,
    /// Where a person consents.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: String,
    /// Where clients register.
    pub registration_endpoint: String,
    /// Where tokens are revoked.
    pub revocation_endpoint: String,
    /// `code`.
    pub response_types_supported: Vec<String>,
    /// `authorization_code`, `refresh_token`.
    pub grant_types_supported: Vec<String>,
    /// `S256` only.
    pub code_challenge_methods_supported: Vec<String>,
    /// `none`, `client_secret_post`, `client_secret_basic`.
    pub token_endpoint_auth_methods_supported: Vec<String>,
    /// The same, for the revocation endpoint.
    pub revocation_endpoint_auth_methods_supported: Vec<String>,
    /// `mcp`.
    pub scopes_supported: Vec<String>,
    /// True: the redirect carries `iss` (RFC 9207).
    pub authorization_response_iss_parameter_supported: bool,
}

/// Protected resource metadata of the connector (RFC 9728).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProtectedResourceMetadata {
    /// The connector's URL, which tokens are bound to.
    pub resource: String,
    /// This service, its own authorization server.
    pub authorization_servers: Vec<String>,
    /// `mcp`.
    pub scopes_supported: Vec<String>,
    /// `header`.
    pub bearer_methods_supported: Vec<String>,
    /// A name for people.
    pub resource_name: String,
}

/// A registered client (RFC 7591 §3.2.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RegisteredClient {
    /// The client's id.
    pub client_id: String,
    /// A confidential client's secret (shown once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Registration time, Unix seconds.
    pub client_id_issued_at: i64,
    /// 0: the secret does not expire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<i64>,
    /// Its redirect URIs.
    pub redirect_uris: Vec<String>,
    /// Its name.
    pub client_name: String,
    /// How it authenticates at the token endpoint.
    pub token_endpoint_auth_method: String,
    /// `authorization_code`, `refresh_token`.
    pub grant_types: Vec<String>,
    /// `code`.
    pub response_types: Vec<String>,
    /// `mcp`.
    pub scope: String,
}

/// A token answer (RFC 6749 §5.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenResponse {
    /// The access token, for `Authorization: Bearer` at the connector.
    pub access_token: String,
    /// `Bearer`.
    pub token_type: String,
    /// Seconds it works.
    pub expires_in: i64,
    /// Exchanged once for new tokens at the token endpoint.
    pub refresh_token: String,
    /// `mcp`.
    pub scope: String,
}

/// The parameters of an authorization request (RFC 6749 §4.1.1, RFC 7636, RFC 8707).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizationParams {
    /// `code`.
    #[serde(default)]
    pub response_type: String,
    /// The client.
    #[serde(default)]
    pub client_id: String,
    /// Where to send the answer; must equal one the client registered.
    #[serde(default)]
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    #[serde(default)]
    pub code_challenge: String,
    /// `S256`.
    #[serde(default)]
    pub code_challenge_method: String,
    /// Returned as given.
    #[serde(default)]
    pub state: Option<String>,
    /// `mcp`.
    #[serde(default)]
    pub scope: Option<String>,
    /// The connector's URL.
    #[serde(default)]
    pub resource: Option<String>,
}

/// A checked authorization request, for the consent page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorizationRequest {
    /// The parameters as given.
    pub params: AuthorizationParams,
    /// The client's name.
    pub client_name: String,
}

/// Why an authorization request cannot be shown for consent.
#[derive(Debug)]
pub enum AuthorizeRefusal {
    /// The client or its redirect URI is unknown: shown to the person, never redirected.
    Show(String),
    /// Anything else: sent back to the client's redirect URI.
    Redirect(String),
    /// The service failed.
    Service(ServiceError),
}

/// A connected agent as the console lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectedAgent {
    /// The connection's key id (what disconnecting names).
    pub key_id: String,
    /// The client's name.
    pub client_name: String,
    /// When it was connected, Unix milliseconds.
    pub connected_at: i64,
    /// Last use.
    pub last_used_at: Option<i64>,
    /// Its spend cap, spend and holds.
    pub limits: domain::KeyLimits,
    /// When it was disconnected.
    pub disconnected_at: Option<i64>,
}

/// The authorization server's use-cases.
#[derive(Clone, Copy)]
pub struct AuthorizationServer<'a> {
    service: &'a Service,
}

impl Service {
    /// The connector's authorization server.
    pub fn authorization(&self) -> AuthorizationServer<'_> {
        AuthorizationServer { service: self }
    }
}

fn random_token(prefix: &str) -> String {
    let bytes: [u8; 32] = rand::random();
    format!("{prefix}_{}", hex::encode(bytes))
}

impl AuthorizationServer<'_> {
    fn resource(&self) -> String {
        self.service.urls().connector()
    }

    /// Authorization server metadata.
    pub fn metadata(&self) -> AuthorizationServerMetadata {
        let urls = self.service.urls();
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let auth_methods = strings(&["none", "client_secret_post", "client_secret_basic"]);
        AuthorizationServerMetadata {
            issuer: urls.base().to_string(),
            authorization_endpoint: urls.oauth("/console/authorize"),
            token_endpoint: urls.oauth("/oauth/token"),
            registration_endpoint: urls.oauth("/oauth/register"),
            revocation_endpoint: urls.oauth("/oauth/revoke"),
            response_types_supported: strings(&["code"]),
            grant_types_supported: strings(&["authorization_code", "refresh_token"]),
            code_challenge_methods_supported: strings(&["S256"]),
            token_endpoint_auth_methods_supported: auth_methods.clone(),
            revocation_endpoint_auth_methods_supported: auth_methods,
            scopes_supported: strings(&[oauth::SCOPE]),
            authorization_response_iss_parameter_supported: true,
        }
    }

    /// The connector's protected resource metadata.
    pub fn resource_metadata(&self) -> ProtectedResourceMetadata {
        ProtectedResourceMetadata {
            resource: self.resource(),
            authorization_servers: vec![self.service.urls().base().to_string()],
            scopes_supported: vec![oauth::SCOPE.to_string()],
            bearer_methods_supported: vec!["header".into()],
            resource_name: "Media API connector".into(),
        }
    }

    /// Where a 401 of the connector points clients for discovery (RFC 9728 §5.1).
    pub fn resource_metadata_url(&self) -> String {
        self.service.urls().oauth("/.well-known/oauth-protected-resource/api/mcp")
    }

    /// Registers a client (RFC 7591).
    pub async fn register(&self, registration: ClientRegistration) -> Result<RegisteredClient, OAuthFailure> {
        let CheckedRegistration { redirect_uris, name, auth_method } =
            registration.check().map_err(|e| OAuthFailure::Refused(e, 400))?;
        let secret = (auth_method != "none").then(|| random_token("mcs"));
        let now = storage::now_millis();
        let client = OAuthClient {
            id: random_token("mcl"),
            secret_hash: secret.as_deref().map(hash_secret),
            name: name.clone(),
            redirect_uris: serde_json::to_string(&redirect_uris).map_err(|e| ServiceError::Internal(e.to_string()))?,
            auth_method: auth_method.clone(),
            created_at: now,
        };
        let stored = client.clone();
        self.service.db(move |db| db.register_oauth_client(&stored)).await?;
        Ok(RegisteredClient {
            client_id: client.id,
            client_secret_expires_at: secret.is_some().then_some(0),
            client_secret: secret,
            client_id_issued_at: now / 1000,
            redirect_uris,
            client_name: name,
            token_endpoint_auth_method: auth_method,
            grant_types: vec!["authorization_code".into(), "refresh_token".into()],
            response_types: vec!["code".into()],
            scope: oauth::SCOPE.into(),
        })
    }

    async fn client(&self, id: &str) -> Result<Option<OAuthClient>, ServiceError> {
        let id = id.to_string();
        self.service.db(move |db| db.oauth_client(&id)).await
    }

    /// Checks an authorization request before the consent page shows it.
    pub async fn check_authorization(
        &self,
        params: AuthorizationParams,
    ) -> Result<AuthorizationRequest, AuthorizeRefusal> {
        let client = self.client(&params.client_id).await.map_err(AuthorizeRefusal::Service)?;
        let Some(client) = client else {
            return Err(AuthorizeRefusal::Show("This application is not registered here (unknown client_id).".into()));
        };
        let registered: Vec<String> = serde_json::from_str(&client.redirect_uris).unwrap_or_default();
        if !registered.contains(&params.redirect_uri) {
            return Err(AuthorizeRefusal::Show(
                "The redirect_uri is not one this application registered (it must match exactly).".into(),
            ));
        }
        let back =
            |code: &str, description: &str| AuthorizeRefusal::Redirect(self.error_redirect(&params, code, description));
        if params.response_type != "code" {
            return Err(back("unsupported_response_type", "only response_type=code is supported"));
        }
        if params.code_challenge_method != "S256" || !oauth::is_s256_challenge(&params.code_challenge) {
            return Err(back("invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256"));
        }
        if let Some(scope) = &params.scope {
            if let Err(e) = oauth::check_scope(scope) {
                return Err(back(&e.error, &e.error_description));
            }
        }
        if params.resource.as_deref().is_some_and(|r| r.trim_end_matches('/') != self.resource()) {
            return Err(back("invalid_target", "this server issues tokens only for its connector, /api/mcp"));
        }
        Ok(AuthorizationRequest { params, client_name: client.name })
    }

    fn error_redirect(&self, params: &AuthorizationParams, code: &str, description: &str) -> String {
        let mut url = url::Url::parse(&params.redirect_uri)
            .unwrap_or_else(|_| url::Url::parse("about:blank").expect("a valid URL"));
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("error", code).append_pair("error_description", description);
            if let Some(state) = &params.state {
                query.append_pair("state", state);
            }
            query.append_pair("iss", self.service.urls().base());
        }
        url.to_string()
    }

    /// The person of `account_id` allowed the request with `spend_cap`: the connection is made
    /// and the client is sent back with a code. Returns the redirect URL.
    pub async fn allow(
        &self,
        account_id: &str,
        request: &AuthorizationRequest,
        spend_cap: Usd,
    ) -> Result<String, ServiceError> {
        let params = &request.params;
        let code = random_token("mac");
        let (account_id, code_hash) = (account_id.to_string(), hash_secret(&code));
        let label = format!("agent: {}", request.client_name);
        let (client_id, redirect_uri, challenge) =
            (params.client_id.clone(), params.redirect_uri.clone(), params.code_challenge.clone());
        let resource = self.resource();
        let unusable = hash_secret(&random_token("unused"));
        self.service
            .db(move |db| {
                db.grant_agent(&AgentGrant {
                    account_id: &account_id,
                    client_id: &client_id,
                    scope: oauth::SCOPE,
                    spend_cap: Some(spend_cap),
                    label: &label,
                    unusable_secret_hash: &unusable,
                    code_hash: &code_hash,
                    redirect_uri: &redirect_uri,
                    code_challenge: &challenge,
                    resource: &resource,
                    code_expires_at: storage::now_millis() + CODE_SECS * 1000,
                })
            })
            .await?;
        let mut url = url::Url::parse(&params.redirect_uri).map_err(|e| ServiceError::Internal(e.to_string()))?;
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("code", &code);
            if let Some(state) = &params.state {
                query.append_pair("state", state);
            }
            query.append_pair("iss", self.service.urls().base());
        }
        Ok(url.to_string())
    }

    /// The person denied the request: the client is told so.
    pub fn deny(&self, request: &AuthorizationRequest) -> String {
        self.error_redirect(&request.params, "access_denied", "the person did not allow the connection")
    }

    /// Authenticates the client of a token or revocation request: its id from the form or from
    /// HTTP Basic (`basic`), and its secret when it registered one.
    async fn authenticate_client(
        &self,
        form_id: Option<&str>,
        form_secret: Option<&str>,
        basic: Option<(String, String)>,
    ) -> Result<OAuthClient, OAuthFailure> {
        let unauthorized = |why: &str| OAuthFailure::Refused(OAuthError::new("invalid_client", why), 401);
        let (id, secret) = match basic {
            Some((id, secret)) => (id, Some(secret)),
            None => (form_id.unwrap_or_default().to_string(), form_secret.map(str::to_string)),
        };
        let client = self.client(&id).await?.ok_or_else(|| unauthorized("unknown client"))?;
        match (&client.secret_hash, secret) {
            (None, _) => Ok(client),
            (Some(expected), Some(given)) if *expected == hash_secret(&given) => Ok(client),
            _ => Err(unauthorized("the client's secret is missing or wrong")),
        }
    }

    /// The token endpoint: an authorization code or a refresh token exchanged for new tokens.
    pub async fn token(
        &self,
        request: TokenRequest,
        basic: Option<(String, String)>,
    ) -> Result<TokenResponse, OAuthFailure> {
        let client =
            self.authenticate_client(request.client_id.as_deref(), request.client_secret.as_deref(), basic).await?;
        if let Some(resource) = &request.resource {
            if resource.trim_end_matches('/') != self.resource() {
                return Err(refused("invalid_target", "this server issues tokens only for its connector, /api/mcp"));
            }
        }
        if let Some(scope) = &request.scope {
            oauth::check_scope(scope).map_err(|e| OAuthFailure::Refused(e, 400))?;
        }
        let (access, refresh) = (random_token("mat"), random_token("mrt"));
        let now = storage::now_millis();
        let tokens = [
            (hash_secret(&access), token_kind::ACCESS, now + self.access_secs() * 1000),
            (hash_secret(&refresh), token_kind::REFRESH, now + REFRESH_TOKEN_SECS * 1000),
        ];
        let redeemed = match request.grant_type.as_str() {
            "authorization_code" => {
                let code = request.code.clone().ok_or_else(|| refused("invalid_request", "code is missing"))?;
                let verifier = request
                    .code_verifier
                    .clone()
                    .ok_or_else(|| refused("invalid_request", "code_verifier is missing"))?;
                let redirect_uri = request.redirect_uri.clone().unwrap_or_default();
                let client_id = client.id.clone();
                self.service
                    .db(move |db| {
                        let new = tokens.each_ref().map(|(hash, kind, expires_at)| NewToken {
                            hash,
                            kind,
                            expires_at: *expires_at,
                        });
                        db.redeem_code(
                            &hash_secret(&code),
                            |record| {
                                record.client_id == client_id
                                    && record.redirect_uri == redirect_uri
                                    && oauth::pkce_s256_matches(&verifier, &record.code_challenge)
                            },
                            &new,
                        )
                        .map(Redemption::discard)
                    })
                    .await?
            }
            "refresh_token" => {
                let presented = request
                    .refresh_token
                    .clone()
                    .ok_or_else(|| refused("invalid_request", "refresh_token is missing"))?;
                let client_id = client.id.clone();
                self.service
                    .db(move |db| {
                        let new = tokens.each_ref().map(|(hash, kind, expires_at)| NewToken {
                            hash,
                            kind,
                            expires_at: *expires_at,
                        });
                        db.rotate_refresh_token(&hash_secret(&presented), &client_id, &new).map(Redemption::discard)
                    })
                    .await?
            }
            other => {
                return Err(refused(
                    "unsupported_grant_type",
                    format!("grant_type {other:?}: use authorization_code or refresh_token"),
                ))
            }
        };
        match redeemed {
            Redemption::Redeemed(()) => Ok(TokenResponse {
                access_token: access,
                token_type: "Bearer".into(),
                expires_in: self.access_secs(),
                refresh_token: refresh,
                scope: oauth::SCOPE.into(),
            }),
            Redemption::Reused => Err(refused(
                "invalid_grant",
                "this code or refresh token was already used; every token of the connection is revoked",
            )),
            Redemption::Invalid => Err(refused(
                "invalid_grant",
                "the code or refresh token is unknown, expired, revoked, or not for this client, redirect_uri or \
                 code_verifier",
            )),
        }
    }

    fn access_secs(&self) -> i64 {
        self.service.config().oauth_access_token_secs
    }

    /// Revokes a token (RFC 7009): always answered with success for an authenticated client.
    pub async fn revoke(
        &self,
        token: &str,
        form_id: Option<&str>,
        form_secret: Option<&str>,
        basic: Option<(String, String)>,
    ) -> Result<(), OAuthFailure> {
        let client = self.authenticate_client(form_id, form_secret, basic).await?;
        let (hash, client_id) = (hash_secret(token), client.id);
        self.service.db(move |db| db.revoke_oauth_token(&hash, &client_id)).await?;
        Ok(())
    }

    /// The caller behind a connector access token.
    pub async fn caller_of_token(&self, token: &str) -> Result<Option<Caller>, ServiceError> {
        let (hash, resource) = (hash_secret(token), self.resource());
        let found = self.service.db(move |db| db.access_token_key(&hash, &resource)).await?;
        Ok(found.map(Caller::from))
    }
}

/// Whether `token` has the form of a connector access token (so it is looked up as one).
pub fn is_access_token(token: &str) -> bool {
    token.starts_with("mat_")
}

impl Console<'_> {
    /// The agents connected to the account, newest first.
    pub async fn connected_agents(&self, account_id: &str) -> Result<Vec<ConnectedAgent>, ServiceError> {
        let account_id = account_id.to_string();
        let connections = self.service.db(move |db| db.agent_connections(&account_id)).await?;
        Ok(connections
            .into_iter()
            .map(|c| ConnectedAgent {
                key_id: c.key.id.clone(),
                client_name: c.client_name,
                connected_at: c.connected_at,
                last_used_at: c.key.last_used_at,
                limits: c.key.limits(),
                disconnected_at: c.key.revoked_at,
            })
            .collect())
    }

    /// Disconnects one of the account's agents at once: its tokens stop working, and its
    /// unfinished jobs are cancelled, unbilled, as a revoked key's are.
    pub async fn disconnect_agent(&self, account_id: &str, key_id: &str) -> Result<(), ServiceError> {
        let key = self.owned_key(account_id, key_id).await?;
        let id = key.id.clone();
        if !self.service.db(move |db| db.is_agent_connection(&id)).await? {
            return Err(ServiceError::NotFound(format!("no connected agent {key_id:?} in this account")));
        }
        if key.revoked_at.is_none() {
            self.service.operator().revoke_key(key_id).await?;
        }
        Ok(())
    }
}

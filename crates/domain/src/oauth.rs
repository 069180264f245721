//! The rules of the connector's OAuth 2.1 authorization server that need no I/O: PKCE S256,
//! redirect URIs, client registration and token requests as clients send them, and the errors
//! of RFC 6749 §5.2.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The one scope: use the connector's tools, spending within the connection's limit.
pub const SCOPE: &str = "mcp";
/// Longest client name kept.
pub const CLIENT_NAME_MAX_CHARS: usize = 100;
/// Most redirect URIs one client may register.
pub const MAX_REDIRECT_URIS: usize = 10;
/// Longest accepted redirect URI.
pub const MAX_REDIRECT_URI_CHARS: usize = 2_000;

/// A client's registration request (RFC 7591 §2). Fields this server does not use (`client_uri`,
/// `logo_uri`, `contacts`, ...) are accepted and ignored, as the RFC asks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClientRegistration {
    /// Where the authorization server may send the client back, matched exactly: 1 to 10 URIs.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 10))]
    pub redirect_uris: Vec<String>,
    /// Shown on the consent page.
    #[serde(default)]
    pub client_name: Option<String>,
    /// `none` (a public client, the default), `client_secret_post` or `client_secret_basic`.
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    /// `authorization_code` and `refresh_token` only.
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    /// `code` only.
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
    /// `mcp` (the only scope).
    #[serde(default)]
    pub scope: Option<String>,
}

/// A registration that passed [`ClientRegistration::check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedRegistration {
    /// The redirect URIs.
    pub redirect_uris: Vec<String>,
    /// The client's name (its first redirect URI's host when it gave none).
    pub name: String,
    /// The token endpoint's authentication method.
    pub auth_method: String,
}

impl ClientRegistration {
    /// Checks the request; the error is RFC 7591's (`invalid_redirect_uri` or
    /// `invalid_client_metadata`) with a description.
    pub fn check(&self) -> Result<CheckedRegistration, OAuthError> {
        let metadata = |description: String| OAuthError::new("invalid_client_metadata", description);
        if self.redirect_uris.is_empty() || self.redirect_uris.len() > MAX_REDIRECT_URIS {
            return Err(OAuthError::new(
                "invalid_redirect_uri",
                format!("redirect_uris: give 1 to {MAX_REDIRECT_URIS}"),
            ));
        }
        for uri in &self.redirect_uris {
            check_redirect_uri(uri).map_err(|e| OAuthError::new("invalid_redirect_uri", format!("{uri}: {e}")))?;
        }
        let auth_method = self.token_endpoint_auth_method.clone().unwrap_or_else(|| "none".into());
        if !["none", "client_secret_post", "client_secret_basic"].contains(&auth_method.as_str()) {
            return Err(metadata(format!("token_endpoint_auth_method {auth_method:?} is not supported")));
        }
        if let Some(grants) = &self.grant_types {
            if let Some(other) = grants.iter().find(|g| !["authorization_code", "refresh_token"].contains(&g.as_str()))
            {
                return Err(metadata(format!("grant type {other:?} is not supported")));
            }
        }
        if let Some(types) = &self.response_types {
            if types.iter().any(|t| t != "code") {
                return Err(metadata("only the response type code is supported".into()));
            }
        }
        if let Some(scope) = &self.scope {
            check_scope(scope).map_err(|e| metadata(e.error_description))?;
        }
        let name = match self.client_name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
            Some(name) => name.chars().filter(|c| !c.is_control()).take(CLIENT_NAME_MAX_CHARS).collect(),
            None => url::Url::parse(&self.redirect_uris[0])
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
                .unwrap_or_else(|| "an MCP client".into()),
        };
        Ok(CheckedRegistration { redirect_uris: self.redirect_uris.clone(), name, auth_method })
    }
}

/// A redirect URI a client may register: absolute, without a fragment, and `https`, or `http` on
/// a loopback host (native apps, RFC 8252 §7.3), or a private-use scheme such as
/// `com.example.app:/callback` (RFC 8252 §7.1).
pub fn check_redirect_uri(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_REDIRECT_URI_CHARS {
        return Err(format!("longer than {MAX_REDIRECT_URI_CHARS} characters"));
    }
    let parsed = url::Url::parse(uri).map_err(|_| "not an absolute URI".to_string())?;
    if parsed.fragment().is_some() {
        return Err("a redirect URI may not have a fragment".into());
    }
    match parsed.scheme() {
        "https" => Ok(()),
        "http" => match parsed.host() {
            Some(url::Host::Domain(host)) if host.eq_ignore_ascii_case("localhost") => Ok(()),
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(()),
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => Ok(()),
            _ => Err("http is allowed only on a loopback host; use https".into()),
        },
        "javascript" | "data" | "file" | "vbscript" | "about" | "blob" => Err("this scheme is not allowed".into()),
        scheme if scheme.contains('.') => Ok(()),
        _ => Err("use https, http on a loopback host, or a private-use scheme (com.example.app:/cb)".into()),
    }
}

/// Checks a requested scope: empty or `mcp`.
pub fn check_scope(scope: &str) -> Result<(), OAuthError> {
    match scope.split_whitespace().find(|s| *s != SCOPE) {
        None => Ok(()),
        Some(other) => {
            Err(OAuthError::new("invalid_scope", format!("unknown scope {other:?}; the only scope is {SCOPE}")))
        }
    }
}

/// Whether `verifier` is a PKCE code verifier (RFC 7636 §4.1: 43 to 128 unreserved characters)
/// whose S256 transform is `challenge`.
pub fn pkce_s256_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    well_formed && s256_challenge(verifier) == challenge
}

/// The S256 challenge of a PKCE `verifier`: base64url (unpadded) of its SHA-256.
pub fn s256_challenge(verifier: &str) -> String {
    base64url(&Sha256::digest(verifier.as_bytes()))
}

/// Whether `challenge` can be an S256 challenge: 43 base64url characters (32 bytes).
pub fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43 && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        let sextets = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63];
        for sextet in sextets.iter().take(chunk.len() + 1) {
            out.push(char::from(ALPHABET[*sextet as usize]));
        }
    }
    out
}

/// A token request (RFC 6749 §4.1.3 and §6, with RFC 7636's verifier and RFC 8707's resource),
/// form-encoded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct TokenRequest {
    /// `authorization_code` or `refresh_token`.
    #[serde(default)]
    pub grant_type: String,
    /// The authorization code.
    #[serde(default)]
    pub code: Option<String>,
    /// The redirect URI the code was issued for.
    #[serde(default)]
    pub redirect_uri: Option<String>,
    /// The PKCE verifier.
    #[serde(default)]
    pub code_verifier: Option<String>,
    /// The client.
    #[serde(default)]
    pub client_id: Option<String>,
    /// A confidential client's secret (`client_secret_post`).
    #[serde(default)]
    pub client_secret: Option<String>,
    /// The refresh token.
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// The resource the tokens are for.
    #[serde(default)]
    pub resource: Option<String>,
    /// The scope asked for.
    #[serde(default)]
    pub scope: Option<String>,
}

/// An OAuth error (RFC 6749 §5.2): `error` is the code, `error_description` says why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[error("{error}: {error_description}")]
pub struct OAuthError {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`,
    /// `unsupported_grant_type`, `invalid_scope`, `invalid_target`, `invalid_redirect_uri` or
    /// `invalid_client_metadata`.
    pub error: String,
    /// What was wrong.
    pub error_description: String,
}

impl OAuthError {
    /// An error with `code` and `description`.
    pub fn new(code: &str, description: impl Into<String>) -> OAuthError {
        OAuthError { error: code.into(), error_description: description.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_matches_the_rfc_example() {
        // RFC 7636 Appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert!(pkce_s256_matches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(is_s256_challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!pkce_s256_matches(
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXj",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!pkce_s256_matches("short", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!is_s256_challenge("plain-verifier"));
    }

    #[test]
    fn redirect_uris_are_https_loopback_or_private_use() {
        for good in [
            "https://app.example.com/cb",
            "http://127.0.0.1:33418/callback",
            "http://localhost/cb",
            "com.example.app:/oauth",
        ] {
            assert!(check_redirect_uri(good).is_ok(), "{good}");
        }
        for bad in
            ["http://example.com/cb", "https://app.example.com/cb#x", "javascript:alert(1)", "/relative", "custom:/x"]
        {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn registrations_are_checked() {
        let good = ClientRegistration { redirect_uris: vec!["http://127.0.0.1:9/cb".into()], ..Default::default() };
        let checked = good.check().unwrap();
        assert_eq!((checked.name.as_str(), checked.auth_method.as_str()), ("127.0.0.1", "none"));
        let implicit = ClientRegistration { response_types: Some(vec!["token".into()]), ..good.clone() };
        assert_eq!(implicit.check().unwrap_err().error, "invalid_client_metadata");
        let none = ClientRegistration::default();
        assert_eq!(none.check().unwrap_err().error, "invalid_redirect_uri");
        assert_eq!(check_scope("mcp").map_err(|e| e.error), Ok(()));
        assert!(check_scope("mcp admin").is_err());
    }
}

-- The connector's OAuth 2.1 authorization server. Secrets, codes and tokens are stored as
-- SHA-256 hashes only. Times are Unix milliseconds.

-- Clients registered dynamically (RFC 7591).
CREATE TABLE oauth_clients (
    id TEXT PRIMARY KEY,
    secret_hash TEXT,
    name TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    auth_method TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- A connected agent: the API key made for it at consent (its spend cap is the connection's
-- limit; revoking the key disconnects the agent), and the client it was made for.
CREATE TABLE oauth_connections (
    key_id TEXT PRIMARY KEY REFERENCES api_keys(id),
    client_id TEXT NOT NULL REFERENCES oauth_clients(id),
    account_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX oauth_connections_by_account ON oauth_connections (account_id);

-- Authorization codes: single use, short-lived, bound to the client, redirect URI, PKCE
-- challenge and resource.
CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY,
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    client_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);

-- Access and refresh tokens of a connection. A refresh token is used once (rotation); using one
-- again revokes every token of its connection.
CREATE TABLE oauth_tokens (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    client_id TEXT NOT NULL,
    resource TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT,
    revoked_at BIGINT
);
CREATE INDEX oauth_tokens_by_key ON oauth_tokens (key_id);

//! The connector's OAuth 2.1 authorization server: registered clients, connected agents (each an
//! API key of its own, whose spend cap is the connection's limit), authorization codes and
//! tokens. Only hashes of codes, tokens and client secrets are stored; codes and refresh tokens
//! are used once.

use crate::key_cache::AuthenticatedKey;
use crate::keys::{insert_key, key_row, ApiKey, NewKeySecret};
use crate::schema::{api_keys, oauth_clients, oauth_codes, oauth_connections, oauth_tokens};
use crate::{now_millis, Database, StorageError, StorageResult};
use diesel::prelude::*;
use domain::Usd;

/// Kinds of token.
pub mod token_kind {
    /// Presented to the connector.
    pub const ACCESS: &str = "access";
    /// Exchanged once for new tokens.
    pub const REFRESH: &str = "refresh";
}

/// A registered client.
#[derive(Clone, Debug, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_clients)]
pub struct OAuthClient {
    /// `client_id`.
    pub id: String,
    /// Hash of its secret, for confidential clients.
    pub secret_hash: Option<String>,
    /// `client_name`, shown on the consent page.
    pub name: String,
    /// Its redirect URIs as a JSON array, matched exactly.
    pub redirect_uris: String,
    /// `token_endpoint_auth_method`: `none`, `client_secret_post` or `client_secret_basic`.
    pub auth_method: String,
    /// Registration time.
    pub created_at: i64,
}

/// What a consent grants: the connection's key and the code handed to the client.
#[derive(Clone, Debug)]
pub struct AgentGrant<'a> {
    /// The consenting account.
    pub account_id: &'a str,
    /// The client.
    pub client_id: &'a str,
    /// The scope granted.
    pub scope: &'a str,
    /// The connection's spend cap.
    pub spend_cap: Option<Usd>,
    /// The connection key's label.
    pub label: &'a str,
    /// Hash of an unguessable secret nobody is given (the key is used through tokens only).
    pub unusable_secret_hash: &'a str,
    /// Hash of the authorization code.
    pub code_hash: &'a str,
    /// The redirect URI the code is bound to.
    pub redirect_uri: &'a str,
    /// The PKCE S256 challenge.
    pub code_challenge: &'a str,
    /// The resource the tokens will be for.
    pub resource: &'a str,
    /// When the code expires.
    pub code_expires_at: i64,
}

/// A redeemed authorization code.
#[derive(Clone, Debug, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = oauth_codes)]
pub struct CodeRecord {
    /// Its hash.
    pub code_hash: String,
    /// The connection's key.
    pub key_id: String,
    /// The client it was issued to.
    pub client_id: String,
    /// The redirect URI it was issued for.
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// The resource its tokens are for.
    pub resource: String,
    /// Issue time.
    pub created_at: i64,
    /// Expiry.
    pub expires_at: i64,
    /// When it was redeemed.
    pub used_at: Option<i64>,
}

/// What a code (or a refresh token) came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redemption<T> {
    /// Good, and now used.
    Redeemed(T),
    /// Used before: every token of its connection was revoked (a stolen code or token in play).
    Reused,
    /// Unknown or expired.
    Invalid,
}

impl<T> Redemption<T> {
    /// The outcome without what was redeemed.
    pub fn discard(self) -> Redemption<()> {
        match self {
            Redemption::Redeemed(_) => Redemption::Redeemed(()),
            Redemption::Reused => Redemption::Reused,
            Redemption::Invalid => Redemption::Invalid,
        }
    }
}

/// A token to store.
#[derive(Clone, Copy, Debug)]
pub struct NewToken<'a> {
    /// Its hash.
    pub hash: &'a str,
    /// See [`token_kind`].
    pub kind: &'a str,
    /// Expiry.
    pub expires_at: i64,
}

/// A refresh token's grant, as a rotation finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefreshGrant {
    /// The connection's key.
    pub key_id: String,
    /// The resource its tokens are for.
    pub resource: String,
}

/// A connected agent as its account sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentConnection {
    /// The connection's key (its cap, spend and revocation are the connection's).
    pub key: ApiKey,
    /// The client's name.
    pub client_name: String,
    /// When it was connected.
    pub connected_at: i64,
}

impl Database {
    /// Stores a newly registered client.
    pub fn register_oauth_client(&self, client: &OAuthClient) -> StorageResult<()> {
        self.read(|conn| diesel::insert_into(oauth_clients::table).values(client).execute(conn))?;
        Ok(())
    }

    /// The registered client `id`.
    pub fn oauth_client(&self, id: &str) -> StorageResult<Option<OAuthClient>> {
        self.read(|conn| oauth_clients::table.find(id).select(OAuthClient::as_select()).first(conn).optional())
    }

    /// Records a consent in one transaction: the connection's key, the connection and its code.
    pub fn grant_agent(&self, grant: &AgentGrant<'_>) -> StorageResult<ApiKey> {
        let now = now_millis();
        self.transaction(|conn| {
            let secret = NewKeySecret { hash: grant.unusable_secret_hash, prefix: None, webhook_secret: None };
            let key = insert_key(conn, grant.account_id, &secret, Some(grant.label), grant.spend_cap)?;
            diesel::insert_into(oauth_connections::table)
                .values((
                    oauth_connections::key_id.eq(&key.id),
                    oauth_connections::client_id.eq(grant.client_id),
                    oauth_connections::account_id.eq(grant.account_id),
                    oauth_connections::scope.eq(grant.scope),
                    oauth_connections::created_at.eq(now),
                ))
                .execute(conn)?;
            diesel::insert_into(oauth_codes::table)
                .values((
                    oauth_codes::code_hash.eq(grant.code_hash),
                    oauth_codes::key_id.eq(&key.id),
                    oauth_codes::client_id.eq(grant.client_id),
                    oauth_codes::redirect_uri.eq(grant.redirect_uri),
                    oauth_codes::code_challenge.eq(grant.code_challenge),
                    oauth_codes::resource.eq(grant.resource),
                    oauth_codes::created_at.eq(now),
                    oauth_codes::expires_at.eq(grant.code_expires_at),
                ))
                .execute(conn)?;
            Ok::<_, StorageError>(key)
        })
    }

    /// Redeems the code `code_hash` once, storing `tokens` for its connection in the same
    /// transaction. `check` decides, from the code, whether this request may redeem it (client,
    /// redirect URI, PKCE verifier, resource): a refused check leaves the code unused.
    pub fn redeem_code(
        &self,
        code_hash: &str,
        check: impl FnOnce(&CodeRecord) -> bool,
        tokens: &[NewToken<'_>],
    ) -> StorageResult<Redemption<CodeRecord>> {
        let now = now_millis();
        self.transaction(|conn| {
            let code: Option<CodeRecord> =
                crate::dialect::sql_query(conn, "SELECT * FROM oauth_codes WHERE code_hash = ?{FOR_UPDATE}")
                    .bind::<diesel::sql_types::Text, _>(code_hash)
                    .get_result::<CodeRow>(conn)
                    .optional()?
                    .map(CodeRow::into_record);
            let Some(code) = code else { return Ok(Redemption::Invalid) };
            if code.used_at.is_some() {
                revoke_connection_tokens(conn, &code.key_id, now)?;
                return Ok(Redemption::Reused);
            }
            if code.expires_at <= now || !check(&code) || key_revoked(conn, &code.key_id)? {
                return Ok(Redemption::Invalid);
            }
            diesel::update(oauth_codes::table.find(code_hash)).set(oauth_codes::used_at.eq(now)).execute(conn)?;
            insert_tokens(conn, &code.key_id, &code.client_id, &code.resource, tokens, now)?;
            Ok::<_, StorageError>(Redemption::Redeemed(code))
        })
    }

    /// Exchanges the refresh token `refresh_hash` of `client_id` once for `tokens`. A refresh
    /// token used again revokes every token of its connection.
    pub fn rotate_refresh_token(
        &self,
        refresh_hash: &str,
        client_id: &str,
        tokens: &[NewToken<'_>],
    ) -> StorageResult<Redemption<RefreshGrant>> {
        let now = now_millis();
        self.transaction(|conn| {
            let found: Option<RefreshRow> = oauth_tokens::table
                .find(refresh_hash)
                .filter(oauth_tokens::kind.eq(token_kind::REFRESH))
                .select((
                    oauth_tokens::key_id,
                    oauth_tokens::client_id,
                    oauth_tokens::resource,
                    oauth_tokens::expires_at,
                    oauth_tokens::used_at,
                    oauth_tokens::revoked_at,
                ))
                .first(conn)
                .optional()?;
            let Some((key_id, owner, resource, expires_at, used_at, revoked_at)) = found else {
                return Ok(Redemption::Invalid);
            };
            if owner != client_id {
                return Ok(Redemption::Invalid);
            }
            if used_at.is_some() {
                revoke_connection_tokens(conn, &key_id, now)?;
                return Ok(Redemption::Reused);
            }
            if revoked_at.is_some() || expires_at <= now || key_revoked(conn, &key_id)? {
                return Ok(Redemption::Invalid);
            }
            diesel::update(oauth_tokens::table.find(refresh_hash)).set(oauth_tokens::used_at.eq(now)).execute(conn)?;
            insert_tokens(conn, &key_id, client_id, &resource, tokens, now)?;
            Ok::<_, StorageError>(Redemption::Redeemed(RefreshGrant { key_id, resource }))
        })
    }

    /// The live key behind the access token `access_hash` for `resource`: not expired, not
    /// revoked, its connection not disconnected.
    pub fn access_token_key(&self, access_hash: &str, resource: &str) -> StorageResult<Option<AuthenticatedKey>> {
        let now = now_millis();
        let key_id: Option<String> = self.read(|conn| {
            oauth_tokens::table
                .find(access_hash)
                .filter(oauth_tokens::kind.eq(token_kind::ACCESS))
                .filter(oauth_tokens::resource.eq(resource))
                .filter(oauth_tokens::expires_at.gt(now))
                .filter(oauth_tokens::revoked_at.is_null())
                .select(oauth_tokens::key_id)
                .first(conn)
                .optional()
        })?;
        let Some(key_id) = key_id else { return Ok(None) };
        let key = self.key(&key_id)?;
        if key.revoked_at.is_some() {
            return Ok(None);
        }
        self.record_use(&key.id, key.last_used_at)?;
        Ok(Some(AuthenticatedKey {
            key_id: key.id,
            account_id: key.account_id,
            submit_rate_per_minute: key.submit_rate_per_minute,
            read_rate_per_minute: key.read_rate_per_minute,
        }))
    }

    /// Revokes the token `token_hash` of `client_id` (RFC 7009); revoking a refresh token
    /// revokes its connection's access tokens too. Unknown tokens are not an error.
    pub fn revoke_oauth_token(&self, token_hash: &str, client_id: &str) -> StorageResult<()> {
        let now = now_millis();
        self.transaction(|conn| {
            let found: Option<(String, String)> = oauth_tokens::table
                .find(token_hash)
                .filter(oauth_tokens::client_id.eq(client_id))
                .select((oauth_tokens::kind, oauth_tokens::key_id))
                .first(conn)
                .optional()?;
            match found {
                Some((kind, key_id)) if kind == token_kind::REFRESH => revoke_connection_tokens(conn, &key_id, now)?,
                Some(_) => {
                    diesel::update(oauth_tokens::table.find(token_hash))
                        .set(oauth_tokens::revoked_at.eq(now))
                        .execute(conn)?;
                }
                None => {}
            }
            Ok::<_, StorageError>(())
        })
    }

    /// The agents connected to account `account_id`, newest first.
    pub fn agent_connections(&self, account_id: &str) -> StorageResult<Vec<AgentConnection>> {
        self.read(|conn| {
            let rows: Vec<(String, String, i64)> = oauth_connections::table
                .inner_join(oauth_clients::table.on(oauth_clients::id.eq(oauth_connections::client_id)))
                .filter(oauth_connections::account_id.eq(account_id))
                .order(oauth_connections::created_at.desc())
                .select((oauth_connections::key_id, oauth_clients::name, oauth_connections::created_at))
                .load(conn)?;
            let mut connections = Vec::with_capacity(rows.len());
            for (key_id, client_name, connected_at) in rows {
                let key = key_row(conn, &key_id)?.ok_or(diesel::result::Error::NotFound)?;
                connections.push(AgentConnection { key, client_name, connected_at });
            }
            Ok(connections)
        })
    }

    /// Whether key `key_id` is an agent's connection.
    pub fn is_agent_connection(&self, key_id: &str) -> StorageResult<bool> {
        let count: i64 = self.read(|conn| {
            oauth_connections::table.filter(oauth_connections::key_id.eq(key_id)).count().get_result(conn)
        })?;
        Ok(count > 0)
    }
}

/// A refresh token's key, client, resource, expiry, use and revocation.
type RefreshRow = (String, String, String, i64, Option<i64>, Option<i64>);

/// `oauth_codes` read by name (the locked read is raw SQL).
#[derive(QueryableByName)]
#[diesel(table_name = oauth_codes)]
struct CodeRow {
    code_hash: String,
    key_id: String,
    client_id: String,
    redirect_uri: String,
    code_challenge: String,
    resource: String,
    created_at: i64,
    expires_at: i64,
    used_at: Option<i64>,
}

impl CodeRow {
    fn into_record(self) -> CodeRecord {
        CodeRecord {
            code_hash: self.code_hash,
            key_id: self.key_id,
            client_id: self.client_id,
            redirect_uri: self.redirect_uri,
            code_challenge: self.code_challenge,
            resource: self.resource,
            created_at: self.created_at,
            expires_at: self.expires_at,
            used_at: self.used_at,
        }
    }
}

fn key_revoked(conn: &mut crate::connection::AnyConnection, key_id: &str) -> QueryResult<bool> {
    let revoked: Option<i64> = api_keys::table.find(key_id).select(api_keys::revoked_at).first(conn)?;
    Ok(revoked.is_some())
}

fn insert_tokens(
    conn: &mut crate::connection::AnyConnection,
    key_id: &str,
    client_id: &str,
    resource: &str,
    tokens: &[NewToken<'_>],
    now: i64,
) -> QueryResult<()> {
    for token in tokens {
        diesel::insert_into(oauth_tokens::table)
            .values((
                oauth_tokens::token_hash.eq(token.hash),
                oauth_tokens::kind.eq(token.kind),
                oauth_tokens::key_id.eq(key_id),
                oauth_tokens::client_id.eq(client_id),
                oauth_tokens::resource.eq(resource),
                oauth_tokens::created_at.eq(now),
                oauth_tokens::expires_at.eq(token.expires_at),
            ))
            .execute(conn)?;
    }
    Ok(())
}

fn revoke_connection_tokens(conn: &mut crate::connection::AnyConnection, key_id: &str, now: i64) -> QueryResult<()> {
    diesel::update(
        oauth_tokens::table.filter(oauth_tokens::key_id.eq(key_id)).filter(oauth_tokens::revoked_at.is_null()),
    )
    .set(oauth_tokens::revoked_at.eq(now))
    .execute(conn)?;
    Ok(())
}

//! API keys: only the hash of each secret is stored.

use crate::connection::read;
use crate::schema::api_keys;
use crate::{new_id, now_millis, Database, StorageError, StorageResult};
use diesel::prelude::*;
use domain::{KeyLimits, Usd};

/// An API key as stored (without its secret, which is never kept).
#[derive(Clone, Debug, PartialEq, Eq, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = api_keys)]
pub struct ApiKey {
    /// Key id (`key_...`), safe to show and log.
    pub id: String,
    /// Owning account.
    pub account_id: String,
    /// SHA-256 of the secret.
    pub secret_hash: String,
    /// Operator's label.
    pub label: Option<String>,
    /// Cumulative spend cap, ten-thousandths of a dollar.
    pub spend_cap_units: Option<i64>,
    /// Billed spend so far.
    pub spent_units: i64,
    /// Prices of unsettled jobs.
    pub held_units: i64,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Revocation time; a revoked key authenticates nothing.
    pub revoked_at: Option<i64>,
}

impl ApiKey {
    /// The key's limits as the billing rules see them.
    pub fn limits(&self) -> KeyLimits {
        KeyLimits {
            cap: self.spend_cap_units.map(Usd::from_units),
            spent: Usd::from_units(self.spent_units),
            held: Usd::from_units(self.held_units),
        }
    }
}

/// The identity behind a valid secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthenticatedKey {
    /// Key id.
    pub key_id: String,
    /// Account id.
    pub account_id: String,
}

impl Database {
    /// Stores a new key for `account_name` under `secret_hash`.
    pub fn create_key(
        &self,
        account_name: &str,
        secret_hash: &str,
        label: Option<&str>,
        spend_cap: Option<Usd>,
    ) -> StorageResult<ApiKey> {
        let account = self.account_by_name(account_name)?;
        let key = ApiKey {
            id: new_id("key"),
            account_id: account.id,
            secret_hash: secret_hash.to_string(),
            label: label.map(str::to_string),
            spend_cap_units: spend_cap.map(Usd::units),
            spent_units: 0,
            held_units: 0,
            created_at: now_millis(),
            revoked_at: None,
        };
        read!(self, |conn| diesel::insert_into(api_keys::table)
            .values((
                api_keys::id.eq(&key.id),
                api_keys::account_id.eq(&key.account_id),
                api_keys::secret_hash.eq(&key.secret_hash),
                api_keys::label.eq(&key.label),
                api_keys::spend_cap_units.eq(key.spend_cap_units),
                api_keys::created_at.eq(key.created_at),
            ))
            .execute(conn))?;
        Ok(key)
    }

    /// Finds the live (not revoked) key whose secret hashes to `secret_hash`.
    pub fn authenticate(&self, secret_hash: &str) -> StorageResult<Option<AuthenticatedKey>> {
        let found: Option<(String, String)> = read!(self, |conn| api_keys::table
            .filter(api_keys::secret_hash.eq(secret_hash))
            .filter(api_keys::revoked_at.is_null())
            .select((api_keys::id, api_keys::account_id))
            .first(conn)
            .optional())?;
        Ok(found.map(|(key_id, account_id)| AuthenticatedKey { key_id, account_id }))
    }

    /// Looks a key up by id.
    pub fn key(&self, key_id: &str) -> StorageResult<ApiKey> {
        read!(self, |conn| api_keys::table.find(key_id).select(ApiKey::as_select()).first(conn).optional())?
            .ok_or_else(|| StorageError::NotFound(format!("key {key_id:?}")))
    }

    /// Revokes a key; revoking twice is harmless.
    pub fn revoke_key(&self, key_id: &str) -> StorageResult<ApiKey> {
        read!(self, |conn| diesel::update(api_keys::table.find(key_id).filter(api_keys::revoked_at.is_null()))
            .set(api_keys::revoked_at.eq(now_millis()))
            .execute(conn))?;
        self.key(key_id)
    }

    /// Sets or removes a key's spend cap. Lowering it below what is spent and held refuses new
    /// jobs but never touches jobs already accepted.
    pub fn set_spend_cap(&self, key_id: &str, cap: Option<Usd>) -> StorageResult<ApiKey> {
        let updated = read!(self, |conn| diesel::update(api_keys::table.find(key_id))
            .set(api_keys::spend_cap_units.eq(cap.map(Usd::units)))
            .execute(conn))?;
        if updated == 0 {
            return Err(StorageError::NotFound(format!("key {key_id:?}")));
        }
        self.key(key_id)
    }

    /// The keys of an account, oldest first.
    pub fn list_keys(&self, account_name: &str) -> StorageResult<Vec<ApiKey>> {
        let account = self.account_by_name(account_name)?;
        Ok(read!(self, |conn| api_keys::table
            .filter(api_keys::account_id.eq(&account.id))
            .order(api_keys::created_at.asc())
            .select(ApiKey::as_select())
            .load(conn))?)
    }
}

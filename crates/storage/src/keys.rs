//! API keys: only the hash of each secret is stored.

use crate::connection::{on_native_connection, AnyConnection};
use crate::key_cache::{AuthenticatedKey, KEYS_CHANNEL};
use crate::schema::api_keys;
use crate::{dialect, new_id, now_millis, webhooks, Database, StorageError, StorageResult};
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
    /// The secret's first characters, safe to show so a user can tell keys apart (keys made
    /// before prefixes were kept have none).
    pub prefix: Option<String>,
    /// Last successful authentication, recorded at most once a minute.
    pub last_used_at: Option<i64>,
    /// Spending requests per minute this key may make; `None`: the deployment's default.
    pub submit_rate_per_minute: Option<i64>,
    /// Other requests per minute this key may make; `None`: the deployment's default.
    pub read_rate_per_minute: Option<i64>,
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
        let secret = NewKeySecret { hash: secret_hash, prefix: None, webhook_secret: None };
        self.create_account_key(&account.id, &secret, label, spend_cap)
    }

    /// Stores a new key for the account `account_id`.
    pub fn create_account_key(
        &self,
        account_id: &str,
        secret: &NewKeySecret<'_>,
        label: Option<&str>,
        spend_cap: Option<Usd>,
    ) -> StorageResult<ApiKey> {
        self.write(|conn| insert_key(conn, account_id, secret, label, spend_cap))
    }

    /// Gives a live key a new secret: the old one authenticates nothing from now on, while the
    /// key keeps its id, label, cap, spend and tasks. `None` if the key is revoked.
    pub fn replace_key_secret(&self, key_id: &str, secret: &NewKeySecret<'_>) -> StorageResult<Option<ApiKey>> {
        let updated = self.changing_key(|conn| {
            diesel::update(api_keys::table.find(key_id).filter(api_keys::revoked_at.is_null()))
                .set((api_keys::secret_hash.eq(secret.hash), api_keys::prefix.eq(secret.prefix)))
                .execute(conn)
                .map(|updated| (updated, updated > 0))
                .map_err(StorageError::from)
        })?;
        if updated == 0 {
            return Ok(None);
        }
        self.key(key_id).map(Some)
    }

    /// Finds the live (not revoked) key whose secret hashes to `secret_hash`, and records its use
    /// (at most once a minute, so a busy key does not write on every request). While
    /// [`Database::cache_verified_keys`] runs, a key verified in the last second is answered from
    /// memory.
    pub fn authenticate(&self, secret_hash: &str) -> StorageResult<Option<AuthenticatedKey>> {
        if let Some(key) = self.key_cache.get(secret_hash) {
            return Ok(Some(key));
        }
        let (generation, read_at) = (self.key_cache.generation(), std::time::Instant::now());
        let found = self.authenticate_uncached(secret_hash)?;
        if let (Some(key), Some(generation)) = (&found, generation) {
            self.key_cache.insert(secret_hash, key, generation, read_at);
        }
        Ok(found)
    }

    /// Whether this process answers verified keys from memory: while
    /// [`Database::cache_verified_keys`] runs (on PostgreSQL, while its listener is connected).
    pub fn caches_verified_keys(&self) -> bool {
        self.key_cache.is_active()
    }

    fn authenticate_uncached(&self, secret_hash: &str) -> StorageResult<Option<AuthenticatedKey>> {
        let Some(found) = self.read(|conn| live_key(conn, secret_hash))? else { return Ok(None) };
        self.record_use(&found.key.key_id, found.last_used_at)?;
        Ok(Some(found.key))
    }

    /// Records that key `key_id`, last used at `last_used_at`, was used now, when that is due
    /// (see [`use_record_due`]).
    pub(crate) fn record_use(&self, key_id: &str, last_used_at: Option<i64>) -> StorageResult<()> {
        let now = now_millis();
        if use_record_due(last_used_at, now) {
            self.read(|conn| {
                diesel::update(api_keys::table.find(key_id)).set(api_keys::last_used_at.eq(now)).execute(conn)
            })?;
        }
        Ok(())
    }

    /// Looks a key up by id, its balances with every settlement (see `balances`).
    pub fn key(&self, key_id: &str) -> StorageResult<ApiKey> {
        self.read(|conn| key_row(conn, key_id))?.ok_or_else(|| StorageError::NotFound(format!("key {key_id:?}")))
    }

    /// Sets or removes a key's spend cap. Lowering it below what is spent and held refuses new
    /// jobs but never touches jobs already accepted.
    pub fn set_spend_cap(&self, key_id: &str, cap: Option<Usd>) -> StorageResult<ApiKey> {
        let updated = self.read(|conn| {
            diesel::update(api_keys::table.find(key_id))
                .set(api_keys::spend_cap_units.eq(cap.map(Usd::units)))
                .execute(conn)
        })?;
        if updated == 0 {
            return Err(StorageError::NotFound(format!("key {key_id:?}")));
        }
        self.key(key_id)
    }

    /// The keys of the account named `account_name`, oldest first.
    pub fn list_keys(&self, account_name: &str) -> StorageResult<Vec<ApiKey>> {
        let account = self.account_by_name(account_name)?;
        self.account_keys(&account.id)
    }

    /// The keys of the account `account_id`, oldest first.
    pub fn account_keys(&self, account_id: &str) -> StorageResult<Vec<ApiKey>> {
        self.read(|conn| {
            dialect::sql_query(conn, &format!("{KEYS} WHERE account_id = ? ORDER BY created_at, id"))
                .bind::<diesel::sql_types::Text, _>(account_id)
                .load(conn)
        })
    }
}
/// The stored parts of a new secret.
#[derive(Clone, Copy, Debug)]
pub struct NewKeySecret<'a> {
    /// Its hash, by which it is looked up.
    pub hash: &'a str,
    /// Its first characters, for display.
    pub prefix: Option<&'a str>,
    /// The key's webhook signing secret (`whsec_...`), made with it.
    pub webhook_secret: Option<&'a str>,
}

/// Whether a key last recorded as used at `last_used_at` is to be recorded again at `now`: at
/// most once a minute, so a busy key does not write on every request.
pub(crate) fn use_record_due(last_used_at: Option<i64>, now: i64) -> bool {
    const USE_RECORD_INTERVAL_MS: i64 = 60_000;
    last_used_at.is_none_or(|at| now - at >= USE_RECORD_INTERVAL_MS)
}

/// A live key found by its secret's hash, and when its use was last recorded.
pub(crate) struct LiveKey {
    pub(crate) key: AuthenticatedKey,
    pub(crate) last_used_at: Option<i64>,
}

/// The columns of a key a request reads, as [`LiveKeyColumns`] holds them.
pub(crate) const LIVE_KEY_COLUMNS: (
    api_keys::id,
    api_keys::account_id,
    api_keys::last_used_at,
    api_keys::submit_rate_per_minute,
    api_keys::read_rate_per_minute,
) = (
    api_keys::id,
    api_keys::account_id,
    api_keys::last_used_at,
    api_keys::submit_rate_per_minute,
    api_keys::read_rate_per_minute,
);

/// The values of [`LIVE_KEY_COLUMNS`].
pub(crate) type LiveKeyColumns = (String, String, Option<i64>, Option<i64>, Option<i64>);

impl LiveKey {
    /// The key read as [`LIVE_KEY_COLUMNS`].
    pub(crate) fn from_columns(columns: LiveKeyColumns) -> LiveKey {
        let (key_id, account_id, last_used_at, submit_rate_per_minute, read_rate_per_minute) = columns;
        LiveKey {
            key: AuthenticatedKey { key_id, account_id, submit_rate_per_minute, read_rate_per_minute },
            last_used_at,
        }
    }
}

/// The live (not revoked) key whose secret hashes to `secret_hash`, read on `conn`.
pub(crate) fn live_key(conn: &mut AnyConnection, secret_hash: &str) -> QueryResult<Option<LiveKey>> {
    let found: Option<LiveKeyColumns> = on_native_connection!(conn, |conn| api_keys::table
        .filter(api_keys::secret_hash.eq(secret_hash))
        .filter(api_keys::revoked_at.is_null())
        .select(LIVE_KEY_COLUMNS)
        .first(conn)
        .optional())?;
    Ok(found.map(LiveKey::from_columns))
}

/// Inserts a new key of account `account_id` in the caller's transaction.
pub(crate) fn insert_key(
    conn: &mut crate::connection::AnyConnection,
    account_id: &str,
    secret: &NewKeySecret<'_>,
    label: Option<&str>,
    spend_cap: Option<Usd>,
) -> diesel::QueryResult<ApiKey> {
    let key = ApiKey {
        id: new_id("key"),
        account_id: account_id.to_string(),
        secret_hash: secret.hash.to_string(),
        label: label.map(str::to_string),
        spend_cap_units: spend_cap.map(Usd::units),
        spent_units: 0,
        held_units: 0,
        created_at: now_millis(),
        revoked_at: None,
        prefix: secret.prefix.map(str::to_string),
        last_used_at: None,
        submit_rate_per_minute: None,
        read_rate_per_minute: None,
    };
    diesel::insert_into(api_keys::table)
        .values((
            api_keys::id.eq(&key.id),
            api_keys::account_id.eq(&key.account_id),
            api_keys::secret_hash.eq(&key.secret_hash),
            api_keys::label.eq(&key.label),
            api_keys::spend_cap_units.eq(key.spend_cap_units),
            api_keys::created_at.eq(key.created_at),
            api_keys::prefix.eq(&key.prefix),
        ))
        .execute(conn)?;
    if let Some(webhook_secret) = secret.webhook_secret {
        webhooks::set_secret(conn, &key.id, webhook_secret, key.created_at)?;
    }
    Ok(key)
}

impl Database {
    /// Runs `f`, a change to how some key authenticates, in a write transaction that announces
    /// the change to every process's cache of verified keys as it commits (PostgreSQL's `NOTIFY`
    /// in the transaction, SQLite's shared count right after it); this process's cache forgets
    /// its keys before the call returns.
    /// `f` answers its value and whether it changed a key: nothing is announced when it did not
    /// (a key already revoked, or not found), since every announcement empties every cache.
    pub(crate) fn changing_key<T, E>(&self, f: impl FnOnce(&mut AnyConnection) -> Result<(T, bool), E>) -> Result<T, E>
    where
        E: From<diesel::result::Error> + From<StorageError>,
    {
        let (value, changed) = self.transaction(|conn| {
            let (value, changed) = f(conn)?;
            if changed {
                dialect::notify(conn, KEYS_CHANNEL)?;
            }
            Ok::<_, E>((value, changed))
        })?;
        if changed {
            match &self.key_epoch {
                Some(epoch) => epoch.advance(0),
                None if self.backend() == crate::Backend::Sqlite => tracing::warn!(
                    "a key changed, but the count of key changes beside the database could not be mapped: \
                     other processes' caches forget the old key only as their entries lapse, within a second"
                ),
                None => {}
            }
            self.key_cache.forget_all();
        }
        Ok(value)
    }
}

/// Keys with their balances and the changes their settlements recorded that no submit has added in
/// yet (the view `key_balances`; see `balances`).
const KEYS: &str = "SELECT * FROM key_balances";

/// Key `id` with its settlements' changes, or `None`.
pub(crate) fn key_row(conn: &mut AnyConnection, id: &str) -> QueryResult<Option<ApiKey>> {
    dialect::sql_query(conn, &format!("{KEYS} WHERE id = ?"))
        .bind::<diesel::sql_types::Text, _>(id)
        .get_result(conn)
        .optional()
}

/// Every key, with its settlements' changes.
pub(crate) fn all_keys(conn: &mut AnyConnection) -> QueryResult<Vec<ApiKey>> {
    dialect::sql_query(conn, KEYS).load(conn)
}

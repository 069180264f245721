//! The shared token buckets of the per-key rate limits, and the keys' own rates. Every api-server
//! takes tokens from the same row, on the database's clock, so the limit holds however many
//! processes serve a key and whatever their clocks say.

use crate::schema::api_keys;
use crate::{dialect, Database, StorageError, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use domain::rate_limit::{self, Grant, Rate, RateClass};

#[derive(QueryableByName)]
struct Bucket {
    #[diesel(sql_type = BigInt)]
    full_at: i64,
    #[diesel(sql_type = BigInt)]
    now: i64,
}

impl Database {
    /// Takes up to `wanted` tokens of `key_id`'s `class` bucket at `rate`, putting back `returned`
    /// tokens taken earlier and not used (see [`rate_limit::take`]).
    pub fn take_rate_tokens(
        &self,
        key_id: &str,
        class: RateClass,
        rate: Rate,
        wanted: u32,
        returned: u32,
    ) -> StorageResult<Grant> {
        self.transaction(|conn| {
            // Tokens are not money: a bucket's last writes lost in a crash only give a key back a
            // few tokens, and a commit need not wait for the disk.
            dialect::commit_without_flush(conn)?;
            // A missing bucket is a full one; concurrent first takes both insert, one wins.
            dialect::sql_query(
                conn,
                "INSERT INTO rate_buckets (key_id, class, next_free_at) VALUES (?, ?, 0) \
                 ON CONFLICT (key_id, class) DO NOTHING",
            )
            .bind::<Text, _>(key_id)
            .bind::<Text, _>(class.as_str())
            .execute(conn)?;
            let bucket: Bucket = dialect::sql_query(
                conn,
                "SELECT next_free_at AS full_at, {NOW} AS now FROM rate_buckets \
                 WHERE key_id = ? AND class = ?{FOR_UPDATE}",
            )
            .bind::<Text, _>(key_id)
            .bind::<Text, _>(class.as_str())
            .get_result(conn)?;
            let grant = rate_limit::take(bucket.full_at, bucket.now, rate, wanted, returned);
            if grant.full_at != bucket.full_at {
                dialect::sql_query(conn, "UPDATE rate_buckets SET next_free_at = ? WHERE key_id = ? AND class = ?")
                    .bind::<BigInt, _>(grant.full_at)
                    .bind::<Text, _>(key_id)
                    .bind::<Text, _>(class.as_str())
                    .execute(conn)?;
            }
            Ok::<_, StorageError>(grant)
        })
    }

    /// Sets a key's own request rates per minute (`None`: the deployment's default).
    pub fn set_key_rates(&self, key_id: &str, submits: Option<u32>, reads: Option<u32>) -> StorageResult<()> {
        let updated = self.changing_key(|conn| {
            diesel::update(api_keys::table.find(key_id))
                .set((
                    api_keys::submit_rate_per_minute.eq(submits.map(i64::from)),
                    api_keys::read_rate_per_minute.eq(reads.map(i64::from)),
                ))
                .execute(conn)
                .map(|updated| (updated, updated > 0))
                .map_err(StorageError::from)
        })?;
        if updated == 0 {
            return Err(StorageError::NotFound(format!("key {key_id:?}")));
        }
        Ok(())
    }
}

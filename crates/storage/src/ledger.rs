//! The append-only billing ledger, usage summaries, and the check that balances match it.

use crate::accounts::{all_accounts, Account};
use crate::connection::{on_native_connection, AnyConnection};
use crate::keys::{all_keys, ApiKey};
use crate::schema::ledger;
use crate::task_record::TaskRecord;
use crate::{Database, StorageError, StorageResult};
use diesel::prelude::*;
use domain::Usd;
use std::collections::BTreeMap;

/// One ledger row: a hold placed at submit, a capture on success, or a release of what was not
/// captured.
#[derive(Clone, Debug, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = ledger)]
pub struct LedgerEntry {
    /// Sequence number.
    pub id: i64,
    /// Task the money moved for.
    pub task_id: String,
    /// Key charged.
    pub key_id: String,
    /// Account charged.
    pub account_id: String,
    /// `hold`, `capture` or `release`.
    pub kind: String,
    /// Amount, ten-thousandths of a dollar.
    pub amount_units: i64,
    /// Part of the amount on the free allowance.
    pub allowance_units: i64,
    /// Time, Unix milliseconds.
    pub created_at: i64,
}

/// A key's and its account's billing state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Usage {
    /// The key.
    pub key: ApiKey,
    /// Its account.
    pub account: Account,
    /// The key's most recent captures, newest first.
    pub recent_charges: Vec<LedgerEntry>,
}

/// A stored balance that differs from the one recomputed from the ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerMismatch {
    /// `key ...` or `account ...`.
    pub owner: String,
    /// Which balance.
    pub balance: &'static str,
    /// Stored value, ten-thousandths of a dollar.
    pub stored: i64,
    /// Value recomputed from the ledger.
    pub recomputed: i64,
}

/// Money moved for a task, to be appended to the ledger.
pub(crate) struct Movement {
    task_id: String,
    key_id: String,
    account_id: String,
    kind: &'static str,
    amount: Usd,
    allowance: Usd,
}

impl Movement {
    /// `amount` (of which `allowance` on the free allowance) moved for `task` as `kind`: `hold`,
    /// `capture` or `release`.
    pub(crate) fn of(task: &TaskRecord, kind: &'static str, amount: Usd, allowance: Usd) -> Movement {
        Movement {
            task_id: task.id.clone(),
            key_id: task.key_id.clone(),
            account_id: task.account_id.clone(),
            kind,
            amount,
            allowance,
        }
    }
}

/// Appends `movements` to the ledger in one statement, in the caller's transaction. The unique
/// `(task_id, kind)` index makes a second hold, capture or release of one task impossible.
pub(crate) fn append_all(conn: &mut AnyConnection, movements: &[Movement], now: i64) -> QueryResult<usize> {
    if movements.is_empty() {
        return Ok(0);
    }
    let rows: Vec<_> = movements
        .iter()
        .map(|movement| {
            (
                ledger::task_id.eq(&movement.task_id),
                ledger::key_id.eq(&movement.key_id),
                ledger::account_id.eq(&movement.account_id),
                ledger::kind.eq(movement.kind),
                ledger::amount_units.eq(movement.amount.units()),
                ledger::allowance_units.eq(movement.allowance.units()),
                ledger::created_at.eq(now),
            )
        })
        .collect();
    // On the backend's own connection: diesel writes many rows in one statement there.
    on_native_connection!(conn, |native| diesel::insert_into(ledger::table).values(&rows).execute(native))
}

#[derive(Default)]
struct Sums {
    hold: i64,
    hold_allowance: i64,
    capture: i64,
    capture_allowance: i64,
    release: i64,
    release_allowance: i64,
}

impl Sums {
    fn add(&mut self, row: &LedgerSum) -> StorageResult<()> {
        let (amount, allowance) = match row.kind.as_str() {
            "hold" => (&mut self.hold, &mut self.hold_allowance),
            "capture" => (&mut self.capture, &mut self.capture_allowance),
            "release" => (&mut self.release, &mut self.release_allowance),
            other => return Err(StorageError::Corrupt(format!("ledger rows of unknown kind {other:?}"))),
        };
        *amount += row.amount;
        *allowance += row.allowance;
        Ok(())
    }
}

/// The ledger rows of one owner and kind, summed by the database.
#[derive(QueryableByName)]
struct LedgerSum {
    #[diesel(sql_type = diesel::sql_types::Text)]
    owner: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    kind: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    amount: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    allowance: i64,
}

impl Database {
    /// The billing state of `key_id` and its account, with its `recent` latest charges.
    pub fn usage(&self, key_id: &str, recent: i64) -> StorageResult<Usage> {
        let key = self.key(key_id)?;
        let account = self.account(&key.account_id)?;
        let recent_charges = self.read(|conn| {
            ledger::table
                .filter(ledger::key_id.eq(key_id))
                .filter(ledger::kind.eq("capture"))
                .order(ledger::id.desc())
                .limit(recent)
                .select(LedgerEntry::as_select())
                .load(conn)
        })?;
        Ok(Usage { key, account, recent_charges })
    }

    /// Every ledger row of an account, oldest first.
    pub fn account_ledger(&self, account_name: &str) -> StorageResult<Vec<LedgerEntry>> {
        let account = self.account_by_name(account_name)?;
        self.read(|conn| {
            ledger::table
                .filter(ledger::account_id.eq(&account.id))
                .order(ledger::id.asc())
                .select(LedgerEntry::as_select())
                .load(conn)
        })
    }

    /// Recomputes every key's and account's balances from the ledger and lists those that differ
    /// from the stored ones. Empty means the books balance.
    ///
    /// The sums are computed by the database, and everything is read in one snapshot (a
    /// read-only REPEATABLE READ transaction on PostgreSQL, a read transaction on SQLite), so it
    /// can run on a live system without seeing a half-finished settlement. A ledger row of an
    /// unknown kind is an error, never counted as something else.
    pub fn verify_ledger(&self) -> StorageResult<Vec<LedgerMismatch>> {
        const SUMS: &str = "SELECT {owner} AS owner, kind, CAST(COALESCE(SUM(amount_units), 0) AS BIGINT) AS amount, \
            CAST(COALESCE(SUM(allowance_units), 0) AS BIGINT) AS allowance FROM ledger GROUP BY {owner}, kind";
        let by_key_sql = SUMS.replace("{owner}", "key_id");
        let by_account_sql = SUMS.replace("{owner}", "account_id");
        let (key_sums, account_sums, keys, accounts) = self.snapshot(|conn| {
            Ok((
                diesel::sql_query(&by_key_sql).load::<LedgerSum>(conn)?,
                diesel::sql_query(&by_account_sql).load::<LedgerSum>(conn)?,
                all_keys(conn)?,
                all_accounts(conn)?,
            ))
        })?;
        let totals = |rows: Vec<LedgerSum>| -> StorageResult<BTreeMap<String, Sums>> {
            let mut totals: BTreeMap<String, Sums> = BTreeMap::new();
            for row in rows {
                totals.entry(row.owner.clone()).or_default().add(&row)?;
            }
            Ok(totals)
        };
        let (by_key, by_account) = (totals(key_sums)?, totals(account_sums)?);
        let mut mismatches = Vec::new();
        let mut check = |owner: String, balance: &'static str, stored: i64, recomputed: i64| {
            if stored != recomputed {
                mismatches.push(LedgerMismatch { owner, balance, stored, recomputed });
            }
        };
        let none = Sums::default();
        for key in &keys {
            let s = by_key.get(key.id.as_str()).unwrap_or(&none);
            check(format!("key {}", key.id), "spent", key.spent_units, s.capture);
            check(format!("key {}", key.id), "held", key.held_units, s.hold - s.capture - s.release);
        }
        for account in &accounts {
            let s = by_account.get(account.id.as_str()).unwrap_or(&none);
            let owner = format!("account {}", account.name);
            check(owner.clone(), "free_used", account.free_used_units, s.capture_allowance);
            check(
                owner.clone(),
                "free_held",
                account.free_held_units,
                s.hold_allowance - s.capture_allowance - s.release_allowance,
            );
            check(owner, "invoice", account.invoice_units, s.capture - s.capture_allowance);
        }
        Ok(mismatches)
    }
}

//! The money settlements move, kept beside the accounts' and keys' rows until a submit adds it
//! in. A settlement appends what it moved to `balance_changes` instead of updating those rows, so
//! it never waits for a submit that holds them, nor a submit for it; the next submit of the
//! account, which locks the rows anyway, adds the changes in and deletes them. Every reader of a
//! balance reads the views `account_balances` and `key_balances` (see `accounts` and `keys`),
//! which add the changes not yet added in, in one statement.
//!
//! Caps stay exact: a settlement only ever releases holds (and captures at most what it held), so
//! a change a submit has not yet seen can only leave more headroom than the submit counts.

use crate::connection::{on_native_connection, AnyConnection};
use crate::schema::{accounts, api_keys, balance_changes};
use diesel::prelude::*;
use std::collections::BTreeMap;

/// What settlements moved for one key, in ten-thousandths of a dollar.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Moved {
    /// Change of the account's allowance held.
    pub(crate) free_held: i64,
    /// Change of the account's allowance used.
    pub(crate) free_used: i64,
    /// Change of the account's invoice.
    pub(crate) invoice: i64,
    /// Change of the key's amount held.
    pub(crate) held: i64,
    /// Change of the key's amount spent.
    pub(crate) spent: i64,
}

impl Moved {
    fn add(&mut self, other: &Moved) {
        self.free_held += other.free_held;
        self.free_used += other.free_used;
        self.invoice += other.invoice;
        self.held += other.held;
        self.spent += other.spent;
    }
}

/// Records what settlements moved, one row per (account, key), in one statement.
pub(crate) fn append(conn: &mut AnyConnection, moved: &BTreeMap<(String, String), Moved>) -> QueryResult<usize> {
    let rows: Vec<_> = moved
        .iter()
        .filter(|(_, moved)| **moved != Moved::default())
        .map(|((account_id, key_id), moved)| {
            (
                balance_changes::account_id.eq(account_id),
                balance_changes::key_id.eq(key_id),
                balance_changes::free_held_units.eq(moved.free_held),
                balance_changes::free_used_units.eq(moved.free_used),
                balance_changes::invoice_units.eq(moved.invoice),
                balance_changes::held_units.eq(moved.held),
                balance_changes::spent_units.eq(moved.spent),
            )
        })
        .collect();
    if rows.is_empty() {
        return Ok(0);
    }
    on_native_connection!(conn, |native| diesel::insert_into(balance_changes::table).values(&rows).execute(native))
}

/// What adding an account's changes in moved, per key.
#[derive(Debug, Default)]
pub(crate) struct AddedIn {
    /// Each key's.
    pub(crate) keys: BTreeMap<String, Moved>,
}

impl AddedIn {
    /// The account's total: the sum over its keys.
    pub(crate) fn account(&self) -> Moved {
        self.keys.values().fold(Moved::default(), |mut total, moved| {
            total.add(moved);
            total
        })
    }
}

/// Adds every change recorded for account `account_id` to its row and its keys' rows, and deletes
/// the changes, in the caller's transaction. The caller holds the account's row locked (every
/// submit of the account does), so no two of these run at once for one account; a change whose
/// settlement commits meanwhile is not seen by the delete and waits for the next.
pub(crate) fn add_in(conn: &mut AnyConnection, account_id: &str) -> QueryResult<AddedIn> {
    let taken: Vec<(String, i64, i64, i64, i64, i64)> = on_native_connection!(conn, |native| diesel::delete(
        balance_changes::table.filter(balance_changes::account_id.eq(account_id))
    )
    .returning((
        balance_changes::key_id,
        balance_changes::free_held_units,
        balance_changes::free_used_units,
        balance_changes::invoice_units,
        balance_changes::held_units,
        balance_changes::spent_units,
    ))
    .get_results(native))?;
    let mut added = AddedIn::default();
    if taken.is_empty() {
        return Ok(added);
    }
    for (key_id, free_held, free_used, invoice, held, spent) in taken {
        added.keys.entry(key_id).or_default().add(&Moved { free_held, free_used, invoice, held, spent });
    }
    let total = added.account();
    on_native_connection!(conn, |native| diesel::update(accounts::table.find(account_id))
        .set((
            accounts::free_held_units.eq(accounts::free_held_units + total.free_held),
            accounts::free_used_units.eq(accounts::free_used_units + total.free_used),
            accounts::invoice_units.eq(accounts::invoice_units + total.invoice),
        ))
        .execute(native))?;
    // Keys beyond those the caller holds are taken here, in id order; no other transaction waits
    // for one of them while holding another, since every writer of more than one key of an account
    // holds the account first.
    for (key_id, moved) in &added.keys {
        let updated = on_native_connection!(conn, |native| diesel::update(api_keys::table.find(key_id))
            .set((
                api_keys::held_units.eq(api_keys::held_units + moved.held),
                api_keys::spent_units.eq(api_keys::spent_units + moved.spent),
            ))
            .execute(native))?;
        // Never dropped silently: the transaction rolls back and the change stays recorded.
        if updated != 1 {
            return Err(diesel::result::Error::NotFound);
        }
    }
    Ok(added)
}

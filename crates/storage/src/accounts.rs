//! Accounts: the holder of the free allowance, the card-on-file flag and the invoice balance.

use crate::connection::AnyConnection;
use crate::dialect;
use crate::schema::accounts;
use crate::{new_id, now_millis, Database, StorageError, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::Text;
use domain::{AccountLimits, Usd};

/// An account as stored.
#[derive(Clone, Debug, PartialEq, Eq, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = accounts)]
pub struct Account {
    /// Account id (`acct_...`).
    pub id: String,
    /// Unique name used by the operator CLI.
    pub name: String,
    /// Whether use beyond the free allowance may be invoiced.
    pub card_on_file: bool,
    /// Free allowance granted, in ten-thousandths of a dollar.
    pub free_allowance_units: i64,
    /// Free allowance captured by succeeded jobs.
    pub free_used_units: i64,
    /// Free allowance held by unsettled jobs.
    pub free_held_units: i64,
    /// Amount charged beyond the allowance, owed on the invoice.
    pub invoice_units: i64,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
}

impl Account {
    /// The account's limits as the billing rules see them.
    pub fn limits(&self) -> AccountLimits {
        AccountLimits {
            free_allowance: Usd::from_units(self.free_allowance_units),
            free_used: Usd::from_units(self.free_used_units),
            free_held: Usd::from_units(self.free_held_units),
            card_on_file: self.card_on_file,
        }
    }
}

impl Database {
    /// Creates an account with `free_allowance`.
    pub fn create_account(&self, name: &str, card_on_file: bool, free_allowance: Usd) -> StorageResult<Account> {
        let account = Account {
            id: new_id("acct"),
            name: name.to_string(),
            card_on_file,
            free_allowance_units: free_allowance.units(),
            free_used_units: 0,
            free_held_units: 0,
            invoice_units: 0,
            created_at: now_millis(),
        };
        self.transaction(|conn| {
            let taken: i64 = accounts::table.filter(accounts::name.eq(name)).count().get_result(conn)?;
            if taken > 0 {
                return Err(StorageError::AlreadyExists(format!("account {name:?}")));
            }
            diesel::insert_into(accounts::table)
                .values((
                    accounts::id.eq(&account.id),
                    accounts::name.eq(&account.name),
                    accounts::card_on_file.eq(account.card_on_file),
                    accounts::free_allowance_units.eq(account.free_allowance_units),
                    accounts::created_at.eq(account.created_at),
                ))
                .execute(conn)?;
            Ok(())
        })?;
        Ok(account)
    }

    /// Looks an account up by name, its balances with every settlement (see `balances`).
    pub fn account_by_name(&self, name: &str) -> StorageResult<Account> {
        self.read(|conn| account_where(conn, "name", name))?
            .ok_or_else(|| StorageError::NotFound(format!("account {name:?}")))
    }

    /// Looks an account up by id, its balances with every settlement.
    pub fn account(&self, id: &str) -> StorageResult<Account> {
        self.read(|conn| account_where(conn, "id", id))?
            .ok_or_else(|| StorageError::NotFound(format!("account {id:?}")))
    }

    /// Sets or clears the card-on-file flag.
    pub fn set_card_on_file(&self, name: &str, on: bool) -> StorageResult<Account> {
        let updated = self.read(|conn| {
            diesel::update(accounts::table.filter(accounts::name.eq(name)))
                .set(accounts::card_on_file.eq(on))
                .execute(conn)
        })?;
        if updated == 0 {
            return Err(StorageError::NotFound(format!("account {name:?}")));
        }
        self.account_by_name(name)
    }

    /// Number of accounts; zero on a fresh deployment.
    pub fn count_accounts(&self) -> StorageResult<i64> {
        self.read(|conn| accounts::table.count().get_result(conn))
    }
}

/// The account whose `column` is `value`, its balances with the changes its settlements recorded
/// and no submit has added in yet (the view `account_balances`; see `balances`), or `None`.
fn account_where(conn: &mut AnyConnection, column: &str, value: &str) -> QueryResult<Option<Account>> {
    dialect::sql_query(conn, &format!("SELECT * FROM account_balances WHERE {column} = ?"))
        .bind::<Text, _>(value)
        .get_result(conn)
        .optional()
}

/// Every account, with its settlements' changes (as `account_where`).
pub(crate) fn all_accounts(conn: &mut AnyConnection) -> QueryResult<Vec<Account>> {
    dialect::sql_query(conn, "SELECT * FROM account_balances").load(conn)
}

//! Links mailed to a console login's address (to verify it, to reset the password) and the free
//! allowance a verified address earns: once per identity, and a bounded number per address range
//! in a window. Link tokens are stored only as hashes, and each works once.

use crate::dialect;
use crate::schema::{accounts, allowance_grants, console_links, console_logins, console_sessions};
use crate::{now_millis, Database, StorageResult};
use diesel::prelude::*;
use domain::Usd;

/// What a mailed link is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkPurpose {
    /// Proves the login's address is its owner's.
    Verify,
    /// Lets the address's owner choose a new password.
    Reset,
}

impl LinkPurpose {
    fn as_str(self) -> &'static str {
        match self {
            LinkPurpose::Verify => "verify",
            LinkPurpose::Reset => "reset",
        }
    }
}

/// The free allowance a login earns when its address is verified, and the rules that bound it.
#[derive(Clone, Debug)]
pub struct AllowanceGrant {
    /// The address's identity: one allowance each, ever.
    pub identity: String,
    /// The client's address range when it verified.
    pub address_range: String,
    /// The allowance.
    pub allowance: Usd,
    /// Allowances one range may earn per window.
    pub per_range: u32,
    /// The window, milliseconds.
    pub window_ms: i64,
}

/// What verifying a login did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verified {
    /// Verified now, and the account got the free allowance.
    Granted,
    /// Verified now; the identity had its allowance already (another account).
    IdentityHadAllowance,
    /// Verified now; the address range has earned its allowances for this window.
    RangeExhausted,
    /// Verified now; the account already has an allowance (an operator's account).
    AccountHasAllowance,
    /// It was verified before; nothing changed.
    AlreadyVerified,
}

impl Database {
    /// Stores a link of `purpose` for `account_id`, valid for `ttl_ms`.
    pub fn create_link(
        &self,
        purpose: LinkPurpose,
        account_id: &str,
        token_hash: &str,
        ttl_ms: i64,
    ) -> StorageResult<()> {
        let now = now_millis();
        self.write(|conn| {
            diesel::insert_into(console_links::table)
                .values((
                    console_links::token_hash.eq(token_hash),
                    console_links::purpose.eq(purpose.as_str()),
                    console_links::account_id.eq(account_id),
                    console_links::created_at.eq(now),
                    console_links::expires_at.eq(now.saturating_add(ttl_ms)),
                ))
                .execute(conn)
        })?;
        Ok(())
    }

    /// The account of a live link of `purpose`, leaving it unused.
    pub fn link_account(&self, purpose: LinkPurpose, token_hash: &str) -> StorageResult<Option<String>> {
        self.read(|conn| {
            console_links::table
                .find(token_hash)
                .filter(console_links::purpose.eq(purpose.as_str()))
                .filter(console_links::used_at.is_null())
                .filter(console_links::expires_at.gt(now_millis()))
                .select(console_links::account_id)
                .first(conn)
                .optional()
        })
    }

    /// Uses a live link of `purpose`: marks it used and returns its account; `None` when it is
    /// unknown, used or expired.
    pub fn use_link(&self, purpose: LinkPurpose, token_hash: &str) -> StorageResult<Option<String>> {
        let now = now_millis();
        self.write(|conn| {
            let live = console_links::table
                .find(token_hash)
                .filter(console_links::purpose.eq(purpose.as_str()))
                .filter(console_links::used_at.is_null())
                .filter(console_links::expires_at.gt(now));
            let Some(account_id) = live.select(console_links::account_id).first::<String>(conn).optional()? else {
                return Ok(None);
            };
            let used = diesel::update(live).set(console_links::used_at.eq(now)).execute(conn)?;
            Ok((used == 1).then_some(account_id))
        })
    }

    /// Marks the login of `account_id` verified and gives its account the free allowance, unless
    /// the identity had one, the address range has had its share, or the account has one.
    pub fn verify_login(&self, account_id: &str, grant: &AllowanceGrant) -> StorageResult<Verified> {
        let now = now_millis();
        self.write(|conn| {
            // Grants are counted and made one at a time, so a range's bound holds under races.
            dialect::lock_name(conn, "allowance-grants")?;
            let verified =
                diesel::update(console_logins::table.find(account_id).filter(console_logins::verified_at.is_null()))
                    .set(console_logins::verified_at.eq(now))
                    .execute(conn)?;
            if verified == 0 {
                return Ok(Verified::AlreadyVerified);
            }
            let allowance: i64 = accounts::table.find(account_id).select(accounts::free_allowance_units).first(conn)?;
            if allowance > 0 {
                return Ok(Verified::AccountHasAllowance);
            }
            let had: i64 = allowance_grants::table.find(&grant.identity).count().get_result(conn)?;
            if had > 0 {
                return Ok(Verified::IdentityHadAllowance);
            }
            let in_range: i64 = allowance_grants::table
                .filter(allowance_grants::address_range.eq(&grant.address_range))
                .filter(allowance_grants::granted_at.gt(now.saturating_sub(grant.window_ms)))
                .count()
                .get_result(conn)?;
            if in_range >= i64::from(grant.per_range) {
                return Ok(Verified::RangeExhausted);
            }
            diesel::insert_into(allowance_grants::table)
                .values((
                    allowance_grants::identity.eq(&grant.identity),
                    allowance_grants::account_id.eq(account_id),
                    allowance_grants::address_range.eq(&grant.address_range),
                    allowance_grants::granted_at.eq(now),
                ))
                .execute(conn)?;
            diesel::update(accounts::table.find(account_id))
                .set(accounts::free_allowance_units.eq(grant.allowance.units()))
                .execute(conn)?;
            Ok(Verified::Granted)
        })
    }

    /// Removes the account's console login with its sessions and unused links: nobody signs in
    /// to it again. Its ledger and allowance grants stay (the books, and its identity's allowance
    /// having been given).
    pub fn delete_login(&self, account_id: &str) -> StorageResult<()> {
        self.write(|conn| {
            diesel::delete(console_sessions::table.filter(console_sessions::account_id.eq(account_id)))
                .execute(conn)?;
            diesel::delete(console_links::table.filter(console_links::account_id.eq(account_id))).execute(conn)?;
            diesel::delete(console_logins::table.find(account_id)).execute(conn)
        })?;
        Ok(())
    }

    /// Sets the login's password and ends every session of the account.
    pub fn set_password(&self, account_id: &str, password_hash: &str) -> StorageResult<()> {
        self.write(|conn| {
            diesel::update(console_logins::table.find(account_id))
                .set(console_logins::password_hash.eq(password_hash))
                .execute(conn)?;
            diesel::delete(console_sessions::table.filter(console_sessions::account_id.eq(account_id))).execute(conn)
        })?;
        Ok(())
    }
}

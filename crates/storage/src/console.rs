//! The developer console's records: logins (an email and a password hash per account), sessions,
//! invite links and counted attempts (failed sign-ins, sign-ups) for rate limits. Session and invite tokens are stored only as hashes.

use crate::accounts::Account;
use crate::connection::AnyConnection;
use crate::dialect;
use crate::schema::{accounts, console_attempts, console_invites, console_logins, console_sessions, tasks};
use crate::task_record::TaskRecord;
use crate::{new_id, now_millis, Database, StorageError, StorageResult};
use diesel::prelude::*;
use domain::Usd;

/// A console login as stored.
#[derive(Clone, Debug, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = console_logins)]
pub struct Login {
    /// The account it signs in to.
    pub account_id: String,
    /// Lower-cased email address.
    pub email: String,
    /// The password's PHC string (argon2id).
    pub password_hash: String,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// When its owner proved the address is theirs (followed a link mailed to it); `None` until then.
    pub verified_at: Option<i64>,
}

/// A live console session.
#[derive(Clone, Debug, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = console_sessions)]
pub struct SessionRecord {
    /// SHA-256 of the cookie's token.
    pub token_hash: String,
    /// The signed-in account.
    pub account_id: String,
    /// The token every form of this session must carry.
    pub csrf_token: String,
    /// Sign-in time.
    pub created_at: i64,
    /// When the session ends unless renewed by signing in again.
    pub expires_at: i64,
}

/// The spend of one key on one UTC day.
#[derive(Clone, Debug, PartialEq, Eq, QueryableByName)]
pub struct DailySpend {
    /// The key.
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub key_id: String,
    /// Days since 1970-01-01 (UTC).
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub day: i64,
    /// Captured amount, ten-thousandths of a dollar.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub units: i64,
}

/// Why an invite could not be accepted.
#[derive(Debug, thiserror::Error)]
pub enum InviteError {
    /// Unknown, used or expired.
    #[error("this invite link is invalid, used or expired; ask your operator for a new one")]
    Invalid,
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl From<diesel::result::Error> for InviteError {
    fn from(e: diesel::result::Error) -> Self {
        InviteError::Storage(e.into())
    }
}

impl From<r2d2::Error> for InviteError {
    fn from(e: r2d2::Error) -> Self {
        InviteError::Storage(e.into())
    }
}

/// Inserts a login inside a transaction of either backend.
fn insert_login(
    conn: &mut AnyConnection,
    account_id: &str,
    email: &str,
    password_hash: &str,
    now: i64,
    verified_at: Option<i64>,
) -> QueryResult<usize> {
    diesel::insert_into(console_logins::table)
        .values((
            console_logins::account_id.eq(account_id),
            console_logins::email.eq(email),
            console_logins::password_hash.eq(password_hash),
            console_logins::created_at.eq(now),
            console_logins::verified_at.eq(verified_at),
        ))
        .execute(conn)
}

const DAY_MS: i64 = 86_400_000;

/// An attempt refused by [`Database::count_attempt`]: the subject at its limit, and when a try
/// can next be counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptRefused {
    /// The subject at its limit.
    pub subject: String,
    /// When the next try of the subject can be counted, Unix milliseconds.
    pub until: i64,
}

/// A subject whose tries, past the first `free` among the attempts kept, must each wait longer
/// after the one before: `first_ms`, doubling with every further try, up to `longest_ms`. An
/// attacker is slowed more and more; the owner, who needs one try, waits at most the current
/// delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrowingDelay<'a> {
    /// The subject.
    pub subject: &'a str,
    /// Tries with no wait.
    pub free: i64,
    /// The wait before the first try past the free ones.
    pub first_ms: i64,
    /// The longest wait.
    pub longest_ms: i64,
}

impl GrowingDelay<'_> {
    /// The wait after the last of `tries` tries before another is counted.
    pub fn wait_after(&self, tries: i64) -> i64 {
        if tries < self.free {
            return 0;
        }
        let doublings = u32::try_from(tries - self.free).unwrap_or(u32::MAX).min(40);
        self.first_ms.saturating_mul(1_i64 << doublings).min(self.longest_ms)
    }
}

impl Database {
    /// Creates an account named after `email` with `free_allowance`, and its login, in one
    /// transaction. A taken email (as a login or an account name) is `AlreadyExists`.
    pub fn sign_up(&self, email: &str, password_hash: &str, free_allowance: Usd) -> StorageResult<Account> {
        let now = now_millis();
        let account = Account {
            id: new_id("acct"),
            name: email.to_string(),
            card_on_file: false,
            free_allowance_units: free_allowance.units(),
            free_used_units: 0,
            free_held_units: 0,
            invoice_units: 0,
            created_at: now,
        };
        self.transaction(|conn| {
            let taken: i64 = accounts::table.filter(accounts::name.eq(email)).count().get_result(conn)?;
            let login_taken: i64 =
                console_logins::table.filter(console_logins::email.eq(email)).count().get_result(conn)?;
            // An address with a live invite is its invited owner's to take.
            let invited: i64 = console_invites::table
                .filter(console_invites::email.eq(email))
                .filter(console_invites::used_at.is_null())
                .filter(console_invites::expires_at.gt(now))
                .count()
                .get_result(conn)?;
            if taken + login_taken + invited > 0 {
                return Err(StorageError::AlreadyExists(format!("an account for {email}")));
            }
            diesel::insert_into(accounts::table)
                .values((
                    accounts::id.eq(&account.id),
                    accounts::name.eq(&account.name),
                    accounts::card_on_file.eq(false),
                    accounts::free_allowance_units.eq(account.free_allowance_units),
                    accounts::created_at.eq(now),
                ))
                .execute(conn)?;
            insert_login(conn, &account.id, email, password_hash, now, None)?;
            Ok(())
        })?;
        Ok(account)
    }

    /// The login with `email` (lower-cased by the caller).
    pub fn login_by_email(&self, email: &str) -> StorageResult<Option<Login>> {
        self.read(|conn| {
            console_logins::table
                .filter(console_logins::email.eq(email))
                .select(Login::as_select())
                .first(conn)
                .optional()
        })
    }

    /// The login of an account.
    pub fn login_of(&self, account_id: &str) -> StorageResult<Option<Login>> {
        self.read(|conn| console_logins::table.find(account_id).select(Login::as_select()).first(conn).optional())
    }

    /// Stores an invite for the account named `account_name`, valid for `ttl_ms`.
    pub fn create_invite(
        &self,
        account_name: &str,
        email: &str,
        token_hash: &str,
        ttl_ms: i64,
    ) -> StorageResult<Account> {
        let account = self.account_by_name(account_name)?;
        if self.login_of(&account.id)?.is_some() {
            return Err(StorageError::AlreadyExists(format!("a console login for account {account_name:?}")));
        }
        let now = now_millis();
        self.read(|conn| {
            diesel::insert_into(console_invites::table)
                .values((
                    console_invites::token_hash.eq(token_hash),
                    console_invites::account_id.eq(&account.id),
                    console_invites::email.eq(email),
                    console_invites::created_at.eq(now),
                    console_invites::expires_at.eq(now.saturating_add(ttl_ms)),
                ))
                .execute(conn)
        })?;
        Ok(account)
    }

    /// The email of a live (unused, unexpired) invite.
    pub fn invite_email(&self, token_hash: &str) -> StorageResult<Option<String>> {
        self.read(|conn| {
            console_invites::table
                .find(token_hash)
                .filter(console_invites::used_at.is_null())
                .filter(console_invites::expires_at.gt(now_millis()))
                .select(console_invites::email)
                .first(conn)
                .optional()
        })
    }

    /// Uses a live invite: creates its account's login with `password_hash`, in one transaction.
    /// Returns the account id.
    pub fn accept_invite(&self, token_hash: &str, password_hash: &str) -> Result<String, InviteError> {
        let now = now_millis();
        self.transaction(|conn| {
            let invite: Option<(String, String)> = console_invites::table
                .find(token_hash)
                .filter(console_invites::used_at.is_null())
                .filter(console_invites::expires_at.gt(now))
                .select((console_invites::account_id, console_invites::email))
                .first(conn)
                .optional()?;
            let (account_id, email) = invite.ok_or(InviteError::Invalid)?;
            let claimed =
                diesel::update(console_invites::table.find(token_hash).filter(console_invites::used_at.is_null()))
                    .set(console_invites::used_at.eq(now))
                    .execute(conn)?;
            // The invite is bound to its email: a login someone else made for it and never
            // verified (they do not hold the mailbox) gives way.
            diesel::delete(
                console_logins::table
                    .filter(console_logins::email.eq(&email))
                    .filter(console_logins::verified_at.is_null())
                    .filter(console_logins::account_id.ne(&account_id)),
            )
            .execute(conn)?;
            let has_login: i64 = console_logins::table
                .filter(console_logins::account_id.eq(&account_id).or(console_logins::email.eq(&email)))
                .count()
                .get_result(conn)?;
            if claimed == 0 || has_login > 0 {
                return Err(InviteError::Invalid);
            }
            // Following the invite link proves the mailbox.
            insert_login(conn, &account_id, &email, password_hash, now, Some(now))?;
            Ok(account_id)
        })
    }

    /// Stores a session.
    pub fn create_session(&self, session: &SessionRecord) -> StorageResult<()> {
        self.read(|conn| {
            diesel::insert_into(console_sessions::table)
                .values((
                    console_sessions::token_hash.eq(&session.token_hash),
                    console_sessions::account_id.eq(&session.account_id),
                    console_sessions::csrf_token.eq(&session.csrf_token),
                    console_sessions::created_at.eq(session.created_at),
                    console_sessions::expires_at.eq(session.expires_at),
                ))
                .execute(conn)
        })?;
        Ok(())
    }

    /// The live session with `token_hash`.
    pub fn session(&self, token_hash: &str) -> StorageResult<Option<SessionRecord>> {
        self.read(|conn| {
            console_sessions::table
                .find(token_hash)
                .filter(console_sessions::expires_at.gt(now_millis()))
                .select(SessionRecord::as_select())
                .first(conn)
                .optional()
        })
    }

    /// Ends one session.
    pub fn delete_session(&self, token_hash: &str) -> StorageResult<()> {
        self.read(|conn| diesel::delete(console_sessions::table.find(token_hash)).execute(conn))?;
        Ok(())
    }

    /// Ends every session of an account; returns how many there were.
    pub fn delete_sessions_of(&self, account_id: &str) -> StorageResult<usize> {
        self.read(|conn| {
            diesel::delete(console_sessions::table.filter(console_sessions::account_id.eq(account_id))).execute(conn)
        })
    }

    /// Counts one attempt against each `(subject, limit)` and the `delay`'s subject, in one
    /// transaction, unless a subject already has `limit` attempts since `since`, or the delay's
    /// subject has not waited its [`GrowingDelay`] since its last try: then nothing is counted
    /// and the refusal names the subject. Concurrent attempts on one subject are serialised, so
    /// together they never pass its limit. These subjects' attempts older than `keep_ms` are
    /// removed on the way.
    pub fn count_attempt(
        &self,
        limits: &[(&str, i64)],
        since: i64,
        keep_ms: i64,
        delay: Option<GrowingDelay<'_>>,
    ) -> StorageResult<Result<(), AttemptRefused>> {
        let now = now_millis();
        let mut subjects: Vec<&str> =
            limits.iter().map(|(subject, _)| *subject).chain(delay.map(|d| d.subject)).collect();
        // One order for every caller, so two attempts never wait on each other's locks.
        subjects.sort_unstable();
        subjects.dedup();
        self.write(|conn| {
            for subject in &subjects {
                dialect::lock_name(conn, &format!("attempts:{subject}"))?;
            }
            for (subject, limit) in limits {
                let (count, oldest): (i64, Option<i64>) = console_attempts::table
                    .filter(console_attempts::subject.eq(subject))
                    .filter(console_attempts::at.ge(since))
                    .select((diesel::dsl::count_star(), diesel::dsl::min(console_attempts::at)))
                    .first(conn)?;
                if count >= *limit {
                    let until = oldest.map_or(now, |oldest| oldest + (now - since));
                    return Ok(Err(AttemptRefused { subject: subject.to_string(), until }));
                }
            }
            if let Some(delay) = delay {
                let (tries, last): (i64, Option<i64>) = console_attempts::table
                    .filter(console_attempts::subject.eq(delay.subject))
                    .filter(console_attempts::at.ge(now.saturating_sub(keep_ms)))
                    .select((diesel::dsl::count_star(), diesel::dsl::max(console_attempts::at)))
                    .first(conn)?;
                let until = last.map_or(now, |last| last + delay.wait_after(tries));
                if until > now {
                    return Ok(Err(AttemptRefused { subject: delay.subject.to_string(), until }));
                }
            }
            for subject in &subjects {
                diesel::insert_into(console_attempts::table)
                    .values((console_attempts::subject.eq(subject), console_attempts::at.eq(now)))
                    .execute(conn)?;
            }
            // Only the subjects at hand, through their (subject, at) index: the rest of the
            // table is left to the sweep ([`Database::forget_attempts_before`]), so an attempt
            // never scans it inside the write transaction.
            diesel::delete(
                console_attempts::table
                    .filter(console_attempts::subject.eq_any(&subjects))
                    .filter(console_attempts::at.lt(now.saturating_sub(keep_ms))),
            )
            .execute(conn)?;
            Ok(Ok(()))
        })
    }

    /// Removes every attempt and event recorded before `cutoff` (by the `at` index); returns how
    /// many.
    pub fn forget_attempts_before(&self, cutoff: i64) -> StorageResult<usize> {
        self.write(|conn| diesel::delete(console_attempts::table.filter(console_attempts::at.lt(cutoff))).execute(conn))
    }

    /// Records that `subject` happened now (a successful sign-in from an address), kept like an
    /// attempt.
    pub fn record_event(&self, subject: &str) -> StorageResult<()> {
        let now = now_millis();
        self.write(|conn| {
            diesel::insert_into(console_attempts::table)
                .values((console_attempts::subject.eq(subject), console_attempts::at.eq(now)))
                .execute(conn)
        })?;
        Ok(())
    }

    /// Whether `subject` happened since `since`.
    pub fn happened_since(&self, subject: &str, since: i64) -> StorageResult<bool> {
        let count: i64 = self.read(|conn| {
            console_attempts::table
                .filter(console_attempts::subject.eq(subject))
                .filter(console_attempts::at.ge(since))
                .count()
                .get_result(conn)
        })?;
        Ok(count > 0)
    }

    /// Forgets the attempts against `subject` (failed sign-ins, after a successful one).
    pub fn clear_attempts(&self, subject: &str) -> StorageResult<()> {
        self.read(|conn| {
            diesel::delete(console_attempts::table.filter(console_attempts::subject.eq(subject))).execute(conn)
        })?;
        Ok(())
    }

    /// Captured spend per key per UTC day of the account, from `since` (Unix milliseconds).
    pub fn daily_spend(&self, account_id: &str, since: i64) -> StorageResult<Vec<DailySpend>> {
        use diesel::sql_types::{BigInt, Text};
        let sql = "SELECT key_id, CAST(created_at / $day AS BIGINT) AS day, \
            CAST(SUM(amount_units) AS BIGINT) AS units FROM ledger \
            WHERE account_id = ? AND kind = 'capture' AND created_at >= ? \
            GROUP BY key_id, CAST(created_at / $day AS BIGINT) ORDER BY day, key_id"
            .replace("$day", &DAY_MS.to_string());
        self.read(|conn| dialect::sql_query(conn, &sql).bind::<Text, _>(account_id).bind::<BigInt, _>(since).load(conn))
    }

    /// The account's latest tasks (reels included), newest first.
    pub fn recent_tasks_of_account(&self, account_id: &str, limit: i64) -> StorageResult<Vec<TaskRecord>> {
        self.read(|conn| {
            tasks::table
                .filter(tasks::account_id.eq(account_id))
                .order((tasks::created_at.desc(), tasks::id.desc()))
                .limit(limit)
                .select(TaskRecord::as_select())
                .load(conn)
        })
    }
}

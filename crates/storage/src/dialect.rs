//! The few statements whose text differs by backend, written once and rendered here for the
//! connection at hand: the database's clock, row locks, and numbered placeholders; plus the
//! notifications PostgreSQL delivers to other processes at commit. Everything else is diesel's
//! query builder, which renders for either backend by itself.

use crate::connection::{AnyConnection, Backend};
use diesel::RunQueryDsl;

// Leases are set and compared on the database's clock, never a process's: with workers on several
// hosts, a host whose clock runs ahead must not see a live lease as lapsed.
/// The database's time, in milliseconds since the Unix epoch, on SQLite. SQLite keeps the time in
/// whole milliseconds and `julianday` gives it as a fraction of a day: rounded back, not cut, or
/// it reads a millisecond early about half the time (a task would start before it was created).
const NOW_SQLITE: &str = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)";
/// The database's time, in milliseconds since the Unix epoch, on PostgreSQL.
const NOW_POSTGRES: &str = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";

/// `template` as `backend` runs it. The template is written with `?` placeholders and these
/// markers:
/// - `{NOW}`: the database's clock, in Unix milliseconds;
/// - `{FOR_UPDATE}`: a row lock on PostgreSQL (on SQLite the `IMMEDIATE` transaction already holds
///   the database's write lock);
/// - `{SKIP_LOCKED}`: a row lock that skips rows other transactions hold, so concurrent claims
///   never wait on each other.
pub(crate) fn render(template: &str, backend: Backend) -> String {
    let sql = render_markers(template, backend);
    if backend == Backend::Sqlite {
        return sql;
    }
    let mut numbered = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            numbered.push_str(&format!("${n}"));
        } else {
            numbered.push(c);
        }
    }
    numbered
}

/// `template` with its markers rendered for `backend` and its `?` placeholders left as they are,
/// for a statement type that pushes its own binds (diesel numbers them).
pub(crate) fn render_markers(template: &str, backend: Backend) -> String {
    let (now, for_update, skip_locked) = match backend {
        Backend::Sqlite => (NOW_SQLITE, "", ""),
        Backend::Postgres => (NOW_POSTGRES, " FOR UPDATE", " FOR UPDATE SKIP LOCKED"),
    };
    template.replace("{NOW}", now).replace("{FOR_UPDATE}", for_update).replace("{SKIP_LOCKED}", skip_locked)
}

/// `template` with its `?` placeholders replaced, in order, by `values` (SQL expressions), for a
/// statement written into another, such as a function's body.
pub(crate) fn fill_placeholders(template: &str, values: &[&str]) -> String {
    let mut values = values.iter();
    let mut filled = String::with_capacity(template.len());
    for c in template.chars() {
        match values.as_slice().first() {
            Some(value) if c == '?' => {
                filled.push_str(value);
                values.next();
            }
            _ => filled.push(c),
        }
    }
    filled
}

/// A raw statement from `template` (see [`render`]) for `conn`'s backend.
pub(crate) fn sql_query(conn: &AnyConnection, template: &str) -> diesel::query_builder::SqlQuery {
    diesel::sql_query(render(template, conn.backend()))
}

/// On PostgreSQL, notifies the listeners of `channel` at commit (see [`crate::Listener`]). SQLite
/// serves one process, whose waiters poll.
pub(crate) fn notify(conn: &mut AnyConnection, channel: &str) -> diesel::QueryResult<()> {
    if conn.backend() == Backend::Postgres {
        diesel::sql_query(format!("NOTIFY {channel}")).execute(conn)?;
    }
    Ok(())
}

/// On PostgreSQL, lets the current transaction's commit return before its log reaches the disk,
/// for writes whose loss in a database crash harms no one (a rate bucket's last fraction of a
/// second: a key might get back a few tokens it spent). A crash never leaves such a write half
/// done, only undone. SQLite's commits are already not flushed one by one (WAL, `NORMAL`).
pub(crate) fn commit_without_flush(conn: &mut AnyConnection) -> diesel::QueryResult<()> {
    if conn.backend() == Backend::Postgres {
        diesel::sql_query("SET LOCAL synchronous_commit TO OFF").execute(conn)?;
    }
    Ok(())
}

/// Serialises the transactions that take `name` until they end: on PostgreSQL a transaction-scoped
/// advisory lock; SQLite's `IMMEDIATE` transactions already run one at a time.
pub(crate) fn lock_name(conn: &mut AnyConnection, name: &str) -> diesel::QueryResult<()> {
    if conn.backend() == Backend::Postgres {
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))")
            .bind::<diesel::sql_types::Text, _>(name)
            .execute(conn)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_and_markers_rendered_for_postgres() {
        assert_eq!(render("a = ? AND b = ?{FOR_UPDATE}", Backend::Postgres), "a = $1 AND b = $2 FOR UPDATE");
        assert_eq!(render("a = ?{SKIP_LOCKED}", Backend::Sqlite), "a = ?");
        assert!(render("x < {NOW}", Backend::Sqlite).contains("julianday('now')"));
        assert!(render("x < {NOW}", Backend::Postgres).contains("clock_timestamp()"));
    }

    #[test]
    fn the_sqlite_clock_reads_the_processs_millisecond() {
        use diesel::Connection;
        let mut conn = diesel::SqliteConnection::establish(":memory:").expect("in-memory SQLite");
        for _ in 0..2_000 {
            let before = crate::now_millis();
            let now: i64 = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(NOW_SQLITE))
                .get_result(&mut conn)
                .expect("the clock");
            let after = crate::now_millis();
            assert!((before..=after).contains(&now), "{before} <= {now} <= {after}");
        }
    }

    #[test]
    fn placeholders_are_filled_in_order() {
        assert_eq!(fill_placeholders("a = ? AND b = ?", &["1", "'x'"]), "a = 1 AND b = 'x'");
    }
}

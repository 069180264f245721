//! Writing what a submit batch accepted (see `submission`): its tasks, their hold ledger rows,
//! the holds added to the account's and keys' balances, and the workers' notification. On
//! PostgreSQL these are one prepared statement, one round trip inside the batch's transaction:
//! one account's submits queue behind its batch, so every round trip a batch saves raises that
//! account's rate, and the round trips between a task's creation and its commit are its pickup
//! latency. On SQLite, which has no round trips, they are plain statements. Webhooks, idempotency
//! records and provider holds, which few submits have, follow as statements of their own.

use crate::connection::AnyConnection;
use crate::idempotency::IdempotencyClaim;
use crate::listener::JOBS_CHANNEL;
use crate::schema::{accounts, api_keys, idempotency_keys, ledger, task_webhooks, tasks};
use crate::task_record::TaskRecord;
use crate::tracking;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text, Untyped};
use domain::TaskStatus;
use std::sync::LazyLock;

/// One accepted submit, waiting to be written.
pub(crate) struct Accepted {
    pub(crate) record: TaskRecord,
    pub(crate) input_bytes: i64,
    /// Its webhook's target and whether it announces `running`.
    pub(crate) webhook: Option<(String, bool)>,
    pub(crate) claim: Option<IdempotencyClaim>,
}

/// What a batch's accepted submits hold on their account and keys.
pub(crate) struct BatchHolds<'a> {
    pub(crate) account_id: &'a str,
    /// Units held from the account's free allowance.
    pub(crate) free_held: i64,
    /// Units held per key.
    pub(crate) keys: Vec<(&'a str, i64)>,
}

/// Writes `accepted` (created at `created`) and `holds` in the batch's transaction, and on
/// PostgreSQL notifies the workers at its commit.
pub(crate) fn write(
    conn: &mut AnyConnection,
    holds: &BatchHolds<'_>,
    accepted: &[Accepted],
    created: i64,
) -> QueryResult<()> {
    match conn {
        AnyConnection::Postgres(pg) => {
            WriteBatch::new(holds, accepted, created).execute(pg)?;
        }
        AnyConnection::Sqlite(sqlite) => write_one_by_one(sqlite, holds, accepted, created)?,
    }
    write_attachments(conn, accepted, created)
}

/// The batch's statement on PostgreSQL. Its binds, in order: the account, the creation time, the
/// free allowance held, the queued status, the notified channel; then one array per column of the
/// tasks (id, key, engine, job, input bytes, price, allowance held, priority, provider); then the
/// keys and what each holds. The ledger's rows are made from the tasks the statement inserted.
const WRITE_BATCH: &str = "\
WITH batch AS (
  SELECT ?::text AS account_id, ?::bigint AS created, ?::bigint AS free_held, ?::text AS status, ?::text AS channel),
new_tasks AS (
  INSERT INTO tasks (id, key_id, account_id, engine, job, status, input_bytes, created_at, updated_at,
    price_units, hold_allowance_units, priority, provider)
  SELECT submitted.id, submitted.key_id, batch.account_id, submitted.engine, submitted.job, batch.status,
    submitted.input_bytes, batch.created, batch.created, submitted.price_units, submitted.hold_allowance_units,
    submitted.priority, submitted.provider
  FROM batch, unnest(?, ?, ?, ?, ?, ?, ?, ?, ?)
    AS submitted(id, key_id, engine, job, input_bytes, price_units, hold_allowance_units, priority, provider)
  RETURNING id, key_id, account_id, price_units, hold_allowance_units, created_at),
holds AS (
  INSERT INTO ledger (task_id, key_id, account_id, kind, amount_units, allowance_units, created_at)
  SELECT id, key_id, account_id, 'hold', price_units, hold_allowance_units, created_at FROM new_tasks),
keys_held AS (
  UPDATE api_keys SET held_units = api_keys.held_units + held.units
  FROM unnest(?, ?) AS held(id, units) WHERE api_keys.id = held.id),
account_held AS (
  UPDATE accounts SET free_held_units = accounts.free_held_units + batch.free_held
  FROM batch WHERE accounts.id = batch.account_id AND batch.free_held <> 0)
SELECT pg_notify(channel, '') FROM batch";

/// [`WRITE_BATCH`] cut at its placeholders: diesel numbers the binds pushed between the pieces.
static WRITE_BATCH_PIECES: LazyLock<Vec<&'static str>> = LazyLock::new(|| WRITE_BATCH.split('?').collect());

/// [`WRITE_BATCH`] with its binds: one statement type whose text never changes, so each
/// connection prepares it once (`diesel::sql_query` would plan it anew on every batch).
struct WriteBatch<'a> {
    account_id: &'a str,
    created: i64,
    free_held: i64,
    ids: Vec<&'a str>,
    key_ids: Vec<&'a str>,
    engines: Vec<&'a str>,
    jobs: Vec<&'a str>,
    input_bytes: Vec<i64>,
    prices: Vec<i64>,
    allowances: Vec<i64>,
    priorities: Vec<i32>,
    providers: Vec<Option<&'a str>>,
    held_keys: Vec<&'a str>,
    held_units: Vec<i64>,
}

impl<'a> WriteBatch<'a> {
    fn new(holds: &BatchHolds<'a>, accepted: &'a [Accepted], created: i64) -> Self {
        let records = || accepted.iter().map(|accepted| &accepted.record);
        WriteBatch {
            account_id: holds.account_id,
            created,
            free_held: holds.free_held,
            ids: records().map(|record| record.id.as_str()).collect(),
            key_ids: records().map(|record| record.key_id.as_str()).collect(),
            engines: records().map(|record| record.engine.as_str()).collect(),
            jobs: records().map(|record| record.job.as_str()).collect(),
            input_bytes: accepted.iter().map(|accepted| accepted.input_bytes).collect(),
            prices: records().map(|record| record.price_units).collect(),
            allowances: records().map(|record| record.hold_allowance_units).collect(),
            priorities: records().map(|record| record.priority).collect(),
            providers: records().map(|record| record.provider.as_deref()).collect(),
            held_keys: holds.keys.iter().map(|(id, _)| *id).collect(),
            held_units: holds.keys.iter().map(|(_, units)| *units).collect(),
        }
    }
}

impl QueryId for WriteBatch<'_> {
    type QueryId = WriteBatch<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for WriteBatch<'_> {
    type SqlType = Untyped;
}

impl RunQueryDsl<PgConnection> for WriteBatch<'_> {}

impl QueryFragment<Pg> for WriteBatch<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let mut pieces = WRITE_BATCH_PIECES.iter();
        let mut next_piece = |out: &mut AstPass<'_, 'b, Pg>| out.push_sql(pieces.next().copied().unwrap_or(""));
        next_piece(&mut out);
        out.push_bind_param::<Text, _>(self.account_id)?;
        next_piece(&mut out);
        out.push_bind_param::<BigInt, _>(&self.created)?;
        next_piece(&mut out);
        out.push_bind_param::<BigInt, _>(&self.free_held)?;
        next_piece(&mut out);
        out.push_bind_param::<Text, _>(TaskStatus::Queued.as_str())?;
        next_piece(&mut out);
        out.push_bind_param::<Text, _>(JOBS_CHANNEL)?;
        for texts in [&self.ids, &self.key_ids, &self.engines, &self.jobs] {
            next_piece(&mut out);
            out.push_bind_param::<Array<Text>, _>(texts)?;
        }
        for numbers in [&self.input_bytes, &self.prices, &self.allowances] {
            next_piece(&mut out);
            out.push_bind_param::<Array<BigInt>, _>(numbers)?;
        }
        next_piece(&mut out);
        out.push_bind_param::<Array<Integer>, _>(&self.priorities)?;
        next_piece(&mut out);
        out.push_bind_param::<Array<Nullable<Text>>, _>(&self.providers)?;
        next_piece(&mut out);
        out.push_bind_param::<Array<Text>, _>(&self.held_keys)?;
        next_piece(&mut out);
        out.push_bind_param::<Array<BigInt>, _>(&self.held_units)?;
        next_piece(&mut out);
        Ok(())
    }
}

/// The batch's writes on SQLite: the balances, then the tasks and their ledger rows, one
/// statement per table.
fn write_one_by_one(
    conn: &mut SqliteConnection,
    holds: &BatchHolds<'_>,
    accepted: &[Accepted],
    created: i64,
) -> QueryResult<()> {
    if holds.free_held != 0 {
        diesel::update(accounts::table.find(holds.account_id))
            .set(accounts::free_held_units.eq(accounts::free_held_units + holds.free_held))
            .execute(conn)?;
    }
    for (id, units) in &holds.keys {
        diesel::update(api_keys::table.find(id))
            .set(api_keys::held_units.eq(api_keys::held_units + units))
            .execute(conn)?;
    }
    let task_rows: Vec<_> = accepted
        .iter()
        .map(|Accepted { record, input_bytes, .. }| {
            (
                tasks::id.eq(&record.id),
                tasks::key_id.eq(&record.key_id),
                tasks::account_id.eq(&record.account_id),
                tasks::engine.eq(&record.engine),
                tasks::job.eq(&record.job),
                tasks::status.eq(&record.status),
                tasks::input_bytes.eq(*input_bytes),
                tasks::created_at.eq(created),
                tasks::updated_at.eq(created),
                tasks::price_units.eq(record.price_units),
                tasks::hold_allowance_units.eq(record.hold_allowance_units),
                tasks::priority.eq(record.priority),
                tasks::provider.eq(&record.provider),
            )
        })
        .collect();
    diesel::insert_into(tasks::table).values(&task_rows).execute(conn)?;
    let ledger_rows: Vec<_> = accepted
        .iter()
        .map(|Accepted { record, .. }| {
            (
                ledger::task_id.eq(&record.id),
                ledger::key_id.eq(&record.key_id),
                ledger::account_id.eq(&record.account_id),
                ledger::kind.eq("hold"),
                ledger::amount_units.eq(record.price_units),
                ledger::allowance_units.eq(record.hold_allowance_units),
                ledger::created_at.eq(created),
            )
        })
        .collect();
    diesel::insert_into(ledger::table).values(&ledger_rows).execute(conn)?;
    Ok(())
}

/// What some accepted submits carry besides their task: webhooks, idempotency records, and the
/// hold that keeps trackers off a task being submitted to its provider.
fn write_attachments(conn: &mut AnyConnection, accepted: &[Accepted], created: i64) -> QueryResult<()> {
    use crate::connection::on_native_connection;
    let webhook_rows: Vec<_> = accepted
        .iter()
        .filter_map(|Accepted { record, webhook, .. }| {
            let (url, on_running) = webhook.as_ref()?;
            Some((
                task_webhooks::task_id.eq(&record.id),
                task_webhooks::url.eq(url),
                task_webhooks::on_running.eq(*on_running),
            ))
        })
        .collect();
    if !webhook_rows.is_empty() {
        on_native_connection!(conn, |native| diesel::insert_into(task_webhooks::table)
            .values(&webhook_rows)
            .execute(native))?;
    }
    let claim_rows: Vec<_> = accepted
        .iter()
        .filter_map(|Accepted { record, claim, .. }| {
            let claim = claim.as_ref()?;
            Some((
                idempotency_keys::key_id.eq(&record.key_id),
                idempotency_keys::idempotency_key.eq(&claim.key),
                idempotency_keys::request_hash.eq(&claim.request_hash),
                idempotency_keys::task_id.eq(&record.id),
                idempotency_keys::created_at.eq(created),
            ))
        })
        .collect();
    if !claim_rows.is_empty() {
        on_native_connection!(conn, |native| diesel::insert_into(idempotency_keys::table)
            .values(&claim_rows)
            .execute(native))?;
    }
    for Accepted { record, .. } in accepted {
        if record.provider.is_some() {
            // Not looked at by trackers while the submission is under way (see
            // `Database::record_submission`).
            tracking::hold_for_submission(conn, &record.id)?;
        }
    }
    Ok(())
}

//! Operating figures for monitoring: the queue's depth and age, the money held and captured, and
//! clients' webhook messages, read in one snapshot.

use crate::schema::{tasks, webhook_deliveries};
use crate::webhooks::delivery_status;
use crate::{now_millis, Database, StorageResult};
use diesel::dsl::{count_star, min};
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use domain::TaskStatus;

#[derive(QueryableByName)]
struct Money {
    #[diesel(sql_type = BigInt)]
    held: i64,
    #[diesel(sql_type = BigInt)]
    spent: i64,
}

/// The figures `/metrics` reports from the database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OperatingFigures {
    /// Jobs waiting for a worker.
    pub queued: i64,
    /// Jobs running on a worker.
    pub running: i64,
    /// Jobs submitted to a provider and not yet ended.
    pub at_provider: i64,
    /// How long the oldest job waiting for a worker has waited, milliseconds (0: none waits).
    pub oldest_queued_age_ms: i64,
    /// Money held for unfinished jobs, ten-thousandths of a dollar.
    pub held_units: i64,
    /// Money captured (billed) so far, ten-thousandths of a dollar.
    pub spent_units: i64,
    /// Clients' webhook messages waiting for an attempt.
    pub webhooks_pending: i64,
    /// Clients' webhook messages delivered.
    pub webhooks_delivered: i64,
    /// Clients' webhook messages given up.
    pub webhooks_failed: i64,
    /// How late the most overdue pending webhook message is, milliseconds (0: none is).
    pub oldest_due_webhook_ms: i64,
}

impl Database {
    /// The current [`OperatingFigures`].
    pub fn operating_figures(&self) -> StorageResult<OperatingFigures> {
        let now = now_millis();
        self.snapshot(|conn| {
            let unfinished = [TaskStatus::Queued.as_str(), TaskStatus::Running.as_str()];
            let local: Vec<(String, i64)> = tasks::table
                .filter(tasks::status.eq_any(unfinished))
                .filter(tasks::provider.is_null())
                .group_by(tasks::status)
                .select((tasks::status, count_star()))
                .load(conn)?;
            let count_of = |status: TaskStatus| local.iter().find(|(s, _)| s == status.as_str()).map_or(0, |(_, n)| *n);
            let at_provider: i64 = tasks::table
                .filter(tasks::status.eq_any(unfinished))
                .filter(tasks::provider.is_not_null())
                .count()
                .get_result(conn)?;
            let oldest: Option<i64> = tasks::table
                .filter(tasks::status.eq(TaskStatus::Queued.as_str()))
                .filter(tasks::provider.is_null())
                .select(min(tasks::created_at))
                .first(conn)?;
            // The keys' rows and the settlements' changes not yet added to them (see `balances`).
            // A sum of BIGINTs is NUMERIC on PostgreSQL: cast back, the same text for both.
            let money: Money = crate::dialect::sql_query(
                conn,
                "SELECT CAST(COALESCE((SELECT SUM(held_units) FROM api_keys), 0) \
                 + COALESCE((SELECT SUM(held_units) FROM balance_changes), 0) AS BIGINT) AS held, \
                 CAST(COALESCE((SELECT SUM(spent_units) FROM api_keys), 0) \
                 + COALESCE((SELECT SUM(spent_units) FROM balance_changes), 0) AS BIGINT) AS spent",
            )
            .get_result(conn)?;
            let webhooks: Vec<(String, i64)> = webhook_deliveries::table
                .group_by(webhook_deliveries::status)
                .select((webhook_deliveries::status, count_star()))
                .load(conn)?;
            let webhooks_of = |status: &str| webhooks.iter().find(|(s, _)| s == status).map_or(0, |(_, n)| *n);
            let oldest_due: Option<i64> = webhook_deliveries::table
                .filter(webhook_deliveries::status.eq(delivery_status::PENDING))
                .select(min(webhook_deliveries::next_attempt_at))
                .first::<Option<i64>>(conn)?;
            Ok(OperatingFigures {
                webhooks_pending: webhooks_of(delivery_status::PENDING),
                webhooks_delivered: webhooks_of(delivery_status::DELIVERED),
                webhooks_failed: webhooks_of(delivery_status::FAILED),
                oldest_due_webhook_ms: oldest_due.map_or(0, |due| (now - due).max(0)),
                queued: count_of(TaskStatus::Queued),
                running: count_of(TaskStatus::Running),
                at_provider,
                oldest_queued_age_ms: oldest.map_or(0, |created| (now - created).max(0)),
                held_units: money.held,
                spent_units: money.spent,
            })
        })
    }
}

//! Completion webhooks: each key's signing secret and default target, each task's target, and the
//! deliveries, written in the same transaction as the status change they announce (so none is
//! lost and none made twice) and claimed by workers under a lease.

use crate::connection::AnyConnection;
use crate::schema::{api_keys, key_webhooks, task_webhooks, webhook_attempts, webhook_deliveries};
use crate::{dialect, new_id, now_millis, Database, StorageError, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Text};
use domain::{TaskWebhook, WebhookEvent};

/// How long a rotated-out secret keeps signing beside the new one, so receivers can switch.
pub const PREVIOUS_SECRET_GRACE_MS: i64 = 24 * 3_600_000;

/// A delivery's state.
pub mod delivery_status {
    /// Waiting for its next attempt.
    pub const PENDING: &str = "pending";
    /// A 2xx answer was received.
    pub const DELIVERED: &str = "delivered";
    /// Every attempt was refused; given up.
    pub const FAILED: &str = "failed";
}

/// One webhook message of one task and event, as stored.
#[derive(Clone, Debug, PartialEq, Eq, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = webhook_deliveries)]
pub struct WebhookDelivery {
    /// The message id (`msg_...`), sent as `webhook-id` on every attempt.
    pub id: String,
    /// The task it announces.
    pub task_id: String,
    /// The task's key, whose secret signs it.
    pub key_id: String,
    /// `running` or `completed`.
    pub event: String,
    /// The receiver.
    pub url: String,
    /// See [`delivery_status`].
    pub status: String,
    /// Attempts made (or under way).
    pub attempts: i32,
    /// When the next attempt is due, while pending.
    pub next_attempt_at: Option<i64>,
    /// The receiver's status code at the last attempt, if it answered.
    pub last_status_code: Option<i32>,
    /// Why the last attempt failed, if it did.
    pub last_error: Option<String>,
    /// When the event happened.
    pub created_at: i64,
    /// When it was delivered or given up.
    pub finished_at: Option<i64>,
}

/// One attempt of a delivery.
#[derive(Clone, Debug, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = webhook_attempts)]
pub struct WebhookAttempt {
    /// The delivery.
    pub delivery_id: String,
    /// Its number, from 1.
    pub attempt: i32,
    /// When it was sent.
    pub at: i64,
    /// The receiver's status code, if it answered.
    pub status_code: Option<i32>,
    /// Why it failed, if it did (a refusal, a timeout, no connection).
    pub error: Option<String>,
    /// How long it took, milliseconds.
    pub duration_ms: i64,
}

/// The error of an attempt whose sender stopped (a killed worker) before it recorded the
/// receiver's answer; the message was then sent again under the same id, or given up.
pub const UNRECORDED_ATTEMPT: &str = "no answer recorded: the sender stopped during this attempt";

impl WebhookAttempt {
    /// This attempt as the delivery log lists it at `now`: `None` while it is under way (claimed,
    /// its lease still running, no answer yet), and with [`UNRECORDED_ATTEMPT`] as its error once
    /// that lease lapsed with no answer.
    fn into_listed(self, delivery: &WebhookDelivery, now: i64) -> Option<WebhookAttempt> {
        if self.status_code.is_some() || self.error.is_some() {
            return Some(self);
        }
        let under_way = delivery.status == delivery_status::PENDING
            && delivery.attempts == self.attempt
            && delivery.next_attempt_at.is_some_and(|due| due > now);
        (!under_way).then(|| WebhookAttempt { error: Some(UNRECORDED_ATTEMPT.to_string()), ..self })
    }
}

/// What one attempt came to, as its sender records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptResult {
    /// The receiver's status code, if it answered.
    pub status_code: Option<i32>,
    /// Why it failed; `None` for a 2xx.
    pub error: Option<String>,
    /// How long it took, milliseconds.
    pub duration_ms: i64,
}

/// A key's webhook settings.
#[derive(Clone, Debug, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = key_webhooks)]
pub struct KeyWebhook {
    /// The key.
    pub key_id: String,
    /// The signing secret (`whsec_...`).
    pub secret: String,
    /// The secret it replaced, still signing until `previous_until`.
    pub previous_secret: Option<String>,
    /// When the previous secret stops signing.
    pub previous_until: Option<i64>,
    /// Where the key's jobs that name no webhook send theirs.
    pub default_url: Option<String>,
    /// Whether those defaults send `running` too.
    pub default_on_running: bool,
    /// Last change.
    pub updated_at: i64,
}

impl KeyWebhook {
    /// The secrets that sign a message sent at `now`: the current one, and the previous one while
    /// its grace lasts.
    pub fn signing_secrets(&self, now: i64) -> Vec<&str> {
        let mut secrets = vec![self.secret.as_str()];
        if let (Some(previous), Some(until)) = (&self.previous_secret, self.previous_until) {
            if now < until {
                secrets.push(previous);
            }
        }
        secrets
    }

    /// The default webhook of the key's jobs, if set.
    pub fn default_webhook(&self) -> Option<TaskWebhook> {
        self.default_url.clone().map(|url| TaskWebhook { url, on_running: self.default_on_running })
    }
}

/// Whose deliveries to list.
#[derive(Clone, Copy, Debug)]
pub enum DeliveriesOf<'a> {
    /// One key's, optionally of one task.
    Key {
        /// The key.
        key_id: &'a str,
        /// Only this task's.
        task_id: Option<&'a str>,
    },
    /// Every key's of an account.
    Account(&'a str),
}

/// Which webhook a new task gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WebhookChoice {
    /// None (work whose caller waits for the answer).
    Off,
    /// The one the request named.
    Requested(TaskWebhook),
    /// The key's default, if it has one; `Some` overrides whether it sends `running`.
    KeyDefault(Option<bool>),
}

/// What the id of a delivery (a webhook message) starts with (see [`crate::new_id`]).
pub(crate) const DELIVERY_ID_PREFIX: &str = "msg";

/// [`announce`]'s statement. Its binds: the delivery's id, the event, the time twice (due, made),
/// the task's id, and whether every webhook of the task sends the event (else only one that asked
/// to hear of its start).
pub(crate) const ANNOUNCE: &str =
    "INSERT INTO webhook_deliveries (id, task_id, key_id, event, url, status, attempts, next_attempt_at, created_at) \
     SELECT ?, w.task_id, t.key_id, ?, w.url, 'pending', 0, ?, ? FROM task_webhooks w JOIN tasks t ON t.id = w.task_id \
     WHERE w.task_id = ? AND (? OR w.on_running) ON CONFLICT (task_id, event) DO NOTHING";

/// Queues the `event` message of task `task_id` when the task has a webhook that sends it, in the
/// caller's transaction (the one that changed the task's status). At most one message per task
/// and event: a job claimed again after its worker died announces its start once.
pub(crate) fn announce(conn: &mut AnyConnection, task_id: &str, event: WebhookEvent, now: i64) -> QueryResult<()> {
    dialect::sql_query(conn, ANNOUNCE)
        .bind::<Text, _>(new_id(DELIVERY_ID_PREFIX))
        .bind::<Text, _>(event.as_str())
        .bind::<BigInt, _>(now)
        .bind::<BigInt, _>(now)
        .bind::<Text, _>(task_id)
        .bind::<Bool, _>(event == WebhookEvent::Completed)
        .execute(conn)?;
    Ok(())
}

/// [`announce`] for each of `task_ids` whose webhook sends `event`, finding them with one read:
/// most tasks have no webhook, and a batch of them costs that one statement.
pub(crate) fn announce_all(
    conn: &mut AnyConnection,
    task_ids: &[&str],
    event: WebhookEvent,
    now: i64,
) -> QueryResult<()> {
    if task_ids.is_empty() {
        return Ok(());
    }
    let mut with_webhook = task_webhooks::table.filter(task_webhooks::task_id.eq_any(task_ids)).into_boxed();
    if event == WebhookEvent::Running {
        with_webhook = with_webhook.filter(task_webhooks::on_running.eq(true));
    }
    for task_id in with_webhook.select(task_webhooks::task_id).load::<String>(conn)? {
        announce(conn, &task_id, event, now)?;
    }
    Ok(())
}

const CLAIM_DELIVERIES: &str = "UPDATE webhook_deliveries SET next_attempt_at = {NOW} + ?, attempts = attempts + 1 \
     WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= {NOW} \
     ORDER BY next_attempt_at, created_at LIMIT ?{SKIP_LOCKED}) RETURNING *";

impl Database {
    /// Claims up to `limit` due deliveries for one attempt each: each is due again after
    /// `lease_ms` unless its attempt is recorded first, so a sender that dies mid-attempt loses
    /// none. Each comes with its attempt number (`attempts`). The attempt is logged at once, with
    /// no answer yet, so an attempt whose sender dies before recording the answer still shows in
    /// the log (as [`UNRECORDED_ATTEMPT`]) once its lease has lapsed.
    pub fn claim_webhook_deliveries(&self, lease_ms: i64, limit: i64) -> StorageResult<Vec<WebhookDelivery>> {
        let now = now_millis();
        self.write(|conn| {
            let claimed: Vec<WebhookDelivery> = dialect::sql_query(conn, CLAIM_DELIVERIES)
                .bind::<BigInt, _>(lease_ms)
                .bind::<BigInt, _>(limit)
                .load(conn)?;
            for delivery in &claimed {
                diesel::insert_into(webhook_attempts::table)
                    .values((
                        webhook_attempts::delivery_id.eq(&delivery.id),
                        webhook_attempts::attempt.eq(delivery.attempts),
                        webhook_attempts::at.eq(now),
                        webhook_attempts::duration_ms.eq(0),
                    ))
                    .execute(conn)?;
            }
            Ok(claimed)
        })
    }

    /// Records attempt `attempt` of delivery `id`: logged always; the delivery is then delivered
    /// (a 2xx), due again after `retry_in_ms`, or given up (`retry_in_ms` is `None`). A sender
    /// whose claim lapsed (another attempt started) only logs. Returns whether it counted.
    pub fn record_webhook_attempt(
        &self,
        id: &str,
        attempt: i32,
        result: &AttemptResult,
        retry_in_ms: Option<i64>,
    ) -> StorageResult<bool> {
        let now = now_millis();
        self.write(|conn| {
            let answer = (
                webhook_attempts::at.eq(now - result.duration_ms),
                webhook_attempts::status_code.eq(result.status_code),
                webhook_attempts::error.eq(&result.error),
                webhook_attempts::duration_ms.eq(result.duration_ms),
            );
            let logged = diesel::update(webhook_attempts::table.find((id, attempt))).set(answer).execute(conn)?;
            if logged == 0 {
                // Claimed before claims logged their attempt.
                diesel::insert_into(webhook_attempts::table)
                    .values((webhook_attempts::delivery_id.eq(id), webhook_attempts::attempt.eq(attempt), answer))
                    .execute(conn)?;
            }
            let (status, next, finished) = match (&result.error, retry_in_ms) {
                (None, _) => (delivery_status::DELIVERED, None, Some(now)),
                (Some(_), Some(wait)) => (delivery_status::PENDING, Some(now + wait), None),
                (Some(_), None) => (delivery_status::FAILED, None, Some(now)),
            };
            let updated = diesel::update(
                webhook_deliveries::table
                    .find(id)
                    .filter(webhook_deliveries::attempts.eq(attempt))
                    .filter(webhook_deliveries::status.eq(delivery_status::PENDING)),
            )
            .set((
                webhook_deliveries::status.eq(status),
                webhook_deliveries::next_attempt_at.eq(next),
                webhook_deliveries::finished_at.eq(finished),
                webhook_deliveries::last_status_code.eq(result.status_code),
                webhook_deliveries::last_error.eq(&result.error),
            ))
            .execute(conn)?;
            Ok(updated == 1)
        })
    }

    /// The deliveries of `scope`, newest first, at most `limit`, each with its attempts in order.
    pub fn webhook_deliveries(
        &self,
        scope: DeliveriesOf<'_>,
        limit: i64,
    ) -> StorageResult<Vec<(WebhookDelivery, Vec<WebhookAttempt>)>> {
        self.snapshot(|conn| {
            let mut query = webhook_deliveries::table.into_boxed();
            match scope {
                DeliveriesOf::Key { key_id, task_id } => {
                    query = query.filter(webhook_deliveries::key_id.eq(key_id.to_string()));
                    if let Some(task_id) = task_id {
                        query = query.filter(webhook_deliveries::task_id.eq(task_id.to_string()));
                    }
                }
                DeliveriesOf::Account(account_id) => {
                    let keys: Vec<String> =
                        api_keys::table.filter(api_keys::account_id.eq(account_id)).select(api_keys::id).load(conn)?;
                    query = query.filter(webhook_deliveries::key_id.eq_any(keys));
                }
            }
            let deliveries: Vec<WebhookDelivery> = query
                .order((webhook_deliveries::created_at.desc(), webhook_deliveries::id))
                .limit(limit)
                .select(WebhookDelivery::as_select())
                .load(conn)?;
            let ids: Vec<&str> = deliveries.iter().map(|d| d.id.as_str()).collect();
            let mut attempts: Vec<WebhookAttempt> = webhook_attempts::table
                .filter(webhook_attempts::delivery_id.eq_any(ids))
                .order((webhook_attempts::delivery_id, webhook_attempts::attempt))
                .select(WebhookAttempt::as_select())
                .load(conn)?;
            let now = now_millis();
            Ok(deliveries
                .into_iter()
                .map(|delivery| {
                    let (mine, rest): (Vec<_>, Vec<_>) = attempts.drain(..).partition(|a| a.delivery_id == delivery.id);
                    attempts = rest;
                    let mine = mine.into_iter().filter_map(|attempt| attempt.into_listed(&delivery, now)).collect();
                    (delivery, mine)
                })
                .collect())
        })
    }

    /// The webhook settings of key `key_id`, if it has a signing secret.
    pub fn key_webhook(&self, key_id: &str) -> StorageResult<Option<KeyWebhook>> {
        self.read(|conn| key_webhooks::table.find(key_id).select(KeyWebhook::as_select()).first(conn).optional())
    }

    /// Gives key `key_id` the signing secret `secret`; the one it replaces keeps signing beside it
    /// for [`PREVIOUS_SECRET_GRACE_MS`].
    pub fn set_webhook_secret(&self, key_id: &str, secret: &str) -> StorageResult<()> {
        let now = now_millis();
        self.transaction(|conn| {
            set_secret(conn, key_id, secret, now)?;
            Ok::<_, StorageError>(())
        })
    }

    /// Sets (or, with `None`, clears) the default webhook of key `key_id`'s jobs; `false` when the
    /// key has no signing secret yet.
    pub fn set_default_webhook(&self, key_id: &str, webhook: Option<&TaskWebhook>) -> StorageResult<bool> {
        let updated = self.read(|conn| {
            diesel::update(key_webhooks::table.find(key_id))
                .set((
                    key_webhooks::default_url.eq(webhook.map(|w| w.url.as_str())),
                    key_webhooks::default_on_running.eq(webhook.is_some_and(|w| w.on_running)),
                    key_webhooks::updated_at.eq(now_millis()),
                ))
                .execute(conn)
        })?;
        Ok(updated == 1)
    }
}

/// Sets key `key_id`'s signing secret in the caller's transaction (see
/// [`Database::set_webhook_secret`]).
pub(crate) fn set_secret(conn: &mut AnyConnection, key_id: &str, secret: &str, now: i64) -> QueryResult<()> {
    let current: Option<String> =
        key_webhooks::table.find(key_id).select(key_webhooks::secret).first(conn).optional()?;
    match current {
        Some(previous) => diesel::update(key_webhooks::table.find(key_id))
            .set((
                key_webhooks::secret.eq(secret),
                key_webhooks::previous_secret.eq(previous),
                key_webhooks::previous_until.eq(now + PREVIOUS_SECRET_GRACE_MS),
                key_webhooks::updated_at.eq(now),
            ))
            .execute(conn)?,
        None => diesel::insert_into(key_webhooks::table)
            .values((
                key_webhooks::key_id.eq(key_id),
                key_webhooks::secret.eq(secret),
                key_webhooks::updated_at.eq(now),
            ))
            .execute(conn)?,
    };
    Ok(())
}

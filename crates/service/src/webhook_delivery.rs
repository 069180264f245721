//! Completion webhooks: the target a job asks for (checked at submit), the delivery of each
//! queued message by workers (the task's poll JSON, signed with its key's secrets, retried on the
//! deployment's schedule), the delivery log its owner reads, and each key's secret and default.

use crate::stored_job::IdSpace;
use crate::views::{ReelView, WebhookAttemptView, WebhookDeliveryList, WebhookDeliveryView};
use crate::{rfc3339, Api, Caller, JobRunner, Operator, Service, ServiceError};
use domain::{TaskStatus, TaskWebhook, WebhookEvent};
use std::time::Duration;
use storage::{now_millis, AttemptResult, DeliveriesOf, TaskRecord, WebhookChoice, WebhookDelivery};
use webhooks::{Message, Sender, SigningSecret};

/// How webhooks are sent: the sender (its time limit, whether private receivers are allowed)
/// and the waits before each retry.
#[derive(Clone, Debug)]
pub struct WebhookSettings {
    /// Sends one attempt.
    pub sender: Sender,
    /// The waits before the second, third, ... attempt; after the last, a delivery is given up.
    pub retry_delays: Vec<Duration>,
}

impl WebhookSettings {
    /// Public receivers only, a 10 s limit per attempt and the standard schedule
    /// ([`domain::webhook::RETRY_DELAYS`]).
    pub fn standard() -> Result<WebhookSettings, webhooks::SetupError> {
        Ok(WebhookSettings {
            sender: Sender::new(webhooks::SenderSettings::default())?,
            retry_delays: domain::webhook::RETRY_DELAYS.to_vec(),
        })
    }
}

/// How long a worker holds a delivery it is sending: past its attempt's time limit, so a worker
/// that died mid-attempt hands the delivery to another within about this.
const DELIVERY_LEASE_MARGIN: Duration = Duration::from_secs(20);
/// Deliveries one worker sends at once.
const DELIVERIES_AT_ONCE: i64 = 32;
/// Most deliveries listed at once (the `maximum` of the log's `limit`).
pub const MAX_LISTED: i64 = 100;
/// Longest task or reel id the log is filtered by (the `maxLength` of its `task_id`).
pub const JOB_ID_FILTER_MAX: usize = 64;

impl Service {
    /// The webhook a request asks for: its own (`url` checked for form and for a public
    /// address), or the key's default when it names none (its `events`, when given, deciding
    /// whether the default sends `running`).
    pub(crate) async fn requested_webhook(
        &self,
        url: Option<&str>,
        events: Option<&[WebhookEvent]>,
    ) -> Result<WebhookChoice, ServiceError> {
        let Some(webhook) = TaskWebhook::requested(url, events).map_err(ServiceError::BadRequest)? else {
            return Ok(WebhookChoice::KeyDefault(events.map(|events| domain::webhook::sends_running(Some(events)))));
        };
        self.check_webhook_target(&webhook.url).await?;
        Ok(WebhookChoice::Requested(webhook))
    }

    async fn check_webhook_target(&self, url: &str) -> Result<(), ServiceError> {
        self.config()
            .webhooks
            .sender
            .check_target(url)
            .await
            .map_err(|reason| ServiceError::BadRequest(format!("webhook_url: {reason}")))
    }

    /// The JSON a task's poll answers, as it stood at `event`: a `running` message shows the
    /// task running even when it has ended since.
    fn webhook_body(&self, record: &TaskRecord, event: &str) -> Result<Vec<u8>, ServiceError> {
        let as_of = if event == WebhookEvent::Running.as_str() {
            TaskRecord {
                status: TaskStatus::Running.as_str().into(),
                finished_at: None,
                error: None,
                failure_kind: None,
                ..record.clone()
            }
        } else {
            record.clone()
        };
        let view = self.task_view(&as_of)?;
        let body = match IdSpace::of(&record.id) {
            IdSpace::Task => serde_json::to_vec(&view),
            IdSpace::Reel => serde_json::to_vec(&ReelView::from(view)),
        };
        body.map_err(|e| ServiceError::Internal(e.to_string()))
    }

    /// Sends one attempt of `delivery` and records it.
    async fn deliver(&self, delivery: WebhookDelivery) -> Result<(), ServiceError> {
        let (task_id, key_id) = (delivery.task_id.clone(), delivery.key_id.clone());
        let (task, key) =
            self.db(move |db| Ok::<_, storage::StorageError>((db.task(&task_id)?, db.key_webhook(&key_id)?))).await?;
        let prepared = match (task, key) {
            (Some(task), _) if task.expired_at.is_some() => {
                Err("the task expired (retention) before its webhook could be delivered".to_string())
            }
            (Some(task), Some(key)) => {
                let secrets: Result<Vec<SigningSecret>, _> =
                    key.signing_secrets(now_millis()).into_iter().map(SigningSecret::parse).collect();
                match (self.webhook_body(&task, &delivery.event), secrets) {
                    (Ok(body), Ok(secrets)) => Ok((body, secrets)),
                    (Err(e), _) => Err(e.to_string()),
                    (_, Err(e)) => Err(e.to_string()),
                }
            }
            _ => Err("the task or its key's signing secret is gone".to_string()),
        };
        let settings = &self.config().webhooks;
        let (result, retry) = match prepared {
            Ok((body, secrets)) => {
                let message = Message { id: &delivery.id, body: &body, secrets: &secrets };
                let attempt = settings.sender.send(&delivery.url, message).await;
                let retry =
                    if attempt.delivered() { None } else { next_attempt_in(&settings.retry_delays, delivery.attempts) };
                crate::metrics::webhook_attempt(attempt.delivered(), attempt.elapsed);
                let result = AttemptResult {
                    status_code: attempt.status_code.map(i32::from),
                    error: attempt.error,
                    duration_ms: i64::try_from(attempt.elapsed.as_millis()).unwrap_or(i64::MAX),
                };
                (result, retry)
            }
            // Nothing to send can be made: given up at once, and the log says why.
            Err(reason) => (AttemptResult { status_code: None, error: Some(reason), duration_ms: 0 }, None),
        };
        let outcome = if result.error.is_none() {
            "delivered"
        } else if retry.is_some() {
            "will retry"
        } else {
            "given up"
        };
        tracing::info!(
            delivery = %delivery.id, task = %delivery.task_id, event = %delivery.event, attempt = delivery.attempts,
            status = ?result.status_code, error = ?result.error, "webhook {outcome}"
        );
        let (id, attempt) = (delivery.id, delivery.attempts);
        self.db(move |db| db.record_webhook_attempt(&id, attempt, &result, retry)).await?;
        Ok(())
    }
}

/// Milliseconds until the attempt after attempt `made`, or `None` when it was the last.
fn next_attempt_in(delays: &[Duration], made: i32) -> Option<i64> {
    let next = u32::try_from(made).ok()?.checked_add(1)?;
    domain::webhook::wait_before(next, delays).map(|wait| i64::try_from(wait.as_millis()).unwrap_or(i64::MAX))
}

impl JobRunner<'_> {
    /// Sends the webhook deliveries that are due (up to 32, concurrently),
    /// one attempt each; returns how many were due.
    pub async fn deliver_webhooks(&self) -> Result<usize, ServiceError> {
        let lease = self.service.config().webhooks.sender.timeout() + DELIVERY_LEASE_MARGIN;
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
        let due = self.service.db(move |db| db.claim_webhook_deliveries(lease_ms, DELIVERIES_AT_ONCE)).await?;
        let count = due.len();
        let sends = due.into_iter().map(|delivery| self.service.deliver(delivery));
        for outcome in futures::future::join_all(sends).await {
            if let Err(e) = outcome {
                tracing::warn!(error = %e, "recording a webhook attempt failed; the delivery is tried again");
            }
        }
        Ok(count)
    }
}

impl Api<'_> {
    /// The caller's webhook deliveries, newest first (at most `limit`, 1 to `MAX_LISTED`,
    /// default half that), of one task or reel when `job_id` is given (at most
    /// `JOB_ID_FILTER_MAX` characters), each with its attempts; a filter out of range is a 400.
    pub async fn webhook_deliveries(
        &self,
        caller: &Caller,
        job_id: Option<&str>,
        limit: Option<i64>,
    ) -> Result<WebhookDeliveryList, ServiceError> {
        if job_id.is_some_and(|id| id.len() > JOB_ID_FILTER_MAX) {
            return Err(ServiceError::BadRequest(format!(
                "task_id: at most {JOB_ID_FILTER_MAX} characters (task and reel ids are shorter)"
            )));
        }
        if limit.is_some_and(|limit| !(1..=MAX_LISTED).contains(&limit)) {
            return Err(ServiceError::BadRequest(format!("limit: between 1 and {MAX_LISTED}")));
        }
        let (key_id, job_id) = (caller.key_id.clone(), job_id.map(str::to_string));
        let limit = limit.unwrap_or(MAX_LISTED / 2);
        let rows = self
            .service
            .db(move |db| {
                db.webhook_deliveries(DeliveriesOf::Key { key_id: &key_id, task_id: job_id.as_deref() }, limit)
            })
            .await?;
        Ok(WebhookDeliveryList { deliveries: rows.into_iter().map(delivery_view).collect() })
    }
}

/// A stored delivery as its owner sees it.
pub(crate) fn delivery_view(
    (delivery, attempts): (WebhookDelivery, Vec<storage::WebhookAttempt>),
) -> WebhookDeliveryView {
    WebhookDeliveryView {
        next_attempt_at: (delivery.status == storage::delivery_status::PENDING)
            .then_some(delivery.next_attempt_at)
            .flatten()
            .map(rfc3339),
        id: delivery.id,
        task_id: delivery.task_id,
        event: delivery.event,
        url: delivery.url,
        status: delivery.status,
        attempts: attempts
            .into_iter()
            .map(|a| WebhookAttemptView {
                attempt: a.attempt,
                at: rfc3339(a.at),
                status_code: a.status_code,
                error: a.error,
                duration_ms: a.duration_ms,
            })
            .collect(),
        created_at: rfc3339(delivery.created_at),
        finished_at: delivery.finished_at.map(rfc3339),
    }
}

/// A key's webhook settings as its owner sees them (never the secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyWebhookSettings {
    /// Whether the key has a signing secret.
    pub has_secret: bool,
    /// When the rotated-out secret stops signing, while it still does.
    pub previous_secret_until: Option<i64>,
    /// The default webhook of the key's jobs.
    pub default: Option<TaskWebhook>,
}

impl Service {
    /// Key `key_id`'s webhook settings.
    pub(crate) async fn key_webhook_settings(&self, key_id: &str) -> Result<KeyWebhookSettings, ServiceError> {
        let key_id = key_id.to_string();
        let stored = self.db(move |db| db.key_webhook(&key_id)).await?;
        let now = now_millis();
        Ok(match stored {
            Some(key) => KeyWebhookSettings {
                has_secret: true,
                previous_secret_until: key.previous_until.filter(|until| *until > now),
                default: key.default_webhook(),
            },
            None => KeyWebhookSettings { has_secret: false, previous_secret_until: None, default: None },
        })
    }

    /// Gives key `key_id` a new signing secret, returned once; the old one keeps signing beside
    /// it for a day ([`storage::PREVIOUS_SECRET_GRACE_MS`]).
    pub(crate) async fn rotate_webhook_secret(&self, key_id: &str) -> Result<String, ServiceError> {
        let secret = SigningSecret::generate().to_string();
        let (key_id, stored) = (key_id.to_string(), secret.clone());
        self.db(move |db| db.set_webhook_secret(&key_id, &stored)).await?;
        Ok(secret)
    }

    /// Sets (or clears) key `key_id`'s default webhook, checked like a request's.
    pub(crate) async fn set_default_webhook(
        &self,
        key_id: &str,
        url: Option<&str>,
        on_running: bool,
    ) -> Result<(), ServiceError> {
        let events = on_running.then_some([WebhookEvent::Running].as_slice());
        let webhook = TaskWebhook::requested(url, events).map_err(ServiceError::BadRequest)?;
        if let Some(webhook) = &webhook {
            self.check_webhook_target(&webhook.url).await?;
        }
        let key_id = key_id.to_string();
        let set = self.db(move |db| db.set_default_webhook(&key_id, webhook.as_ref())).await?;
        if !set {
            return Err(ServiceError::BadRequest(
                "this key has no webhook signing secret yet: make one first (rotate the webhook secret)".into(),
            ));
        }
        Ok(())
    }
}

impl Operator<'_> {
    /// Key `key_id`'s webhook settings.
    pub async fn key_webhook(&self, key_id: &str) -> Result<KeyWebhookSettings, ServiceError> {
        self.service.key_webhook_settings(key_id).await
    }

    /// Gives key `key_id` a new webhook signing secret, returned once; the old one keeps signing
    /// beside it for a day.
    pub async fn rotate_webhook_secret(&self, key_id: &str) -> Result<String, ServiceError> {
        let key_id = key_id.to_string();
        let key = key_id.clone();
        self.service.db(move |db| db.key(&key)).await?;
        self.service.rotate_webhook_secret(&key_id).await
    }

    /// Sets or clears key `key_id`'s default webhook.
    pub async fn set_default_webhook(
        &self,
        key_id: &str,
        url: Option<&str>,
        on_running: bool,
    ) -> Result<(), ServiceError> {
        self.service.set_default_webhook(key_id, url, on_running).await
    }
}

impl crate::Console<'_> {
    /// The webhook settings of one of the account's keys.
    pub async fn key_webhook(&self, account_id: &str, key_id: &str) -> Result<KeyWebhookSettings, ServiceError> {
        self.owned_key(account_id, key_id).await?;
        self.service.key_webhook_settings(key_id).await
    }

    /// Gives one of the account's keys a new webhook signing secret, returned once.
    pub async fn rotate_webhook_secret(&self, account_id: &str, key_id: &str) -> Result<String, ServiceError> {
        self.owned_key(account_id, key_id).await?;
        self.service.rotate_webhook_secret(key_id).await
    }

    /// Sets or clears the default webhook of one of the account's keys.
    pub async fn set_default_webhook(
        &self,
        account_id: &str,
        key_id: &str,
        url: Option<&str>,
        on_running: bool,
    ) -> Result<(), ServiceError> {
        self.owned_key(account_id, key_id).await?;
        self.service.set_default_webhook(key_id, url, on_running).await
    }

    /// The newest webhook deliveries of the account's keys (at most `limit`).
    pub async fn webhook_deliveries(
        &self,
        account_id: &str,
        limit: i64,
    ) -> Result<Vec<WebhookDeliveryView>, ServiceError> {
        let account_id = account_id.to_string();
        let limit = limit.clamp(1, MAX_LISTED);
        let rows = self.service.db(move |db| db.webhook_deliveries(DeliveriesOf::Account(&account_id), limit)).await?;
        Ok(rows.into_iter().map(delivery_view).collect())
    }
}

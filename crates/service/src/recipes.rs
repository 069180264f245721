//! Recipe use-cases. Every recipe is a task like any other (held, queued, run by a worker, billed
//! at its end); a synchronous recipe's caller additionally waits for the end, for up to
//! `sync_recipe_wait`, and gets the task with its result, or the queued task to poll when the wait
//! runs out. There is no second execution or billing path.

use crate::jobs::Queueing;
use crate::stored_job::{IdSpace, StoredJob};
use crate::views::{CancelledJob, ListingKitResult, LotTraceResult, QueuedReel, QueuedTask, ReelView, TaskView};
use crate::{Api, Caller, Service, ServiceError};
use domain::{FailureKind, ListingEnhanceRequest, ListingKitRequest, LotTraceRequest, ReelRequest, TaskStatus, Usd};
use recipes::{listing_enhance, listing_kit, lot_trace, reel, RecipeJob};
use serde::de::DeserializeOwned;
use std::time::Duration;
use storage::{IdempotencyClaim, WebhookChoice};
use tokio::time::Instant;

/// Claim priority of background work.
const BACKGROUND: i32 = 0;
/// Claim priority of work a caller is waiting on.
const WAITED_ON: i32 = 10;
/// How often a waiting caller re-reads its task when no notification arrives (a safety net: the
/// end of a task is signalled in-process and, on PostgreSQL, across processes).
const WAIT_POLL: Duration = Duration::from_millis(500);

/// How a recipe's job is queued: its claim priority, the client's idempotency claim and its
/// webhook (none for synchronous recipes, whose caller waits for the answer).
struct Queued {
    priority: i32,
    idempotency: Option<IdempotencyClaim>,
    webhook: WebhookChoice,
}

/// How a synchronous recipe call ended, `R` being the recipe's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum SyncOutcome<R> {
    /// The recipe succeeded within the wait (HTTP 200).
    Finished(Box<R>),
    /// Still running when the wait ran out (HTTP 202): poll the task.
    Pending(QueuedTask),
}

impl Api<'_> {
    /// The listing-enhance recipe: a raw listing photo to a polished one, queued (HTTP 202) and
    /// polled at `GET /v1/tasks/{id}`.
    pub async fn listing_enhance(
        &self,
        caller: &Caller,
        request: ListingEnhanceRequest,
    ) -> Result<QueuedTask, ServiceError> {
        let idempotency = self.idempotency_claim("listing-enhance", &request)?;
        let webhook =
            self.service.requested_webhook(request.webhook_url.as_deref(), request.webhook_events.as_deref()).await?;
        let job = listing_enhance::prepare(request).map_err(|e| ServiceError::BadRequest(e.to_string()))?;
        let queueing = Queued { priority: BACKGROUND, idempotency, webhook };
        self.service.enqueue_recipe(caller, RecipeJob::ListingEnhance(job), queueing).await
    }

    /// The lot-trace recipe, synchronous: the measured, rendered parcel, or the queued task when
    /// it takes longer than the wait.
    pub async fn lot_trace(
        &self,
        caller: &Caller,
        request: LotTraceRequest,
    ) -> Result<SyncOutcome<LotTraceResult>, ServiceError> {
        let idempotency = self.idempotency_claim("lot-trace", &request)?;
        let job = lot_trace::prepare(request).map_err(|e| ServiceError::BadRequest(e.to_string()))?;
        let queueing = Queued { priority: WAITED_ON, idempotency, webhook: WebhookChoice::Off };
        let queued = self.service.enqueue_recipe(caller, RecipeJob::LotTrace(job), queueing).await?;
        self.service.await_result(caller, queued).await
    }

    /// The listing-kit recipe, synchronous: the flyer, social posts, story and captions, or the
    /// queued task when it takes longer than the wait.
    pub async fn listing_kit(
        &self,
        caller: &Caller,
        request: ListingKitRequest,
    ) -> Result<SyncOutcome<ListingKitResult>, ServiceError> {
        let idempotency = self.idempotency_claim("listing-kit", &request)?;
        // The Fair Housing check reads each statement with a transformer (milliseconds apiece):
        // off the request threads.
        let policy = self.service.config().fair_housing;
        let job = tokio::task::spawn_blocking(move || listing_kit::prepare(request, policy))
            .await
            .map_err(|e| ServiceError::Internal(format!("listing check crashed: {e}")))?
            .map_err(|e| ServiceError::BadRequest(e.to_string()))?;
        let kit = RecipeJob::ListingKit(Box::new(job));
        let queueing = Queued { priority: WAITED_ON, idempotency, webhook: WebhookChoice::Off };
        let queued = self.service.enqueue_recipe(caller, kit, queueing).await?;
        self.service.await_result(caller, queued).await
    }

    /// The reel recipe: listing stills and details to a captioned vertical video, queued (HTTP
    /// 202) and polled at `GET /v1/recipes/reel/{reel_id}`.
    pub async fn reel(&self, caller: &Caller, request: ReelRequest) -> Result<QueuedReel, ServiceError> {
        let idempotency = self.idempotency_claim("reel", &request)?;
        let webhook =
            self.service.requested_webhook(request.webhook_url.as_deref(), request.webhook_events.as_deref()).await?;
        let job = reel::prepare(request).map_err(|e| ServiceError::BadRequest(e.to_string()))?;
        let queueing = Queued { priority: BACKGROUND, idempotency, webhook };
        Ok(self.service.enqueue_recipe(caller, RecipeJob::Reel(Box::new(job)), queueing).await?.into())
    }

    /// The reel `reel_id` as its owner sees it; other keys, and task ids, get 404.
    pub async fn reel_status(&self, caller: &Caller, reel_id: &str) -> Result<ReelView, ServiceError> {
        let record = self.service.record_in(caller, IdSpace::Reel, reel_id).await?;
        Ok(self.service.task_view(&record)?.into())
    }

    /// Cancels the caller's reel, as [`crate::Api::cancel_task`] cancels a task.
    pub async fn cancel_reel(&self, caller: &Caller, reel_id: &str) -> Result<ReelView, ServiceError> {
        let record = self.service.cancel(caller, IdSpace::Reel, reel_id).await?;
        Ok(self.service.task_view(&record)?.into())
    }

    /// Cancels the caller's task or reel, whichever `id` names, for front ends that take either
    /// (the connector's `cancel_task`).
    pub async fn cancel_job(&self, caller: &Caller, id: &str) -> Result<CancelledJob, ServiceError> {
        Ok(match IdSpace::of(id) {
            IdSpace::Reel => CancelledJob::Reel(self.cancel_reel(caller, id).await?),
            IdSpace::Task => CancelledJob::Task(self.cancel_task(caller, id).await?),
        })
    }
}

impl Service {
    async fn enqueue_recipe(
        &self,
        caller: &Caller,
        job: RecipeJob,
        queued: Queued,
    ) -> Result<QueuedTask, ServiceError> {
        let Queued { priority, idempotency, webhook } = queued;
        let name = job.name();
        let spec = self
            .engines()
            .catalog()
            .recipe_engine(name)
            .ok_or_else(|| ServiceError::Internal(format!("the engine catalog has no {name} recipe entry")))?;
        let price: Usd = domain::billing::recipe_quote(&spec.price);
        let job = StoredJob::Recipe(job);
        let queueing = Queueing { engine: name, job: &job, price, priority, provider: None, idempotency, webhook };
        Ok(self.enqueue(caller, queueing).await?.queued)
    }

    /// Waits for `queued` to end: its result when it succeeded, 400 when the client's input was
    /// unusable, 502 when it failed otherwise, and the queued task when the wait runs out.
    async fn await_result<R: DeserializeOwned>(
        &self,
        caller: &Caller,
        queued: QueuedTask,
    ) -> Result<SyncOutcome<R>, ServiceError> {
        let deadline = Instant::now() + self.config().sync_recipe_wait;
        loop {
            // Registered before reading, so an end between the read and the wait is not missed.
            let finished = self.inner.finished.notified();
            tokio::pin!(finished);
            finished.as_mut().enable();
            let (task_id, key_id) = (queued.id.clone(), caller.key_id.clone());
            let record = self.db(move |db| db.task_for_key(&task_id, &key_id)).await?;
            let record = record.ok_or_else(|| ServiceError::Internal(format!("task {} vanished", queued.id)))?;
            match record.status()? {
                TaskStatus::Succeeded => {
                    let task: TaskView = self.task_view(&record)?;
                    return Ok(SyncOutcome::Finished(Box::new(recipe_answer(task)?)));
                }
                TaskStatus::Failed => {
                    let message = record.error.clone().unwrap_or_else(|| "the recipe failed".into());
                    return Err(match record.failure_kind() {
                        Some(FailureKind::Input) => ServiceError::BadRequest(message),
                        _ => ServiceError::RecipeFailed(format!("task {}: {message}", record.id)),
                    });
                }
                TaskStatus::Queued | TaskStatus::Running => {}
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(SyncOutcome::Pending(queued));
            }
            let _ = tokio::time::timeout((deadline - now).min(WAIT_POLL), finished).await;
        }
    }
}

/// A finished recipe's answer `R`: the task's fields with its result's beside them.
fn recipe_answer<R: DeserializeOwned>(task: TaskView) -> Result<R, ServiceError> {
    let id = task.id.clone();
    let internal = |e: serde_json::Error| ServiceError::Internal(format!("the result of task {id} does not read: {e}"));
    let mut answer = serde_json::to_value(&task).map_err(internal)?;
    if let (Some(answer), Some(serde_json::Value::Object(result))) = (answer.as_object_mut(), task.result) {
        answer.extend(result);
    }
    serde_json::from_value(answer).map_err(internal)
}

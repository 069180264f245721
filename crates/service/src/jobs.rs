//! Client-facing job use-cases: authenticate, list models, submit, read a task, usage, output
//! downloads.

use crate::stored_job::{IdSpace, StoredJob, StoredOutput};
use crate::views::{ChargeView, ModelList, ModelView, OutputView, QueuedTask, TaskView, UsageView};
use crate::{rfc3339, Api, Caller, Service, ServiceError};
use domain::{idempotency, keys, GenerateRequest, IdempotencyKey, TaskStatus, Usd, ValidatedJob};
use engines::StoreError;
use storage::{
    new_id, now_millis, Cancellation, EarlierRequest, IdempotencyClaim, NewTask, SubmitError, TaskRecord, WebhookChoice,
};

const MISSING_KEY: &str = "missing or invalid API key: send the header `Authorization: Bearer <API_KEY>`";

/// A job to hold and queue (see [`Service::enqueue`]).
pub(crate) struct Queueing<'a> {
    /// Names the job on its task: an engine id or a recipe's name.
    pub engine: &'a str,
    pub job: &'a StoredJob,
    pub price: Usd,
    /// Claim order: higher first.
    pub priority: i32,
    /// The upstream provider the job is submitted to, if any: such a job is not claimed to run
    /// here; its submission is the caller's next step.
    pub provider: Option<&'a str>,
    /// The client's idempotency key and the fingerprint of its request.
    pub idempotency: Option<IdempotencyClaim>,
    /// Where the task's webhooks go.
    pub webhook: WebhookChoice,
}

/// A job held and queued, or the one an earlier try of the same request queued.
pub(crate) struct Enqueued {
    pub queued: QueuedTask,
    /// Whether the task is an earlier request's (the call was a retry): nothing new was queued.
    pub replayed: bool,
}

impl<'a> Api<'a> {
    /// This handle with the client's idempotency key for its next spending call: a retry of the
    /// same request (endpoint and body) within 24 hours gets the task the first try created,
    /// with nothing held or queued again; another request under the same key is refused.
    pub fn with_idempotency_key(self, key: Option<&'a IdempotencyKey>) -> Api<'a> {
        Api { idempotency: key, ..self }
    }

    /// The idempotency claim of a call to `endpoint` with `request`, when the client sent a key.
    pub(crate) fn idempotency_claim(
        &self,
        endpoint: &str,
        request: &impl serde::Serialize,
    ) -> Result<Option<IdempotencyClaim>, ServiceError> {
        let Some(key) = self.idempotency else { return Ok(None) };
        let body = serde_json::to_value(request).map_err(|e| ServiceError::Internal(e.to_string()))?;
        Ok(Some(IdempotencyClaim {
            key: key.as_str().to_string(),
            request_hash: idempotency::fingerprint(endpoint, &body),
        }))
    }
}

impl Api<'_> {
    /// Resolves a bearer token to its live key.
    pub async fn authenticate(&self, token: Option<&str>) -> Result<Caller, ServiceError> {
        let hash = secret_hash(token)?;
        let found = self.service.db(move |db| db.authenticate(&hash)).await?;
        live_caller(found)
    }

    /// A poll: the live key behind `token` and its task `id`, read in one trip to the database's
    /// threads (a poll is the commonest request, and each trip is a hand-off to them and back),
    /// or without one: from memory when the key is verified there and the task has ended and is
    /// kept there, on SQLite on this thread when the reads can be done at once, on PostgreSQL on
    /// this thread's own connection when the key is verified in memory. The task's answer (its
    /// view, or a 404 or 410) comes beside the caller rather than in place of it, so that the
    /// front end counts the request against the key's rate before it answers with the task.
    pub async fn authenticate_and_poll(
        &self,
        token: Option<&str>,
        id: &str,
    ) -> Result<(Caller, Result<TaskView, ServiceError>), ServiceError> {
        let hash = secret_hash(token)?;
        let wanted = (IdSpace::of(id) == IdSpace::Task).then(|| id.to_string());
        let database = self.service.database();
        let reads = match database.poll_reads_in_memory(&hash, wanted.as_deref()) {
            Some(reads) => reads,
            None => {
                let reads = self.poll_reads(hash, wanted).await?;
                database.keep_polled_task(&reads);
                reads
            }
        };
        let storage::PollReads { key: found, task: record } = reads;
        let caller = live_caller(found)?;
        let task = found_record(IdSpace::Task, id, record).and_then(|record| self.service.task_view(&record));
        Ok((caller, task))
    }

    /// A poll's reads from the database: on this thread when they can be done at once (SQLite) or
    /// on its own connection (PostgreSQL), on the database's threads otherwise.
    async fn poll_reads(&self, hash: String, wanted: Option<String>) -> Result<storage::PollReads, ServiceError> {
        let database = self.service.database();
        if let Some(reads) = database.poll_reads_at_once(&hash, wanted.as_deref()) {
            return Ok(reads?);
        }
        if let Some(reads) = database.poll_reads_async(&hash, wanted.as_deref()) {
            if let Some(reads) = reads.await {
                return Ok(reads);
            }
        }
        self.service.db(move |db| db.poll_reads(&hash, wanted.as_deref())).await
    }

    /// Resolves the connector's bearer token to its caller: an API key, or an access token the
    /// connector's authorization server issued (see [`crate::oauth`]).
    pub async fn authenticate_connector(&self, token: Option<&str>) -> Result<Caller, ServiceError> {
        match token.map(str::trim) {
            Some(token) if crate::oauth::is_access_token(token) => self
                .service
                .authorization()
                .caller_of_token(token)
                .await?
                .ok_or_else(|| ServiceError::Unauthorized("invalid, expired or revoked access token".into())),
            other => self.authenticate(other).await,
        }
    }

    /// The live engines.
    pub fn list_models(&self) -> ModelList {
        let models = self
            .service
            .engines()
            .catalog()
            .engines()
            .map(|spec| ModelView {
                id: spec.id.clone(),
                family: spec.family,
                title: spec.title.clone(),
                inputs: spec.inputs.clone(),
                params: spec.params.clone(),
                price: (&spec.price).into(),
            })
            .collect();
        ModelList { version: "1.0.0".into(), models }
    }

    /// Validates and prices a job, holds its price and queues it.
    pub async fn submit(&self, caller: &Caller, request: GenerateRequest) -> Result<QueuedTask, ServiceError> {
        let idempotency = self.idempotency_claim("generate", &request)?;
        let job = self.validate(&request)?;
        let webhook =
            self.service.requested_webhook(request.webhook_url.as_deref(), request.webhook_events.as_deref()).await?;
        let (engine, price) = (job.model.clone(), job.price);
        // Only a routed engine's entry is copied: local submits, the common case, copy nothing.
        let routed =
            self.service.engines().catalog().get(&engine).filter(|spec| spec.route.provider().is_some()).cloned();
        let upstream = routed.map(|spec| (spec, job.clone()));
        let provider = upstream.as_ref().and_then(|(spec, _)| spec.route.provider());
        let stored = StoredJob::Engine(job);
        let queueing = Queueing { engine: &engine, job: &stored, price, priority: 0, provider, idempotency, webhook };
        let Enqueued { queued, replayed } = self.service.enqueue(caller, queueing).await?;
        let (Some((spec, job)), false) = (upstream, replayed) else { return Ok(queued) };
        // Run apart from the request, so a client that hangs up cannot stop the submission between
        // the provider's acceptance and our record of it.
        let (service, id) = (self.service.clone(), queued.id.clone());
        tokio::spawn(async move { service.submit_upstream(&id, &spec, &job).await })
            .await
            .map_err(|e| ServiceError::Internal(format!("the submission crashed: {e}")))??;
        Ok(queued)
    }

    /// Checks a request against the catalog and quotes it, without queueing anything.
    pub fn validate(&self, request: &GenerateRequest) -> Result<ValidatedJob, ServiceError> {
        let spec = self.service.engines().catalog().get(&request.model).ok_or_else(|| {
            ServiceError::UnknownModel(format!(
                "model: unknown or unavailable model {:?}; GET /v1 lists the live models",
                request.model
            ))
        })?;
        spec.validate(request).map_err(|e| ServiceError::BadRequest(e.to_string()))
    }

    /// The task `id` as its owner sees it; other keys, and ids of other spaces (reels), get 404.
    pub async fn task(&self, caller: &Caller, id: &str) -> Result<TaskView, ServiceError> {
        let record = self.service.record_in(caller, IdSpace::Task, id).await?;
        self.service.task_view(&record)
    }

    /// Cancels the caller's task `id`: a queued one at once, a running one as its worker next
    /// looks (it stops the job's process) or at its provider. The task ends `failed` with
    /// "cancelled by client", its hold released and nothing billed. A task that already ended is
    /// a 409 naming its state; another key's task, or a reel's id, is a 404.
    pub async fn cancel_task(&self, caller: &Caller, id: &str) -> Result<TaskView, ServiceError> {
        let record = self.service.cancel(caller, IdSpace::Task, id).await?;
        self.service.task_view(&record)
    }

    /// The bytes and MIME type of a stored output, if the URL's signature holds.
    pub async fn open_file(
        &self,
        path: &str,
        expires: i64,
        signature: &str,
    ) -> Result<(engines::StoredObject, String), ServiceError> {
        if !self.service.inner.signer.verify(path, expires, signature, now_millis() / 1000) {
            return Err(ServiceError::Forbidden(
                "invalid or expired download signature; poll the task again for a fresh URL".into(),
            ));
        }
        let object = self.service.inner.store.open(path).await.map_err(|e| match e {
            StoreError::NotFound(_) => ServiceError::NotFound("no such file".into()),
            StoreError::Backend(m) => ServiceError::Internal(m),
        })?;
        Ok((object, engines::content_type_of(path.rsplit('.').next().unwrap_or_default()).to_string()))
    }

    /// This key's spend and its account's standing.
    pub async fn usage(&self, caller: &Caller) -> Result<UsageView, ServiceError> {
        let key_id = caller.key_id.clone();
        let usage = self.service.db(move |db| db.usage(&key_id, 20)).await?;
        let key = usage.key.limits();
        let account = usage.account.limits();
        Ok(UsageView {
            key_id: usage.key.id.clone(),
            spent_usd: key.spent,
            held_usd: key.held,
            spend_cap_usd: key.cap,
            cap_headroom_usd: key.headroom(),
            free_allowance_remaining_usd: account.free_remaining(),
            card_on_file: account.card_on_file,
            invoice_balance_usd: Usd::from_units(usage.account.invoice_units),
            recent_charges: usage
                .recent_charges
                .iter()
                .map(|e| ChargeView {
                    task_id: e.task_id.clone(),
                    amount_usd: Usd::from_units(e.amount_units),
                    from_free_allowance_usd: Usd::from_units(e.allowance_units),
                    at: rfc3339(e.created_at),
                })
                .collect(),
        })
    }
}

impl Service {
    /// Holds the job's price and queues it, or, for a retry under an idempotency key, answers
    /// with the task the first try queued.
    pub(crate) async fn enqueue(&self, caller: &Caller, queueing: Queueing<'_>) -> Result<Enqueued, ServiceError> {
        let space = queueing.job.id_space();
        let id = new_id(space.prefix());
        let (job, stored, input_bytes) = self.store_large_inputs(&id, queueing.job).await?;
        let new = NewTask {
            id,
            key_id: caller.key_id.clone(),
            account_id: caller.account_id.clone(),
            engine: queueing.engine.to_string(),
            job,
            price: queueing.price,
            priority: queueing.priority,
            provider: queueing.provider.map(str::to_string),
            input_bytes,
            key_input_limit: self.config().stored_input_bytes_per_key,
            idempotency: queueing.idempotency,
            webhook: queueing.webhook,
        };
        let submitted = self.inner.db.clone();
        let outcome = tokio::task::spawn_blocking(move || submitted.submit_task(&new))
            .await
            .map_err(|e| ServiceError::Internal(format!("storage task crashed: {e}")))?;
        let record = match outcome {
            Ok(record) => record,
            Err(e) => {
                // Refused (a cap, the allowance, a retry) or failed: nothing will read the inputs.
                for path in stored {
                    let _ = self.inner.store.delete(&path).await;
                }
                return match e {
                    SubmitError::AlreadySubmitted(earlier) => self.replay(caller, space, earlier).await,
                    other => Err(other.into()),
                };
            }
        };
        if queueing.provider.is_none() {
            self.job_queued().notify_one();
        }
        tracing::info!(task = %record.id, key = %caller.key_id, model = %record.engine, price = %record.price(), "job accepted");
        Ok(Enqueued { queued: self.queued_answer(space, record, false), replayed: false })
    }

    /// The 202 answer of an accepted job: always `queued`, as it was at acceptance.
    fn queued_answer(&self, space: IdSpace, record: TaskRecord, replayed: bool) -> QueuedTask {
        QueuedTask {
            poll_url: self.poll_url(space, &record.id),
            price_usd: record.price(),
            id: record.id,
            status: TaskStatus::Queued,
            replayed,
        }
    }

    /// The answer to a retry: the task the first try created, as that try's answer showed it.
    async fn replay(&self, caller: &Caller, space: IdSpace, earlier: EarlierRequest) -> Result<Enqueued, ServiceError> {
        if !earlier.same_request {
            return Err(ServiceError::IdempotencyKeyReused(format!(
                "this Idempotency-Key was already used with a different request (task {}); \
                 send a new key for a new request",
                earlier.task_id
            )));
        }
        let record = self.record_in(caller, space, &earlier.task_id).await?;
        tracing::info!(task = %record.id, key = %caller.key_id, "retry answered with its earlier task");
        Ok(Enqueued { queued: self.queued_answer(space, record, true), replayed: true })
    }

    /// `job` as stored on task `id`: each `data:` input longer than [`INLINE_INPUT_MAX`] is
    /// written to the object store and replaced by a `stored-input:` reference, so task rows stay
    /// small whatever the inputs. Returns the job's JSON, the paths written and their bytes.
    async fn store_large_inputs(&self, id: &str, job: &StoredJob) -> Result<(String, Vec<String>, i64), ServiceError> {
        let internal = |e: serde_json::Error| ServiceError::Internal(e.to_string());
        let mut value = job.encode().map_err(internal)?;
        let mut large = Vec::new();
        take_large_data_uris(&mut value, id, &mut large);
        let mut stored: Vec<String> = Vec::with_capacity(large.len());
        let bytes =
            large.iter().map(|(_, uri)| i64::try_from(uri.len()).unwrap_or(i64::MAX)).fold(0, i64::saturating_add);
        for (path, uri) in large {
            if let Err(e) = self.inner.store.put(&path, uri.into_bytes()).await {
                for path in &stored {
                    let _ = self.inner.store.delete(path).await;
                }
                return Err(ServiceError::Internal(format!("storing an input: {e}")));
            }
            stored.push(path);
        }
        Ok((serde_json::to_string(&value).map_err(internal)?, stored, bytes))
    }

    /// Removes the inputs stored for task `task_id` at submit (a job that failed never reads them
    /// again). Best effort: a failure is logged, and the task's outcome stands.
    pub(crate) async fn discard_inputs(&self, task_id: &str) {
        match self.inner.store.delete_folder(&format!("inputs/{task_id}")).await {
            Ok(0) => {}
            Ok(removed) => tracing::debug!(task = %task_id, removed, "stored inputs removed"),
            Err(e) => tracing::warn!(task = %task_id, error = %e, "stored inputs could not be removed"),
        }
    }

    /// The address clients poll for job `id` of `space`.
    pub(crate) fn poll_url(&self, space: IdSpace, id: &str) -> String {
        match space {
            IdSpace::Task => self.urls().task(id),
            IdSpace::Reel => self.urls().reel(id),
        }
    }

    /// The job `id` of `space` owned by the caller's key, or 404.
    pub(crate) async fn record_in(
        &self,
        caller: &Caller,
        space: IdSpace,
        id: &str,
    ) -> Result<TaskRecord, ServiceError> {
        if IdSpace::of(id) != space {
            return found_record(space, id, None);
        }
        let (task_id, key_id) = (id.to_string(), caller.key_id.clone());
        let record = self.db(move |db| db.task_for_key(&task_id, &key_id)).await?;
        found_record(space, id, record)
    }

    /// Cancels the caller's job `id` of `space` (see [`Api::cancel_task`]) and returns it as
    /// it ended.
    pub(crate) async fn cancel(&self, caller: &Caller, space: IdSpace, id: &str) -> Result<TaskRecord, ServiceError> {
        self.record_in(caller, space, id).await?;
        self.cancel_of_key(&caller.key_id, space, id).await?;
        self.record_in(caller, space, id).await
    }

    /// Cancels job `id` of `space` queued by `key_id`: released unbilled, its waiters woken, its
    /// stored inputs removed and its provider request cancelled.
    pub(crate) async fn cancel_of_key(&self, key_id: &str, space: IdSpace, id: &str) -> Result<(), ServiceError> {
        let (task_id, key_id) = (id.to_string(), key_id.to_string());
        let cancellation = self.db(move |db| db.cancel_task(&task_id, &key_id)).await?;
        match cancellation {
            Cancellation::NotFound => {
                return Err(ServiceError::NotFound(format!("no {} {id:?} for this key", space.prefix())))
            }
            Cancellation::AlreadyFinished(status) => {
                return Err(ServiceError::AlreadyFinished(format!(
                    "{} {id:?} already {status}; only a queued or running job can be cancelled",
                    space.prefix()
                )))
            }
            Cancellation::Cancelled { was_running, upstream } => {
                tracing::info!(task = %id, was_running, "job cancelled by its client");
                // Waiters on it (a synchronous recipe, the worker running it) look now.
                self.inner.finished.notify_waiters();
                self.discard_inputs(id).await;
                if let Some(stored) = upstream {
                    self.cancel_upstream(&stored).await;
                }
            }
        }
        Ok(())
    }

    pub(crate) fn task_view(&self, record: &TaskRecord) -> Result<TaskView, ServiceError> {
        let status = record.status()?;
        let output = if status == TaskStatus::Succeeded {
            let stored: Vec<StoredOutput> = serde_json::from_str(record.outputs.as_deref().unwrap_or("[]"))
                .map_err(|e| ServiceError::Internal(format!("stored outputs of {}: {e}", record.id)))?;
            Some(stored.iter().map(|o| self.output_view(o)).collect())
        } else {
            None
        };
        let result = match (status, &record.result) {
            (TaskStatus::Succeeded, Some(result)) => {
                let mut result: serde_json::Value = serde_json::from_str(result)
                    .map_err(|e| ServiceError::Internal(format!("stored result of {}: {e}", record.id)))?;
                link_outputs(&mut result, output.as_deref().unwrap_or_default());
                Some(result)
            }
            _ => None,
        };
        Ok(TaskView {
            id: record.id.clone(),
            model: record.engine.clone(),
            status,
            output,
            cost_usd: if status == TaskStatus::Succeeded { record.cost() } else { None },
            price_usd: record.price(),
            error: record.error.clone(),
            sandbox: (status == TaskStatus::Succeeded).then_some(record.sandbox),
            result,
            created_at: rfc3339(record.created_at),
            started_at: record.started_at.map(rfc3339),
            finished_at: record.finished_at.map(rfc3339),
        })
    }

    fn output_view(&self, output: &StoredOutput) -> OutputView {
        let ttl = i64::try_from(self.config().output_url_ttl.as_secs()).unwrap_or(i64::MAX / 2);
        let expires = now_millis() / 1000 + ttl;
        let signature = self.inner.signer.sign(&output.path, expires);
        OutputView {
            url: self.urls().file(&output.path, expires, &signature),
            kind: output.kind,
            content_type: output.content_type.clone(),
            width: output.width,
            height: output.height,
            duration_seconds: output.duration_secs,
            expires_at: rfc3339(expires.saturating_mul(1000)),
        }
    }
}

/// Replaces each `{"$output": N}` in a recipe's result (a named piece, such as the listing kit's
/// flyer) with output N's view: its signed URL, type, content type and size.
fn link_outputs(value: &mut serde_json::Value, outputs: &[OutputView]) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let linked = (map.len() == 1)
                .then(|| map.get("$output").and_then(Value::as_u64))
                .flatten()
                .and_then(|n| outputs.get(usize::try_from(n).ok()?))
                .and_then(|view| serde_json::to_value(view).ok());
            match linked {
                Some(view) => *value = view,
                None => map.values_mut().for_each(|v| link_outputs(v, outputs)),
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| link_outputs(v, outputs)),
        _ => {}
    }
}

/// `data:` inputs longer than this are kept in the object store rather than the task row. Every
/// free-text field (prompts, details) is shorter, so only input URLs reach it.
pub(crate) const INLINE_INPUT_MAX: usize = 16 * 1024;

/// Replaces each `data:` URI longer than [`INLINE_INPUT_MAX`] in `value` by a reference to
/// `inputs/{task_id}/{n}.datauri`, collecting (path, URI) pairs in `taken`.
fn take_large_data_uris(value: &mut serde_json::Value, task_id: &str, taken: &mut Vec<(String, String)>) {
    use serde_json::Value;
    match value {
        Value::String(text) if text.len() > INLINE_INPUT_MAX && text.starts_with("data:") => {
            let path = format!("inputs/{task_id}/{}.datauri", taken.len());
            let uri = std::mem::replace(text, format!("{}{path}", engines::STORED_INPUT_PREFIX));
            taken.push((path, uri));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| take_large_data_uris(v, task_id, taken)),
        Value::Object(map) => map.values_mut().for_each(|v| take_large_data_uris(v, task_id, taken)),
        _ => {}
    }
}

/// The hash a presented bearer token is looked up by; 401 for a missing or malformed token, before
/// any lookup.
fn secret_hash(token: Option<&str>) -> Result<String, ServiceError> {
    let token = token.map(str::trim).filter(|t| !t.is_empty());
    let Some(token) = token.filter(|t| keys::looks_like_secret(t)) else {
        return Err(ServiceError::Unauthorized(MISSING_KEY.into()));
    };
    Ok(keys::hash_secret(token))
}

/// The caller of a live key found by its hash; 401 when none was.
fn live_caller(found: Option<storage::AuthenticatedKey>) -> Result<Caller, ServiceError> {
    found.map(Caller::from).ok_or_else(|| ServiceError::Unauthorized("invalid or revoked API key".into()))
}

/// The job `id` of `space` as read for its key: 404 when there is none (or the id is of another
/// space), 410 when its outputs were removed at the end of the retention period.
fn found_record(space: IdSpace, id: &str, record: Option<TaskRecord>) -> Result<TaskRecord, ServiceError> {
    let record = record.ok_or_else(|| ServiceError::NotFound(format!("no {} {id:?} for this key", space.prefix())))?;
    if let Some(expired_at) = record.expired_at {
        let finished = record.finished_at.map_or_else(|| "?".into(), rfc3339);
        return Err(ServiceError::Expired(format!(
            "{} {id:?} finished at {finished} and its outputs were removed at {} (finished jobs are kept \
             for the retention period); its charge stays in /v1/usage",
            space.prefix(),
            rfc3339(expired_at)
        )));
    }
    Ok(record)
}

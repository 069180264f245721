//! Jobs run at an upstream provider: submitted inline by the API once their task and hold are
//! written, then tracked by workers as timers (no slot held while the provider works), finished
//! from the provider's result with every file copied into our store, and woken early by the
//! provider's verified callbacks.

use crate::execution::{retrying_own_failures, ClaimedJob, JobOutcome};
use crate::stored_job::{output_path, StoredJob, StoredOutput};
use crate::{Api, JobRunner, Service, ServiceError};
use domain::{billing, EngineSpec, FailureKind, ValidatedJob};
use engines::upstream::FileInfo;
use engines::DownloadError;
use providers::{Completion, Handle, Next, PollPolicy, ProviderName};
use std::time::Duration;
use storage::{now_millis, ClaimedTask, Success};

/// Most files taken from one result (a result naming more is malformed).
const MAX_FILES: usize = 16;
/// Results taken in at once by one process (the others wait their turn, their leases renewed):
/// this bounds the memory the files of many requests finishing together can take.
pub(crate) const RESULTS_TAKEN_IN_AT_ONCE: usize = 4;
/// Bytes read from a scratch file at a time while it is copied into the store.
const READ_CHUNK_BYTES: usize = 1 << 20;

/// What our callback URL's token signs.
fn callback_subject(provider: &str, task_id: &str) -> String {
    format!("callback/{provider}/{task_id}")
}

/// How tracked requests are looked at (the same policy as recipe steps').
const POLL: PollPolicy = PollPolicy::DEFAULT;

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl JobRunner<'_> {
    /// Claims up to `limit` tracked tasks due for a look.
    pub async fn claim_tracked(
        &self,
        worker_id: &str,
        lease_ms: i64,
        limit: i64,
    ) -> Result<Vec<ClaimedJob>, ServiceError> {
        let worker_id = worker_id.to_string();
        Ok(self
            .service
            .db(move |db| db.claim_tracked(&worker_id, lease_ms, limit))
            .await?
            .into_iter()
            .map(ClaimedJob)
            .collect())
    }

    /// Takes one look at a tracked task: asks its provider where the request stands (or reads
    /// the callback it sent), then waits again, finishes it, or fails it. Outages are retried
    /// with backoff until the family's deadline; refusals, malformed answers and failures at
    /// the provider fail the task unbilled.
    pub async fn track(&self, job: &ClaimedJob) -> Result<JobOutcome, ServiceError> {
        let claimed = &job.0;
        let task = &claimed.task;
        let job = match StoredJob::decode(&task.job) {
            Ok(StoredJob::Engine(job)) => job,
            Ok(StoredJob::Recipe(_)) => {
                return self.service.fail_tracked(claimed, "a recipe cannot run at a provider").await
            }
            Err(e) => return self.service.fail_tracked(claimed, &format!("stored job is unreadable: {e}")).await,
        };
        let Some(provider) = task.provider.as_deref().and_then(ProviderName::parse) else {
            return self.service.fail_tracked(claimed, "the task names no known provider").await;
        };
        let kind = crate::stored_job::engine_job_kind(&job, self.service.engines().catalog());
        let deadline = self.service.config().deadlines.of(kind);
        let age = Duration::from_millis(u64::try_from(now_millis() - task.created_at).unwrap_or(0));
        let past_deadline = age > deadline;
        let handle: Option<Handle> = match task.provider_handle.as_deref().map(serde_json::from_str).transpose() {
            Ok(handle) => handle,
            Err(e) => {
                return self
                    .service
                    .fail_tracked(claimed, &format!("the stored provider request is unreadable: {e}"))
                    .await
            }
        };
        // A look that keeps failing to end (a result that brings its worker down) is not retried
        // forever: past twice the deadline the task fails whatever the provider says.
        if age > deadline * 2 {
            let message = format!(
                "the result from {provider} could not be taken in before the deadline ({} s)",
                deadline.as_secs()
            );
            return self.service.fail_tracked(claimed, &message).await;
        }
        let upstream = self.service.engines().upstream();
        let look = match (&handle, &task.provider_callback) {
            (_, Some(callback)) => match upstream.read_callback(provider, callback.as_bytes()) {
                Ok((_, progress)) => Ok(progress),
                Err(e) => {
                    return self
                        .service
                        .fail_tracked(claimed, &format!("{provider}'s callback cannot be read: {e}"))
                        .await
                }
            },
            (Some(handle), None) if !handle.status_url.is_empty() => {
                let started = std::time::Instant::now();
                let look = upstream.poll(handle).await;
                crate::metrics::provider_call(provider.as_str(), "poll", look.is_ok(), started.elapsed());
                look
            }
            // The api-server stopped between the provider's acceptance and our record of it: wait
            // for the provider's callback to adopt the request, until the deadline.
            _ if past_deadline => {
                let message = format!("the submission to {provider} was interrupted and {provider} never reported the request; nothing was billed");
                return self.service.fail_tracked(claimed, &message).await;
            }
            _ => return self.service.look_again(claimed, POLL.max, false).await,
        };
        match POLL.after_look(provider, look, age, deadline) {
            Next::LookAgain { after, started } => self.service.look_again(claimed, after, started).await,
            Next::Succeeded(completion) => {
                self.service.finish_upstream(claimed, &job, completion, age, past_deadline).await
            }
            Next::Failed(message) => self.service.fail_tracked(claimed, &message).await,
            Next::PastDeadline => {
                if let Some(handle) = &handle {
                    let _ = upstream.cancel(handle).await;
                }
                self.service
                    .fail_tracked(claimed, &crate::work::JobFailure::past_deadline(kind, deadline).message)
                    .await
            }
        }
    }
}

impl Api<'_> {
    /// Checks the token of a callback URL we gave `provider` for `task_id`, before anything of
    /// the callback's body is read: a caller without it is refused without costing a read.
    pub fn check_callback_token(
        &self,
        provider: &str,
        task_id: &str,
        token: Option<&str>,
    ) -> Result<ProviderName, ServiceError> {
        let name =
            ProviderName::parse(provider).ok_or_else(|| ServiceError::NotFound(format!("no provider {provider:?}")))?;
        if !token
            .is_some_and(|token| self.service.inner.signer.verify(&callback_subject(provider, task_id), 0, token, 0))
        {
            return Err(ServiceError::Unauthorized("the callback URL's token is missing or wrong".into()));
        }
        Ok(name)
    }

    /// A provider's callback about task `task_id`: our URL token and the provider's signature
    /// verified, then the task is looked at at once (for a request we recorded, the provider's
    /// API stays the authority on its outcome). A request the task never recorded (its
    /// api-server stopped after the provider accepted it) is adopted from the callback, whose
    /// verified body is then its outcome, so it is neither lost nor submitted again.
    pub async fn provider_callback(
        &self,
        provider: &str,
        task_id: &str,
        token: Option<&str>,
        header: &(dyn Fn(&str) -> Option<String> + Sync),
        body: &[u8],
    ) -> Result<(), ServiceError> {
        let name = self.check_callback_token(provider, task_id, token)?;
        let upstream = self.service.engines().upstream();
        let (request_id, _) = upstream.verify_webhook(name, header, body).await.map_err(|e| match e {
            providers::WebhookError::Keys(_) => ServiceError::Unavailable(e.to_string()),
            providers::WebhookError::NotConfigured(_) => ServiceError::NotFound(e.to_string()),
            other => ServiceError::Unauthorized(other.to_string()),
        })?;
        let id = task_id.to_string();
        let task = self
            .service
            .db(move |db| db.task(&id))
            .await?
            .filter(|t| t.provider.as_deref() == Some(provider))
            .ok_or_else(|| ServiceError::NotFound(format!("no task {task_id:?} at {provider}")))?;
        let recorded: Option<Handle> = task.provider_handle.as_deref().and_then(|h| serde_json::from_str(h).ok());
        match recorded {
            Some(handle) if handle.request_id == request_id => {
                let id = task_id.to_string();
                if self.service.db(move |db| db.wake_tracked(&id)).await? {
                    self.service.tracked_due().notify_one();
                }
                Ok(())
            }
            Some(_) => Err(ServiceError::BadRequest("the callback is about another request".into())),
            None => {
                let handle = upstream.handle_of_callback(name, body).map_err(ServiceError::BadRequest)?;
                let handle_json = serde_json::to_string(&handle).map_err(|e| ServiceError::Internal(e.to_string()))?;
                let (id, callback) = (task_id.to_string(), String::from_utf8_lossy(body).into_owned());
                let provider = provider.to_string();
                if self.service.db(move |db| db.adopt_submission(&id, &provider, &handle_json, &callback)).await? {
                    tracing::warn!(task = %task_id, request = %request_id, "adopted a request from its callback");
                    self.service.tracked_due().notify_one();
                } else {
                    // The task was failed already (its submission got no answer in time): the
                    // request ran at the provider for nothing. Callbacks come at the end, so
                    // there is nothing left to cancel; the log keeps it for reconciliation.
                    tracing::warn!(task = %task_id, request = %request_id, "a callback for a task that no longer waits");
                }
                Ok(())
            }
        }
    }
}

impl Service {
    /// Asks the provider to cancel a request (its handle as stored on the task) whose task was
    /// cancelled here; the task is already failed and unbilled, so a refusal is only logged.
    pub(crate) async fn cancel_upstream(&self, stored: &str) {
        let Ok(handle) = serde_json::from_str::<providers::Handle>(stored) else {
            tracing::warn!("a cancelled task's provider handle does not read; not cancelled upstream");
            return;
        };
        if let Err(e) = self.engines().upstream().cancel(&handle).await {
            tracing::warn!(error = %e, request = %handle.request_id, "could not cancel a request at its provider");
        }
    }

    /// Submits a job whose task and hold were just written to its route's provider, and records
    /// the request on the task. On a refusal, an error status or no answer the task is failed at
    /// once (its hold released, nothing billed; it can never run) and the provider's reason is
    /// returned as a 502.
    pub(crate) async fn submit_upstream(
        &self,
        task_id: &str,
        spec: &EngineSpec,
        job: &ValidatedJob,
    ) -> Result<(), ServiceError> {
        let input = self.engines().upstream_input(spec, job);
        let provider = spec.route.provider().unwrap_or("provider");
        let webhook = self.config().provider_webhooks.then(|| self.callback_url(provider, task_id));
        let started = std::time::Instant::now();
        let submitted = self.engines().upstream().submit(&spec.route, input, webhook.as_deref()).await;
        crate::metrics::provider_call(provider, "submit", submitted.is_ok(), started.elapsed());
        let handle = match submitted {
            Ok(handle) => handle,
            Err(e) => {
                let message = format!("provider submit failed: {e}");
                self.fail_submission(task_id, &message).await;
                tracing::warn!(task = %task_id, %provider, error = %e, "provider refused a submission");
                return Err(ServiceError::ProviderFailed(message));
            }
        };
        let handle_json = serde_json::to_string(&handle).map_err(|e| ServiceError::Internal(e.to_string()))?;
        let recorded = retrying_own_failures("recording the provider's request", || {
            let (id, handle_json) = (task_id.to_string(), handle_json.clone());
            self.db(move |db| db.record_submission(&id, &handle_json, millis(POLL.first)))
        })
        .await;
        match recorded {
            Ok(true) => {
                self.tracked_due().notify_one();
                tracing::info!(task = %task_id, %provider, request = %handle.request_id, "submitted to the provider");
                Ok(())
            }
            // A callback may have adopted the request first (a provider faster than our write).
            Ok(false) if self.recorded_request(task_id).await.as_deref() == Some(handle.request_id.as_str()) => Ok(()),
            // Nothing will track the request: stop it so it is not paid for, and fail the task
            // (if the database lets us; otherwise a tracker fails it once its window has passed).
            Ok(false) | Err(_) => {
                let _ = self.engines().upstream().cancel(&handle).await;
                let reason = "provider submit failed: the accepted request could not be recorded; it was cancelled";
                self.fail_submission(task_id, reason).await;
                // Our database, not the provider, failed: the client may retry shortly.
                Err(match recorded {
                    Err(_) => ServiceError::Unavailable("the job could not be recorded; nothing was billed".into()),
                    Ok(_) => ServiceError::ProviderFailed(reason.into()),
                })
            }
        }
    }

    /// Fails a task whose submission did not go through, releasing its hold. If the database
    /// cannot be written, the task stays out of reach until its submission window passes and a
    /// tracker fails it unbilled.
    async fn fail_submission(&self, task_id: &str, reason: &str) {
        let (id, reason) = (task_id.to_string(), reason.to_string());
        match self.db(move |db| db.fail_unsubmitted(&id, &reason)).await {
            Ok(true) => self.discard_inputs(task_id).await,
            Ok(false) => {}
            Err(e) => tracing::error!(task = %task_id, error = %e, "could not fail an unsubmitted task"),
        }
        self.inner.finished.notify_waiters();
    }

    /// The provider's request id recorded on task `task_id`, if any.
    async fn recorded_request(&self, task_id: &str) -> Option<String> {
        let id = task_id.to_string();
        let task = self.db(move |db| db.task(&id)).await.ok()??;
        let handle: Handle = serde_json::from_str(task.provider_handle.as_deref()?).ok()?;
        Some(handle.request_id)
    }

    /// Where `provider` calls back about task `task_id`. The URL carries our signature of the
    /// pair: the providers' signatures cover the body, not our URL, so without it a genuine
    /// callback replayed to another task's URL could be adopted there.
    fn callback_url(&self, provider: &str, task_id: &str) -> String {
        let token = self.inner.signer.sign(&callback_subject(provider, task_id), 0);
        self.urls().provider_callback(provider, task_id, &token)
    }

    /// Copies a finished request's files into our store and finishes the task, billed for what
    /// was produced (never more than the quote), the provider's compute time and cost beside it.
    async fn finish_upstream(
        &self,
        claimed: &ClaimedTask,
        job: &ValidatedJob,
        completion: Completion,
        age: Duration,
        past_deadline: bool,
    ) -> Result<JobOutcome, ServiceError> {
        let task = &claimed.task;
        if completion.media.len() > MAX_FILES {
            let message =
                format!("the provider's result names {} files, more than {MAX_FILES}", completion.media.len());
            return self.fail_tracked(claimed, &message).await;
        }
        // The semaphore is never closed.
        let _intake = self.inner.intake.acquire().await.ok();
        let (stored, files) = match self.take_in(claimed, &completion).await {
            Ok(taken) => taken,
            Err(DownloadError::Retryable(e)) if !past_deadline => {
                tracing::warn!(task = %task.id, error = %e, "downloading a result failed; trying again later");
                return self.look_again(claimed, POLL.next_look(age), true).await;
            }
            Err(e) => return self.fail_tracked(claimed, &format!("the provider's result cannot be used: {e}")).await,
        };
        let produced = engines::upstream::produced(job, &files);
        let spec = self.engines().catalog().get_any(&job.model);
        let cost = billing::job_cost(job.price, spec.map(|spec| (&spec.price, &produced)));
        let rate = spec.and_then(|spec| spec.provider_input.get(task.provider.as_deref()?)?.cost_per_second);
        let usage = billing::provider_usage(completion.provider_seconds, rate);
        let outputs_json = serde_json::to_string(&stored).map_err(|e| ServiceError::Internal(e.to_string()))?;
        let (id, attempt) = (task.id.clone(), claimed.attempt);
        let capture = retrying_own_failures("recording the result", || {
            let (id, outputs_json) = (id.clone(), outputs_json.clone());
            self.db(move |db| {
                let success = Success {
                    outputs_json: &outputs_json,
                    result_json: None,
                    cost,
                    sandbox: false,
                    provider_millis: usage.millis,
                    provider_cost: usage.cost,
                };
                db.finish_tracked(&id, attempt, &success)
            })
        })
        .await?;
        self.inner.finished.notify_waiters();
        Ok(match capture {
            Some(capture) => JobOutcome::Succeeded(capture.cost),
            None => JobOutcome::Superseded,
        })
    }

    /// Copies a finished request's files into the store one at a time, each streamed through a
    /// scratch file (see [`engines::Engines::download_upstream_to`]), so a result of any size
    /// costs the worker no more memory than a store part. What was stored is removed again when a
    /// later file fails.
    async fn take_in(
        &self,
        claimed: &ClaimedTask,
        completion: &Completion,
    ) -> Result<(Vec<StoredOutput>, Vec<FileInfo>), DownloadError> {
        let scratch = self.config().inputs.dir.join(format!("intake-{}-{}", claimed.task.id, claimed.attempt));
        let outcome = async {
            tokio::fs::create_dir_all(&scratch)
                .await
                .map_err(|e| DownloadError::Retryable(format!("a scratch folder for the result: {e}")))?;
            let (mut stored, mut infos) = (Vec::new(), Vec::new());
            for (index, media) in completion.media.iter().enumerate() {
                let file = scratch.join(index.to_string());
                let taken = async {
                    let info = self.engines().download_upstream_to(&media.url, &file).await?;
                    let path = output_path(&claimed.task.id, claimed.attempt, index, info.extension);
                    self.store_file(&path, &file).await.map_err(|e| DownloadError::Retryable(e.to_string()))?;
                    Ok::<_, DownloadError>((StoredOutput::of(path, &info), info))
                }
                .await;
                let _ = tokio::fs::remove_file(&file).await;
                match taken {
                    Ok((output, info)) => {
                        stored.push(output);
                        infos.push(info);
                    }
                    Err(e) => {
                        for output in &stored {
                            let _ = self.inner.store.delete(&output.path).await;
                        }
                        return Err(e);
                    }
                }
            }
            Ok((stored, infos))
        }
        .await;
        let _ = tokio::fs::remove_dir_all(&scratch).await;
        outcome
    }

    /// Streams the file at `file` into the store under `path`, a part at a time.
    async fn store_file(&self, path: &str, file: &std::path::Path) -> Result<(), ServiceError> {
        use tokio::io::AsyncReadExt;
        retrying_own_failures("storing an output", || async {
            let internal = |e: String| ServiceError::Internal(e);
            let mut source = tokio::fs::File::open(file).await.map_err(|e| internal(e.to_string()))?;
            let mut writer = self.inner.store.writer(path).map_err(|e| internal(e.to_string()))?;
            loop {
                let mut chunk = vec![0u8; READ_CHUNK_BYTES];
                let read = match source.read(&mut chunk).await {
                    Ok(0) => break,
                    Ok(read) => read,
                    Err(e) => {
                        writer.abort().await;
                        return Err(internal(e.to_string()));
                    }
                };
                chunk.truncate(read);
                writer.write(bytes::Bytes::from(chunk)).await.map_err(|e| internal(e.to_string()))?;
            }
            writer.finish().await.map_err(|e| internal(e.to_string()))
        })
        .await
    }

    async fn look_again(
        &self,
        claimed: &ClaimedTask,
        after: Duration,
        started: bool,
    ) -> Result<JobOutcome, ServiceError> {
        let (id, attempt) = (claimed.task.id.clone(), claimed.attempt);
        let kept = self.db(move |db| db.reschedule_tracked(&id, attempt, millis(after), started)).await?;
        Ok(if kept { JobOutcome::Waiting } else { JobOutcome::Superseded })
    }

    async fn fail_tracked(&self, claimed: &ClaimedTask, reason: &str) -> Result<JobOutcome, ServiceError> {
        let (id, attempt, message) = (claimed.task.id.clone(), claimed.attempt, reason.to_string());
        let failed = self.db(move |db| db.fail_tracked(&id, attempt, &message, FailureKind::Job)).await?;
        self.inner.finished.notify_waiters();
        if !failed {
            return Ok(JobOutcome::Superseded);
        }
        self.discard_inputs(&claimed.task.id).await;
        Ok(JobOutcome::Failed(reason.to_string()))
    }
}

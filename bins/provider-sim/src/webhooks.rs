//! Webhook delivery: once a job with a webhook ends, its callback, made and signed by the module
//! of the protocol it came through, is posted to the client's URL, and the delivery counted.

use crate::jobs::Job;
use crate::state::{until_stopped, Shared};
use crate::stats::bump;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// A callback ready to post.
pub(crate) struct Callback {
    /// The JSON body.
    pub body: Vec<u8>,
    /// The headers that sign `body`.
    pub headers: Vec<(&'static str, String)>,
}

/// Waits until `job` ends (or the simulator stops); true if it ended.
async fn wait_for_end(shared: &Shared, job: &Job) -> bool {
    // Subscribed before the first look, so a cancel or release in between still wakes us.
    let mut changes = shared.jobs.subscribe();
    loop {
        if job.phase(Instant::now()).is_done() {
            return true;
        }
        let end = job.end();
        let sleep = async move {
            match end {
                Some(end) => tokio::time::sleep_until(end.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = sleep => {}
            changed = changes.changed() => if changed.is_err() { return false },
            () = until_stopped(shared.stopped.clone()) => return false,
        }
    }
}

/// If `job` has a webhook, sends it the callback `make_callback` makes once the job ends (unless
/// the simulator stops first), counting the delivery and whether it failed.
pub(crate) fn deliver_when_done<F, Fut>(shared: &Arc<Shared>, job: &Arc<Job>, make_callback: F)
where
    F: FnOnce(Arc<Shared>, Arc<Job>) -> Fut + Send + 'static,
    Fut: Future<Output = Callback> + Send,
{
    let Some(url) = job.webhook.clone() else { return };
    let (shared, job) = (shared.clone(), job.clone());
    tokio::spawn(async move {
        if wait_for_end(&shared, &job).await {
            let callback = make_callback(shared.clone(), job).await;
            post(&shared, &url, callback).await;
        }
    });
}

/// Posts `callback` to `url`, counting the delivery and whether it failed.
async fn post(shared: &Shared, url: &str, callback: Callback) {
    let mut request = shared.http.post(url).header("content-type", "application/json").body(callback.body);
    for (name, value) in callback.headers {
        request = request.header(name, value);
    }
    let delivered = match request.send().await {
        Ok(answer) if answer.status().is_success() => true,
        Ok(answer) => {
            tracing::debug!(url, status = %answer.status(), "webhook refused");
            false
        }
        Err(e) => {
            tracing::debug!(url, error = %e, "webhook failed");
            false
        }
    };
    if !delivered {
        bump(&shared.counters.webhook_failures);
    }
    bump(&shared.counters.webhooks_sent);
}

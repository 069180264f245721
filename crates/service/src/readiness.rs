//! Readiness: whether this process can do its work now (the database answers with every migration
//! applied, the output store takes a write), as load balancers and orchestrators ask before sending
//! traffic. Liveness (`/healthz`) only says the process is up.

use crate::views::{ReadinessChecks, ReadinessView};
use crate::{Api, ServiceError};
use std::time::Duration;

/// Longest a readiness check waits on the database or the store before calling it unready.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

const OK: &str = "ok";

impl Api<'_> {
    /// Checks the database, its migrations and the store; details of a failure go to the log, not
    /// the answer (the probe needs no key).
    pub async fn readiness(&self) -> ReadinessView {
        let service = self.service;
        let database = async {
            match service.db(|db| db.pending_migrations()).await {
                Ok(0) => (OK.to_string(), OK.to_string()),
                Ok(pending) => (OK.to_string(), format!("{pending} pending; run `api-server migrate`")),
                Err(e) => {
                    tracing::warn!(error = %e, "readiness: database check failed");
                    let reason = match e {
                        ServiceError::Unavailable(_) => "unreachable",
                        _ => "failing",
                    };
                    (reason.to_string(), "unknown".to_string())
                }
            }
        };
        let store = async {
            let probe = format!("readiness/{}", storage::new_id("probe"));
            let written = service.inner.store.put(&probe, b"ready".to_vec()).await;
            let removed = service.inner.store.delete(&probe).await;
            match written.and(removed) {
                Ok(()) => OK.to_string(),
                Err(e) => {
                    tracing::warn!(error = %e, "readiness: output store check failed");
                    "not writable".to_string()
                }
            }
        };
        let timed_out = || "timed out".to_string();
        let ((database, migrations), store) = tokio::join!(
            async {
                tokio::time::timeout(CHECK_TIMEOUT, database).await.unwrap_or_else(|_| (timed_out(), timed_out()))
            },
            async { tokio::time::timeout(CHECK_TIMEOUT, store).await.unwrap_or_else(|_| timed_out()) },
        );
        let ready = [&database, &migrations, &store].iter().all(|check| *check == OK);
        ReadinessView { ready, checks: ReadinessChecks { database, migrations, store } }
    }
}

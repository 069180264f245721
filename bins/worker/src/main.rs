//! `worker`: a standalone job runner for scale-out. Point it at the same `DATABASE_URL` (and output
//! store) as the api-servers; run as many as needed.

use anyhow::Result;
use service::AppConfig;
use tokio::sync::watch;

fn main() -> Result<std::process::ExitCode> {
    if std::env::args().nth(1).as_deref() == Some(service::CHILD_COMMAND) {
        return Ok(service::child_main());
    }
    let _logging = service::logging::init(service::logging::LogFormat::from_env().map_err(anyhow::Error::msg)?, "info");
    let config = AppConfig::from_env()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let outcome = runtime.block_on(async {
        for line in config.describe() {
            tracing::info!("config {line}");
        }
        let service = config.build_service()?;
        let worker_config =
            worker::WorkerConfig::from_app_config(&config, format!("worker-{}-{}", hostname(), std::process::id()));
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let running = tokio::spawn(worker::run(service, worker_config, shutdown_rx));
        worker::termination_signal().await;
        tracing::info!("shutting down: no new jobs are claimed");
        let _ = shutdown_tx.send(true);
        let _ = running.await;
        Ok(())
    });
    // Unfinished jobs are back in the queue; do not wait on media work that cannot be interrupted.
    runtime.shutdown_background();
    outcome.map(|()| std::process::ExitCode::SUCCESS)
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_else(|_| "host".into())
}

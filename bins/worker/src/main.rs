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
        // Probes and Prometheus reach a standalone worker here, when the operator asks for it.
        let operations = match &config.worker_http_addr {
            Some(addr) => {
                let listener = std::net::TcpListener::bind(addr)
                    .map_err(|e| anyhow::anyhow!("WORKER_HTTP_ADDR={addr}: cannot listen: {e}"))?;
                tracing::info!(addr = %addr, "serving /healthz, /readyz and /metrics");
                let server = http::serve_operations(service.clone(), listener)?;
                let handle = server.handle();
                tokio::spawn(server);
                Some(handle)
            }
            None => None,
        };
        let worker_config =
            worker::WorkerConfig::from_app_config(&config, format!("worker-{}-{}", hostname(), std::process::id()));
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let mut running = tokio::spawn(worker::run(service, worker_config, shutdown_rx));
        tokio::select! {
            _ = worker::termination_signal() => {}
            // The loop ends only when told to; if it ended by itself (a panic), the process exits
            // with an error so that whatever supervises it starts a new one.
            ended = &mut running => {
                anyhow::bail!("the worker stopped unexpectedly: {}", ended.err().map_or_else(|| "no error".into(), |e| e.to_string()));
            }
        }
        tracing::info!("shutting down: no new jobs are claimed");
        let _ = shutdown_tx.send(true);
        let _ = running.await;
        if let Some(operations) = operations {
            operations.stop(true).await;
        }
        Ok(())
    });
    // Unfinished jobs are back in the queue; do not wait on media work that cannot be interrupted.
    runtime.shutdown_background();
    outcome.map(|()| std::process::ExitCode::SUCCESS)
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_else(|_| "host".into())
}

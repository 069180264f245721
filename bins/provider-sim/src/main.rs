//! `provider-sim`: runs the fal.ai and Replicate simulator until SIGTERM or Ctrl-C.

use anyhow::Context;
use clap::Parser;
use provider_sim::{SimConfig, Simulator};
use std::io::Write;
use std::net::SocketAddr;

/// Simulates fal.ai's queue API and Replicate's predictions API on one HTTP port.
#[derive(Parser, Debug)]
#[command(name = "provider-sim", version, about)]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "SIM_BIND", default_value = "127.0.0.1:9100")]
    bind: SocketAddr,
    /// Key fal clients must send (`Authorization: Key <key>`).
    #[arg(long, env = "SIM_FAL_KEY", default_value = "sim-fal-key")]
    fal_key: String,
    /// Token Replicate clients must send (`Authorization: Bearer <token>`).
    #[arg(long, env = "SIM_REPLICATE_TOKEN", default_value = "sim-replicate-token")]
    replicate_token: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        // Stdout carries only the "listening" line, which launchers read.
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let config = SimConfig { fal_key: args.fal_key, replicate_token: args.replicate_token, bind: args.bind };
    let simulator = Simulator::start(config).await.with_context(|| format!("cannot listen on {}", args.bind))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "provider-sim listening on {}", simulator.url())?;
    stdout.flush()?;
    drop(stdout);
    shutdown_signal().await?;
    drop(simulator);
    Ok(())
}

/// Waits for Ctrl-C, or SIGTERM on Unix.
async fn shutdown_signal() -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result?,
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c().await?;
    Ok(())
}

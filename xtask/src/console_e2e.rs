//! `cargo xtask console-e2e`: the developer console end to end in headless Chromium, driven by
//! `playwright-core` (pinned in `tests/console-e2e/package-lock.json`), against a scratch
//! api-server. Installs Debian's Chromium when it is missing; skips, saying why, only where it
//! cannot be installed. Screenshots of every page land in `target/console-screenshots`. Then an
//! agent connects through OAuth with the official MCP Python SDK, its consent given in Chromium.

use crate::deployment::Deployment;
use anyhow::{Context, Result};
use std::path::Path;
use std::process::Command;

const SCRIPT_DIR: &str = "tests/console-e2e";
const SCREENSHOTS: &str = "target/console-screenshots";
const MCP_REQUIREMENTS: &str = "crates/mcp/tests/e2e/requirements.txt";
const OAUTH_CLIENT: &str = "crates/mcp/tests/e2e/oauth_client.py";

pub fn run() -> Result<()> {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() && !crate::apt_install(&["chromium", "chromium-driver"]) {
        println!("console-e2e: SKIPPED: Chromium is not installed and `apt-get install chromium` failed here");
        return Ok(());
    }
    if Command::new("node").arg("--version").output().map_or(true, |o| !o.status.success()) {
        println!("console-e2e: SKIPPED: Node.js is not installed, so playwright-core cannot run");
        return Ok(());
    }
    crate::run(
        Command::new("npm").args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(SCRIPT_DIR),
    )?;
    crate::build_binaries("debug")?;
    std::fs::create_dir_all(SCREENSHOTS)?;
    let log = std::env::temp_dir().join(format!("console-e2e-{}.log", std::process::id()));
    // Access logs on, so the check that no secret reaches the log has something to read.
    // The console's mail is written to a directory the script reads its links from.
    let mail = std::env::temp_dir().join(format!("console-e2e-mail-{}", std::process::id()));
    let settings = [("RUST_LOG", "info".into()), ("MAIL_TRANSPORT", format!("dir:{}", mail.display()))];
    let deployment = Deployment::start_logged("debug", false, &settings, Some(&log)).context("starting api-server")?;
    let result = crate::run(
        Command::new("node")
            .arg("console.mjs")
            .current_dir(SCRIPT_DIR)
            .env("BASE_URL", &deployment.base)
            .env("SCREENSHOT_DIR", std::fs::canonicalize(SCREENSHOTS)?)
            .env("SERVER_LOG", &log)
            .env("MAIL_DIR", &mail)
            .env("CHROMIUM", &chromium),
    );
    drop(deployment);
    if result.is_err() {
        eprintln!("console-e2e: server log follows\n{}", std::fs::read_to_string(&log).unwrap_or_default());
    }
    let _ = std::fs::remove_file(&log);
    let _ = std::fs::remove_dir_all(&mail);
    result?;
    agent_connects_with_oauth(&chromium)
}

/// The connector's OAuth flow with the official MCP Python SDK, its consent and a disconnection
/// driven in Chromium (`crates/mcp/tests/e2e/oauth_client.py`). Access tokens last 2 s here, so
/// the SDK's refresh is exercised.
fn agent_connects_with_oauth(chromium: &str) -> Result<()> {
    const EMAIL: &str = "oauth-e2e@example.com";
    let python = crate::deployment::python_with(MCP_REQUIREMENTS)?;
    let settings = [("OAUTH_ACCESS_TOKEN_SECS", "2".to_string()), ("RUST_LOG", "info".to_string())];
    // The access log of the whole flow is searched for tokens, codes and client secrets after it.
    let logs = std::env::temp_dir().join(format!("oauth-e2e-logs-{}", std::process::id()));
    crate::log_secrets::prepare(&logs)?;
    let log = logs.join("api-server.log");
    let deployment = Deployment::start_logged("debug", false, &settings, Some(&log)).context("starting api-server")?;
    let invite = deployment.admin(&["account", "invite", "e2e", "--email", EMAIL])?;
    let screenshots = std::fs::canonicalize(SCREENSHOTS)?.join("oauth");
    std::fs::create_dir_all(&screenshots)?;
    let result = crate::run(
        Command::new(python)
            .args([OAUTH_CLIENT, &deployment.base, &invite, EMAIL])
            .arg(&screenshots)
            .env("CHROMIUM", chromium),
    );
    drop(deployment);
    if result.is_err() {
        eprintln!("oauth-e2e: server log follows\n{}", std::fs::read_to_string(&log).unwrap_or_default());
    }
    let searched = result.and_then(|()| crate::log_secrets::check(&logs));
    let _ = std::fs::remove_dir_all(&logs);
    searched
}

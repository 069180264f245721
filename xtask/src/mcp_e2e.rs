//! `cargo xtask mcp-e2e`: the connector end to end with the official MCP Python SDK (pinned in
//! `crates/mcp/tests/e2e/requirements.txt`), against a real api-server, once with the bearer header
//! and once with the `?key=` connector URL.

use crate::deployment::{python_with, Deployment};
use anyhow::Result;
use std::process::Command;

const REQUIREMENTS: &str = "crates/mcp/tests/e2e/requirements.txt";
const CLIENT: &str = "crates/mcp/tests/e2e/sdk_client.py";

pub fn run() -> Result<()> {
    let python = python_with(REQUIREMENTS)?;
    crate::build_binaries("debug")?;
    let deployment = Deployment::start("debug", false, &[])?;
    for mode in ["bearer", "query"] {
        crate::run(Command::new(&python).args([CLIENT, &deployment.base, &deployment.key, mode]))?;
    }
    Ok(())
}

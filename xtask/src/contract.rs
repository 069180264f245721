//! `cargo xtask contract`: schemathesis (pinned in `crates/http/tests/contract/requirements.txt`)
//! against a real api-server's own `/openapi.json`, with every check, in two runs that each fail
//! on any finding:
//! - the examples, fuzzing and stateful phases, a bounded number of examples per operation, with a
//!   hard limit of [`PHASES_LIMIT_SECS`];
//! - the coverage phase (every boundary and every schema violation, one by one), with the long
//!   `data:` URI limits read shorter by `coverage_hooks.py` so the phase takes about half a
//!   minute, and a hard limit of [`COVERAGE_LIMIT_SECS`].

use crate::deployment::{python_with, Deployment};
use anyhow::Result;
use std::process::Command;

const REQUIREMENTS: &str = "crates/http/tests/contract/requirements.txt";
const CONFIG: &str = "crates/http/tests/contract/schemathesis.toml";
/// Where the runs' hooks live (Python modules on `PYTHONPATH`): `contract_hooks` for every run,
/// `coverage_hooks` (which includes it) for the coverage phase.
const HOOKS_DIR: &str = "crates/http/tests/contract";
/// Examples per operation and phase.
const EXAMPLES: &str = "25";
/// The examples, fuzzing and stateful phases' hard limit; they take about 70 s on two cores. The
/// stateful phase runs its scenarios again after each new finding, so a finding that keeps
/// coming back must fail the run rather than spend CI's time.
const PHASES_LIMIT_SECS: &str = "900";
/// The coverage phase's hard limit; it takes about 30 s on two cores.
const COVERAGE_LIMIT_SECS: &str = "600";
const SEED: &str = "20261123";

pub fn run() -> Result<()> {
    let python = python_with(REQUIREMENTS)?;
    crate::build_binaries("debug")?;
    // This machine resolves no public name, so every generated `webhook_url` would be refused as
    // resolving to no public address: the run checks the interface, not the network policy
    // (which crates/http/tests/webhooks.rs checks), so any well-formed receiver is accepted here.
    let deployment = Deployment::start("debug", false, &[("ALLOW_PRIVATE_WEBHOOK_URLS", "true".into())])?;
    let schemathesis = python.replace("/python", "/schemathesis");
    let base = [
        "--config-file".to_string(),
        CONFIG.into(),
        "run".into(),
        format!("{}/openapi.json", deployment.base),
        "--header".into(),
        format!("Authorization: Bearer {}", deployment.key),
        "--checks".into(),
        "all".into(),
        "--seed".into(),
        SEED.into(),
    ];
    crate::run(
        Command::new("timeout")
            .args(["--kill-after=10", PHASES_LIMIT_SECS, &schemathesis])
            .args(&base)
            .args(["--phases", "examples,fuzzing,stateful", "--max-examples", EXAMPLES])
            .env("SCHEMATHESIS_HOOKS", "contract_hooks")
            .env("PYTHONPATH", HOOKS_DIR),
    )?;
    crate::run(
        Command::new("timeout")
            .args(["--kill-after=10", COVERAGE_LIMIT_SECS, &schemathesis])
            .args(&base)
            .args(["--phases", "coverage"])
            .env("SCHEMATHESIS_HOOKS", "coverage_hooks")
            .env("PYTHONPATH", HOOKS_DIR),
    )
}

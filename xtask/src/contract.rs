//! `cargo xtask contract`: schemathesis (pinned in `crates/http/tests/contract/requirements.txt`)
//! against a real api-server's own `/openapi.json`, with every check, the examples, fuzzing and
//! stateful phases, and a bounded number of examples per operation; it fails on any finding.
//! The coverage phase is left out: it sends every boundary value, including 6 MiB `data:` URIs
//! for every URL field, which takes longer than the rest of CI.

use crate::deployment::{python_with, Deployment};
use anyhow::Result;
use std::process::Command;

const REQUIREMENTS: &str = "crates/http/tests/contract/requirements.txt";
const CONFIG: &str = "crates/http/tests/contract/schemathesis.toml";
/// Examples per operation and phase.
const EXAMPLES: &str = "25";

pub fn run() -> Result<()> {
    let python = python_with(REQUIREMENTS)?;
    crate::run(crate::cargo().args(["build", "--quiet", "--package", "api-server"]))?;
    let deployment = Deployment::start("debug", false, &[])?;
    let schemathesis = python.replace("/python", "/schemathesis");
    crate::run(Command::new(schemathesis).args([
        "--config-file",
        CONFIG,
        "run",
        &format!("{}/openapi.json", deployment.base),
        "--header",
        &format!("Authorization: Bearer {}", deployment.key),
        "--checks",
        "all",
        "--phases",
        "examples,fuzzing,stateful",
        "--max-examples",
        EXAMPLES,
        "--seed",
        "20261123",
    ]))
}

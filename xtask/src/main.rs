//! Project tasks: `cargo xtask ci | dev | bench | openapi | contract | mcp-e2e | s3-e2e | console-e2e |
//! webhooks-e2e | scale-out`.

mod bench;
mod console_e2e;
mod contract;
mod deployment;
mod image_bench;
mod log_secrets;
mod mcp_e2e;
mod module_cycles;
mod poll_bench;
mod queue_bench;
mod reel_bench;
mod s3_e2e;
mod scale_out;
mod video_engines_bench;
mod webhooks_e2e;

use anyhow::{bail, Context, Result};
use std::process::Command;

const USAGE: &str = "usage: cargo xtask <command>

  ci        everything CI checks: rustfmt, unused dependencies (cargo-machete), modules that
            import each other, clippy (warnings
            are errors), rustdoc (warnings are errors), the whole test suite on SQLite and PostgreSQL, mcp-e2e, s3-e2e, console-e2e,
            webhooks-e2e and contract
  contract  schemathesis with every check against the service's own OpenAPI document (part of ci)
  mcp-e2e   the MCP connector end to end with the official MCP Python SDK (part of ci)
  s3-e2e    outputs in an S3-compatible bucket, end to end (part of ci)
  webhooks-e2e  completion webhooks verified by the Standard Webhooks reference implementation,
            with the worker killed mid-schedule (part of ci)
  console-e2e  the developer console in headless Chromium (playwright-core), end to end (part of ci)
  scale-out two api-servers and three workers on one PostgreSQL, thousands of jobs through both,
            one worker and one api-server killed with SIGKILL, the books checked (--jobs N a
            round, --release; part of ci)
  dev       run the service locally (embedded SQLite, local files, in-process worker)
  cycles    list modules that import each other, directly or round a loop (part of ci)
  bench     build release binaries, start a server and print throughput and latency figures
            (--part images|media|service|all)
  openapi   print the OpenAPI 3.1 description";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("dev") => run(cargo().args(["run", "--package", "api-server", "--"]).args(&args[1..])),
        Some("bench") => bench::run(&args[1..]),
        Some("mcp-e2e") => mcp_e2e::run(),
        Some("s3-e2e") => s3_e2e::run(),
        Some("console-e2e") => console_e2e::run(),
        Some("webhooks-e2e") => webhooks_e2e::run(),
        Some("contract") => contract::run(),
        Some("scale-out") => scale_out::run(&args[1..]),
        Some("cycles") => module_cycles::check(),
        Some("openapi") => run(cargo().args(["run", "--quiet", "--package", "api-server", "--", "openapi"])),
        _ => {
            println!("{USAGE}");
            Ok(())
        }
    }
}

/// A `cargo` command with the environment of a plain shell. `cargo xtask` runs this program with
/// the variables cargo sets for a run of the `xtask` package (`CARGO_MANIFEST_DIR`,
/// `CARGO_PKG_NAME`, ...); a build script whose fingerprint holds one of them (ring's does) would
/// make every build started from here rebuild what a plain `cargo build` had built, and the next
/// plain build rebuild it again. cargo-machete also reads a set `CARGO_PKG_NAME` as "not started by
/// cargo".
fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    let run_variables = std::env::vars_os().filter_map(|(name, _)| {
        let text = name.to_str()?;
        let set_for_a_run = text.starts_with("CARGO_PKG_")
            || text.starts_with("CARGO_BIN_")
            || ["CARGO_MANIFEST_DIR", "CARGO_MANIFEST_PATH", "CARGO_CRATE_NAME", "CARGO_PRIMARY_PACKAGE"]
                .contains(&text);
        set_for_a_run.then_some(name)
    });
    for name in run_variables {
        command.env_remove(name);
    }
    command
}

/// Installs Debian packages, refreshing the package lists once if the first attempt fails;
/// whether they are installed now.
fn apt_install(packages: &[&str]) -> bool {
    let install =
        || Command::new("apt-get").args(["install", "-y", "-q"]).args(packages).status().is_ok_and(|s| s.success());
    install() || (Command::new("apt-get").args(["update", "-q"]).status().is_ok_and(|s| s.success()) && install())
}

/// Whether `program` is on the PATH.
fn have(program: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|o| o.status.success())
}

/// Whether `program` is on the PATH, installing Debian's `package` when it is not (the benches'
/// anchors: ffmpeg, wrk, vips).
fn have_or_install(program: &str, package: &str) -> bool {
    have(program) || (apt_install(&[package]) && have(program))
}

/// Whether ffmpeg (with libx264, the benches' video anchor) is here, installing it when not.
fn have_ffmpeg() -> bool {
    have_or_install("ffmpeg", "ffmpeg")
}

/// Builds every binary of the workspace in `profile` ("debug" or "release"; in debug with the
/// test targets). The end-to-end runs build this same set as `ci` does before the suite, because
/// cargo unifies features over the packages it is asked to build: building one package alone
/// compiles its dependencies again with a different feature set, a minute or more each time on
/// two cores.
fn build_binaries(profile: &str) -> Result<()> {
    let mut build = cargo();
    build.args(["build", "--quiet", "--workspace", "--bins"]);
    if profile == "release" {
        build.arg("--release");
    } else {
        // With the test targets, so the binaries and the suite resolve dependency features alike
        // (dev-dependencies enable more of them): a debug build of the binaries alone compiled a
        // second variant of tokio, tract and their dependents, about eight minutes of a cold CI
        // run. A standalone end-to-end run builds the tests too, once.
        build.arg("--tests");
    }
    run(&mut build)
}

fn run(command: &mut Command) -> Result<()> {
    let shown = format!("{command:?}");
    eprintln!("xtask: {shown}");
    let status = command.status().with_context(|| format!("starting {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

fn ci() -> Result<()> {
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    unused_dependencies()?;
    module_cycles::check()?;
    run(cargo().args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))?;
    // The BSD-licensed build, with OpenH264 compressing instead of x264 (docs/performance.md).
    run(cargo().args(["clippy", "--package", "media", "--no-default-features", "--lib", "--", "-D", "warnings"]))?;
    run(cargo().args(["doc", "--workspace", "--no-deps"]).env("RUSTDOCFLAGS", "-D warnings"))?;
    // Process tests start sibling binaries (the standalone worker, the provider simulator) that no
    // test target of their own package would build.
    build_binaries("debug")?;
    let nextest = cargo().args(["nextest", "--version"]).output().is_ok_and(|o| o.status.success());
    // Every service the suite starts logs under one directory, searched for secrets afterwards.
    let logs = std::fs::canonicalize(".")?.join(log_secrets::dir());
    log_secrets::prepare(&logs)?;
    if nextest {
        run(cargo().args(["nextest", "run", "--workspace", "--no-fail-fast"]).env("TEST_LOG_DIR", &logs))?;
        // nextest does not run doctests.
        run(cargo().args(["test", "--workspace", "--doc"]))?;
    } else {
        run(cargo().args(["test", "--workspace", "--no-fail-fast"]).env("TEST_LOG_DIR", &logs))?;
    }
    log_secrets::check(&logs)?;
    mcp_e2e::run()?;
    s3_e2e::run()?;
    webhooks_e2e::run()?;
    console_e2e::run()?;
    scale_out::run(&[])?;
    contract::run()
}

/// Fails on a dependency no crate uses, with cargo-machete (installed at the pinned version when
/// missing).
fn unused_dependencies() -> Result<()> {
    const MACHETE: &str = "0.9.2";
    let machete = || {
        let mut command = cargo();
        command.arg("machete");
        command
    };
    let installed = machete().arg("--version").output().is_ok_and(|o| o.status.success());
    if !installed {
        run(cargo().args(["install", "cargo-machete", "--locked", "--version", MACHETE]))?;
    }
    run(&mut machete())
}

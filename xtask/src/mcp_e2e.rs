//! `cargo xtask mcp-e2e`: the connector end to end with the official MCP Python SDK. Installs the
//! SDK (pinned in `crates/mcp/tests/e2e/requirements.txt`) into a virtual environment under
//! `target/`, starts a real api-server on a scratch SQLite database, and runs the SDK client twice:
//! with the bearer header and with the `?key=` connector URL.

use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const VENV: &str = "target/mcp-e2e-venv";
const REQUIREMENTS: &str = "crates/mcp/tests/e2e/requirements.txt";
const CLIENT: &str = "crates/mcp/tests/e2e/sdk_client.py";

pub fn run() -> Result<()> {
    let python = format!("{VENV}/bin/python");
    if !Path::new(&python).exists() {
        crate::run(Command::new("python3").args(["-m", "venv", VENV]))?;
    }
    crate::run(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "-r",
        REQUIREMENTS,
    ]))?;
    crate::run(crate::cargo().args(["build", "--quiet", "--package", "api-server"]))?;

    let scratch = std::env::temp_dir().join(format!("media-mcp-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut server = Command::new("target/debug/api-server")
        .env("DATABASE_URL", format!("sqlite://{}/e2e.db", scratch.display()))
        .env("BIND_ADDR", format!("127.0.0.1:{port}"))
        .env("OUTPUT_DIR", scratch.join("outputs"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .context("starting api-server")?;
    let result = (|| {
        // A fresh embedded deployment prints its first key alone on a line.
        let stdout = server.stdout.take().context("api-server stdout")?;
        let key = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find(|line| line.starts_with("mgk_"))
            .context("api-server printed no first-start key")?;
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if started.elapsed() > Duration::from_secs(30) {
                bail!("api-server did not start listening");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let base = format!("http://127.0.0.1:{port}");
        for mode in ["bearer", "query"] {
            crate::run(Command::new(&python).args([CLIENT, &base, &key, mode]))?;
        }
        Ok(())
    })();
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

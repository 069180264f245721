//! A throw-away embedded deployment of the debug api-server for end-to-end checks: scratch SQLite
//! database and output directory, a free port, and the first-start key it prints.

use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Virtual environment for the Python tools the end-to-end checks use.
pub const VENV: &str = "target/e2e-venv";

/// The venv's Python, with `requirements` installed.
pub fn python_with(requirements: &str) -> Result<String> {
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
        requirements,
    ]))?;
    Ok(python)
}

pub struct Deployment {
    child: Child,
    scratch: PathBuf,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The first-start API key.
    pub key: String,
}

impl Deployment {
    /// Builds and starts the debug api-server with extra environment `env`.
    pub fn start(env: &[(&str, String)]) -> Result<Deployment> {
        crate::run(crate::cargo().args(["build", "--quiet", "--package", "api-server"]))?;
        let scratch = std::env::temp_dir().join(format!("media-e2e-{}-{}", std::process::id(), unique()));
        std::fs::create_dir_all(&scratch)?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut command = Command::new("target/debug/api-server");
        command
            .env("DATABASE_URL", format!("sqlite://{}/e2e.db", scratch.display()))
            .env("BIND_ADDR", format!("127.0.0.1:{port}"))
            .env("OUTPUT_DIR", scratch.join("outputs"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().context("starting api-server")?;
        let stdout = child.stdout.take().context("api-server stdout")?;
        // A fresh embedded deployment prints its first key alone on a line.
        let key = BufReader::new(stdout).lines().map_while(Result::ok).find(|line| line.starts_with("mgk_"));
        let deployment =
            Deployment { child, scratch, base: format!("http://127.0.0.1:{port}"), key: key.unwrap_or_default() };
        if deployment.key.is_empty() {
            bail!("api-server printed no first-start key");
        }
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if started.elapsed() > Duration::from_secs(30) {
                bail!("api-server did not start listening");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(deployment)
    }
}

impl Drop for Deployment {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// A number unlikely to repeat between runs, for scratch names.
pub fn unique() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

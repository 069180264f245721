//! A real api-server deployment in a temporary directory, for the tests of the binary.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_api-server");

pub struct Deployment {
    pub dir: PathBuf,
    pub port: u16,
    env: Vec<(String, String)>,
}

impl Deployment {
    pub fn new() -> Deployment {
        Self::with_env(&[])
    }

    /// A deployment whose processes get these variables too.
    pub fn with_env(env: &[(&str, &str)]) -> Deployment {
        let dir = std::env::temp_dir().join(format!("api-server-test-{}-{}", std::process::id(), rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Deployment { dir, port, env }
    }

    pub fn command(&self) -> Command {
        self.command_of(std::path::Path::new(BINARY))
    }

    /// Another binary of the workspace (built beside api-server), with this deployment's settings.
    pub fn sibling(&self, name: &str) -> Command {
        let path = std::path::Path::new(BINARY).with_file_name(name);
        assert!(path.exists(), "{} is not built; build the workspace (cargo build --workspace)", path.display());
        self.command_of(&path)
    }

    fn command_of(&self, binary: &std::path::Path) -> Command {
        let mut command = Command::new(binary);
        command
            .env("DATABASE_URL", format!("sqlite://{}", self.dir.join("media.db").display()))
            .env("BIND_ADDR", format!("127.0.0.1:{}", self.port))
            .env("OUTPUT_DIR", self.dir.join("outputs"))
            .env("SHUTDOWN_GRACE_SECS", "0")
            .env("RUST_LOG", "warn")
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    pub fn admin(&self, args: &[&str]) -> (bool, String) {
        let output = self.command().arg("admin").args(args).output().unwrap();
        (output.status.success(), String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Starts the server; returns it and, on a first start, the printed key.
    pub fn start(&self) -> (Child, Option<String>) {
        self.start_with(&[])
    }

    /// Starts the server with extra arguments (such as `serve --no-worker`).
    pub fn start_with(&self, args: &[&str]) -> (Child, Option<String>) {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.log_path()).unwrap();
        let mut child = self.command().args(args).stdout(Stdio::piped()).stderr(log).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("mgk_") {
                    let _ = tx.send(line);
                }
            }
        });
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        (child, rx.recv_timeout(Duration::from_millis(500)).ok())
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// Everything the servers started so far wrote to their error stream (their logs).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }
}

impl Drop for Deployment {
    fn drop(&mut self) {
        // Kept for the CI's search for secrets in service logs (`TEST_LOG_DIR`).
        if let Some(collection) = std::env::var_os("TEST_LOG_DIR") {
            let name = self.dir.file_name().map_or_else(|| "deployment".into(), |n| n.to_string_lossy().into_owned());
            let _ = std::fs::copy(self.log_path(), std::path::Path::new(&collection).join(format!("{name}.log")));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

pub fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "server ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

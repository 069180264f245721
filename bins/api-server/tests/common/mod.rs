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
        let mut env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        // Processes on PostgreSQL share a download-signing key, as a secret store would hand it out.
        let on_postgres = env.iter().any(|(k, v)| k == "DATABASE_URL" && v.starts_with("postgres"));
        if on_postgres && !env.iter().any(|(k, _)| k == "URL_SIGNING_SECRET") {
            env.push(("URL_SIGNING_SECRET".into(), format!("test-deployment-signing-key-{}", rand_suffix())));
        }
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

pub fn rand_suffix() -> u128 {
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

/// A child process killed (SIGKILL) and reaped when dropped, so a failing test leaves nothing behind.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Deployment {
    /// Starts a standalone `worker` process of this deployment; its log joins the servers'.
    pub fn spawn_worker(&self, env: &[(&str, &str)]) -> Child {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.log_path()).unwrap();
        self.sibling("worker").envs(env.iter().copied()).stdout(Stdio::null()).stderr(log).spawn().unwrap()
    }

    /// Submits `job` to `/v1/generate` with `key`, expects 202, and returns the task's id.
    pub async fn submit(&self, client: &reqwest::Client, key: &str, job: &serde_json::Value) -> String {
        let answer = client.post(self.url("/v1/generate")).bearer_auth(key).json(job).send().await.unwrap();
        assert_eq!(answer.status(), 202);
        let queued: serde_json::Value = answer.json().await.unwrap();
        queued["id"].as_str().unwrap().to_string()
    }

    /// The task `id` as `key` polls it now.
    pub async fn task(&self, client: &reqwest::Client, key: &str, id: &str) -> serde_json::Value {
        let url = self.url(&format!("/v1/tasks/{id}"));
        client.get(url).bearer_auth(key).send().await.unwrap().json().await.unwrap()
    }

    /// Polls task `id` until it ends (succeeded or failed); panics after `limit`.
    pub async fn finished(&self, client: &reqwest::Client, key: &str, id: &str, limit: Duration) -> serde_json::Value {
        let started = Instant::now();
        loop {
            let task = self.task(client, key, id).await;
            if task["status"] == "succeeded" || task["status"] == "failed" {
                return task;
            }
            if started.elapsed() >= limit {
                let log = self.log();
                let lines: Vec<&str> = log.lines().collect();
                let tail = lines[lines.len().saturating_sub(60)..].join("\n");
                panic!("task {id} did not end: {task}\nthe deployment's log ends:\n{tail}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Creates an account with a card on file and a key of its own; returns the key's secret.
    pub fn account_key(&self, account: &str) -> String {
        assert!(self.admin(&["account", "create", account, "--card-on-file"]).0);
        let (ok, out) = self.admin(&["key", "create", "--account", account]);
        assert!(ok, "{out}");
        out.lines().last().unwrap().to_string()
    }
}

/// A PostgreSQL server of a test's own (initdb in a temporary directory, its own port), so the
/// test can stop and restart it without touching the shared one other tests use.
pub struct PrivatePostgres {
    dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
}

impl PrivatePostgres {
    /// Creates and starts the server. Needs the PostgreSQL server binaries (`pg_ctl`, `initdb`).
    pub fn start() -> PrivatePostgres {
        let bin = postgres_bin_dir().expect("the PostgreSQL server binaries (apt-get install postgresql)");
        let dir = std::env::temp_dir().join(format!("private-pg-{}-{}", std::process::id(), rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let postgres = PrivatePostgres { dir, bin, port };
        // PostgreSQL refuses to run as root: as root, its files belong to the `postgres` user.
        if running_as_root() {
            assert!(Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&postgres.dir)
                .status()
                .unwrap()
                .success());
        }
        let data = postgres.data_dir();
        let initdb = postgres
            .as_server_user("initdb")
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "-D"])
            .arg(&data)
            .output()
            .unwrap();
        assert!(initdb.status.success(), "initdb: {}", String::from_utf8_lossy(&initdb.stderr));
        postgres.start_again();
        postgres
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn as_server_user(&self, tool: &str) -> Command {
        let tool = self.bin.join(tool);
        if running_as_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(tool);
            command
        } else {
            Command::new(tool)
        }
    }

    fn pg_ctl(&self, args: &[&str]) {
        let output = self
            .as_server_user("pg_ctl")
            .arg("-D")
            .arg(self.data_dir())
            .args(args)
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert!(output.status.success(), "pg_ctl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    }

    /// Starts the (stopped) server and waits until it accepts connections.
    pub fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("postgres.log");
        self.pg_ctl(&["-w", "-t", "30", "-o", &options, "-l", &log.to_string_lossy(), "start"]);
    }

    /// Stops the server the way an operator's restart does (`-m fast`: sessions are cut, nothing
    /// committed is lost).
    pub fn stop(&self) {
        self.pg_ctl(&["-w", "-t", "30", "-m", "fast", "stop"]);
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = self.as_server_user("pg_ctl").arg("-D").arg(self.data_dir()).args(["-m", "immediate", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn running_as_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| o.stdout.trim_ascii() == b"0").unwrap_or(false)
}

/// The newest installed PostgreSQL's server binaries: `pg_config --bindir`, else Debian's
/// `/usr/lib/postgresql/<version>/bin`.
fn postgres_bin_dir() -> Option<PathBuf> {
    let debian = std::fs::read_dir("/usr/lib/postgresql").ok().and_then(|versions| {
        versions
            .filter_map(Result::ok)
            .map(|v| v.path().join("bin"))
            .filter(|bin| bin.join("pg_ctl").exists())
            .max_by_key(|bin| bin.parent().and_then(|v| v.file_name()).and_then(|n| n.to_str()?.parse::<u32>().ok()))
    });
    debian.or_else(|| {
        let output = Command::new("pg_config").arg("--bindir").output().ok()?;
        let bin = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
        bin.join("pg_ctl").exists().then_some(bin)
    })
}

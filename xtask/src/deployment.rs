//! A throw-away deployment of the built binaries for end-to-end checks and benchmarks: a scratch
//! SQLite database (or a scratch PostgreSQL database), a scratch output directory, a free port, an
//! account with a card on file and a key made through the admin CLI, and optionally a standalone
//! worker process. Everything is removed on drop.

use anyhow::{bail, Context, Result};
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
    server: Option<Child>,
    worker: Option<Child>,
    /// Further api-servers and workers on the same database and store.
    others: Vec<Child>,
    binaries: PathBuf,
    env: Vec<(String, String)>,
    scratch: PathBuf,
    postgres_db: Option<String>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// An API key of an account with a card on file.
    pub key: String,
}

impl Deployment {
    /// Starts `target/{profile}/api-server` (already built) on SQLite, or on a scratch PostgreSQL
    /// database, with `extra` environment on top of the scratch settings.
    pub fn start(profile: &str, postgres: bool, extra: &[(&str, String)]) -> Result<Deployment> {
        Deployment::start_logged(profile, postgres, extra, None)
    }

    /// [`Deployment::start`] with the server's standard output and error written to `log`.
    pub fn start_logged(
        profile: &str,
        postgres: bool,
        extra: &[(&str, String)],
        log: Option<&Path>,
    ) -> Result<Deployment> {
        let scratch = std::env::temp_dir().join(format!("media-deployment-{}-{}", std::process::id(), unique()));
        std::fs::create_dir_all(&scratch)?;
        let (database_url, postgres_db) = if postgres {
            let name = format!("media_scratch_{}", unique());
            psql(&format!("CREATE DATABASE {name}"))?;
            (format!("postgres://postgres@127.0.0.1:5432/{name}"), Some(name))
        } else {
            (format!("sqlite://{}/media.db", scratch.display()), None)
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let scratch_env = [
            ("DATABASE_URL", database_url),
            ("BIND_ADDR", format!("127.0.0.1:{port}")),
            ("OUTPUT_DIR", scratch.join("outputs").display().to_string()),
            ("RUST_LOG", "warn".into()),
            // Every process of the deployment shares one download-signing key, as a secret store
            // would hand it out (required on PostgreSQL).
            ("URL_SIGNING_SECRET", format!("scratch-deployment-signing-key-{}-{}", unique(), unique())),
        ];
        // `extra` wins over the scratch settings.
        let env = scratch_env
            .into_iter()
            .filter(|(name, _)| !extra.iter().any(|(extra_name, _)| extra_name == name))
            .chain(extra.iter().cloned())
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let binaries = PathBuf::from("target").join(profile);
        // Built before anything can fail, so Drop cleans up whatever was made.
        let mut deployment = Deployment {
            server: None,
            worker: None,
            others: Vec::new(),
            binaries,
            env,
            scratch,
            postgres_db,
            base: format!("http://127.0.0.1:{port}"),
            key: String::new(),
        };
        deployment.admin(&["account", "create", "e2e", "--card-on-file"])?;
        deployment.key = deployment.admin(&["key", "create", "--account", "e2e", "--label", "e2e"])?;
        let server = deployment.spawn_server(port, log)?;
        deployment.server = Some(server);
        Ok(deployment)
    }

    /// Starts `api-server` listening on `port`, its output written to `log` (or dropped), and
    /// waits until it accepts connections.
    fn spawn_server(&self, port: u16, log: Option<&Path>) -> Result<Child> {
        let mut server = self.command("api-server");
        server.env("BIND_ADDR", format!("127.0.0.1:{port}"));
        match log {
            Some(path) => {
                let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
                server.stdout(file.try_clone()?).stderr(file)
            }
            None => server.stdout(Stdio::null()),
        };
        let mut server = server.spawn().context("starting api-server")?;
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if started.elapsed() > Duration::from_secs(30) {
                let _ = server.kill();
                let _ = server.wait();
                bail!("api-server did not start listening");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(server)
    }

    /// Starts one more api-server on the same database and store, on a port of its own; its base
    /// URL and process id.
    pub fn start_another_server(&mut self) -> Result<(String, u32)> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let server = self.spawn_server(port, None)?;
        let pid = server.id();
        self.others.push(server);
        Ok((format!("http://127.0.0.1:{port}"), pid))
    }

    /// Starts one more standalone worker on the same database and store; its process id.
    pub fn start_another_worker(&mut self) -> Result<u32> {
        let worker = self.command("worker").stdout(Stdio::null()).spawn().context("starting worker")?;
        let pid = worker.id();
        self.others.push(worker);
        Ok(pid)
    }

    /// Kills a process started by [`Deployment::start_another_server`] or
    /// [`Deployment::start_another_worker`] with SIGKILL, as a crash or an OOM kill would.
    pub fn kill(&mut self, pid: u32) -> Result<()> {
        let index = self.others.iter().position(|child| child.id() == pid).context("no such process")?;
        let mut child = self.others.remove(index);
        let killed = child.kill();
        child.wait()?;
        Ok(killed?)
    }

    /// The standalone worker's process id, once started.
    pub fn worker_pid(&self) -> Option<u32> {
        self.worker.as_ref().map(Child::id)
    }

    /// Starts a standalone `worker` process on the same database and output store.
    pub fn start_worker(&mut self) -> Result<()> {
        self.worker = Some(self.command("worker").stdout(Stdio::null()).spawn().context("starting worker")?);
        Ok(())
    }

    /// Kills the standalone worker with SIGKILL, as a crash or an OOM kill would.
    pub fn kill_worker(&mut self) -> Result<()> {
        if let Some(mut worker) = self.worker.take() {
            worker.kill()?;
            worker.wait()?;
        }
        Ok(())
    }

    fn command(&self, binary: &str) -> Command {
        let mut command = Command::new(self.binaries.join(binary));
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    /// Runs `api-server admin ARGS` on this deployment; its last line of output.
    pub fn admin(&self, args: &[&str]) -> Result<String> {
        Ok(self.admin_lines(args)?.pop().unwrap_or_default())
    }

    /// Runs `api-server admin ARGS` on this deployment; every line it printed.
    pub fn admin_lines(&self, args: &[&str]) -> Result<Vec<String>> {
        let output = self.command("api-server").arg("admin").args(args).output()?;
        if !output.status.success() {
            bail!("admin {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        }
        Ok(String::from_utf8_lossy(&output.stdout).lines().map(str::to_string).collect())
    }
}

impl Drop for Deployment {
    fn drop(&mut self) {
        for child in self.worker.iter_mut().chain(self.server.iter_mut()).chain(self.others.iter_mut()) {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.scratch);
        if let Some(name) = &self.postgres_db {
            let _ = psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    }
}

impl Deployment {
    /// Runs `sql` on the deployment's PostgreSQL database; its rows, one line each, columns
    /// separated by `|`.
    pub fn query(&self, sql: &str) -> Result<Vec<String>> {
        let database = self.postgres_db.as_deref().context("queries need the PostgreSQL backend")?;
        let output = Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", database, "-At", "-c", sql])
            .output()
            .context("running psql")?;
        if !output.status.success() {
            bail!("psql {sql:?}: {}", String::from_utf8_lossy(&output.stderr));
        }
        Ok(String::from_utf8_lossy(&output.stdout).lines().map(str::to_string).collect())
    }
}

fn psql(sql: &str) -> Result<()> {
    let status = Command::new("psql").args(["-h", "127.0.0.1", "-U", "postgres", "-q", "-c", sql]).status()?;
    if !status.success() {
        bail!("psql {sql:?} failed");
    }
    Ok(())
}

/// A number unlikely to repeat between runs, for scratch names.
pub fn unique() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

/// Runs `use_it` with the name of a scratch PostgreSQL database (on the machine's server, user
/// `postgres`) made for it, and drops the database afterwards whatever `use_it` returned.
pub fn with_scratch_database<T>(prefix: &str, use_it: impl FnOnce(&str) -> Result<T>) -> Result<T> {
    let database = format!("{prefix}_{}", unique());
    crate::run(Command::new("createdb").args(["-h", "127.0.0.1", "-U", "postgres", &database]))?;
    let result = use_it(&database);
    let _ = Command::new("dropdb").args(["-h", "127.0.0.1", "-U", "postgres", "--force", &database]).status();
    result
}

//! `cargo xtask bench [--backend sqlite|postgres|both] [--requests N] [--concurrency C]`: builds the
//! release binaries, starts a real api-server (no in-process worker) on a scratch database and
//! prints figures: submit and poll throughput and latency over HTTP with no job competing for the
//! CPU, then, with a standalone worker process started, the queue drain rate and the end-to-end time
//! of representative local engines. Nothing here asserts on timings; it measures.

use anyhow::{bail, Context, Result};
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Options {
    backends: Vec<&'static str>,
    requests: usize,
    concurrency: usize,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options { backends: vec!["sqlite", "postgres"], requests: 2000, concurrency: 32 };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let value = it.next().with_context(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--backend" => {
                options.backends = match value.as_str() {
                    "sqlite" => vec!["sqlite"],
                    "postgres" => vec!["postgres"],
                    "both" => vec!["sqlite", "postgres"],
                    other => bail!("unknown backend {other}"),
                }
            }
            "--requests" => options.requests = value.parse()?,
            "--concurrency" => options.concurrency = value.parse()?,
            other => bail!("unknown option {other}"),
        }
    }
    Ok(options)
}

pub fn run(args: &[String]) -> Result<()> {
    let options = parse(args)?;
    crate::run(crate::cargo().args(["build", "--release", "--package", "api-server", "--package", "worker-bin"]))?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    for backend in &options.backends {
        let mut server = BenchServer::start(backend)?;
        let result = runtime.block_on(measure(&mut server, &options));
        drop(server);
        result?;
    }
    Ok(())
}

/// Where and as whom requests go.
struct Target {
    base: String,
    key: String,
}

struct BenchServer {
    child: Child,
    worker: Option<Child>,
    env: Vec<(String, String)>,
    base: String,
    key: String,
    scratch: std::path::PathBuf,
    postgres_db: Option<String>,
}

const BINARY: &str = "target/release/api-server";
const WORKER: &str = "target/release/worker";

impl BenchServer {
    fn start(backend: &str) -> Result<BenchServer> {
        let scratch = std::env::temp_dir().join(format!("media-bench-{}-{backend}", std::process::id()));
        std::fs::create_dir_all(&scratch)?;
        let (url, postgres_db) = if backend == "postgres" {
            let name = format!("media_bench_{}", std::process::id());
            psql(&format!("CREATE DATABASE {name}"))?;
            (format!("postgres://postgres@127.0.0.1:5432/{name}"), Some(name))
        } else {
            (format!("sqlite://{}/bench.db", scratch.display()), None)
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let vars: Vec<(String, String)> = [
            ("DATABASE_URL", url.clone()),
            ("BIND_ADDR", format!("127.0.0.1:{port}")),
            ("OUTPUT_DIR", scratch.join("outputs").display().to_string()),
            ("EMBEDDED_WORKER", "false".into()),
            ("WORKER_CONCURRENCY", "2".into()),
            ("WORKER_POLL_MS", "50".into()),
            ("HTTP_WORKERS", "2".into()),
            ("RUST_LOG", "warn".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let env = |command: &mut Command| {
            command.envs(vars.iter().map(|(k, v)| (k, v)));
        };
        let admin = |args: &[&str]| -> Result<String> {
            let mut command = Command::new(BINARY);
            env(&mut command);
            let output = command.args(["admin"]).args(args).output()?;
            if !output.status.success() {
                bail!("admin {args:?}: {}", String::from_utf8_lossy(&output.stderr));
            }
            Ok(String::from_utf8_lossy(&output.stdout).lines().last().unwrap_or("").to_string())
        };
        admin(&["account", "create", "bench", "--card-on-file"])?;
        let key = admin(&["key", "create", "--account", "bench", "--label", "bench"])?;
        let mut command = Command::new(BINARY);
        env(&mut command);
        let child = command.stdout(Stdio::null()).spawn().context("starting api-server")?;
        let server = BenchServer {
            child,
            worker: None,
            env: vars,
            base: format!("http://127.0.0.1:{port}"),
            key,
            scratch,
            postgres_db,
        };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                println!("\n== backend: {backend} ==");
                return Ok(server);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        bail!("api-server did not start")
    }
}

impl BenchServer {
    /// Starts a standalone worker process on the same database and store.
    fn start_worker(&mut self) -> Result<()> {
        let child = Command::new(WORKER)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .spawn()
            .context("starting worker")?;
        self.worker = Some(child);
        Ok(())
    }
}

impl Drop for BenchServer {
    fn drop(&mut self) {
        for child in self.worker.iter_mut().chain(std::iter::once(&mut self.child)) {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.scratch);
        if let Some(name) = &self.postgres_db {
            let _ = psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    }
}

fn psql(sql: &str) -> Result<()> {
    let status = Command::new("psql").args(["-h", "127.0.0.1", "-U", "postgres", "-q", "-c", sql]).status()?;
    if !status.success() {
        bail!("psql {sql:?} failed");
    }
    Ok(())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn report(name: &str, mut latencies: Vec<Duration>, elapsed: Duration) {
    latencies.sort_unstable();
    println!(
        "{name:<34} {:>6} req  {:>8.0} req/s  p50 {:>7.2} ms  p95 {:>7.2} ms  p99 {:>7.2} ms",
        latencies.len(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.95),
        percentile(&latencies, 0.99),
    );
}

async fn measure(server: &mut BenchServer, options: &Options) -> Result<()> {
    let target = Target { base: server.base.clone(), key: server.key.clone() };
    let target = &target;
    let client = reqwest::Client::builder().pool_max_idle_per_host(options.concurrency).build()?;
    let submit = |prompt: String| {
        let client = client.clone();
        async move {
            let started = Instant::now();
            let response = client
                .post(format!("{}/v1/generate", target.base))
                .bearer_auth(&target.key)
                .json(&json!({"model": "tts", "prompt": prompt}))
                .send()
                .await?;
            let status = response.status();
            let body: Value = response.json().await?;
            if status.as_u16() != 202 {
                bail!("submit answered {status}: {body}");
            }
            Ok::<_, anyhow::Error>((started.elapsed(), body["id"].as_str().unwrap_or_default().to_string()))
        }
    };

    let started = Instant::now();
    let results: Vec<_> = stream::iter((0..options.requests).map(|i| submit(format!("Listing {i}: two beds."))))
        .buffer_unordered(options.concurrency)
        .collect()
        .await;
    let submit_elapsed = started.elapsed();
    let mut latencies = Vec::new();
    let mut ids = Vec::new();
    for result in results {
        let (latency, id) = result?;
        latencies.push(latency);
        ids.push(id);
    }
    report(&format!("POST /v1/generate (c={})", options.concurrency), latencies, submit_elapsed);

    let poll = |id: String| {
        let client = client.clone();
        async move {
            let started = Instant::now();
            let response = client.get(format!("{}/v1/tasks/{id}", target.base)).bearer_auth(&target.key).send().await?;
            let body: Value = response.json().await?;
            Ok::<_, anyhow::Error>((started.elapsed(), body["status"] == "succeeded"))
        }
    };
    let started = Instant::now();
    let results: Vec<_> =
        stream::iter(ids.iter().cloned().map(poll)).buffer_unordered(options.concurrency).collect().await;
    let mut latencies = Vec::new();
    for result in results {
        latencies.push(result?.0);
    }
    report(&format!("GET /v1/tasks/{{id}} (c={})", options.concurrency), latencies, started.elapsed());

    // Queue drain: a standalone worker starts on the full queue; wait until the last job is done.
    server.start_worker()?;
    let drain_started = Instant::now();
    for id in ids.iter().rev() {
        loop {
            let (_, done) = poll(id.clone()).await?;
            if done {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let drained = drain_started.elapsed();
    println!(
        "{:<34} {:>6} jobs {:>8.0} jobs/s  (tts with eSpeak NG when installed; 1 worker, 2 slots)",
        "queue drain",
        ids.len(),
        ids.len() as f64 / drained.as_secs_f64()
    );

    for (label, body) in [
        ("alpha-schnell 1024x1024 PNG", json!({"model": "alpha-schnell", "prompt": "bright living room"})),
        ("upscale-epsilon 512->1024", json!({"model": "upscale-epsilon", "image_url": "SELF_IMAGE"})),
        ("bg-remove 512x512", json!({"model": "bg-remove", "image_url": "SELF_IMAGE"})),
        ("eta-lite-i2v 5 s 480p", json!({"model": "eta-lite-i2v", "image_url": "SELF_IMAGE"})),
        (
            "lambda-fast 5 s 720p",
            json!({"model": "lambda-fast", "prompt": "aerial tour", "params": {"resolution": "720p"}}),
        ),
        ("omicron2 30 s music", json!({"model": "omicron2", "prompt": "warm jazz", "params": {"duration": 30}})),
    ] {
        let body = if body["image_url"] == "SELF_IMAGE" {
            let image = end_to_end(
                &client,
                target,
                json!({"model": "beta-image", "prompt": "porch", "params": {"width": 512, "height": 512}}),
            )
            .await?
            .1;
            let mut body = body;
            body["image_url"] = image["output"][0]["url"].clone();
            body
        } else {
            body
        };
        let (elapsed, _) = end_to_end(&client, target, body).await?;
        println!("{:<34} end to end {:>8.0} ms", label, elapsed.as_secs_f64() * 1000.0);
    }
    Ok(())
}

async fn end_to_end(client: &reqwest::Client, target: &Target, body: Value) -> Result<(Duration, Value)> {
    let started = Instant::now();
    let queued: Value = client
        .post(format!("{}/v1/generate", target.base))
        .bearer_auth(&target.key)
        .json(&body)
        .send()
        .await?
        .json()
        .await?;
    let id = queued["id"].as_str().with_context(|| format!("not accepted: {queued}"))?.to_string();
    loop {
        let task: Value =
            client.get(format!("{}/v1/tasks/{id}", target.base)).bearer_auth(&target.key).send().await?.json().await?;
        match task["status"].as_str() {
            Some("succeeded") => return Ok((started.elapsed(), task)),
            Some("failed") => bail!("{id} failed: {task}"),
            _ => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

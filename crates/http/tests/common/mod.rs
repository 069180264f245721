//! A real api-server for black-box tests: a fresh database (SQLite or PostgreSQL), a temporary
//! output directory, the HTTP API on a loopback port and an in-process worker.

#![allow(dead_code)]

pub mod browser;
pub mod contract;
pub mod receiver;

use base64::Engine as _;
use reqwest::StatusCode;
use serde_json::{json, Value};
use service::{AppConfig, Service};
use std::time::Duration;
use storage::test_support::TestDatabase;
use storage::Backend;
use tokio::sync::watch;

pub struct TestServer {
    pub base: String,
    pub client: reqwest::Client,
    pub service: Service,
    shutdown: watch::Sender<bool>,
    worker_config: worker::WorkerConfig,
    workers: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
    server: actix_web::dev::ServerHandle,
    pub output_dir: std::path::PathBuf,
    /// Where the console's mail is written, one file per message.
    pub mail_dir: std::path::PathBuf,
    pub db: TestDatabase,
    /// The settings it was built from.
    pub config: AppConfig,
}

/// Changes to a test server's settings.
pub type Adjust = Box<dyn FnOnce(&mut AppConfig)>;

pub struct Options {
    pub free_allowance: &'static str,
    pub worker: bool,
    pub worker_concurrency: usize,
    pub sync_recipe_wait: Duration,
    /// Whether visitors may sign up in the console.
    pub console_sign_up: bool,
    /// Accounts one address may create in the console per day (0: no limit).
    pub console_sign_ups_per_address: u32,
    /// The public base URL, when it is not the server's own address (an HTTPS proxy in front).
    pub public_base_url: Option<&'static str>,
    /// Further settings (provider routes and credentials), applied last.
    pub adjust: Option<Adjust>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            free_allowance: "5",
            worker: true,
            worker_concurrency: 2,
            sync_recipe_wait: Duration::from_secs(60),
            console_sign_up: true,
            console_sign_ups_per_address: 20,
            public_base_url: None,
            adjust: None,
        }
    }
}

impl TestServer {
    pub async fn start(backend: Backend) -> TestServer {
        Self::start_with(backend, Options::default()).await
    }

    pub async fn start_with(backend: Backend, options: Options) -> TestServer {
        log_to_collection();
        let db = TestDatabase::new(backend).unwrap_or_else(|e| panic!("{backend:?} database unavailable: {e}"));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let output_dir = std::env::temp_dir().join(storage::new_id("media-outputs"));
        let mut config = AppConfig::from_settings([]).expect("config");
        config.public_base_url = options.public_base_url.map_or_else(|| base.clone(), str::to_string);
        config.console_sign_up = options.console_sign_up;
        config.console_sign_ups_per_address = options.console_sign_ups_per_address;
        config.output_dir = output_dir.display().to_string();
        let mail_dir = std::env::temp_dir().join(storage::new_id("media-mail"));
        config.mail_transport = service::mail::MailTransport::Directory(mail_dir.clone());
        config.free_allowance = options.free_allowance.parse().expect("allowance");
        // On SQLite the key is generated beside the database; PostgreSQL requires one.
        config.url_signing_secret = (backend == Backend::Postgres).then(|| storage::new_id("test-signing-key-"));
        config.engine_catalog_file = None;
        config.worker_concurrency = options.worker_concurrency;
        config.worker_poll = Duration::from_millis(100);
        config.sync_recipe_wait = options.sync_recipe_wait;
        // A test binary cannot be started as a job process; the binaries' own tests run those.
        config.job_isolation = service::IsolationMode::Inline;
        if let Some(adjust) = options.adjust {
            adjust(&mut config);
        }
        let service = config.build_service_on(db.db.clone()).expect("service");
        let server = http_api::serve(service.clone(), listener, 2).expect("serve");
        let handle = server.handle();
        tokio::spawn(server);
        let (shutdown, _) = watch::channel(false);
        let worker_config = worker::WorkerConfig::from_app_config(&config, storage::new_id("test-worker"));
        let server = TestServer {
            base,
            // Idle connections are dropped before the server's keep-alive closes them, so a test
            // that pauses (decoding a video) never reuses a connection the server has closed.
            client: reqwest::Client::builder().pool_idle_timeout(Duration::from_secs(2)).build().expect("client"),
            service,
            shutdown,
            worker_config,
            workers: Default::default(),
            server: handle,
            output_dir,
            mail_dir,
            db,
            config,
        };
        if options.worker {
            server.start_worker();
        }
        server
    }

    /// The messages mailed to `to` so far, oldest first, each whole.
    pub fn mail_to(&self, to: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.mail_dir) else { return Vec::new() };
        let mut files: Vec<std::path::PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "eml"))
            .collect();
        files.sort();
        files
            .into_iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .filter(|m| m.contains(&format!("\r\nTo: {to}\r\n")))
            .collect()
    }

    /// The path of the last link to `/console/{kind}/...` mailed to `to` (on the public URL, which
    /// may not be this server's address).
    pub fn mailed_link(&self, to: &str, kind: &str) -> String {
        let prefix = format!("/console/{kind}/");
        let mail = self.mail_to(to).into_iter().rev().find(|m| m.contains(&prefix));
        let mail = mail.unwrap_or_else(|| panic!("no {kind} link mailed to {to}"));
        let start = mail.find(&prefix).expect("link");
        let end = mail[start..].find(|c: char| c.is_whitespace()).map_or(mail.len(), |e| start + e);
        mail[start..end].to_string()
    }

    /// Another api-server (no worker) on the same database and store, as a second process behind
    /// a load balancer would be; returns its base URL. It stops when the test's runtime ends.
    pub fn second_api_server(&self) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let service = self.config.build_service_on(self.db.db.clone()).expect("service");
        tokio::spawn(http_api::serve(service, listener, 2).expect("serve"));
        base
    }

    /// Starts an in-process worker (stopped with the server).
    pub fn start_worker(&self) {
        let handle =
            tokio::spawn(worker::run(self.service.clone(), self.worker_config.clone(), self.shutdown.subscribe()));
        self.workers.lock().expect("workers").push(handle);
    }

    /// A new account (with or without a card) and a key for it; returns the secret.
    pub async fn key(&self, spend_cap: Option<&str>, card: bool) -> String {
        let name = storage::new_id("acct");
        self.service.operator().create_account(&name, card).await.expect("account");
        let cap = spend_cap.map(|c| c.parse().expect("cap"));
        self.service.operator().create_key(&name, cap, Some("test")).await.expect("key").secret
    }

    pub async fn post(&self, key: &str, path: &str, body: Value) -> (StatusCode, Value) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .expect("request");
        read(response).await
    }

    pub async fn post_with_idempotency_key(
        &self,
        key: &str,
        path: &str,
        idempotency: &str,
        body: Value,
    ) -> (StatusCode, Value) {
        let request = self.client.post(format!("{}{path}", self.base)).bearer_auth(key);
        read(request.header("idempotency-key", idempotency).json(&body).send().await.expect("request")).await
    }

    pub async fn get(&self, key: &str, path: &str) -> (StatusCode, Value) {
        let response = self.client.get(format!("{}{path}", self.base)).bearer_auth(key).send().await.expect("request");
        read(response).await
    }

    /// Submits a job and expects 202.
    pub async fn submit(&self, key: &str, body: Value) -> Value {
        let (status, queued) = self.post(key, "/v1/generate", body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
        queued
    }

    /// Polls a task until it is terminal.
    pub async fn wait(&self, key: &str, id: &str) -> Value {
        self.wait_at(key, &format!("/v1/tasks/{id}")).await
    }

    /// Polls a job at `path` (a task, or a reel at its own endpoint) until it is terminal.
    pub async fn wait_at(&self, key: &str, path: &str) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(300);
        loop {
            let (status, job) = self.get(key, path).await;
            assert_eq!(status, StatusCode::OK, "{job}");
            if job["status"] == "succeeded" || job["status"] == "failed" {
                return job;
            }
            assert!(tokio::time::Instant::now() < deadline, "{path} did not finish: {job}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Polls task `id` until a worker (or a provider) runs it; panics after 30 s.
    pub async fn wait_running(&self, key: &str, id: &str) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while self.get(key, &format!("/v1/tasks/{id}")).await.1["status"] != "running" {
            assert!(tokio::time::Instant::now() < deadline, "task {id} never ran");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Submits, waits, and expects success.
    pub async fn run(&self, key: &str, body: Value) -> Value {
        let queued = self.submit(key, body).await;
        let task = self.wait(key, queued["id"].as_str().expect("id")).await;
        assert_eq!(task["status"], "succeeded", "{task}");
        task
    }

    /// Downloads an output URL without the bearer header.
    pub async fn download(&self, url: &str) -> (String, Vec<u8>) {
        let response = self.client.get(url).send().await.expect("download");
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let content_type = header("content-type");
        // Served as inert files: never sniffed, never run, named.
        assert_eq!(header("x-content-type-options"), "nosniff", "{url}");
        assert_eq!(header("content-security-policy"), "default-src 'none'; sandbox", "{url}");
        let disposition = header("content-disposition");
        let media = ["image/", "video/", "audio/"].iter().any(|kind| content_type.starts_with(kind));
        assert!(
            disposition.starts_with(if media { "inline; filename=\"" } else { "attachment; filename=\"" }),
            "{url}: {disposition}"
        );
        (content_type, response.bytes().await.expect("bytes").to_vec())
    }

    /// Stops the workers (waiting for them, so none still uses the database when it is dropped)
    /// and the HTTP server.
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        let workers: Vec<_> = self.workers.lock().expect("workers").drain(..).collect();
        for worker in workers {
            let _ = worker.await;
        }
        self.server.stop(false).await;
        // The server's worker threads drop their handles on the service a moment later; the last
        // one must go before the process exits, so no database call is left running.
        self.service.until_sole_handle(Duration::from_secs(10)).await;
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.output_dir);
    }
}

/// Reads a JSON answer and checks it against the schema the OpenAPI document declares for it.
pub async fn read(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let path = response.url().path().to_string();
    let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let text = response.text().await.expect("body");
    let body =
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("non-JSON body ({content_type}) for {status}: {text:?}"));
    contract::check_answer(&path, status.as_u16(), &body);
    (status, body)
}

/// One of the media crate's test photographs as a JPEG data URI.
pub fn photo(name: &str) -> String {
    let path = format!("{}/../media/tests/photos/{name}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    format!("data:image/jpeg;base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// A PNG as a data URI: a red disc on a grey background, `w` x `h`.
pub fn png_data_uri(w: u32, h: u32) -> String {
    image_data_uri(&image::RgbImage::from_fn(w, h, |x, y| {
        let (dx, dy) = (x as f32 - w as f32 / 2.0, y as f32 - h as f32 / 2.0);
        if dx * dx + dy * dy < (w.min(h) as f32 / 3.0).powi(2) {
            image::Rgb([200, 30, 40])
        } else {
            image::Rgb([120 + (x % 3) as u8, 120, 122])
        }
    }))
}

/// `image` as a PNG data URI.
pub fn image_data_uri(image: &image::RgbImage) -> String {
    let image = image.clone();
    let mut bytes = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .expect("png");
    format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// A mask PNG (white square in the middle) as a data URI.
pub fn mask_data_uri(w: u32, h: u32) -> String {
    let mask = image::GrayImage::from_fn(w, h, |x, y| {
        let inside = x > w / 3 && x < 2 * w / 3 && y > h / 3 && y < 2 * h / 3;
        image::Luma([if inside { 255 } else { 0 }])
    });
    let mut bytes = Vec::new();
    image::DynamicImage::ImageLuma8(mask)
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .expect("png");
    format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

pub fn generate(model: &str, extra: Value) -> Value {
    let mut body = json!({ "model": model });
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    body
}

/// With `TEST_LOG_DIR` set (by `cargo xtask ci`), this test binary's service logs, access log
/// included, go to a file of its own there, which the CI searches for secrets after the suite.
fn log_to_collection() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Some(dir) = std::env::var_os("TEST_LOG_DIR") else { return };
        let binary = std::env::current_exe().ok().and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()));
        let name = format!("{}-{}.log", binary.unwrap_or_else(|| "http-tests".into()), std::process::id());
        let Ok(file) = std::fs::File::create(std::path::Path::new(&dir).join(name)) else { return };
        let _ = tracing_subscriber::fmt()
            .with_writer(std::sync::Mutex::new(file))
            .with_ansi(false)
            .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
            .try_init();
    });
}

/// Replaces every signed URL and its expiry in `value`, which are signed afresh on each read.
pub fn unsigned(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            for (name, field) in fields.iter_mut() {
                if name == "url" || name == "expires_at" || field.as_str().is_some_and(|s| s.contains("sig=")) {
                    *field = json!("(signed)");
                } else {
                    unsigned(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unsigned),
        _ => {}
    }
}

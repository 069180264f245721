//! `cargo xtask s3-e2e`: outputs in an S3-compatible bucket. Starts an S3-compatible server
//! (moto, pinned in `crates/engines/tests/s3/requirements.txt`), points api-server's
//! `OUTPUT_STORE_URL` at a bucket on it, runs a job over HTTP, downloads the output through its
//! signed URL and checks the object is in the bucket.

use crate::deployment::{python_with, unique, Deployment};
use anyhow::{bail, ensure, Context, Result};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REQUIREMENTS: &str = "crates/engines/tests/s3/requirements.txt";
const BUCKET: &str = "media-outputs";

struct S3Server(Child);

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn run() -> Result<()> {
    let python = python_with(REQUIREMENTS)?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let moto_server = std::path::Path::new(&python).with_file_name("moto_server");
    let _s3 = S3Server(
        Command::new(moto_server)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting the S3-compatible server")?,
    );
    let endpoint = format!("http://127.0.0.1:{port}");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let client = reqwest::Client::new();
        let started = Instant::now();
        // Creating the bucket doubles as the readiness probe.
        loop {
            match client.put(format!("{endpoint}/{BUCKET}")).send().await {
                Ok(response) if response.status().is_success() => break,
                _ if started.elapsed() > Duration::from_secs(30) => bail!("S3-compatible server did not start"),
                _ => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
        let prefix = format!("run-{}", unique());
        crate::build_binaries("debug")?;
        let deployment = Deployment::start(
            "debug",
            false,
            &[
            ("OUTPUT_STORE_URL", format!("s3://{BUCKET}/{prefix}")),
            ("AWS_ENDPOINT", endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ACCESS_KEY_ID", "e2e".into()),
            ("AWS_SECRET_ACCESS_KEY", "e2e".into()),
            ],
        )?;
        let queued: Value = client
            .post(format!("{}/v1/generate", deployment.base))
            .bearer_auth(&deployment.key)
            .json(&json!({"model": "alpha-schnell", "prompt": "stored in a bucket", "params": {"width": 256, "height": 256}}))
            .send()
            .await?
            .json()
            .await?;
        let id = queued["id"].as_str().with_context(|| format!("not accepted: {queued}"))?;
        let started = Instant::now();
        let task = loop {
            let task: Value = client
                .get(format!("{}/v1/tasks/{id}", deployment.base))
                .bearer_auth(&deployment.key)
                .send()
                .await?
                .json()
                .await?;
            match task["status"].as_str() {
                Some("succeeded") => break task,
                Some("failed") => bail!("job failed: {task}"),
                _ if started.elapsed() > Duration::from_secs(60) => bail!("job did not finish: {task}"),
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        let url = task["output"][0]["url"].as_str().context("output url")?;
        let png = client.get(url).send().await?.bytes().await?;
        ensure!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "the signed URL served a PNG from the bucket");
        let listing = client.get(format!("{endpoint}/{BUCKET}?list-type=2&prefix={prefix}/tasks/{id}/")).send().await?.text().await?;
        ensure!(listing.contains(&format!("{prefix}/tasks/{id}/")), "the output object is in the bucket: {listing}");
        println!("s3-e2e: task {id} stored in s3://{BUCKET}/{prefix}/tasks/{id}/ and served ({} bytes)", png.len());
        Ok(())
    })
}

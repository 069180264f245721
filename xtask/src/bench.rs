//! `cargo xtask bench [--part images|media|service|providers|pickup|submits|queue|all] [--backend sqlite|postgres|both]
//! [--requests N] [--concurrency C] [--tracked N] [--provider-run-ms MS]`: times images and video beside libvips, ImageMagick and ffmpeg
//! (`images`; `media` adds the engines end to end and the reel through one SQLite service); then
//! (`service`, and `all`, the default) builds the release binaries, starts a real api-server (no in-process worker) on a scratch database and
//! prints figures: submit and poll throughput and latency over HTTP with no job competing for the
//! CPU, then, with a standalone worker process started, the queue drain rate and the end-to-end time
//! of representative local engines, polls under `wrk` beside a bare actix handler and `pgbench -S`
//! (`poll_bench`), and last (the worker stopped, so the tasks they queue never run and nothing
//! after them waits on a job) submits of one key under `wrk` beside `pgbench`'s hot-row ceiling;
//! the pickup latency of an idle worker on a deployment of its own; then, against the provider simulator, the
//! inline submit to an upstream provider and one worker tracking `--tracked` (1,000) requests at once
//! (`--part providers`: that alone; `--part pickup`: the pickup latency alone; `--part submits`: one
//! key's submits beside the hot-row ceiling alone, three times); `--part queue`: the queue's no-op job rate beside apalis
//! (`queue_bench`).
//! Nothing here asserts on timings; it measures.

use crate::deployment::Deployment;
use anyhow::{bail, Context, Result};
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A service figure measured alone.
#[derive(Clone, Copy)]
enum OnlyFigure {
    /// One worker tracking requests held at the provider simulator.
    Providers,
    /// The pickup latency of an idle worker.
    Pickup,
    /// One key's submits under `wrk` beside the hot-row ceiling, three times.
    Submits,
}

struct Options {
    backends: Vec<&'static str>,
    requests: usize,
    concurrency: usize,
    /// Run the image comparisons against libvips and ImageMagick.
    images: bool,
    /// Run the service figures (engines end to end, reel).
    service: bool,
    /// With them, the HTTP, queue and provider-tracking figures.
    throughput: bool,
    /// One service figure alone (`--part providers` or `--part pickup`), instead of them all.
    only: Option<OnlyFigure>,
    /// The queue beside apalis (`all` and `queue`).
    queue: bool,
    /// Requests held at the provider simulator at once in the tracking figure.
    tracked: usize,
    /// How long each of them runs there.
    provider_run_ms: u64,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options {
        backends: vec!["sqlite", "postgres"],
        requests: 2000,
        concurrency: 32,
        images: true,
        service: true,
        throughput: true,
        only: None,
        queue: true,
        tracked: 1000,
        provider_run_ms: PROVIDER_RUN_MS,
    };
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
            "--tracked" => options.tracked = value.parse()?,
            "--provider-run-ms" => options.provider_run_ms = value.parse()?,
            "--part" => {
                options.queue = matches!(value.as_str(), "all" | "queue");
                (options.images, options.service, options.throughput) = match value.as_str() {
                    "images" => (true, false, false),
                    // Images and video, then the engines and the reel through one service.
                    "media" => (true, true, false),
                    "service" => (false, true, true),
                    "all" => (true, true, true),
                    "providers" | "pickup" | "submits" => {
                        options.only = Some(match value.as_str() {
                            "pickup" => OnlyFigure::Pickup,
                            "submits" => OnlyFigure::Submits,
                            _ => OnlyFigure::Providers,
                        });
                        (false, true, true)
                    }
                    "queue" => (false, false, false),
                    other => {
                        bail!("unknown part {other} (images, media, service, providers, pickup, submits, queue, all)")
                    }
                };
                if !options.throughput {
                    options.backends = vec!["sqlite"];
                }
            }
            other => bail!("unknown option {other}"),
        }
    }
    Ok(options)
}

pub fn run(args: &[String]) -> Result<()> {
    let options = parse(args)?;
    if options.images {
        crate::image_bench::run()?;
    }
    if options.service {
        service(&options)?;
    }
    if options.queue {
        crate::queue_bench::run(options.requests)?;
    }
    Ok(())
}

/// The service's figures (see the module's text).
fn service(options: &Options) -> Result<()> {
    crate::run(crate::cargo().args([
        "build",
        "--release",
        "--package",
        "api-server",
        "--package",
        "worker-bin",
        "--package",
        "provider-sim",
    ]))?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    for backend in &options.backends {
        if let Some(only) = options.only {
            println!("\n== backend: {backend} ==");
            match only {
                OnlyFigure::Providers => runtime.block_on(tracking(*backend == "postgres", options))?,
                OnlyFigure::Pickup => runtime.block_on(pickup(*backend == "postgres"))?,
                OnlyFigure::Submits => runtime.block_on(submits(*backend == "postgres"))?,
            }
            continue;
        }
        let mut server = Deployment::start(
            "release",
            *backend == "postgres",
            &[
                ("EMBEDDED_WORKER", "false".into()),
                ("WORKER_CONCURRENCY", "2".into()),
                // The bench's one key may fill both slots: the drain measures the worker, not
                // the share a key gets beside others (by default half the slots).
                ("JOBS_RUNNING_PER_KEY", "2".into()),
                ("JOBS_RUNNING_PER_ACCOUNT", "2".into()),
                ("WORKER_POLL_MS", "50".into()),
                ("HTTP_WORKERS", "2".into()),
                // Rates no run reaches: the limits are on, and cost what they cost (see `measure`).
                ("RATE_LIMIT_SUBMITS_PER_MINUTE", "100000000".into()),
                ("RATE_LIMIT_READS_PER_MINUTE", "100000000".into()),
            ],
        )?;
        println!("\n== backend: {backend} ==");
        let result = runtime.block_on(measure(&mut server, options, *backend == "postgres"));
        drop(server);
        result?;
        if options.throughput {
            runtime.block_on(pickup(*backend == "postgres"))?;
            runtime.block_on(tracking(*backend == "postgres", options))?;
        }
    }
    Ok(())
}

/// One key's submits beside the hot-row ceiling, three runs in a row on one api-server (the
/// figure moves between runs on two shared cores), with no worker running.
async fn submits(postgres: bool) -> Result<()> {
    let server =
        Deployment::start("release", postgres, &[("EMBEDDED_WORKER", "false".into()), ("HTTP_WORKERS", "2".into())])?;
    let target = Target { base: server.base.clone(), key: server.key.clone() };
    let key_id = key_id(&reqwest::Client::new(), &target).await?;
    server.admin(&["key", "rate", &key_id, "--submits-per-minute", "0", "--reads-per-minute", "0"])?;
    for _ in 0..3 {
        crate::poll_bench::submits_beside_anchor(&server.base, &server.key, postgres)?;
    }
    Ok(())
}

/// The id of `target`'s key, as its usage names it.
async fn key_id(client: &reqwest::Client, target: &Target) -> Result<String> {
    let usage: Value =
        client.get(format!("{}/v1/usage", target.base)).bearer_auth(&target.key).send().await?.json().await?;
    Ok(usage["key_id"].as_str().context("usage names the key")?.to_string())
}

/// Jobs in the pickup-latency figure.
const PICKUPS: usize = 200;

/// Pickup latency: the time from a job's acceptance to a worker starting it (the task's own
/// `created_at` and `started_at`), for [`PICKUPS`] jobs submitted one at a time to an idle worker:
/// the embedded worker on SQLite (the default), a standalone worker woken by `NOTIFY` on
/// PostgreSQL.
async fn pickup(postgres: bool) -> Result<()> {
    let mut server = Deployment::start(
        "release",
        postgres,
        &[
            ("EMBEDDED_WORKER", (!postgres).to_string()),
            ("WORKER_POLL_MS", "500".into()),
            ("RATE_LIMIT_SUBMITS_PER_MINUTE", "0".into()),
            ("RATE_LIMIT_READS_PER_MINUTE", "0".into()),
        ],
    )?;
    if postgres {
        server.start_worker()?;
    }
    let target = Target { base: server.base.clone(), key: server.key.clone() };
    let client = reqwest::Client::new();
    let mut latencies = Vec::new();
    for i in 0..PICKUPS {
        let body = json!({"model": "tts", "prompt": format!("Pickup {i}.")});
        let (_, task) =
            submit_and_wait(&client, &target, "/v1/generate", body, Duration::from_millis(5), || {}).await?;
        let at =
            |field: &str| task[field].as_str().and_then(millis_of_day).with_context(|| format!("{field} in {task}"));
        latencies
            .push(Duration::from_millis((at("started_at")? - at("created_at")?).rem_euclid(86_400_000).unsigned_abs()));
    }
    latencies.sort_unstable();
    println!(
        "{:<34} {:>6} jobs  p50 {:>5.0} ms  p99 {:>5.0} ms  max {:>5.0} ms  mean {:.2} ms  (accepted to running, idle {} worker; timestamps in ms)",
        "pickup latency",
        PICKUPS,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
        // Each end is stamped to the millisecond, so a difference reads 2 or 3 for a true 2.4;
        // their mean is not biased by the rounding, and says which side of a whole millisecond
        // the figures sit on.
        latencies.iter().map(Duration::as_secs_f64).sum::<f64>() * 1000.0 / latencies.len().max(1) as f64,
        if postgres { "standalone" } else { "embedded" },
    );
    Ok(())
}

/// Milliseconds since midnight of an RFC 3339 UTC time with milliseconds (`…THH:MM:SS.mmmZ`).
fn millis_of_day(time: &str) -> Option<i64> {
    let clock = time.split_once('T')?.1.trim_end_matches('Z');
    let (hms, millis) = clock.split_once('.').unwrap_or((clock, "0"));
    let mut parts = hms.split(':').map(str::parse::<i64>);
    let (h, m, s) = (parts.next()?.ok()?, parts.next()?.ok()?, parts.next()?.ok()?);
    Some(((h * 60 + m) * 60 + s) * 1000 + millis.get(..3).unwrap_or(millis).parse::<i64>().ok()?)
}

/// How long each request of the provider figures runs at the provider, unless `--provider-run-ms`
/// says otherwise.
const PROVIDER_RUN_MS: u64 = 2000;

/// The provider path against `provider-sim`: submit latency (the submit to the provider is
/// inline), then one worker with two job slots tracking `--tracked` requests that each take
/// `--provider-run-ms` at the provider, beside what a worker holding a slot per request would need.
async fn tracking(postgres: bool, options: &Options) -> Result<()> {
    let mut sim = std::process::Command::new("target/release/provider-sim")
        .args(["--bind", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("starting provider-sim")?;
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(sim.stdout.take().context("simulator output")?),
        &mut line,
    )?;
    let sim_url = line.trim().rsplit(' ').next().unwrap_or_default().to_string();
    let outcome = track_against(&sim_url, postgres, options).await;
    let _ = sim.kill();
    let _ = sim.wait();
    outcome
}

async fn track_against(sim_url: &str, postgres: bool, options: &Options) -> Result<()> {
    let client = reqwest::Client::builder().pool_max_idle_per_host(options.concurrency).build()?;
    let run_ms = options.provider_run_ms;
    let faults = json!({"queue_ms": 100, "run_ms": run_ms});
    client.post(format!("{sim_url}/_sim/faults")).json(&faults).send().await?.error_for_status()?;
    let mut server = Deployment::start(
        "release",
        postgres,
        &[
            ("EMBEDDED_WORKER", "false".into()),
            ("WORKER_CONCURRENCY", "2".into()),
            ("WORKER_POLL_MS", "50".into()),
            ("HTTP_WORKERS", "2".into()),
            ("FAL_KEY", "sim-fal-key".into()),
            ("FAL_QUEUE_URL", sim_url.to_string()),
            ("ENGINE_ROUTES", "beta-image=fal:fal-ai/flux/dev".into()),
            // A thousand submits at once: past the default rate, which is not what this measures.
            ("RATE_LIMIT_SUBMITS_PER_MINUTE", "0".into()),
            ("RATE_LIMIT_READS_PER_MINUTE", "0".into()),
        ],
    )?;
    let target = Target { base: server.base.clone(), key: server.key.clone() };
    let target = &target;
    let requests = options.tracked;
    let jobs = (0..requests).map(
        |i| json!({"model": "beta-image", "prompt": format!("porch {i}"), "params": {"width": 512, "height": 512}}),
    );
    let (ids, _) = submit_all(&client, target, jobs, options.concurrency, "POST /v1/generate to provider").await?;

    server.start_worker()?;
    let started = Instant::now();
    let mut peak_kib = 0;
    for id in &ids {
        loop {
            let task: Value = client
                .get(format!("{}/v1/tasks/{id}", target.base))
                .bearer_auth(&target.key)
                .send()
                .await?
                .json()
                .await?;
            if let Some(kib) = server.worker_pid().and_then(|pid| rss_kib(pid, "VmHWM")) {
                peak_kib = peak_kib.max(kib);
            }
            match task["status"].as_str() {
                Some("succeeded") => break,
                Some("failed") => bail!("a tracked task failed: {task}"),
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
    let tracked = started.elapsed();
    println!(
        "{:<34} {:>6} requests in {:>6.1} s, worker peak RSS {} MiB (1 worker, 2 slots, {} ms each at the provider)",
        "provider tracking",
        requests,
        tracked.as_secs_f64(),
        peak_kib / 1024,
        run_ms
    );
    // A runner that holds a slot while its request runs upstream waits out each request in turn:
    // with the same two slots that is at least the requests x run time / 2.
    println!(
        "{:<34} {:>6} requests in {:>6.1} s at best (computed: {} x {} ms / 2 slots)",
        "  a slot held per request",
        requests,
        (requests as f64 * run_ms as f64 / 1000.0) / 2.0,
        requests,
        run_ms
    );
    drop(server);
    Ok(())
}

/// Submits `jobs` to `/v1/generate`, `concurrency` at a time, reports their latency under
/// `label`, and returns the task ids.
async fn submit_all(
    client: &reqwest::Client,
    target: &Target,
    jobs: impl Iterator<Item = Value>,
    concurrency: usize,
    label: &str,
) -> Result<(Vec<String>, f64)> {
    let submit = |body: Value| {
        let client = client.clone();
        async move {
            let started = Instant::now();
            let response =
                client.post(format!("{}/v1/generate", target.base)).bearer_auth(&target.key).json(&body).send().await?;
            let status = response.status();
            let body: Value = response.json().await?;
            if status.as_u16() != 202 {
                bail!("submit answered {status}: {body}");
            }
            Ok::<_, anyhow::Error>((started.elapsed(), body["id"].as_str().unwrap_or_default().to_string()))
        }
    };
    let started = Instant::now();
    let results: Vec<_> = stream::iter(jobs.map(submit)).buffer_unordered(concurrency).collect().await;
    let elapsed = started.elapsed();
    let mut latencies = Vec::new();
    let mut ids = Vec::new();
    for result in results {
        let (latency, id) = result?;
        latencies.push(latency);
        ids.push(id);
    }
    let throughput = report(&format!("{label} (c={concurrency})"), latencies, elapsed);
    Ok((ids, throughput))
}

/// Where and as whom requests go.
pub(crate) struct Target {
    base: String,
    key: String,
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Prints a run's figures; returns its throughput, requests a second.
fn report(name: &str, mut latencies: Vec<Duration>, elapsed: Duration) -> f64 {
    latencies.sort_unstable();
    let throughput = latencies.len() as f64 / elapsed.as_secs_f64();
    println!(
        "{name:<34} {:>6} req  {:>8.0} req/s  p50 {:>7.2} ms  p95 {:>7.2} ms  p99 {:>7.2} ms",
        latencies.len(),
        throughput,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.95),
        percentile(&latencies, 0.99),
    );
    throughput
}

async fn measure(server: &mut Deployment, options: &Options, postgres: bool) -> Result<()> {
    let target = Target { base: server.base.clone(), key: server.key.clone() };
    let target = &target;
    let client = reqwest::Client::builder().pool_max_idle_per_host(options.concurrency).build()?;
    let throughput_key = if options.throughput {
        Some(throughput(server, options, &client, target, postgres).await?)
    } else {
        server.start_worker()?;
        None
    };
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
    lip_sync(&client, target).await?;
    crate::reel_bench::run(&client, target, server.worker_pid()).await?;
    // Submits of one key last, its rate limits lifted and no worker taking the cores meanwhile:
    // the tasks they queue are never run, so nothing after this may wait for a job.
    if let Some(key_id) = throughput_key {
        server.kill_worker()?;
        server.admin(&["key", "rate", &key_id, "--submits-per-minute", "0", "--reads-per-minute", "0"])?;
        crate::poll_bench::submits_beside_anchor(&target.base, &target.key, postgres)?;
    }
    Ok(())
}

/// `lipsync` on a 5 s 720p clip (from `lambda-fast`) and a spoken sentence (from `tts`), end to
/// end, beside ffmpeg doing the same with the same two files: the clip looped to the speech's
/// length, re-encoded with libx264 `veryfast`, the speech as AAC.
async fn lip_sync(client: &reqwest::Client, target: &Target) -> Result<()> {
    let clip = json!({"model": "lambda-fast", "prompt": "agent talking", "params": {"resolution": "720p"}});
    let clip_url = end_to_end(client, target, clip).await?.1["output"][0]["url"].clone();
    let sentence = "Welcome to forty two Harbor Lane, a bright three bedroom home with a new kitchen, a quiet \
                    garden and a short walk to the water. Call Dana Reyes today to see it.";
    let speech = end_to_end(client, target, json!({"model": "tts", "prompt": sentence})).await?.1;
    let speech_url = speech["output"][0]["url"].clone();
    let (elapsed, synced) =
        end_to_end(client, target, json!({"model": "lipsync", "video_url": clip_url, "audio_url": speech_url})).await?;
    let seconds = synced["output"][0]["duration_seconds"].as_f64().unwrap_or_default();
    println!("{:<34} end to end {:>8.0} ms  ({seconds:.1} s of 720p)", "lipsync", elapsed.as_secs_f64() * 1000.0);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-images");
    std::fs::create_dir_all(&dir)?;
    let (clip, wav, out) = (dir.join("lipsync-clip.mp4"), dir.join("lipsync-speech.wav"), dir.join("lipsync-x264.mp4"));
    for (url, path) in [(&clip_url, &clip), (&speech_url, &wav)] {
        let bytes = client.get(url.as_str().context("output url")?).send().await?.bytes().await?;
        std::fs::write(path, bytes)?;
    }
    if !crate::have_ffmpeg() {
        println!("{:<34} skipped (apt-get install ffmpeg)", "ffmpeg loop + x264 veryfast + aac");
        return Ok(());
    }
    let started = Instant::now();
    let status = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-stream_loop", "-1", "-i"])
        .arg(&clip)
        .arg("-i")
        .arg(&wav)
        .args(["-map", "0:v", "-map", "1:a", "-shortest", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt"])
        .args(["yuv420p", "-c:a", "aac", "-movflags", "+faststart"])
        .arg(&out)
        .status();
    match status {
        Ok(status) if status.success() => println!(
            "{:<34} encode     {:>8.0} ms  (ratio {:.2}x: their time / ours)",
            "ffmpeg loop + x264 veryfast + aac",
            started.elapsed().as_secs_f64() * 1000.0,
            started.elapsed().as_secs_f64() / elapsed.as_secs_f64()
        ),
        _ => println!("{:<34} skipped (apt-get install ffmpeg)", "ffmpeg loop + x264 veryfast + aac"),
    }
    Ok(())
}

/// Submit and poll throughput with the rate limits on and off, then the queue drained by a
/// standalone worker (started here, and left running); returns the bench key's id.
async fn throughput(
    server: &mut Deployment,
    options: &Options,
    client: &reqwest::Client,
    target: &Target,
    postgres: bool,
) -> Result<String> {
    let poll = |id: String| {
        let client = client.clone();
        async move {
            let started = Instant::now();
            let response = client.get(format!("{}/v1/tasks/{id}", target.base)).bearer_auth(&target.key).send().await?;
            let body: Value = response.json().await?;
            Ok::<_, anyhow::Error>((started.elapsed(), body["status"] == "succeeded"))
        }
    };
    // Half the submits and polls with the key's rate limits on (at rates it never reaches, so each
    // request takes the limiter's path), half with them off for the key: the limits' cost on the
    // hot paths, side by side. Four passes, on-off-off-on, so that the database growing and the
    // process warming up weigh on both settings alike.
    let key_id = key_id(client, target).await?;
    let mut ids = Vec::new();
    // (submits, polls) per second, summed over each setting's two passes.
    let mut limited_rates = (0.0, 0.0);
    let mut unlimited_rates = (0.0, 0.0);
    for (pass, limited) in [("rate-limited", true), ("unlimited", false), ("unlimited", false), ("rate-limited", true)]
    {
        if limited {
            server.admin(&["key", "rate", &key_id])?;
        } else {
            server.admin(&["key", "rate", &key_id, "--submits-per-minute", "0", "--reads-per-minute", "0"])?;
        }
        let jobs = (0..options.requests / 4)
            .map(|i| json!({"model": "tts", "prompt": format!("Listing {i} ({pass}): two beds.")}));
        let (pass_ids, submits) =
            submit_all(client, target, jobs, options.concurrency, &format!("POST /v1/generate, {pass}")).await?;
        let started = Instant::now();
        let results: Vec<_> =
            stream::iter(pass_ids.iter().cloned().map(poll)).buffer_unordered(options.concurrency).collect().await;
        let mut latencies = Vec::new();
        for result in results {
            latencies.push(result?.0);
        }
        let polls =
            report(&format!("GET /v1/tasks/{{id}}, {pass} (c={})", options.concurrency), latencies, started.elapsed());
        let sums = if limited { &mut limited_rates } else { &mut unlimited_rates };
        sums.0 += submits;
        sums.1 += polls;
        ids.extend(pass_ids);
    }
    println!(
        "{:<34} submits {:.3}x, polls {:.3}x the throughput without them",
        "rate limits",
        limited_rates.0 / unlimited_rates.0,
        limited_rates.1 / unlimited_rates.1
    );

    // Polls of a task still queued, read from the database every time, before any worker runs.
    let queued = ids.last().context("no task was submitted")?;
    let queued_polls = crate::poll_bench::poll_of_queued_task(&target.base, &target.key, queued)?;

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
        "{:<34} {:>6} jobs {:>8.0} jobs/s  (tts with eSpeak NG when installed; 1 worker, 2 slots, one key)",
        "queue drain",
        ids.len(),
        ids.len() as f64 / drained.as_secs_f64()
    );
    // Polls of a succeeded task (its output URLs signed on every answer), the worker idle.
    let polled = ids.first().context("no task was submitted")?;
    crate::poll_bench::poll_beside_anchors(&target.base, &target.key, polled, queued_polls, postgres)?;
    Ok(key_id)
}

async fn end_to_end(client: &reqwest::Client, target: &Target, body: Value) -> Result<(Duration, Value)> {
    submit_and_wait(client, target, "/v1/generate", body, Duration::from_millis(10), || {}).await
}

/// Submits `body` to `path`, then polls the job (a task, or a reel at its own endpoint) every
/// `every`, calling `on_poll` each time, until it succeeds; returns the time taken and the job.
pub(crate) async fn submit_and_wait(
    client: &reqwest::Client,
    target: &Target,
    path: &str,
    body: Value,
    every: Duration,
    mut on_poll: impl FnMut(),
) -> Result<(Duration, Value)> {
    let started = Instant::now();
    let queued: Value =
        client.post(format!("{}{path}", target.base)).bearer_auth(&target.key).json(&body).send().await?.json().await?;
    let poll_url = queued["poll_url"].as_str().with_context(|| format!("not accepted: {queued}"))?.to_string();
    loop {
        on_poll();
        let job: Value = client.get(&poll_url).bearer_auth(&target.key).send().await?.json().await?;
        match job["status"].as_str() {
            Some("succeeded") => return Ok((started.elapsed(), job)),
            Some("failed") => bail!("{poll_url} failed: {job}"),
            _ => tokio::time::sleep(every).await,
        }
    }
}

/// Resident memory of a process and every process under it (a worker's job processes), KiB.
pub(crate) fn tree_rss_kib(pid: u32) -> u64 {
    let children = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| list.split_whitespace().filter_map(|c| c.parse::<u32>().ok()).collect::<Vec<_>>());
    rss_kib(pid, "VmRSS").unwrap_or(0) + children.map(tree_rss_kib).sum::<u64>()
}

/// A memory figure (`VmRSS`, `VmHWM`) of a process, KiB.
pub(crate) fn rss_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

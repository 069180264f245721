//! Helpers shared by the simulator's HTTP tests.
#![allow(dead_code)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{HeaderMap, Response};
use hyper_util::rt::TokioIo;
use provider_sim::{Faults, SimConfig, Simulator};
use serde_json::Value;
use std::convert::Infallible;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

pub const FAL_KEY: &str = "Key sim-fal-key";
pub const REPLICATE_TOKEN: &str = "Bearer sim-replicate-token";

/// A simulator with `faults` in force.
pub async fn sim(faults: Faults) -> Simulator {
    let sim = Simulator::start(SimConfig::default()).await.expect("simulator starts");
    sim.set_faults(faults);
    sim
}

/// Faults with short queue and run times.
pub fn quick() -> Faults {
    Faults { queue_ms: 5, run_ms: 5, ..Faults::default() }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(15)).build().expect("client")
}

/// Submits `input` to the fal app `app`; returns the submit answer.
pub async fn fal_submit(sim: &Simulator, app: &str, input: Value) -> Value {
    let answer = client()
        .post(format!("{}/{app}", sim.url()))
        .header("authorization", FAL_KEY)
        .json(&input)
        .send()
        .await
        .expect("submit");
    assert_eq!(answer.status(), 200);
    answer.json().await.expect("submit json")
}

/// GETs `url` with fal's key; returns status and JSON.
pub async fn fal_get(url: &str) -> (u16, Value) {
    let answer = client().get(url).header("authorization", FAL_KEY).send().await.expect("get");
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

/// Polls a fal status URL until COMPLETED; returns every status seen, in order.
pub async fn fal_until_completed(status_url: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for _ in 0..500 {
        let (code, body) = fal_get(status_url).await;
        assert_eq!(code, 200, "{body}");
        let status = body["status"].as_str().expect("status").to_string();
        if seen.last() != Some(&status) {
            seen.push(status.clone());
        }
        if status == "COMPLETED" {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never completed: {seen:?}");
}

/// POSTs `body` to the Replicate path `path`.
pub async fn replicate_post(sim: &Simulator, path: &str, body: Value) -> reqwest::Response {
    client()
        .post(format!("{}{path}", sim.url()))
        .header("authorization", REPLICATE_TOKEN)
        .json(&body)
        .send()
        .await
        .expect("replicate post")
}

/// Polls a prediction until it leaves starting/processing; returns it and the statuses seen.
pub async fn replicate_until_done(get_url: &str) -> (Value, Vec<String>) {
    let mut seen = Vec::new();
    for _ in 0..500 {
        let answer = client().get(get_url).header("authorization", REPLICATE_TOKEN).send().await.expect("poll");
        assert_eq!(answer.status(), 200);
        let body: Value = answer.json().await.expect("prediction");
        let status = body["status"].as_str().expect("status").to_string();
        if seen.last() != Some(&status) {
            seen.push(status.clone());
        }
        if !matches!(status.as_str(), "starting" | "processing") {
            return (body, seen);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never done: {seen:?}");
}

/// A received webhook.
pub struct Hook {
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// A local webhook receiver answering 200; returns its URL and the deliveries.
pub async fn receiver() -> (String, mpsc::UnboundedReceiver<Hook>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let tx = tx.clone();
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                        let _ = tx.send(Hook { headers: parts.headers, body });
                        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"ok"))))
                    }
                });
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    (url, rx)
}

/// The next delivery, within 10 s.
pub async fn next_hook(rx: &mut mpsc::UnboundedReceiver<Hook>) -> Hook {
    tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("webhook in time").expect("webhook")
}

/// Waits until `check` holds for the simulator's stats.
pub async fn wait_stats(sim: &Simulator, check: impl Fn(&provider_sim::Stats) -> bool) {
    for _ in 0..500 {
        if check(&sim.stats()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("stats never matched: {:?}", sim.stats());
}

//! Completion webhooks, on SQLite and PostgreSQL: a receiver on loopback (allowed by
//! configuration) that refuses the first attempts gets the same message again on the schedule,
//! signed, with the poll's JSON, and takes it once; the delivery log shows every attempt; a
//! receiver that never takes it is given up; a cancel is announced; a key's default target is
//! used; and a private or malformed target is refused at submit.

mod common;

use common::receiver::{Received, Receiver};
use common::{generate, Options, TestServer};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;
use storage::Backend;
use webhooks::SigningSecret;

const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

/// A server whose webhooks may go to loopback and are retried after 200 ms, 400 ms, 800 ms.
async fn server(backend: Backend, worker: bool) -> TestServer {
    let adjust: common::Adjust = Box::new(|config| {
        config.allow_private_webhook_urls = true;
        config.webhook_retry_delays = [200, 400, 800].map(Duration::from_millis).to_vec();
    });
    TestServer::start_with(backend, Options { worker, adjust: Some(adjust), ..Default::default() }).await
}

/// A key with its webhook signing secret.
async fn key_with_secret(server: &TestServer) -> (String, SigningSecret) {
    let name = storage::new_id("acct");
    server.service.operator().create_account(&name, true).await.unwrap();
    let new = server.service.operator().create_key(&name, None, None).await.unwrap();
    (new.secret, SigningSecret::parse(&new.webhook_secret.unwrap()).unwrap())
}

async fn deliveries(server: &TestServer, key: &str, task_id: &str) -> Vec<Value> {
    let (status, log) = server.get(key, &format!("/v1/webhooks/deliveries?task_id={task_id}")).await;
    assert_eq!(status, StatusCode::OK, "{log}");
    log["deliveries"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refused_deliveries_are_retried_signed_and_taken_once() {
    for backend in BACKENDS {
        let server = server(backend, true).await;
        let receiver = Receiver::start(2);
        let (key, secret) = key_with_secret(&server).await;
        let body = generate("beta-image", json!({"prompt": "a porch at dusk"}));
        let mut body = body.as_object().unwrap().clone();
        body.insert("webhook_url".into(), json!(receiver.url));
        body.insert("webhook_events".into(), json!(["running", "completed"]));
        let queued = server.submit(&key, Value::Object(body)).await;
        let id = queued["id"].as_str().unwrap();
        let task = server.wait(&key, id).await;
        assert_eq!(task["status"], "succeeded", "{task}");

        let completed = receiver.taken("succeeded").await;
        let running = receiver.taken("running").await;
        let sent: Vec<Received> = receiver.received();
        for message in &sent {
            message.verify(&secret);
        }
        // Each message came three times under one id (two refusals, then taken), and was taken
        // once: after dedup by id the receiver saw one running and one completed message.
        for message in [&completed, &running] {
            let tries: Vec<&Received> = sent.iter().filter(|r| r.id == message.id).collect();
            assert_eq!(tries.iter().map(|r| r.answered).collect::<Vec<_>>(), [503, 503, 200], "{tries:?}");
            let bodies: Vec<Value> = tries.iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect();
            assert!(bodies.iter().all(|b| b["id"] == id && b["status"] == bodies[0]["status"]), "{bodies:?}");
        }
        assert_ne!(completed.id, running.id);
        let mut ids: Vec<&str> = sent.iter().map(|r| r.id.as_str()).collect();
        ids.dedup();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 2, "two messages in all");
        // The completed message is the poll's JSON (output URLs are signed afresh on each read).
        let mut announced: Value = serde_json::from_slice(&completed.body).unwrap();
        let (_, mut polled) = server.get(&key, &format!("/v1/tasks/{id}")).await;
        for job in [&mut announced, &mut polled] {
            job["output"][0]["url"] = json!("(signed)");
            job["output"][0]["expires_at"] = json!("(signed)");
        }
        assert_eq!(announced, polled);
        let running: Value = serde_json::from_slice(&running.body).unwrap();
        assert_eq!((running["id"].as_str(), running.get("output")), (Some(id), None), "{running}");

        // The delivery log shows both messages, every attempt, and nothing left to send.
        let log = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let log = deliveries(&server, &key, id).await;
                if log.iter().all(|d| d["status"] == "delivered") && log.len() == 2 {
                    return log;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .expect("both messages logged delivered");
        for delivery in &log {
            let codes: Vec<i64> =
                delivery["attempts"].as_array().unwrap().iter().map(|a| a["status_code"].as_i64().unwrap()).collect();
            assert_eq!(codes, [503, 503, 200], "{delivery}");
            assert_eq!(
                delivery["attempts"][0]["error"],
                "the receiver answered 503 Service Unavailable: busy, try later"
            );
            assert!(delivery["next_attempt_at"].is_null() && delivery["finished_at"].is_string(), "{delivery}");
            assert_eq!(delivery["url"], receiver.url.as_str());
        }
        let events: Vec<&str> = log.iter().map(|d| d["event"].as_str().unwrap()).collect();
        assert!(events.contains(&"running") && events.contains(&"completed"), "{events:?}");
        // Filters out of range are refused by the service, whichever front end asks.
        for bad in ["limit=0", "limit=101", &format!("task_id={}", "t".repeat(65))] {
            let (status, refusal) = server.get(&key, &format!("/v1/webhooks/deliveries?{bad}")).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {refusal}");
        }
        // Another key sees none of them.
        let (other, _) = key_with_secret(&server).await;
        assert!(deliveries(&server, &other, id).await.is_empty());
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_receiver_that_never_takes_it_is_given_up_after_the_schedule() {
    for backend in BACKENDS {
        let server = server(backend, true).await;
        let receiver = Receiver::start(usize::MAX);
        let (key, _) = key_with_secret(&server).await;
        let mut body = generate("beta-image", json!({"prompt": "a barn"}));
        body["webhook_url"] = json!(receiver.url);
        let queued = server.submit(&key, body).await;
        let id = queued["id"].as_str().unwrap();
        server.wait(&key, id).await;
        let given_up = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                let log = deliveries(&server, &key, id).await;
                if log.first().is_some_and(|d| d["status"] == "failed") {
                    return log;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .expect("given up");
        assert_eq!(given_up.len(), 1, "no running message unless asked: {given_up:?}");
        assert_eq!(given_up[0]["attempts"].as_array().unwrap().len(), 4, "first try and three retries");
        assert_eq!(receiver.received().len(), 4);
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_is_announced_and_a_key_default_is_used() {
    for backend in BACKENDS {
        // No worker yet: the job stays queued until it is cancelled.
        let server = server(backend, false).await;
        let receiver = Receiver::start(0);
        let (key, secret) = key_with_secret(&server).await;
        let caller = server.service.api().authenticate(Some(&key)).await.unwrap();
        server.service.operator().set_default_webhook(&caller.key_id, Some(&receiver.url), false).await.unwrap();
        let queued = server.submit(&key, generate("tts", json!({"prompt": "never spoken"}))).await;
        let id = queued["id"].as_str().unwrap();
        let (status, cancelled) = server.post(&key, &format!("/v1/tasks/{id}/cancel"), json!({})).await;
        assert_eq!(status, StatusCode::OK, "{cancelled}");
        server.start_worker();
        let message = receiver.taken("failed").await;
        message.verify(&secret);
        let announced: Value = serde_json::from_slice(&message.body).unwrap();
        assert_eq!(announced, cancelled, "the cancelled task, as its poll shows it");
        assert_eq!(announced["error"], "cancelled by client");
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn private_or_malformed_targets_are_refused_at_submit() {
    let server = TestServer::start_with(Backend::Sqlite, Options { worker: false, ..Default::default() }).await;
    let (key, _) = key_with_secret(&server).await;
    let cases: [(Value, &str); 8] = [
        (json!({"webhook_url": "http://127.0.0.1:9/hook"}), "private"),
        (json!({"webhook_url": "http://localhost/hook"}), "private"),
        (json!({"webhook_url": "http://10.1.2.3/hook"}), "private"),
        (json!({"webhook_url": "http://169.254.169.254/latest/meta-data"}), "private"),
        (json!({"webhook_url": "http://[::1]/hook"}), "private"),
        (json!({"webhook_url": "ftp://example.com/hook"}), "http(s)"),
        (json!({"webhook_url": "javascript:alert(1)"}), "http(s)"),
        (json!({"webhook_url": "https://example.com/", "webhook_events": ["started"]}), "webhook_events"),
    ];
    for (extra, says) in cases {
        let mut body = generate("beta-image", json!({"prompt": "a porch"}));
        for (name, value) in extra.as_object().unwrap() {
            body[name] = value.clone();
        }
        let (status, refusal) = server.post(&key, "/v1/generate", body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{extra}: {refusal}");
        assert!(refusal["error"].as_str().unwrap().contains(says), "{extra}: {refusal}");
    }
    let (_, usage) = server.get(&key, "/v1/usage").await;
    assert_eq!(usage["held_usd"], "0.0000", "nothing held for a refused submit");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reel_and_a_connector_job_announce_what_their_own_polls_show() {
    for backend in BACKENDS {
        let server = server(backend, true).await;
        let receiver = Receiver::start(1);
        let (key, secret) = key_with_secret(&server).await;

        // A reel: the message is the reel poll's JSON, under the reel's own id.
        let reel = json!({
            "photos": [common::photo("rocket.jpg")],
            "details": {"price": 410000},
            "params": {"duration": 6},
            "webhook_url": receiver.url,
        });
        let (status, queued) = server.post(&key, "/v1/recipes/reel", reel).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
        let reel_id = queued["reel_id"].as_str().unwrap().to_string();
        let polled = server.wait_at(&key, &format!("/v1/recipes/reel/{reel_id}")).await;
        assert_eq!(polled["status"], "succeeded", "{polled}");
        let message = receiver.taken("succeeded").await;
        message.verify(&secret);
        let mut announced: Value = serde_json::from_slice(&message.body).unwrap();
        let (_, mut polled) = server.get(&key, &format!("/v1/recipes/reel/{reel_id}")).await;
        common::unsigned(&mut announced);
        common::unsigned(&mut polled);
        assert_eq!(announced, polled, "the reel's message is its poll");
        assert!(announced["result"].is_object(), "{announced}");
        let log = deliveries(&server, &key, &reel_id).await;
        assert_eq!(log.len(), 1, "{log:?}");

        // The connector's generate tool takes a webhook_url too.
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "generate",
            "arguments": {"model": "tts", "prompt": "Open house on Sunday.", "webhook_url": receiver.url}}});
        let (status, answer) = server.post(&key, "/api/mcp", call).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        let id = answer["result"]["structuredContent"]["id"].as_str().unwrap().to_string();
        let polled = server.wait(&key, &id).await;
        assert_eq!(polled["status"], "succeeded", "{polled}");
        let message = receiver.taken_where(&format!("the message of {id}"), |body| body["id"] == id.as_str()).await;
        message.verify(&secret);
        let mut announced: Value = serde_json::from_slice(&message.body).unwrap();
        let (_, mut polled) = server.get(&key, &format!("/v1/tasks/{id}")).await;
        common::unsigned(&mut announced);
        common::unsigned(&mut polled);
        assert_eq!(announced, polled);
        // A private target named through the connector is refused like over HTTP.
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "generate",
            "arguments": {"model": "tts", "prompt": "x", "webhook_url": "http://10.0.0.1/hook"}}});
        server.stop().await;
        let server = TestServer::start_with(backend, Options { worker: false, ..Default::default() }).await;
        let (key, _) = key_with_secret(&server).await;
        let (_, answer) = server.post(&key, "/api/mcp", call).await;
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert_eq!(answer["result"]["structuredContent"]["code"], "invalid_input", "{answer}");
        server.stop().await;
    }
}

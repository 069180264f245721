//! Cancelling tasks and reels: queued, running on a local engine, and racing their own end, on
//! SQLite and PostgreSQL. A cancelled job ends `failed` with "cancelled by client", its hold
//! released and nothing billed; a finished one is a 409; another key's is a 404.

mod common;

use common::{generate, TestServer};
use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;
use storage::Backend;

const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

fn kinds(server: &TestServer, id: &str) -> Vec<String> {
    server.service.database().task_ledger(id).unwrap().into_iter().map(|e| e.kind).collect()
}

async fn cancel(server: &TestServer, key: &str, path: &str) -> (StatusCode, Value) {
    server.post(key, &format!("{path}/cancel"), json!({})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_queued_task_or_reel_is_cancelled_at_once_unbilled() {
    for backend in BACKENDS {
        let server = TestServer::start_with(backend, common::Options { worker: false, ..Default::default() }).await;
        let key = server.key(None, true).await;
        let queued = server.submit(&key, generate("tts", json!({"prompt": "never spoken"}))).await;
        let id = queued["id"].as_str().unwrap();
        let (_, usage) = server.get(&key, "/v1/usage").await;
        assert_eq!(usage["held_usd"], queued["price_usd"], "{usage}");

        let (status, task) = cancel(&server, &key, &format!("/v1/tasks/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{task}");
        assert_eq!((task["status"].as_str(), task["error"].as_str()), (Some("failed"), Some("cancelled by client")));
        assert!(task.get("cost_usd").is_none(), "no cost: nothing was billed: {task}");
        assert_eq!(server.get(&key, &format!("/v1/tasks/{id}")).await.1, task, "the poll reads the same");
        let (_, usage) = server.get(&key, "/v1/usage").await;
        assert_eq!((usage["held_usd"].as_str(), usage["spent_usd"].as_str()), (Some("0.0000"), Some("0.0000")));
        assert_eq!(kinds(&server, id), ["hold", "release"]);

        // Once ended it stays so: a second cancel is a 409 naming the state.
        let (status, again) = cancel(&server, &key, &format!("/v1/tasks/{id}")).await;
        assert_eq!(status, StatusCode::CONFLICT, "{again}");
        assert_eq!(again["code"], "already_finished");
        assert!(again["error"].as_str().unwrap().contains("already failed"), "{again}");
        // Another key's task, an unknown id, and a task id at the reel endpoint are not found.
        let other = server.key(None, true).await;
        let queued = server.submit(&key, generate("tts", json!({"prompt": "mine"}))).await;
        let mine = queued["id"].as_str().unwrap();
        for (caller, path) in [
            (&other, format!("/v1/tasks/{mine}")),
            (&key, "/v1/tasks/task_0000".to_string()),
            (&key, format!("/v1/recipes/reel/{mine}")),
        ] {
            let (status, body) = cancel(&server, caller, &path).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
            assert_eq!(body["code"], "not_found");
        }
        assert_eq!(server.get(&key, &format!("/v1/tasks/{mine}")).await.1["status"], "queued", "untouched");

        // A reel is cancelled at its own endpoint and answers in its own shape.
        let reel = json!({"photos": [common::png_data_uri(64, 48)]});
        let (status, queued) = server.post(&key, "/v1/recipes/reel", reel).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
        let reel_id = queued["reel_id"].as_str().unwrap();
        let (status, reel) = cancel(&server, &key, &format!("/v1/recipes/reel/{reel_id}")).await;
        assert_eq!(status, StatusCode::OK, "{reel}");
        assert_eq!((reel["reel_id"].as_str(), reel["status"].as_str()), (Some(reel_id), Some("failed")));
        assert_eq!(reel["error"], "cancelled by client");
        assert_eq!(kinds(&server, reel_id), ["hold", "release"]);
        assert!(server.service.operator().verify_ledger().await.unwrap().is_empty());
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_running_job_is_stopped_and_its_worker_slot_freed() {
    for backend in BACKENDS {
        let options = common::Options { worker_concurrency: 1, ..Default::default() };
        let server = TestServer::start_with(backend, options).await;
        let key = server.key(None, true).await;
        let long =
            generate("lambda-t2v", json!({"prompt": "a long tour", "params": {"duration": 5, "resolution": "720p"}}));
        let queued = server.submit(&key, long).await;
        let id = queued["id"].as_str().unwrap();
        server.wait_running(&key, id).await;
        let (status, task) = cancel(&server, &key, &format!("/v1/tasks/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{task}");
        assert_eq!(task["error"], "cancelled by client");

        // The worker's only slot is free again long before the cancelled video would have been
        // made: a short job behind it runs now.
        let next = server.run(&key, generate("tts", json!({"prompt": "next in line"}))).await;
        assert_eq!(next["status"], "succeeded");
        let task = server.get(&key, &format!("/v1/tasks/{id}")).await.1;
        assert_eq!((task["status"].as_str(), task["error"].as_str()), (Some("failed"), Some("cancelled by client")));
        assert_eq!(kinds(&server, id), ["hold", "release"], "nothing billed for the cancelled job");
        assert!(server.service.operator().verify_ledger().await.unwrap().is_empty());
        server.stop().await;
    }
}

/// Cancels sent while jobs finish: each job ends exactly once, either cancelled (200, nothing
/// billed) or finished first (409, billed once), never both.
#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_cancel_racing_the_jobs_end_leaves_exactly_one_outcome() {
    for backend in BACKENDS {
        let options = common::Options { worker_concurrency: 4, ..Default::default() };
        let server = TestServer::start_with(backend, options).await;
        let key = server.key(None, true).await;
        let mut ids = Vec::new();
        for n in 0..24 {
            let queued = server.submit(&key, generate("tts", json!({"prompt": format!("race {n}")}))).await;
            ids.push(queued["id"].as_str().unwrap().to_string());
        }
        let races = ids.iter().enumerate().map(|(n, id)| {
            let (server, key) = (&server, &key);
            async move {
                tokio::time::sleep(Duration::from_millis(15 * n as u64)).await;
                cancel(server, key, &format!("/v1/tasks/{id}")).await
            }
        });
        let answers = join_all(races).await;
        let (mut cancelled, mut finished) = (0, 0);
        for (id, (status, body)) in ids.iter().zip(answers) {
            let task = server.wait(&key, id).await;
            let ledger = kinds(&server, id);
            match status {
                StatusCode::OK => {
                    cancelled += 1;
                    assert_eq!(task["error"], "cancelled by client", "{task}");
                    assert_eq!(ledger, ["hold", "release"], "{task}");
                }
                StatusCode::CONFLICT => {
                    finished += 1;
                    assert_eq!(task["status"], "succeeded", "{task}");
                    assert_eq!(ledger.iter().filter(|k| *k == "capture").count(), 1, "{task} {ledger:?}");
                }
                other => panic!("cancel of {id}: {other} {body}"),
            }
        }
        assert_eq!(cancelled + finished, ids.len());
        assert!(server.service.operator().verify_ledger().await.unwrap().is_empty());
        server.stop().await;
    }
}

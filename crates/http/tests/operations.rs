//! Operations over real HTTP on SQLite and PostgreSQL: idempotent retries of spending requests.

mod common;

use common::{generate, png_data_uri, read, TestServer};
use futures::future::join_all;
use reqwest::StatusCode;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::str::FromStr;
use storage::test_support::BACKENDS;

fn usd(value: &Value) -> Decimal {
    Decimal::from_str(value.as_str().expect("decimal string")).expect("decimal")
}

/// POSTs `body` (as raw JSON text, so field order is the caller's) to `base` + `path` with an
/// idempotency key.
async fn post_with_key(
    server: &TestServer,
    base: &str,
    key: &str,
    path: &str,
    idempotency: &str,
    body: &str,
) -> (StatusCode, Value) {
    let response = server
        .client
        .post(format!("{base}{path}"))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .header("idempotency-key", idempotency)
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    read(response).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn retries_under_one_idempotency_key_create_one_task_and_one_charge() {
    for backend in BACKENDS {
        let server = TestServer::start_with(backend, common::Options { worker: false, ..Default::default() }).await;
        let other = server.second_api_server();
        let key = server.key(None, true).await;
        let body = r#"{"model": "tts", "prompt": "A bright corner lot with a view."}"#;
        // The same body with its fields in another order and other spacing is the same request.
        let reordered = r#"{ "prompt":"A bright corner lot with a view.", "model":"tts" }"#;
        // 24 tries at once, spread over two api-servers, as a client retrying through a load
        // balancer would send them.
        let tries = (0..24).map(|i| {
            let (server, key, other) = (&server, &key, &other);
            async move {
                let base = if i % 2 == 0 { server.base.as_str() } else { other.as_str() };
                let text = if i % 3 == 0 { reordered } else { body };
                post_with_key(server, base, key, "/v1/generate", "retry-7f3a", text).await
            }
        });
        let answers = join_all(tries).await;
        let first = &answers[0].1;
        for (status, answer) in &answers {
            assert_eq!(*status, StatusCode::ACCEPTED, "{backend:?}: {answer}");
            assert_eq!(answer, first, "{backend:?}: every try gets the original answer");
        }
        let (_, usage) = server.get(&key, "/v1/usage").await;
        assert_eq!(usd(&usage["held_usd"]), usd(&first["price_usd"]), "{backend:?}: one hold");

        // The same key with another body is refused, naming the task it belongs to.
        let (status, refused) = post_with_key(
            &server,
            &server.base,
            &key,
            "/v1/generate",
            "retry-7f3a",
            r#"{"model": "tts", "prompt": "Another listing."}"#,
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{backend:?}: {refused}");
        assert_eq!(refused["code"], "idempotency_key_reused");
        assert!(refused["error"].as_str().unwrap().contains(first["id"].as_str().unwrap()), "{refused}");
        // ... and so is the same body sent to another endpoint under the key.
        let (status, _) =
            post_with_key(&server, &server.base, &key, "/v1/recipes/listing-enhance", "retry-7f3a", body).await;
        assert!(status == StatusCode::UNPROCESSABLE_ENTITY || status == StatusCode::BAD_REQUEST, "{status}");

        // Keys are per API key: another key's identical request is its own task.
        let second_key = server.key(None, true).await;
        let (status, own) = post_with_key(&server, &server.base, &second_key, "/v1/generate", "retry-7f3a", body).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        assert_ne!(own["id"], first["id"]);

        server.start_worker();
        let task = server.wait(&key, first["id"].as_str().unwrap()).await;
        assert_eq!(task["status"], "succeeded", "{task}");
        // A retry after the job ended still gets the original answer, and bills nothing more.
        let (status, late) = post_with_key(&server, &other, &key, "/v1/generate", "retry-7f3a", body).await;
        assert_eq!((status, &late), (StatusCode::ACCEPTED, first));
        let (_, usage) = server.get(&key, "/v1/usage").await;
        assert_eq!(usage["recent_charges"].as_array().unwrap().len(), 1, "{backend:?}: {usage}");
        assert_eq!(usd(&usage["spent_usd"]), usd(&task["cost_usd"]));
        assert_eq!(usd(&usage["held_usd"]), Decimal::ZERO);
        assert_eq!(server.service.operator().verify_ledger().await.unwrap(), vec![], "{backend:?}");
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idempotency_covers_recipes_and_forgets_refusals() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    // A synchronous recipe: the retry waits on the same task and gets the same result.
    let key = server.key(None, true).await;
    let trace = json!({
        "image_url": png_data_uri(240, 200),
        "points": [[20, 30], [120, 30], [120, 130], [20, 130]],
        "params": {"meters_per_pixel": 0.5}
    })
    .to_string();
    let (status, traced) = post_with_key(&server, &server.base, &key, "/v1/recipes/lot-trace", "lot-1", &trace).await;
    assert_eq!(status, StatusCode::OK, "{traced}");
    let (status, again) = post_with_key(&server, &server.base, &key, "/v1/recipes/lot-trace", "lot-1", &trace).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["id"], traced["id"]);
    assert_eq!(again["acres"], traced["acres"]);
    let (_, usage) = server.get(&key, "/v1/usage").await;
    assert_eq!(usage["recent_charges"].as_array().unwrap().len(), 1, "{usage}");

    // A refused request is not remembered: once the cap allows it, the same key goes through.
    let capped = server.key(Some("0.0001"), true).await;
    let body = generate("tts", json!({"prompt": "Open house on Sunday."})).to_string();
    let (status, refused) = post_with_key(&server, &server.base, &capped, "/v1/generate", "cap-1", &body).await;
    assert_eq!(status, StatusCode::PAYMENT_REQUIRED, "{refused}");
    let capped_id = server.service.api().authenticate(Some(&capped)).await.unwrap().key_id;
    server.service.operator().set_spend_cap(&capped_id, None).await.unwrap();
    let (status, accepted) = post_with_key(&server, &server.base, &capped, "/v1/generate", "cap-1", &body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{accepted}");

    // Malformed keys are a 400 naming the header; nothing is queued.
    for bad in ["", &"k".repeat(256)] {
        let (status, answer) = post_with_key(&server, &server.base, &key, "/v1/generate", bad, &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer["error"].as_str().unwrap().contains("Idempotency-Key"), "{answer}");
    }
    server.stop().await;
}

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
    let (status, _, answer) = post_replaying(server, base, key, path, idempotency, body).await;
    (status, answer)
}

/// [`post_with_key`], with whether the answer said it replays an earlier try.
async fn post_replaying(
    server: &TestServer,
    base: &str,
    key: &str,
    path: &str,
    idempotency: &str,
    body: &str,
) -> (StatusCode, bool, Value) {
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
    let replayed = response.headers().get("idempotent-replayed").is_some_and(|v| v == "true");
    let (status, answer) = read(response).await;
    (status, replayed, answer)
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
        // A later retry says it is one (`Idempotent-Replayed: true`).
        let (_, replayed, again) =
            post_replaying(&server, &server.base, &key, "/v1/generate", "retry-7f3a", body).await;
        assert!(replayed && again == *first, "{backend:?}: {again}");

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
        let (status, replayed, own) =
            post_replaying(&server, &server.base, &second_key, "/v1/generate", "retry-7f3a", body).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        assert_ne!(own["id"], first["id"]);
        assert!(!replayed, "{backend:?}: a first try is not a replay");

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

/// A server whose keys may make `submits` spending and `reads` other requests a minute, in bursts
/// of ten seconds' worth.
async fn rate_limited_server(backend: storage::Backend, submits: u32, reads: u32) -> TestServer {
    let adjust: common::Adjust = Box::new(move |config| {
        config.rate_limit_submits_per_minute = submits;
        config.rate_limit_reads_per_minute = reads;
        config.rate_limit_burst_secs = 10;
    });
    TestServer::start_with(backend, common::Options { worker: false, adjust: Some(adjust), ..Default::default() }).await
}

fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn rate_limits_are_shared_by_api_servers_and_answered_with_429_and_headers() {
    for backend in BACKENDS {
        // 60 submits a minute: a burst of 10. 120 reads a minute: a burst of 20.
        let server = rate_limited_server(backend, 60, 120).await;
        let other = server.second_api_server();
        let key = server.key(None, true).await;
        let body = generate("tts", json!({"prompt": "Two bedrooms."}));
        let submits = (0..30).map(|i| {
            let (server, key, other, body) = (&server, &key, &other, &body);
            async move {
                let base = if i % 2 == 0 { server.base.as_str() } else { other.as_str() };
                let response = server
                    .client
                    .post(format!("{base}/v1/generate"))
                    .bearer_auth(key)
                    .json(body)
                    .send()
                    .await
                    .expect("request");
                let headers = (header(&response, "retry-after"), header(&response, "ratelimit-remaining"));
                let policy = header(&response, "ratelimit-policy");
                let (status, answer) = read(response).await;
                (status, answer, headers, policy)
            }
        });
        let answers = join_all(submits).await;
        let accepted = answers.iter().filter(|(s, ..)| *s == StatusCode::ACCEPTED).count();
        let statuses: Vec<u16> = answers.iter().map(|(s, ..)| s.as_u16()).collect();
        // The burst, and at most a token or two refilled while the requests ran; less at most a
        // lease (a quarter of the burst, 2 here) that one api-server took from the bucket and no
        // longer had requests to spend on (the tokens return with its next lease).
        assert!((8..=12).contains(&accepted), "{backend:?}: {accepted} accepted: {statuses:?}");
        assert!(statuses.iter().all(|s| *s == 202 || *s == 429), "{backend:?}: {statuses:?}");
        for (status, answer, (retry_after, remaining), policy) in &answers {
            assert_eq!(policy.as_deref(), Some("60;w=60;burst=10"), "{backend:?}");
            if *status == StatusCode::TOO_MANY_REQUESTS {
                assert_eq!(answer["code"], "rate_limited", "{answer}");
                assert!(answer["error"].as_str().unwrap().contains("60 spending requests a minute"), "{answer}");
                let retry: u64 = retry_after.as_deref().expect("Retry-After").parse().unwrap();
                assert!((1..=6).contains(&retry), "{retry}");
                assert_eq!(remaining.as_deref(), Some("0"));
            } else {
                assert_eq!(*status, StatusCode::ACCEPTED, "{backend:?}: {answer}");
            }
        }
        // Refused submits hold nothing.
        let (_, usage) = server.get(&key, "/v1/usage").await;
        let price = usd(&answers.iter().find(|(s, ..)| *s == StatusCode::ACCEPTED).unwrap().1["price_usd"]);
        assert_eq!(usd(&usage["held_usd"]), price * Decimal::from(accepted as u64), "{backend:?}");

        // Reads have their own bucket, and its remaining count goes down.
        let mut remaining = Vec::new();
        for _ in 0..4 {
            let response =
                server.client.get(format!("{}/v1/usage", server.base)).bearer_auth(&key).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            remaining.push(header(&response, "ratelimit-remaining").unwrap().parse::<u32>().unwrap());
        }
        assert!(remaining.windows(2).all(|w| w[1] < w[0]) && remaining[0] <= 19, "{remaining:?}");

        // The operator lifts one key's limit and lowers another's; other keys keep the default.
        let key_id = |secret: &str| {
            let server = &server;
            let secret = secret.to_string();
            async move { server.service.api().authenticate(Some(&secret)).await.unwrap().key_id }
        };
        let unlimited = server.key(None, true).await;
        let rates = service::rate_limit::KeyRates { submits_per_minute: Some(0), reads_per_minute: None };
        server.service.operator().set_key_rates(&key_id(&unlimited).await, rates).await.unwrap();
        let statuses = join_all((0..25).map(|_| server.post(&unlimited, "/v1/generate", body.clone()))).await;
        assert!(statuses.iter().all(|(s, _)| *s == StatusCode::ACCEPTED), "{backend:?}");
        let slow = server.key(None, true).await;
        let rates = service::rate_limit::KeyRates { submits_per_minute: None, reads_per_minute: Some(6) };
        server.service.operator().set_key_rates(&key_id(&slow).await, rates).await.unwrap();
        let reads = join_all((0..4).map(|_| server.get(&slow, "/v1/usage"))).await;
        assert_eq!(reads.iter().filter(|(s, _)| *s == StatusCode::OK).count(), 1, "{backend:?}: a burst of one");
        server.stop().await;
    }
}

/// Files under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .flat_map(|e| if e.path().is_dir() { files_under(&e.path()) } else { vec![e.path()] })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn finished_tasks_expire_after_the_retention_period_and_their_money_stays() {
    for backend in BACKENDS {
        let adjust: common::Adjust = Box::new(|config| config.task_retention_days = 7);
        let server =
            TestServer::start_with(backend, common::Options { adjust: Some(adjust), ..Default::default() }).await;
        let key = server.key(None, true).await;
        let old = server
            .run(&key, generate("beta-image", json!({"prompt": "a porch", "params": {"width": 256, "height": 256}})))
            .await;
        let old_id = old["id"].as_str().unwrap();
        let not_an_image = "data:image/png;base64,bm90IGFuIGltYWdl";
        let failed = server.submit(&key, generate("upscale-epsilon", json!({"image_url": not_an_image}))).await;
        let failed = server.wait(&key, failed["id"].as_str().unwrap()).await;
        let recent = server
            .run(&key, generate("beta-image", json!({"prompt": "a door", "params": {"width": 256, "height": 256}})))
            .await;
        let url = old["output"][0]["url"].as_str().unwrap().to_string();
        assert_eq!(server.client.get(&url).send().await.unwrap().status(), StatusCode::OK);
        let (_, usage_before) = server.get(&key, "/v1/usage").await;

        // Eight days on for two of them: the sweep removes their files and job, not the recent one.
        for id in [old_id, failed["id"].as_str().unwrap()] {
            assert!(server.db.age_task(id, 8).unwrap());
        }
        let swept = server.service.runner().sweep(5).await.unwrap();
        assert_eq!(swept.tasks, 2, "{backend:?}");
        let left = files_under(&server.output_dir);
        assert!(left.iter().all(|p| !p.to_string_lossy().contains(old_id)), "{left:?}");
        assert!(left.iter().any(|p| p.to_string_lossy().contains(recent["id"].as_str().unwrap())), "{left:?}");
        assert!(left.iter().all(|p| !p.to_string_lossy().contains("inputs/")), "{left:?}");

        // A poll of an expired task says so (410), for its owner only; its URL no longer serves.
        let (status, gone) = server.get(&key, &format!("/v1/tasks/{old_id}")).await;
        assert_eq!(status, StatusCode::GONE, "{gone}");
        assert_eq!(gone["code"], "expired");
        assert!(gone["error"].as_str().unwrap().contains("retention"), "{gone}");
        let stranger = server.key(None, true).await;
        assert_eq!(server.get(&stranger, &format!("/v1/tasks/{old_id}")).await.0, StatusCode::NOT_FOUND);
        assert_eq!(server.client.get(&url).send().await.unwrap().status(), StatusCode::NOT_FOUND);
        let (status, _) = server.get(&key, &format!("/v1/tasks/{}", recent["id"].as_str().unwrap())).await;
        assert_eq!(status, StatusCode::OK);

        // The money stays: the same spend and charges, and the books still balance.
        let (_, usage_after) = server.get(&key, "/v1/usage").await;
        assert_eq!(usage_after["spent_usd"], usage_before["spent_usd"]);
        assert_eq!(usage_after["recent_charges"], usage_before["recent_charges"]);
        assert_eq!(server.service.operator().verify_ledger().await.unwrap(), vec![], "{backend:?}");
        // A second sweep finds nothing more.
        assert_eq!(server.service.runner().sweep(5).await.unwrap().tasks, 0);
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn metrics_are_served_to_the_token_holder_only() {
    // The process's counters carry over from one backend's server to the next.
    for (runs, backend) in BACKENDS.into_iter().enumerate().map(|(i, b)| (i + 1, b)) {
        let adjust: common::Adjust = Box::new(|config| config.metrics_token = Some("scrape-9f2c".into()));
        let server =
            TestServer::start_with(backend, common::Options { adjust: Some(adjust), ..Default::default() }).await;
        let key = server.key(None, true).await;
        let task = server.run(&key, generate("tts", json!({"prompt": "A sunny deck."}))).await;
        let scrape = |token: Option<&'static str>| {
            let request = server.client.get(format!("{}/metrics", server.base));
            let request = match token {
                Some(token) => request.bearer_auth(token),
                None => request,
            };
            async move { request.send().await.unwrap() }
        };
        for wrong in [None, Some("scrape-9f2d"), Some("mgk_not")] {
            let refused = scrape(wrong).await;
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{wrong:?}");
        }
        let answer = scrape(Some("scrape-9f2c")).await;
        assert_eq!(answer.status(), StatusCode::OK);
        assert!(answer.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
        let text = answer.text().await.unwrap();
        // Requests by route pattern, method and status, with latency histograms.
        let generated = format!(r#"http_requests_total{{route="/v1/generate",method="POST",status="202"}} {runs}"#);
        assert!(text.contains(&generated), "{text}");
        assert!(
            text.contains(r#"http_request_duration_seconds_bucket{route="/v1/tasks/{id}",method="GET",le="#),
            "{text}"
        );
        // Jobs by engine and outcome, and the queue and money from the database.
        let finished = format!(r#"jobs_finished_total{{engine="tts",outcome="succeeded"}} {runs}"#);
        assert!(text.contains(&finished), "{text}");
        assert!(text.contains("job_duration_seconds_bucket{engine=\"tts\""), "{text}");
        assert!(text.contains(r#"queue_jobs{status="queued"} 0"#), "{text}");
        assert!(text.contains("queue_oldest_queued_age_seconds 0"), "{text}");
        let cost: f64 = task["cost_usd"].as_str().unwrap().parse().unwrap();
        assert!(text.contains(&format!("billing_captured_usd {cost}")), "{cost}: {text}");
        assert!(text.contains("billing_held_usd 0"), "{text}");
        // No key, secret or path with an id in it.
        assert!(!text.contains("mgk_") && !text.contains(task["id"].as_str().unwrap()), "{text}");
        server.stop().await;
    }
    // Without a token, metrics are off.
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let metrics = server.client.get(format!("{}/metrics", server.base));
    let (status, body) = read(metrics.try_clone().unwrap().bearer_auth("any-token").send().await.unwrap()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["error"].as_str().unwrap().contains("METRICS_TOKEN"), "{body}");
    // With no token at all it is a 401 either way, as the document's security says.
    assert_eq!(read(metrics.send().await.unwrap()).await.0, StatusCode::UNAUTHORIZED);
    server.stop().await;
}

/// `/readyz` answers 200 with every check ok, and 503 naming the check while a migration this
/// release knows is not applied (a database an older release migrated), on both backends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_names_pending_migrations() {
    for backend in BACKENDS {
        let server = TestServer::start_with(backend, common::Options { worker: false, ..Default::default() }).await;
        let ready = || async { read(server.client.get(format!("{}/readyz", server.base)).send().await.unwrap()).await };
        let (status, body) = ready().await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            body,
            serde_json::json!({"ready": true, "checks": {"database": "ok", "migrations": "ok", "store": "ok"}})
        );
        server.db.set_newest_migration_recorded(false).unwrap();
        let (status, body) = ready().await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(
            (body["ready"].as_bool(), body["checks"]["migrations"].as_str()),
            (Some(false), Some("1 pending; run `api-server migrate`"))
        );
        assert_eq!(body["checks"]["database"], "ok");
        server.db.set_newest_migration_recorded(true).unwrap();
        assert_eq!(ready().await.0, StatusCode::OK);
        server.stop().await;
    }
}

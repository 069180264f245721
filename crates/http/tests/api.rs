//! Every endpoint and status code of the contract, black-box over HTTP, on SQLite and PostgreSQL.

mod common;

use common::{generate, png_data_uri, TestServer};
use reqwest::StatusCode;
use serde_json::{json, Value};
use storage::test_support::BACKENDS;

const BAD_KEY: &str = "mgk_0000000000000000000000000000000000000000000000000000000000000000";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn generate_and_poll_statuses() {
    for backend in BACKENDS {
        let server = TestServer::start(backend).await;
        let key = server.key(None, false).await;

        // 202 with the queued-task fields, then 200 with outputs and cost once succeeded.
        let (status, queued) = server
            .post(
                &key,
                "/v1/generate",
                generate("beta-image", json!({"prompt": "a porch", "params": {"width": 256, "height": 256}})),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
        assert_eq!(queued["status"], "queued");
        assert_eq!(queued["price_usd"], "0.0400");
        let id = queued["id"].as_str().expect("id");
        assert_eq!(queued["poll_url"], format!("{}/v1/tasks/{id}", server.base));
        let (_, early) = server.get(&key, &format!("/v1/tasks/{id}")).await;
        assert!(early.get("sandbox").is_none() || early["status"] == "succeeded", "{early}");
        let task = server.wait(&key, id).await;
        assert_eq!(task["status"], "succeeded", "{task}");
        assert_eq!(task["cost_usd"], "0.0400");
        assert_eq!(task["output"][0]["type"], "image");
        assert_eq!(task["sandbox"], true);
        assert!(task["error"].is_null());

        // 400: unknown model, missing model, bad input naming the field, unknown params key, bad URL.
        for (body, needle) in [
            (json!({"model": "gpt-9", "prompt": "x"}), "model"),
            (json!({"prompt": "x"}), "model"),
            (json!({"model": "beta-image"}), "prompt"),
            (generate("beta-image", json!({"prompt": "x", "params": {"width": 99999}})), "params.width"),
            (generate("beta-image", json!({"prompt": "x", "params": {"colour": "red"}})), "params.colour"),
            (generate("bg-remove", json!({"image_url": "file:///etc/passwd"})), "image_url"),
            (generate("bg-remove", json!({"image_url": "https://e.com/a.png", "prompt": "x"})), "prompt"),
            (json!({"model": "beta-image", "prompt": "x", "extra": 1}), "extra"),
            (json!({"model": 7}), "model"),
        ] {
            let (status, error) = server.post(&key, "/v1/generate", body.clone()).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body} -> {error}");
            let message = error["error"].as_str().expect("error message");
            assert!(message.contains(needle), "{body}: {message:?} should name {needle}");
        }

        // 400 malformed JSON, 415 wrong content type, 413 too large: all JSON bodies.
        let raw = |body: &'static str, content_type: &'static str| {
            server
                .client
                .post(format!("{}/v1/generate", server.base))
                .bearer_auth(&key)
                .header("content-type", content_type)
                .body(body)
        };
        let (status, error) = common::read(raw("{\"model\":", "application/json").send().await.unwrap()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
        let (status, _) = common::read(raw("model=x", "application/x-www-form-urlencoded").send().await.unwrap()).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let huge =
            format!("{{\"model\":\"bg-remove\",\"image_url\":\"data:image/png;base64,{}\"}}", "A".repeat(9 << 20));
        let response = server
            .client
            .post(format!("{}/v1/generate", server.base))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body(huge)
            .send()
            .await
            .unwrap();
        let (status, error) = common::read(response).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{error}");

        // 401: missing, malformed, unknown; with the WWW-Authenticate challenge.
        let response = server
            .client
            .post(format!("{}/v1/generate", server.base))
            .json(&json!({"model": "tts"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["www-authenticate"], "Bearer realm=\"media-gateway\"");
        assert_eq!(common::read(response).await.0, StatusCode::UNAUTHORIZED);
        for bad in ["nope", BAD_KEY] {
            let (status, _) = server.post(bad, "/v1/generate", json!({"model": "tts", "prompt": "hi"})).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED);
            let (status, _) = server.get(bad, &format!("/v1/tasks/{id}")).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED);
        }

        // 404: unknown task, and another key's task.
        let (status, _) = server.get(&key, "/v1/tasks/task_doesnotexist").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let other = server.key(None, false).await;
        let (status, error) = server.get(&other, &format!("/v1/tasks/{id}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn payment_required_statuses() {
    for backend in BACKENDS {
        let server =
            TestServer::start_with(backend, common::Options { free_allowance: "0.05", ..Default::default() }).await;
        // Spend cap: 0.05 fits one 0.04 job, not two.
        let capped = server.key(Some("0.05"), true).await;
        server.submit(&capped, generate("beta-image", json!({"prompt": "a"}))).await;
        let (status, error) =
            server.post(&capped, "/v1/generate", generate("beta-image", json!({"prompt": "b"}))).await;
        assert_eq!(status, StatusCode::PAYMENT_REQUIRED);
        assert!(error["error"].as_str().unwrap().starts_with("spend cap reached"), "{error}");

        // Free allowance 0.05 with no card: the second 0.04 job is refused, then accepted with a card.
        let name = storage::new_id("acct");
        server.service.operator().create_account(&name, false).await.unwrap();
        let key = server.service.operator().create_key(&name, None, None).await.unwrap().secret;
        server.submit(&key, generate("beta-image", json!({"prompt": "a"}))).await;
        let (status, error) = server.post(&key, "/v1/generate", generate("beta-image", json!({"prompt": "b"}))).await;
        assert_eq!(status, StatusCode::PAYMENT_REQUIRED);
        assert!(error["error"].as_str().unwrap().starts_with("free allowance used up; add a card"), "{error}");
        server.service.operator().set_card_on_file(&name, true).await.unwrap();
        server.submit(&key, generate("beta-image", json!({"prompt": "b"}))).await;
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn models_usage_openapi_and_fallbacks() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(Some("2"), false).await;

    let (status, list) = server.get(&key, "/v1").await;
    assert_eq!(status, StatusCode::OK);
    let models = list["models"].as_array().expect("models");
    assert_eq!(models.len(), 41);
    let tts = models.iter().find(|m| m["id"] == "tts").expect("tts listed");
    assert_eq!(tts["family"], "text_to_speech");
    assert_eq!(tts["price"], json!({"per": "thousand_chars", "usd": "0.0150"}));
    assert_eq!(tts["inputs"]["prompt"], "required");
    assert_eq!(server.get("nope", "/v1").await.0, StatusCode::UNAUTHORIZED);

    let (status, usage) = server.get(&key, "/v1/usage").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(usage["spend_cap_usd"], "2.0000");
    assert_eq!(usage["free_allowance_remaining_usd"], "5.0000");
    assert_eq!(server.get(BAD_KEY, "/v1/usage").await.0, StatusCode::UNAUTHORIZED);

    // Unknown paths under /v1: 401 without a key, 404 with one. Wrong method: 405. All JSON.
    assert_eq!(server.get(BAD_KEY, "/v1/nothing").await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(server.get(&key, "/v1/nothing").await.0, StatusCode::NOT_FOUND);
    let response = server.client.get(format!("{}/v1/generate", server.base)).bearer_auth(&key).send().await.unwrap();
    assert_eq!(response.headers()["allow"], "POST");
    assert_eq!(common::read(response).await.0, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(server.get("", "/elsewhere").await.0, StatusCode::NOT_FOUND);

    // Downloads need a valid signature.
    let (status, _) = server.get("", "/files/tasks/x/1-0.png").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = server.get("", "/files/tasks/x/1-0.png?expires=99999999999&sig=00").await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // OpenAPI: public, 3.1, version 1.0.0, every path once, the bearer scheme, the status codes.
    let response = server.client.get(format!("{}/openapi.json", server.base)).send().await.unwrap();
    let (status, doc) = common::read(response).await;
    assert_eq!(status, StatusCode::OK);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(doc["info"]["version"], "1.0.0");
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    let generate_codes: Vec<&str> =
        doc["paths"]["/v1/generate"]["post"]["responses"].as_object().unwrap().keys().map(String::as_str).collect();
    for code in ["202", "400", "401", "402", "502"] {
        assert!(generate_codes.contains(&code), "generate documents {code}");
    }
    let task_codes = doc["paths"]["/v1/tasks/{id}"]["get"]["responses"].as_object().unwrap();
    for code in ["200", "401", "404"] {
        assert!(task_codes.contains_key(code));
    }
    assert!(doc["paths"]["/v1"]["get"].is_object());
    // Headers: every 401 names its challenge, every 202 with a poll URL its Location, and every
    // authenticated operation its 503 for a database outage.
    for (path, operations) in doc["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            let responses = &operation["responses"];
            if let Some(unauthorized) = responses.get("401") {
                assert!(unauthorized["headers"]["WWW-Authenticate"].is_object(), "{method} {path}: 401 challenge");
                assert!(responses.get("503").is_some(), "{method} {path}: 503");
            }
            if let Some(accepted) = responses.get("202").filter(|r| r.get("content").is_some()) {
                assert!(accepted["headers"]["Location"].is_object(), "{method} {path}: 202 Location");
            }
        }
    }
    for path in ["/v1/recipes/listing-enhance", "/api/mcp", "/files/{path}", "/v1/usage", "/healthz"] {
        assert!(doc["paths"][path].is_object(), "{path} documented");
    }
    // The generate body is one schema per engine, chosen by `model`, each exact about its inputs.
    let schemas = &doc["components"]["schemas"];
    let generate = &schemas["GenerateRequest"];
    assert_eq!(generate["oneOf"].as_array().unwrap().len(), 41);
    assert_eq!(generate["discriminator"]["propertyName"], "model");
    assert_eq!(generate["discriminator"]["mapping"].as_object().unwrap().len(), 41);
    let engine = |id: &str| {
        let reference = generate["discriminator"]["mapping"][id].as_str().unwrap();
        schemas[reference.rsplit('/').next().unwrap()].clone()
    };
    let tts = engine("tts");
    assert_eq!(tts["properties"]["model"]["const"], "tts");
    assert_eq!(tts["required"], json!(["model", "prompt"]));
    assert!(tts["properties"]["image_url"].is_null() && tts["additionalProperties"] == false, "{tts}");
    let bg_remove = engine("bg-remove");
    assert_eq!(bg_remove["required"], json!(["model", "image_url"]));
    assert!(bg_remove["properties"]["prompt"].is_null(), "{bg_remove}");
    let image = engine("alpha-schnell");
    let width = &image["properties"]["params"]["properties"]["width"];
    assert_eq!((width["type"].as_str(), width["minimum"].is_number()), (Some("integer"), true), "{image}");
    assert_eq!(image["properties"]["params"]["additionalProperties"], false);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn revoked_key_gets_401_everywhere() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let name = storage::new_id("acct");
    server.service.operator().create_account(&name, false).await.unwrap();
    let new_key = server.service.operator().create_key(&name, None, None).await.unwrap();
    let queued =
        server.submit(&new_key.secret, generate("bg-remove", json!({"image_url": png_data_uri(64, 48)}))).await;
    server.service.operator().revoke_key(&new_key.key.id).await.unwrap();
    let id = queued["id"].as_str().unwrap();
    for path in ["/v1".to_string(), format!("/v1/tasks/{id}"), "/v1/usage".into(), "/v1/whatever".into()] {
        let (status, body) = server.get(&new_key.secret, &path).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
        assert!(body["error"].is_string());
    }
    let (status, _) = server.post(&new_key.secret, "/v1/generate", json!({"model": "tts", "prompt": "x"})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let _: Value = json!(null);
    server.stop().await;
}

/// A database outage is the service's fault and temporary: 503 with a JSON error on the API and
/// on the connector, never a 401 that would make a client drop a good key; service resumes when
/// the database returns.
#[tokio::test]
async fn a_database_outage_is_a_503_on_both_front_ends_never_a_401() {
    let options = common::Options { worker: false, ..common::Options::default() };
    let server = TestServer::start_with(storage::Backend::Postgres, options).await;
    let key = server.key(None, false).await;
    server.db.set_reachable(false).unwrap();
    let (status, body) = server.get(&key, "/v1/usage").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(body["error"].as_str().unwrap().contains("unavailable"), "{body}");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (status, body) = server.post(&key, "/api/mcp", ping.clone()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(!body.to_string().contains("pg_") && !body.to_string().contains("SQL"), "{body}");
    server.db.set_reachable(true).unwrap();
    assert_eq!(server.get(&key, "/v1/usage").await.0, StatusCode::OK);
    assert_eq!(server.post(&key, "/api/mcp", ping).await.0, StatusCode::OK);
    server.stop().await;
}

/// The key is checked before the body is read: an anonymous client announcing a large body gets
/// its 401 at once, without sending (or us buffering) a byte of it.
#[tokio::test]
async fn the_key_is_checked_before_the_body_is_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let address = server.base.trim_start_matches("http://").to_string();
    for path in ["/v1/generate", "/v1/recipes/reel", "/api/mcp"] {
        let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: 8000000\r\n\r\n{{"
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        let mut answer = vec![0u8; 1024];
        let read = tokio::time::timeout(std::time::Duration::from_secs(10), socket.read(&mut answer))
            .await
            .expect("answered without waiting for the body")
            .unwrap();
        let answer = String::from_utf8_lossy(&answer[..read]).to_string();
        assert!(answer.starts_with("HTTP/1.1 401"), "{path}: {answer}");
    }
    server.stop().await;
}
/// The contract check the suites run on every answer refuses an answer that breaks its schema.
#[test]
fn a_wrong_answer_is_caught() {
    use common::contract::check_answer;
    check_answer("/v1/tasks/task_1", 404, &json!({"error": "no task", "code": "not_found"}));
    let wrong = std::panic::catch_unwind(|| {
        check_answer("/v1/tasks/task_1", 404, &json!({"error": "no task", "code": "spend_cap_reached"}))
    });
    assert!(wrong.is_err(), "a 404 cannot carry a 402's code");
    let renamed = std::panic::catch_unwind(|| {
        check_answer(
            "/v1/tasks/task_1",
            200,
            &json!({"id": "t", "model": "m", "status": "done", "price_usd": "1", "error": null,
                    "created_at": "x", "started_at": null, "finished_at": null}),
        )
    });
    assert!(renamed.is_err(), "a status outside the enum is refused");
}

/// Serves every request with headers that promise a body, then sends nothing more: the server an
/// attacker points inputs at to hold worker slots.
async fn stalling_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ncontent-length: 1000000\r\n\r\n";
                let _ = socket.write_all(head.as_bytes()).await;
                tokio::time::sleep(std::time::Duration::from_secs(600)).await;
            });
        }
    });
    format!("http://{address}/photo.png")
}

/// A key whose jobs point at a server that stalls holds no more than its share of worker slots,
/// each only until the stall limit: another key's job runs while the flood is still stuck, and the
/// stuck jobs fail naming their input, unbilled.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stalling_input_server_does_not_starve_other_keys() {
    let stalling = stalling_server().await;
    let allow_loopback: common::Adjust = Box::new(|config| config.allow_private_input_urls = true);
    let options = common::Options { adjust: Some(allow_loopback), ..Default::default() };
    let server = TestServer::start_with(storage::Backend::Sqlite, options).await;
    let (flooder, other) = (server.key(None, false).await, server.key(None, false).await);
    let mut flood = Vec::new();
    for _ in 0..4 {
        let queued = server.submit(&flooder, json!({"model": "bg-remove", "image_url": stalling})).await;
        flood.push(queued["id"].as_str().expect("id").to_string());
    }
    // The flood's first job has a worker slot and is stuck on its input.
    server.wait_running(&flooder, &flood[0]).await;
    let done = server.run(&other, generate("beta-image", json!({"prompt": "a porch at dusk"}))).await;
    assert_eq!(done["status"], "succeeded");
    let mut statuses = Vec::new();
    for id in &flood {
        statuses.push(server.get(&flooder, &format!("/v1/tasks/{id}")).await.1["status"].as_str().unwrap().to_string());
    }
    assert_eq!(statuses[0], "running", "the other key's job waited for the stalled one: {statuses:?}");
    assert_eq!(
        statuses.iter().filter(|s| *s == "running").count(),
        1,
        "the flooding key took every slot: {statuses:?}"
    );
    let stuck = server.wait(&flooder, &flood[0]).await;
    assert_eq!(stuck["status"], "failed", "{stuck}");
    assert!(stuck["error"].as_str().unwrap().contains("image_url"), "{stuck}");
    let (_, usage) = server.get(&flooder, "/v1/usage").await;
    assert_eq!((&usage["spent_usd"], &usage["recent_charges"]), (&json!("0.0000"), &json!([])), "{usage}");
    server.stop().await;
}

/// Revoking a key stops the job it has running: failed at once with its hold released, never
/// billed, and its worker lets go of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn revoking_a_key_stops_its_running_job_unbilled() {
    let stalling = stalling_server().await;
    let allow_loopback: common::Adjust = Box::new(|config| config.allow_private_input_urls = true);
    let options = common::Options { adjust: Some(allow_loopback), ..Default::default() };
    let server = TestServer::start_with(storage::Backend::Sqlite, options).await;
    let secret = server.key(None, false).await;
    let key_id = server.service.api().authenticate(Some(&secret)).await.expect("key").key_id;
    let queued = server.submit(&secret, json!({"model": "bg-remove", "image_url": stalling})).await;
    let id = queued["id"].as_str().expect("id").to_string();
    server.wait_running(&secret, &id).await;
    server.service.operator().revoke_key(&key_id).await.expect("revoke");
    let row = server.service.database().task(&id).unwrap().unwrap();
    assert_eq!(row.status, "failed");
    assert!(row.error.as_deref().unwrap_or_default().contains("revoked while it ran"), "{row:?}");
    let ledger = server.service.database().task_ledger(&id).unwrap();
    assert!(ledger.iter().all(|entry| entry.kind != "capture"), "{ledger:?}");
    assert_eq!(server.service.database().verify_ledger().unwrap(), vec![]);
    server.stop().await;
}

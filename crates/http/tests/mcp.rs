//! The agent connector over real HTTP: lifecycle, every error path, auth both ways, metering.

mod common;

use common::{photo, png_data_uri, TestServer};
use reqwest::StatusCode;
use serde_json::{json, Value};

struct Mcp<'a> {
    server: &'a TestServer,
    key: String,
}

impl Mcp<'_> {
    async fn send(&self, body: Value) -> (StatusCode, String) {
        let response = self
            .server
            .client
            .post(format!("{}/api/mcp", self.server.base))
            .bearer_auth(&self.key)
            .json(&body)
            .send()
            .await
            .expect("post");
        let status = response.status();
        (status, response.text().await.expect("body"))
    }

    async fn rpc(&self, method: &str, params: Value) -> Value {
        let (status, body) = self.send(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        serde_json::from_str(&body).expect("JSON-RPC response")
    }

    /// Calls a tool, and checks its answer against the tool's declared output schema (an error
    /// against the error body's).
    async fn tool(&self, name: &str, arguments: Value) -> Value {
        let response = self.rpc("tools/call", json!({"name": name, "arguments": arguments})).await;
        let result = response["result"].clone();
        let tools = self.rpc("tools/list", json!({})).await["result"]["tools"].clone();
        let tool = tools.as_array().unwrap().iter().find(|t| t["name"] == name).expect("a listed tool").clone();
        let schema = if result["isError"] == true {
            service::contract::json_schema::<http_api::ErrorBody>()
        } else {
            tool["outputSchema"].clone()
        };
        let what = format!("the {name} tool's answer");
        common::contract::assert_valid(&schema, &result["structuredContent"], &what);
        result
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lifecycle_and_protocol_errors() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let mcp = Mcp { key: server.key(None, false).await, server: &server };

    for (asked, answered) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2025-11-25", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let init = mcp
            .rpc(
                "initialize",
                json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], answered);
        assert!(init["result"]["capabilities"]["tools"].is_object());
        assert_eq!(init["result"]["serverInfo"]["name"], "media-gateway");
        assert!(
            init["result"]["serverInfo"]["version"].is_string() && init["result"]["serverInfo"]["title"].is_string()
        );
        assert!(init["result"]["instructions"].as_str().unwrap().contains("task_status"));
    }
    // Notifications and client responses: 202, no body.
    let (status, body) = mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, ""));
    let (status, _) = mcp.send(json!({"jsonrpc": "2.0", "id": 9, "result": {}})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    // What is neither a request, a notification nor a response is refused, not swallowed.
    for malformed in [
        json!({"jsonrpc": "2.0", "id": 9}),
        json!({"jsonrpc": "2.0", "id": 9, "result": {}, "error": {"code": 1, "message": "x"}}),
        json!({"jsonrpc": "2.0", "result": {}}),
        json!({"jsonrpc": "2.0", "method": "ping", "id": 3, "extra": 1}),
        json!({"jsonrpc": "2.0", "garbage": {}, "id": "x"}),
    ] {
        let (status, body) = mcp.send(malformed.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{malformed}: {body}");
        assert!(body.contains("-32600"), "{malformed}: {body}");
    }
    assert_eq!(mcp.rpc("ping", json!({})).await["result"], json!({}));

    // The newer discovery method is unknown here: -32601, so clients fall back to initialize.
    for method in ["server/discover", "resources/list", "nope"] {
        assert_eq!(mcp.rpc(method, json!({})).await["error"]["code"], -32601, "{method}");
    }
    // Unknown tool: -32602.
    assert_eq!(mcp.rpc("tools/call", json!({"name": "teleport", "arguments": {}})).await["error"]["code"], -32602);

    // Malformed body -32700, batch and null id -32600: HTTP 400 with a JSON-RPC error.
    let raw = |body: &'static str| {
        server
            .client
            .post(format!("{}/api/mcp", server.base))
            .bearer_auth(&mcp.key)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    for (body, code) in [
        ("{not json", -32700),
        ("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600),
        ("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600),
        ("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", -32600),
    ] {
        let response = raw(body).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let error: Value = response.json().await.unwrap();
        assert_eq!((error["error"]["code"].as_i64(), error["id"].clone()), (Some(code), Value::Null), "{body}");
    }

    // Protocol version header: supported passes, unsupported is 400. Foreign Origin: 403; local
    // origins pass. GET: 405.
    for (header, value, status) in [
        ("mcp-protocol-version", "2025-06-18", StatusCode::OK),
        ("mcp-protocol-version", "2024-01-01", StatusCode::BAD_REQUEST),
        ("origin", "https://evil.example", StatusCode::FORBIDDEN),
        ("origin", "http://localhost:3000", StatusCode::OK),
    ] {
        let response = server
            .client
            .post(format!("{}/api/mcp", server.base))
            .bearer_auth(&mcp.key)
            .header(header, value)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status, "{header}: {value}");
    }
    let response = server.client.get(format!("{}/api/mcp", server.base)).bearer_auth(&mcp.key).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()["allow"], "POST");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn authentication_both_ways() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let url = format!("{}/api/mcp", server.base);

    let response = server.client.post(&url).json(&ping).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    // The challenge also points OAuth clients at the connector's protected resource metadata.
    assert_eq!(
        response.headers()["www-authenticate"],
        format!(
            "Bearer realm=\"media-gateway\", resource_metadata=\"{}/.well-known/oauth-protected-resource/api/mcp\"",
            server.base
        )
        .as_str()
    );
    let body: Value = response.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("key"));

    let response = server.client.post(format!("{url}?key={key}")).json(&ping).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let response = server.client.post(format!("{url}?key=mgk_wrong")).json(&ping).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = server.client.post(&url).bearer_auth("mgk_wrong").json(&ping).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tools_are_metered_like_the_api() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(Some("0.1000"), false).await;
    let mcp = Mcp { key: key.clone(), server: &server };
    let held = || async { server.get(&key, "/v1/usage").await.1["held_usd"].as_str().unwrap().to_string() };

    // tools/list: four tools, strict schemas, annotations, the engine ids as an enum.
    let tools = mcp.rpc("tools/list", json!({})).await["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "list_models",
            "generate",
            "listing_enhance",
            "lot_trace",
            "listing_kit",
            "reel",
            "reel_status",
            "task_status",
            "cancel_task"
        ]
    );
    for tool in &tools {
        assert!(tool["title"].is_string() && tool["description"].as_str().unwrap().len() > 40);
        assert_eq!(tool["inputSchema"]["additionalProperties"], false);
        assert_eq!(tool["outputSchema"]["type"], "object");
        let billed = ["generate", "listing_enhance", "lot_trace", "listing_kit", "reel"]
            .contains(&tool["name"].as_str().unwrap());
        let destructive = tool["name"] == "cancel_task";
        let hints = &tool["annotations"];
        assert_eq!(hints["title"], tool["title"]);
        let read_only = !billed && !destructive;
        assert_eq!((&hints["readOnlyHint"], &hints["idempotentHint"]), (&json!(read_only), &json!(!billed)), "{tool}");
        assert_eq!(
            (&hints["destructiveHint"], &hints["openWorldHint"]),
            (&json!(destructive), &json!(billed)),
            "{tool}"
        );
    }
    assert_eq!(tools[1]["inputSchema"]["properties"]["model"]["enum"].as_array().unwrap().len(), 41);

    // list_models is free.
    let listed = mcp.tool("list_models", json!({"family": "music"})).await;
    assert_eq!(listed["isError"], false);
    assert_eq!(listed["structuredContent"]["models"][0]["id"], "omicron2");
    assert_eq!(
        serde_json::from_str::<Value>(listed["content"][0]["text"].as_str().unwrap()).unwrap(),
        listed["structuredContent"]
    );
    assert_eq!(held().await, "0.0000");

    // generate places a hold, like POST /v1/generate, and task_status follows it to success.
    let started = mcp
        .tool(
            "generate",
            json!({"model": "beta-image", "prompt": "a red door", "params": {"width": 256, "height": 256}}),
        )
        .await;
    assert_eq!(started["isError"], false, "{started}");
    let task_id = started["structuredContent"]["id"].as_str().unwrap().to_string();
    assert_eq!(started["structuredContent"]["price_usd"], "0.0400");
    let mut status = Value::Null;
    for _ in 0..600 {
        status = mcp.tool("task_status", json!({"id": task_id})).await;
        if status["structuredContent"]["status"] == "succeeded" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(status["structuredContent"]["cost_usd"], "0.0400", "{status}");
    let url = status["structuredContent"]["output"][0]["url"].as_str().unwrap().to_string();
    let (_, png) = server.download(&url).await;
    assert_eq!(image::load_from_memory(&png).unwrap().width(), 256);

    // listing_enhance: a billed recipe job whose output is a real JPEG of the input's size.
    let enhanced = mcp.tool("listing_enhance", json!({"image_url": png_data_uri(120, 80), "notes": "brighter"})).await;
    assert_eq!(enhanced["isError"], false, "{enhanced}");
    assert_eq!(enhanced["structuredContent"]["price_usd"], "0.0500");
    let id = enhanced["structuredContent"]["id"].as_str().unwrap();
    let task = server.wait(&key, id).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    let (content_type, jpeg) = server.download(task["output"][0]["url"].as_str().unwrap()).await;
    assert_eq!(content_type, "image/jpeg");
    assert_eq!(image::load_from_memory(&jpeg).unwrap().width(), 120);

    // Failures a model can act on are isError results: bad arguments, the cap, unknown tasks.
    for (tool, arguments, needle, code) in [
        ("generate", json!({"model": "beta-image"}), "prompt", "invalid_input"),
        ("generate", json!({"model": "beta-image", "prompt": "x", "colour": "red"}), "colour", "invalid_input"),
        ("generate", json!({"model": "omega-9", "prompt": "x"}), "unknown or unavailable model", "unknown_model"),
        ("generate", json!({"model": "beta-image", "prompt": "x"}), "spend cap reached", "spend_cap_reached"),
        ("task_status", json!({"id": "task_missing"}), "no task", "not_found"),
        ("listing_enhance", json!({}), "image_url", "invalid_input"),
    ] {
        let result = mcp.tool(tool, arguments.clone()).await;
        assert_eq!(result["isError"], true, "{tool} {arguments}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(needle), "{tool}: {text:?} should mention {needle}");
        assert_eq!(result["structuredContent"]["code"], code, "{tool} {arguments}");
        assert_eq!(result["structuredContent"]["error"], text);
    }
    // An unknown tool is a JSON-RPC error, with the code in its data.
    let unknown = mcp.rpc("tools/call", json!({"name": "teleport", "arguments": {}})).await;
    assert_eq!(unknown["error"]["data"]["code"], "invalid_input", "{unknown}");
    // Another key's task is invisible through the connector too.
    let other = Mcp { key: server.key(None, false).await, server: &server };
    assert_eq!(other.tool("task_status", json!({"id": task_id})).await["isError"], true);
    server.stop().await;
}

/// Polls `status_tool` with `arguments` until the job ends; every answer is checked against the
/// tool's output schema on the way.
async fn finished(mcp: &Mcp<'_>, status_tool: &str, arguments: Value) -> Value {
    for _ in 0..3000 {
        let answer = mcp.tool(status_tool, arguments.clone()).await;
        assert_eq!(answer["isError"], false, "{answer}");
        let view = answer["structuredContent"].clone();
        if view["status"] == "succeeded" || view["status"] == "failed" {
            assert_eq!(view["status"], "succeeded", "{view}");
            return view;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{status_tool} {arguments} did not finish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_answer_matches_its_declared_schema_on_every_output_type() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let mcp = Mcp { key: server.key(None, true).await, server: &server };
    let mut kinds = std::collections::BTreeSet::new();
    let mut note = |view: &Value| {
        for output in view["output"].as_array().expect("outputs") {
            kinds.insert(output["type"].as_str().unwrap().to_string());
        }
    };

    assert_eq!(mcp.tool("list_models", json!({})).await["structuredContent"]["models"].as_array().unwrap().len(), 41);
    // Image, video and audio from engines, polled with task_status.
    for arguments in [
        json!({"model": "beta-image", "prompt": "a red door", "params": {"width": 256, "height": 256}}),
        json!({"model": "eta-lite-i2v", "image_url": png_data_uri(64, 48), "params": {"duration": 1}}),
        json!({"model": "tts", "prompt": "Welcome home."}),
    ] {
        let queued = mcp.tool("generate", arguments).await;
        assert_eq!(queued["isError"], false, "{queued}");
        assert!(queued["content"][1]["text"].as_str().unwrap().contains("task_status"), "{queued}");
        let id = queued["structuredContent"]["id"].clone();
        note(&finished(&mcp, "task_status", json!({"id": id})).await);
    }
    // The listing kit's PDF (a document) through the synchronous answer and task_status alike.
    let kit = mcp
        .tool(
            "listing_kit",
            json!({"photos": [photo("coffee.jpg")], "details": {"address": "42 Harbor Lane", "price": "$525,000"}}),
        )
        .await;
    assert_eq!(kit["structuredContent"]["status"], "succeeded", "{kit}");
    note(&kit["structuredContent"]);
    note(&finished(&mcp, "task_status", json!({"id": kit["structuredContent"]["id"]})).await);
    // The traced parcel, answered at once.
    let traced = mcp
        .tool(
            "lot_trace",
            json!({"image_url": png_data_uri(200, 200), "points": [[50, 50], [150, 50], [150, 150], [50, 150]],
                   "params": {"meters_per_pixel": 0.5}}),
        )
        .await;
    assert_eq!(traced["structuredContent"]["square_meters"], 2500.0, "{traced}");
    // A reel: video, cover image and caption text, polled with reel_status.
    let reel = mcp.tool("reel", json!({"photos": [photo("coffee.jpg")], "params": {"duration": 6}})).await;
    let reel_id = reel["structuredContent"]["reel_id"].clone();
    note(&finished(&mcp, "reel_status", json!({"reel_id": reel_id})).await);

    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["audio", "document", "image", "text", "video"],
        "every output type was checked against its schema"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spending_tools_take_an_idempotency_key() {
    let server =
        TestServer::start_with(storage::Backend::Sqlite, common::Options { worker: false, ..Default::default() }).await;
    let key = server.key(None, true).await;
    let mcp = Mcp { key: key.clone(), server: &server };
    let tools = mcp.rpc("tools/list", json!({})).await["result"]["tools"].as_array().unwrap().clone();
    for tool in &tools {
        let takes_key = tool["inputSchema"]["properties"]["idempotency_key"]["type"].is_string()
            || tool["inputSchema"]["properties"]["idempotency_key"].is_object();
        // The billed tools (open-world: they fetch inputs and spend) and no other.
        assert_eq!(takes_key, tool["annotations"]["openWorldHint"] == true, "{}", tool["name"]);
    }
    let call = json!({"model": "tts", "prompt": "Corner lot.", "idempotency_key": "agent-try-1"});
    let first = mcp.tool("generate", call.clone()).await;
    let again = mcp.tool("generate", call).await;
    assert_eq!(first["isError"], false, "{first}");
    assert_eq!(again["structuredContent"], first["structuredContent"]);
    // The same task over HTTP under the same key: the connector and the API share the records.
    let (status, http) = server
        .post_with_idempotency_key(
            &key,
            "/v1/generate",
            "agent-try-1",
            json!({"model": "tts", "prompt": "Corner lot."}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(http["id"], first["structuredContent"]["id"]);
    let (_, usage) = server.get(&key, "/v1/usage").await;
    assert_eq!(usage["held_usd"], first["structuredContent"]["price_usd"]);

    let reused =
        mcp.tool("generate", json!({"model": "tts", "prompt": "Other.", "idempotency_key": "agent-try-1"})).await;
    assert_eq!(
        (reused["isError"].clone(), reused["structuredContent"]["code"].clone()),
        (json!(true), json!("idempotency_key_reused"))
    );
    let bad = mcp.tool("generate", json!({"model": "tts", "prompt": "Other.", "idempotency_key": ""})).await;
    assert_eq!(bad["structuredContent"]["code"], "invalid_input", "{bad}");
    server.stop().await;
}

/// `cancel_task` ends a queued task or reel unbilled and answers in the shape its status tool
/// does; a finished one is refused with `already_finished`, another key's with `not_found`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancel_task_ends_a_task_or_reel_unbilled() {
    let server =
        TestServer::start_with(storage::Backend::Sqlite, common::Options { worker: false, ..Default::default() }).await;
    let key = server.key(None, true).await;
    let mcp = Mcp { key: key.clone(), server: &server };
    let queued = mcp.tool("generate", json!({"model": "tts", "prompt": "never spoken"})).await;
    let id = queued["structuredContent"]["id"].as_str().unwrap().to_string();
    let cancelled = mcp.tool("cancel_task", json!({"id": id})).await;
    assert_eq!(cancelled["isError"], false, "{cancelled}");
    let task = &cancelled["structuredContent"];
    assert_eq!((task["id"].as_str(), task["status"].as_str()), (Some(id.as_str()), Some("failed")));
    assert_eq!(task["error"], "cancelled by client");
    assert_eq!(
        *task,
        mcp.tool("task_status", json!({"id": id})).await["structuredContent"],
        "the status reads the same"
    );
    assert_eq!(server.get(&key, "/v1/usage").await.1["held_usd"], "0.0000");

    let again = mcp.tool("cancel_task", json!({"id": id})).await;
    assert_eq!(
        (again["isError"].as_bool(), again["structuredContent"]["code"].as_str()),
        (Some(true), Some("already_finished"))
    );
    let other = Mcp { key: server.key(None, true).await, server: &server };
    let queued = mcp.tool("generate", json!({"model": "tts", "prompt": "mine"})).await;
    let mine = queued["structuredContent"]["id"].as_str().unwrap();
    let refused = other.tool("cancel_task", json!({"id": mine})).await;
    assert_eq!(refused["structuredContent"]["code"], "not_found", "{refused}");

    let reel = mcp.tool("reel", json!({"photos": [common::png_data_uri(64, 48)]})).await;
    let reel_id = reel["structuredContent"]["reel_id"].as_str().unwrap().to_string();
    let cancelled = mcp.tool("cancel_task", json!({"id": reel_id})).await;
    assert_eq!(cancelled["structuredContent"]["reel_id"], reel_id.as_str(), "{cancelled}");
    assert_eq!(cancelled["structuredContent"]["error"], "cancelled by client");
    server.stop().await;
}

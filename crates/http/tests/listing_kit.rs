//! The listing-kit recipe over HTTP, black-box on SQLite and PostgreSQL: 200 with the kit (every
//! named piece a signed, downloadable file of the right type and size), the captions and the Fair
//! Housing findings; billed once, only on success; 400 for bad input and for a photo that cannot
//! be used, unbilled; and the connector's `listing_kit` tool.

mod common;

use common::{photo, TestServer};
use reqwest::StatusCode;
use serde_json::{json, Value};
use storage::test_support::BACKENDS;

fn request() -> Value {
    json!({
        "photos": [photo("coffee.jpg"), {"url": photo("chelsea.jpg"), "caption": "Sunroom", "staged": true}],
        "details": {
            "address": "42 Harbor Lane, Mystic, CT 06355", "price": 525000, "beds": 3, "baths": 2.5,
            "square_feet": 1850, "headline": "Waterfront colonial with a private dock",
            "description": "Sunlit rooms open to the water. Perfect for families who love the outdoors.",
            "features": ["Private dock", "Quartz counters"], "agent_name": "Dana Reyes",
            "phone": "(860) 555-0142", "brokerage": "Shoreline Realty",
        },
        "params": {"brand": {"primary": "#1F3A5F", "accent": "#C8A24A"}, "mls_remarks_max": 300},
    })
}

async fn spent(server: &TestServer, key: &str) -> (String, String) {
    let (_, usage) = server.get(key, "/v1/usage").await;
    (usage["spent_usd"].as_str().unwrap().to_string(), usage["held_usd"].as_str().unwrap().to_string())
}

/// Downloads a named piece and checks its type and, for images, its pixel size.
async fn piece(server: &TestServer, piece: &Value, content_type: &str, size: Option<(u32, u32)>) -> Vec<u8> {
    assert_eq!(piece["content_type"], content_type, "{piece}");
    let (served, bytes) = server.download(piece["url"].as_str().expect("a signed URL")).await;
    assert_eq!(served, content_type);
    if let Some(size) = size {
        let image = image::load_from_memory(&bytes).expect("the piece decodes");
        assert_eq!((image.width(), image.height()), size);
        assert_eq!((piece["width"].as_u64(), piece["height"].as_u64()), (Some(size.0.into()), Some(size.1.into())));
    }
    bytes
}

#[tokio::test]
async fn a_kit_is_made_billed_once_and_every_piece_downloads() {
    for backend in BACKENDS {
        let server = TestServer::start(backend).await;
        let key = server.key(None, false).await;
        let (status, kit) = server.post(&key, "/v1/recipes/listing-kit", request()).await;
        assert_eq!(status, StatusCode::OK, "{kit}");
        assert_eq!((kit["status"].as_str(), kit["cost_usd"].as_str()), (Some("succeeded"), Some("0.1500")));
        assert_eq!(kit["model"], "listing-kit");
        let types: Vec<&str> = kit["output"].as_array().unwrap().iter().map(|o| o["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["document", "image", "image", "image", "image"]);

        let pdf = piece(&server, &kit["flyer"]["pdf"], "application/pdf", None).await;
        assert!(pdf.starts_with(b"%PDF-"), "a PDF");
        piece(&server, &kit["flyer"]["png"], "image/png", Some((1275, 1650))).await;
        piece(&server, &kit["social"]["square"], "image/png", Some((1080, 1080))).await;
        piece(&server, &kit["social"]["portrait"], "image/png", Some((1080, 1350))).await;
        piece(&server, &kit["story"], "image/png", Some((1080, 1920))).await;
        assert_eq!(kit["flyer"]["page_inches"], json!([8.75, 11.25]));

        let captions = &kit["captions"];
        let remarks = captions["mls_remarks"].as_str().unwrap();
        assert!(remarks.chars().count() <= 300, "{remarks}");
        assert!(!remarks.contains("555-0142") && !remarks.contains("Dana"), "{remarks}");
        assert!(remarks.ends_with("One or more photos virtually staged."), "{remarks}");
        assert!(captions["social"].as_str().unwrap().contains("#MysticCT"));
        let finding = &kit["fair_housing"]["findings"][0];
        assert_eq!(
            (finding["category"].as_str(), finding["original"].as_str()),
            (Some("familial_status"), Some("Perfect for families"))
        );
        assert_eq!(finding["field"], "details.description");
        assert_eq!(kit["staged_disclosure"], "One or more photos virtually staged.");

        // The same task at /v1/tasks/{id}, its pieces linked there too; billed exactly once.
        let id = kit["id"].as_str().unwrap();
        let (status, task) = server.get(&key, &format!("/v1/tasks/{id}")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(task["result"]["flyer"]["pdf"]["url"].as_str().unwrap().contains("/files/"));
        assert_eq!(spent(&server, &key).await, ("0.1500".into(), "0.0000".into()));
        let ledger = server.service.database().task_ledger(id).unwrap();
        assert_eq!(ledger.iter().filter(|e| e.kind == "capture").count(), 1);
        server.stop().await;
    }
}

#[tokio::test]
async fn bad_kits_are_refused_or_failed_and_never_billed() {
    for backend in BACKENDS {
        let server = TestServer::start(backend).await;
        let key = server.key(None, false).await;
        let with = |patch: Value| {
            let mut body = request();
            for (k, v) in patch.as_object().unwrap() {
                body[k] = v.clone();
            }
            body
        };
        let eleven: Vec<String> = (0..11).map(|_| "https://example.com/a.jpg".to_string()).collect();
        let cases = [
            (json!({"photos": []}), "photos"),
            (json!({"photos": eleven}), "photos"),
            (json!({"details": {}}), "details"),
            (json!({"params": {"brand": {"primary": "navy"}}}), "params.brand.primary"),
            (json!({"params": {"brand": {"accent": "#12345"}}}), "params.brand.accent"),
            (json!({"params": {"paper": "legal"}}), "paper"),
            (json!({"params": {"mls_remarks_max": 50}}), "params.mls_remarks_max"),
            (json!({"details": {"pool": true}}), "pool"),
            (json!({"details": {"year_built": 1066}}), "details.year_built"),
            (json!({"photos": ["ftp://example.com/a.jpg"]}), "photos[0].url"),
        ];
        for (patch, field) in cases {
            let (status, body) = server.post(&key, "/v1/recipes/listing-kit", with(patch.clone())).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{patch} -> {body}");
            assert!(body["error"].as_str().unwrap().contains(field), "{patch}: {body}");
        }
        let mut no_details = request();
        no_details.as_object_mut().unwrap().remove("details");
        let (status, body) = server.post(&key, "/v1/recipes/listing-kit", no_details).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body["error"].as_str().unwrap().contains("details"), "{body}");

        // A photo that cannot be used (not an image; an address the service may not fetch; a host
        // that does not resolve) is a 400 naming it, with nothing billed or held.
        let unusable = [
            "data:image/png;base64,aGVsbG8gd29ybGQ=",
            "http://127.0.0.1:9/photo.jpg",
            "https://no-such-host.invalid/a.jpg",
        ];
        for bad in unusable {
            let (status, body) =
                server.post(&key, "/v1/recipes/listing-kit", with(json!({"photos": [photo("coffee.jpg"), bad]}))).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
            assert!(body["error"].as_str().unwrap().contains("photos[1]"), "{body}");
        }
        assert_eq!(spent(&server, &key).await, ("0.0000".into(), "0.0000".into()));
        server.stop().await;
    }
}

#[tokio::test]
async fn the_connector_makes_a_kit() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "listing_kit", "arguments": request()},
    });
    let (status, answer) = server.post(&key, "/api/mcp", call).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let kit = &answer["result"]["structuredContent"];
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!((kit["status"].as_str(), kit["cost_usd"].as_str()), (Some("succeeded"), Some("0.1500")));
    assert!(kit["flyer"]["pdf"]["url"].as_str().unwrap().contains("/files/"));
    assert!(kit["captions"]["mls_remarks"].as_str().is_some());
    // The connector answers with the HTTP view: the same fields as the 200 of the endpoint.
    let (_, task) = server.get(&key, &format!("/v1/tasks/{}", kit["id"].as_str().unwrap())).await;
    // Output URLs are signed afresh on each read, so their expiry may differ by a second.
    let (mut kit, mut task) = (kit.clone(), task);
    common::unsigned(&mut kit);
    common::unsigned(&mut task);
    for field in ["id", "model", "status", "cost_usd", "price_usd", "result"] {
        assert!(!task[field].is_null(), "{field}: {task}");
        assert_eq!(kit[field], task[field], "{field}");
    }
    assert_eq!(kit["output"].as_array().map(Vec::len), task["output"].as_array().map(Vec::len));
    assert!(kit["layout"].is_object() && kit["fair_housing"]["findings"].is_array(), "{kit}");
    assert_eq!(spent(&server, &key).await, ("0.1500".into(), "0.0000".into()));
    server.stop().await;
}

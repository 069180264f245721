//! The recipes over HTTP, black-box on SQLite and PostgreSQL: lot-trace's synchronous 200, its 202
//! fallback, its 400s and 502, billing once and only on success, scoping to the key; and
//! listing-enhance's MLS export with its manifest.

mod common;

use common::{image_data_uri, png_data_uri, Options, TestServer};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;
use storage::test_support::BACKENDS;

fn square_trace(image_url: &str) -> Value {
    json!({
        "image_url": image_url,
        "points": [[20, 30], [120, 30], {"x": 120, "y": 130}, [20, 130]],
        "params": {"meters_per_pixel": 0.5},
    })
}

async fn spent(server: &TestServer, key: &str) -> (String, String) {
    let (_, usage) = server.get(key, "/v1/usage").await;
    (usage["spent_usd"].as_str().unwrap().to_string(), usage["held_usd"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn lot_trace_answers_with_the_measured_parcel_and_bills_once() {
    for backend in BACKENDS {
        let server = TestServer::start(backend).await;
        let key = server.key(None, false).await;
        let (status, body) = server.post(&key, "/v1/recipes/lot-trace", square_trace(&png_data_uri(240, 200))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "succeeded");
        assert_eq!(body["acres"], 0.6178);
        assert_eq!(body["square_meters"], 2500.0);
        assert_eq!(body["perimeter_m"], 200.0);
        assert_eq!(body["sides"].as_array().unwrap().len(), 4);
        assert_eq!(body["sides"][0]["length_ft"], 164.04);
        assert_eq!(body["centroid"], json!({"x": 70.0, "y": 80.0}));
        assert_eq!(body["disclaimer"], "Approximate; not a survey.");
        assert_eq!(body["cost_usd"], "0.0300");
        let output = &body["output"][0];
        assert_eq!(
            (output["type"].as_str(), output["width"].as_u64(), output["height"].as_u64()),
            (Some("image"), Some(240), Some(200))
        );
        let (content_type, png) = server.download(output["url"].as_str().unwrap()).await;
        assert_eq!(content_type, "image/png");
        let rendered = image::load_from_memory(&png).expect("rendered PNG decodes").to_rgb8();
        assert_eq!(rendered.dimensions(), (240, 200));

        // The same task, with its result, at /v1/tasks/{id}; invisible to another key.
        let id = body["id"].as_str().unwrap();
        let (status, task) = server.get(&key, &format!("/v1/tasks/{id}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!((task["model"].as_str(), task["result"]["acres"].as_f64()), (Some("lot-trace"), Some(0.6178)));
        let other = server.key(None, false).await;
        assert_eq!(server.get(&other, &format!("/v1/tasks/{id}")).await.0, StatusCode::NOT_FOUND);

        // Billed exactly once, at the cost reported.
        assert_eq!(spent(&server, &key).await, ("0.0300".into(), "0.0000".into()));
        let ledger = server.service.database().task_ledger(id).unwrap();
        assert_eq!(ledger.iter().filter(|e| e.kind == "capture").count(), 1);
        server.stop().await;
    }
}

#[tokio::test]
async fn lot_trace_refuses_bad_input_with_400_and_bills_nothing() {
    for backend in BACKENDS {
        let server = TestServer::start(backend).await;
        let key = server.key(None, false).await;
        let image = png_data_uri(240, 200);
        let cases = [
            (json!({"image_url": image, "points": [[0, 0], [10, 0]], "params": {"meters_per_pixel": 1}}), "points"),
            (
                json!({"image_url": image, "points": [[0, 0], [10, 10], [10, 0], [0, 10]], "params": {"meters_per_pixel": 1}}),
                "self-intersection",
            ),
            (
                json!({"image_url": image, "points": [[0, 0], [10, 0], [10, 10]], "params": {}}),
                "params.meters_per_pixel",
            ),
            (
                json!({"image_url": image, "points": [[0, 0], [10, 0], [10, 10]], "params": {"latitude": 30}}),
                "params.zoom",
            ),
            (
                json!({"image_url": image, "points": [[0, 0], [10, 0], [10, 10]], "params": {"meters_per_pixel": 0}}),
                "params.meters_per_pixel",
            ),
            (json!({"image_url": image, "params": {"meters_per_pixel": 1}}), "points: required"),
            (json!({"points": [[0, 0], [10, 0], [10, 10]], "params": {"meters_per_pixel": 1}}), "image_url: required"),
            (json!({"image_url": image, "points": [[0, 0], [10, 0], [10, 10]], "notes": "x"}), "unknown field `notes`"),
            (
                json!({"image_url": image, "points": [[0, 0], "x", [10, 10]], "params": {"meters_per_pixel": 1}}),
                "points[1]",
            ),
        ];
        for (body, expected) in cases {
            let (status, answer) = server.post(&key, "/v1/recipes/lot-trace", body.clone()).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
            assert!(answer["error"].as_str().unwrap().contains(expected), "{expected}: {answer}");
        }
        // Known only once the image is read: points outside it, and an image that does not decode.
        let outside =
            json!({"image_url": image, "points": [[0, 0], [300, 0], [300, 100]], "params": {"meters_per_pixel": 1}});
        let (status, answer) = server.post(&key, "/v1/recipes/lot-trace", outside).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer["error"].as_str().unwrap().contains("outside the 240x200 image"), "{answer}");
        let garbage = square_trace("data:image/png;base64,aGVsbG8gd29ybGQ=");
        let (status, answer) = server.post(&key, "/v1/recipes/lot-trace", garbage).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer["error"].as_str().unwrap().starts_with("image_url:"), "{answer}");
        assert_eq!(spent(&server, &key).await, ("0.0000".into(), "0.0000".into()));
        server.stop().await;
    }
}

#[tokio::test]
async fn lot_trace_falls_back_to_202_when_the_wait_runs_out() {
    for backend in BACKENDS {
        let options = Options { worker: false, sync_recipe_wait: Duration::from_millis(300), ..Default::default() };
        let server = TestServer::start_with(backend, options).await;
        let key = server.key(None, false).await;
        let response = server
            .client
            .post(format!("{}/v1/recipes/lot-trace", server.base))
            .bearer_auth(&key)
            .json(&square_trace(&png_data_uri(240, 200)))
            .send()
            .await
            .unwrap();
        let location = response.headers().get("location").map(|l| l.to_str().unwrap().to_string());
        let (status, queued) = common::read(response).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
        assert_eq!(queued["status"], "queued");
        assert_eq!(location.as_deref(), queued["poll_url"].as_str());
        // A worker picks it up later; it is billed once it succeeds.
        server.start_worker();
        let task = server.wait(&key, queued["id"].as_str().unwrap()).await;
        assert_eq!(task["status"], "succeeded", "{task}");
        assert_eq!(task["result"]["acres"], 0.6178);
        assert_eq!(spent(&server, &key).await, ("0.0300".into(), "0.0000".into()));
        server.stop().await;
    }
}

#[tokio::test]
async fn a_failed_lot_trace_is_a_502_and_costs_nothing() {
    for backend in BACKENDS {
        let options = Options { worker: false, sync_recipe_wait: Duration::from_secs(60), ..Default::default() };
        let server = TestServer::start_with(backend, options).await;
        let key = server.key(None, false).await;
        let request = {
            let (client, url, key) =
                (server.client.clone(), format!("{}/v1/recipes/lot-trace", server.base), key.clone());
            tokio::spawn(async move {
                let response = client
                    .post(url)
                    .bearer_auth(key)
                    .json(&square_trace(&png_data_uri(240, 200)))
                    .send()
                    .await
                    .unwrap();
                common::read(response).await
            })
        };
        // The job fails for a reason that is not the input (here: its worker gives up on it); the
        // waiting request hears of it at once.
        let claimed = loop {
            if let Some(claimed) = server.service.runner().claim("test-worker", 30_000).await.unwrap() {
                break claimed;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        server.service.runner().fail(&claimed, "worker lost the job 3 times").await.unwrap();
        let (status, answer) = tokio::time::timeout(Duration::from_secs(10), request).await.unwrap().unwrap();
        assert_eq!(status, StatusCode::BAD_GATEWAY, "{answer}");
        assert!(answer["error"].as_str().unwrap().contains("worker lost the job"), "{answer}");
        assert_eq!(spent(&server, &key).await, ("0.0000".into(), "0.0000".into()));
        server.stop().await;
    }
}

#[tokio::test]
async fn lot_trace_over_web_mercator_matches_geojson_within_a_thousandth() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    let image = png_data_uri(800, 600);
    let bounds = [-97.7445, 30.2665, -97.7405, 30.2695];
    let pixels = [[150.0, 120.0], [610.0, 160.0], [580.0, 470.0], [190.0, 430.0]];
    // Web mercator, written out independently of the service: x is linear in longitude, y in
    // ln(tan(pi/4 + lat/2)).
    let merc = |lat: f64| (std::f64::consts::FRAC_PI_4 + lat.to_radians() / 2.0).tan().ln();
    let lat_of = |m: f64| (2.0 * m.exp().atan() - std::f64::consts::FRAC_PI_2).to_degrees();
    let lon_lat: Vec<[f64; 2]> = pixels
        .iter()
        .map(|[x, y]| {
            let lon = bounds[0] + x / 800.0 * (bounds[2] - bounds[0]);
            let lat = lat_of(merc(bounds[3]) + y / 600.0 * (merc(bounds[1]) - merc(bounds[3])));
            [lon, lat]
        })
        .collect();
    let mut ring = lon_lat.clone();
    ring.push(lon_lat[0]);
    let by_pixels = json!({"image_url": image, "points": pixels, "params": {"bounds": bounds}});
    let by_geojson = json!({"image_url": image, "params": {"bounds": bounds, "geojson": {"type": "Polygon", "coordinates": [ring]}}});
    let (status, a) = server.post(&key, "/v1/recipes/lot-trace", by_pixels).await;
    assert_eq!(status, StatusCode::OK, "{a}");
    let (status, b) = server.post(&key, "/v1/recipes/lot-trace", by_geojson).await;
    assert_eq!(status, StatusCode::OK, "{b}");
    let (area_a, area_b) = (a["square_meters"].as_f64().unwrap(), b["square_meters"].as_f64().unwrap());
    assert!((area_a - area_b).abs() / area_a < 0.001, "{area_a} vs {area_b}");
    // And the right magnitude: the pixel area times the image's ground resolution across (a degree
    // of longitude is 111.32 km times the cosine of the latitude) and down (a degree of latitude
    // near 30 N is 110.85 km), within 1 %.
    let shoelace: f64 = (0..4)
        .map(|i| {
            let (p, q) = (pixels[i], pixels[(i + 1) % 4]);
            p[0] * q[1] - q[0] * p[1]
        })
        .sum::<f64>()
        .abs()
        / 2.0;
    let mid_lat = ((bounds[1] + bounds[3]) / 2.0_f64).to_radians();
    let meters_per_degree = 111_320.0 * mid_lat.cos();
    let across = (bounds[2] - bounds[0]) * meters_per_degree / 800.0;
    let down = (bounds[3] - bounds[1]) * 110_852.0 / 600.0;
    let expected = shoelace * across * down;
    assert!((area_a - expected).abs() / expected < 0.01, "{area_a} vs about {expected}");
    assert_eq!(a["method"], "geodesic");
    assert!(a["geojson"]["geometry"]["coordinates"][0].as_array().unwrap().len() == 5);
    assert!(a["centroid"]["lon"].as_f64().is_some() && b["centroid"]["lat"].as_f64().is_some());
    server.stop().await;
}

#[tokio::test]
async fn listing_enhance_exports_for_mls_with_a_manifest() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    // A 2600x1400 photo-like gradient: larger than the MLS long edge.
    let photo = image::RgbImage::from_fn(2600, 1400, |x, y| {
        image::Rgb([(60 + x / 20) as u8, (50 + y / 10) as u8, (40 + (x + y) / 40) as u8])
    });
    let body = json!({"image_url": image_data_uri(&photo), "notes": "brighter and warmer"});
    let (status, queued) = server.post(&key, "/v1/recipes/listing-enhance", body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    let task = server.wait(&key, queued["id"].as_str().unwrap()).await;
    assert_eq!(task["status"], "succeeded", "{task}");
    let output = &task["output"][0];
    assert_eq!(
        (output["content_type"].as_str(), output["width"].as_u64(), output["height"].as_u64()),
        (Some("image/jpeg"), Some(2048), Some(1103))
    );
    let (_, jpeg) = server.download(output["url"].as_str().unwrap()).await;
    assert!(jpeg.len() < 3_000_000);
    assert_eq!(image::load_from_memory(&jpeg).unwrap().width(), 2048);
    assert_eq!(task["result"]["preset"], "mls");
    // "brighter and warmer" shows in the manifest as more light and a warmer finish.
    let adjustments = &task["result"]["adjustments"];
    assert!(adjustments["exposure_ev"].as_f64().unwrap() > 0.0, "{task}");
    assert!(adjustments["warmth"].as_f64().unwrap() > 0.0, "{task}");
    assert_eq!(adjustments["verticals_rotation_degrees"].as_f64(), Some(0.0));
    // Fields of other recipes are refused, naming them.
    let (status, answer) = server
        .post(&key, "/v1/recipes/listing-enhance", json!({"image_url": png_data_uri(8, 8), "points": [[1, 2]]}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(answer["error"].as_str().unwrap().contains("unknown field `points`"), "{answer}");
    server.stop().await;
}

#[tokio::test]
async fn the_connector_traces_a_lot_with_the_same_result() {
    let server = TestServer::start(storage::Backend::Sqlite).await;
    let key = server.key(None, false).await;
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "lot_trace", "arguments": square_trace(&png_data_uri(240, 200))},
    });
    let (status, answer) = server.post(&key, "/api/mcp", call).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{answer}");
    let parcel = &result["structuredContent"];
    assert_eq!((parcel["status"].as_str(), parcel["acres"].as_f64()), (Some("succeeded"), Some(0.6178)));
    assert_eq!(parcel["cost_usd"], "0.0300");
    assert_eq!(parcel["output"][0]["type"], "image");
    assert_eq!(spent(&server, &key).await, ("0.0300".into(), "0.0000".into()));
    server.stop().await;
}

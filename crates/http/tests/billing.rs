//! Money under concurrency, over HTTP, on SQLite and PostgreSQL: 64 clients submit at once against
//! a spend cap that fits only some of them; exactly those are accepted, and once every job has
//! finished the key's spend equals the sum of the succeeded jobs' costs and never passes the cap.
//!
//! The worker starts only after the submits, so no job ends (and releases its hold) during them:
//! the accepted set is then exactly what fits under the cap.

mod common;

use common::{generate, TestServer};
use futures::future::join_all;
use reqwest::StatusCode;
use rust_decimal::Decimal;
use serde_json::json;
use std::str::FromStr;
use storage::test_support::BACKENDS;

fn usd(value: &serde_json::Value) -> Decimal {
    Decimal::from_str(value.as_str().expect("decimal string")).expect("decimal")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_clients_never_pass_the_cap() {
    for backend in BACKENDS {
        // Caps, not request rates, are under test: 64 submits at once would also meet the rate
        // limiter (tests/operations.rs covers it).
        let no_rate_limit: common::Adjust = Box::new(|config| config.rate_limit_submits_per_minute = 0);
        let options =
            common::Options { worker_concurrency: 4, worker: false, adjust: Some(no_rate_limit), ..Default::default() };
        let server = TestServer::start_with(backend, options).await;
        // 0.0150 per tts job (one started thousand characters); the cap fits 12 of them.
        let key = server.key(Some("0.1800"), false).await;
        let submits = (0..64).map(|i| {
            let server = &server;
            let key = key.clone();
            async move {
                // Every eighth job asks for an undecodable input, so some accepted jobs fail.
                let body = if i % 8 == 0 {
                    generate("upscale-epsilon", json!({"image_url": "data:image/png;base64,bm90IGFuIGltYWdl"}))
                } else {
                    generate("tts", json!({"prompt": format!("Listing number {i} has a view.")}))
                };
                server.post(&key, "/v1/generate", body).await
            }
        });
        let results = join_all(submits).await;
        let accepted: Vec<_> =
            results.iter().filter(|(s, _)| *s == StatusCode::ACCEPTED).map(|(_, b)| b.clone()).collect();
        for (status, body) in &results {
            assert!(
                *status == StatusCode::ACCEPTED || *status == StatusCode::PAYMENT_REQUIRED,
                "{backend:?}: unexpected {status}: {body}"
            );
        }
        let held: Decimal = accepted.iter().map(|q| usd(&q["price_usd"])).sum();
        assert!(held <= Decimal::from_str("0.18").unwrap(), "{backend:?}: holds {held} pass the cap");
        // Refused tts jobs (0.0150) saw less headroom than their price, and headroom only shrinks.
        assert!(
            Decimal::from_str("0.18").unwrap() - held < Decimal::from_str("0.015").unwrap(),
            "{backend:?}: the cap was not filled ({held})"
        );
        server.start_worker();

        let mut billed = Decimal::ZERO;
        let mut failures = 0;
        for queued in &accepted {
            let task = server.wait(&key, queued["id"].as_str().unwrap()).await;
            match task["status"].as_str() {
                Some("succeeded") => billed += usd(&task["cost_usd"]),
                _ => failures += 1,
            }
        }
        let (_, usage) = server.get(&key, "/v1/usage").await;
        assert_eq!(usd(&usage["spent_usd"]), billed, "{backend:?}: spend equals succeeded costs");
        assert_eq!(usd(&usage["held_usd"]), Decimal::ZERO, "{backend:?}: no hold outlives its job");
        assert!(billed <= Decimal::from_str("0.18").unwrap());
        assert_eq!(usage["recent_charges"].as_array().unwrap().len(), accepted.len() - failures);
        assert_eq!(server.service.operator().verify_ledger().await.unwrap(), vec![], "{backend:?}: books balance");
        server.stop().await;
    }
}

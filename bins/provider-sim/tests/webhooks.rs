//! Signed webhooks, verified as a client would.

mod common;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use common::*;
use ed25519_dalek::{Signature, VerifyingKey};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

#[tokio::test]
async fn fal_webhooks_verify_against_the_published_key() {
    let sim = sim(quick()).await;
    let (hook_url, mut hooks) = receiver().await;
    let app = format!("fal-ai/flux/dev?fal_webhook={}", url_encode(&hook_url));
    let submitted = fal_submit(&sim, &app, json!({"prompt": "x", "image_size": {"width": 256, "height": 256}})).await;
    let id = submitted["request_id"].as_str().unwrap();

    let hook = next_hook(&mut hooks).await;
    let header = |name: &str| hook.headers[name].to_str().unwrap().to_string();
    assert_eq!(header("x-fal-webhook-request-id"), id);
    assert_eq!(header("x-fal-webhook-user-id"), "sim-user");
    let timestamp = header("x-fal-webhook-timestamp");
    let message = format!("{id}\nsim-user\n{timestamp}\n{}", hex::encode(Sha256::digest(&hook.body)));
    let signature = Signature::from_slice(&hex::decode(header("x-fal-webhook-signature")).unwrap()).unwrap();

    let (code, jwks) = fal_get(&format!("{}/.well-known/jwks.json", sim.url())).await;
    assert_eq!(code, 200);
    let jwk = &jwks["keys"][0];
    assert_eq!((&jwk["kty"], &jwk["crv"], &jwk["alg"]), (&json!("OKP"), &json!("Ed25519"), &json!("EdDSA")));
    let x: [u8; 32] = URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap().try_into().unwrap();
    assert_eq!(x, sim.fal_public_key());
    let key = VerifyingKey::from_bytes(&x).unwrap();
    key.verify_strict(message.as_bytes(), &signature).expect("the signature verifies");

    let body: Value = serde_json::from_slice(&hook.body).unwrap();
    assert_eq!(
        (&body["request_id"], &body["gateway_request_id"], &body["status"]),
        (&json!(id), &json!(id), &json!("OK"))
    );
    assert_eq!(body["payload"]["images"][0]["width"], 256);
    wait_stats(&sim, |s| s.webhooks_sent == 1).await;
    assert_eq!(sim.stats().webhook_failures, 0);
}

#[tokio::test]
async fn fal_webhooks_report_failures() {
    let sim = sim(provider_sim::Faults { fail_jobs: true, ..quick() }).await;
    let (hook_url, mut hooks) = receiver().await;
    let app = format!("fal-ai/flux/dev?fal_webhook={}", url_encode(&hook_url));
    fal_submit(&sim, &app, json!({"prompt": "x"})).await;
    let body: Value = serde_json::from_slice(&next_hook(&mut hooks).await.body).unwrap();
    assert_eq!(body["status"], "ERROR");
    assert_eq!(body["error"], "Invalid status code: 422");
    assert_eq!(body["payload"]["detail"][0]["type"], "content_policy_violation");
}

#[tokio::test]
async fn replicate_webhooks_verify_with_the_secret() {
    let sim = sim(quick()).await;
    let (hook_url, mut hooks) = receiver().await;
    let created: Value = replicate_post(
        &sim,
        "/v1/models/a/b/predictions",
        json!({"input": {"prompt": "x", "width": 256, "height": 256}, "webhook": hook_url, "webhook_events_filter": ["completed"]}),
    )
    .await
    .json()
    .await
    .unwrap();

    let secret: Value = client()
        .get(format!("{}/v1/webhooks/default/secret", sim.url()))
        .header("authorization", REPLICATE_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(secret["key"], json!(sim.webhook_secret()));
    let key = STANDARD.decode(sim.webhook_secret().strip_prefix("whsec_").unwrap()).unwrap();

    let hook = next_hook(&mut hooks).await;
    let header = |name: &str| hook.headers[name].to_str().unwrap().to_string();
    let (id, timestamp) = (header("webhook-id"), header("webhook-timestamp"));
    assert!(id.starts_with("msg_"));
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(&hook.body);
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    assert_eq!(header("webhook-signature"), expected);

    let body: Value = serde_json::from_slice(&hook.body).unwrap();
    assert_eq!(body["id"], created["id"]);
    assert_eq!(body["status"], "succeeded");
    assert_eq!(body["output"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn replicate_sends_the_final_state_only_to_receivers_that_ask_for_completed() {
    let sim = sim(quick()).await;
    let (hook_url, mut hooks) = receiver().await;
    let create = |events: Value| {
        let body = json!({"input": {"prompt": "x"}, "webhook": hook_url, "webhook_events_filter": events});
        let sim = &sim;
        async move { replicate_post(sim, "/v1/models/a/b/predictions", body).await.json::<Value>().await.unwrap() }
    };
    let unheard = create(json!(["start", "logs"])).await;
    replicate_until_done(unheard["urls"]["get"].as_str().unwrap()).await;
    let heard = create(json!(["start", "completed"])).await;

    let body: Value = serde_json::from_slice(&next_hook(&mut hooks).await.body).unwrap();
    assert_eq!(body["id"], heard["id"]);
    wait_stats(&sim, |s| s.webhooks_sent == 1).await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(hooks.try_recv().is_err(), "no callback for a filter without \"completed\"");
    assert_eq!(sim.stats().webhooks_sent, 1);
}

#[tokio::test]
async fn failed_deliveries_are_counted() {
    let sim = sim(quick()).await;
    // Nothing listens on this port once the listener is gone.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    replicate_post(
        &sim,
        "/v1/models/a/b/predictions",
        json!({"input": {"prompt": "x"}, "webhook": format!("http://{closed}/hook")}),
    )
    .await;
    wait_stats(&sim, |s| s.webhooks_sent == 1).await;
    assert_eq!(sim.stats().webhook_failures, 1);
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

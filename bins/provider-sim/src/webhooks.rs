//! Signed callbacks sent when a job ends: fal's (ED25519 over the request id, user id, timestamp
//! and body hash, with the public key published as JWKS) and Replicate's (Standard Webhooks,
//! HMAC-SHA256 with a `whsec_` secret).

use crate::jobs::{Api, Job};
use crate::state::Shared;
use crate::stats::bump;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ed25519_dalek::{Signer as _, SigningKey};
use hmac::{Hmac, Mac};
use rand::rngs::OsRng;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The user id fal callbacks carry.
pub(crate) const FAL_USER_ID: &str = "sim-user";
/// The key id of the fal signing key in the JWKS.
const FAL_KEY_ID: &str = "sim-1";

/// The keys callbacks are signed with, made when the simulator starts.
pub(crate) struct Signer {
    fal: SigningKey,
    replicate: [u8; 32],
}

impl Signer {
    /// New random keys.
    pub fn generate() -> Signer {
        Signer { fal: SigningKey::generate(&mut OsRng), replicate: rand::random() }
    }

    /// The fal verifying key's bytes.
    pub fn fal_public_key(&self) -> [u8; 32] {
        self.fal.verifying_key().to_bytes()
    }

    /// The fal verifying key as a JSON Web Key Set.
    pub fn jwks(&self) -> Value {
        json!({"keys": [{
            "kty": "OKP",
            "crv": "Ed25519",
            "x": URL_SAFE_NO_PAD.encode(self.fal_public_key()),
            "kid": FAL_KEY_ID,
            "use": "sig",
            "alg": "EdDSA",
        }]})
    }

    /// The Replicate secret, `whsec_` followed by the base64 key.
    pub fn replicate_secret(&self) -> String {
        format!("whsec_{}", STANDARD.encode(self.replicate))
    }

    /// fal's signature headers for callback `body` about `request_id`, sent at `timestamp`.
    pub fn fal_headers(&self, request_id: &str, timestamp: u64, body: &[u8]) -> Vec<(&'static str, String)> {
        let message = format!("{request_id}\n{FAL_USER_ID}\n{timestamp}\n{}", hex::encode(Sha256::digest(body)));
        let signature = self.fal.sign(message.as_bytes());
        vec![
            ("x-fal-webhook-request-id", request_id.to_string()),
            ("x-fal-webhook-user-id", FAL_USER_ID.to_string()),
            ("x-fal-webhook-timestamp", timestamp.to_string()),
            ("x-fal-webhook-signature", hex::encode(signature.to_bytes())),
        ]
    }

    /// Standard Webhooks headers for callback `body`, with message id `id`, sent at `timestamp`.
    pub fn replicate_headers(&self, id: &str, timestamp: u64, body: &[u8]) -> Vec<(&'static str, String)> {
        let signature = match Hmac::<Sha256>::new_from_slice(&self.replicate) {
            Ok(mut mac) => {
                mac.update(format!("{id}.{timestamp}.").as_bytes());
                mac.update(body);
                STANDARD.encode(mac.finalize().into_bytes())
            }
            // HMAC takes keys of any length, so this cannot happen; an unsigned-looking header
            // would make a receiver refuse the callback, which is the safe outcome.
            Err(_) => String::new(),
        };
        vec![
            ("webhook-id", id.to_string()),
            ("webhook-timestamp", timestamp.to_string()),
            ("webhook-signature", format!("v1,{signature}")),
        ]
    }
}

/// Seconds since the Unix epoch.
fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Waits until `job` ends (or the simulator stops); true if it ended.
async fn wait_for_end(shared: &Shared, job: &Job) -> bool {
    // Subscribed before the first look, so a cancel or release in between still wakes us.
    let mut changes = shared.jobs.subscribe();
    loop {
        if job.phase(Instant::now()).is_done() {
            return true;
        }
        let end = job.end();
        let sleep = async move {
            match end {
                Some(end) => tokio::time::sleep_until(end.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = sleep => {}
            changed = changes.changed() => if changed.is_err() { return false },
            () = crate::state::until_stopped(shared.stopped.clone()) => return false,
        }
    }
}

/// Sends `job`'s callback once it ends, counting the delivery and whether it failed.
pub(crate) async fn deliver_when_done(shared: Arc<Shared>, job: Arc<Job>) {
    let Some(url) = job.webhook.clone() else { return };
    if !wait_for_end(&shared, &job).await {
        return;
    }
    let (body, headers) = match &job.api {
        Api::Fal { .. } => {
            let body = crate::fal::webhook_body(&shared, &job).await;
            let body = body.to_string().into_bytes();
            let headers = shared.signer.fal_headers(&job.id, unix_now(), &body);
            (body, headers)
        }
        Api::Replicate { events, .. } => {
            // Replicate sends the final state only to receivers that asked for "completed".
            if events.as_ref().is_some_and(|events| !events.iter().any(|e| e == "completed")) {
                return;
            }
            let body = crate::replicate::prediction(&shared, &job, Instant::now()).to_string().into_bytes();
            let id = format!("msg_{}", crate::jobs::random_hex_id());
            let headers = shared.signer.replicate_headers(&id, unix_now(), &body);
            (body, headers)
        }
    };
    let mut request = shared.http.post(&url).header("content-type", "application/json").body(body);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let delivered = match request.send().await {
        Ok(answer) if answer.status().is_success() => true,
        Ok(answer) => {
            tracing::debug!(url, status = %answer.status(), "webhook refused");
            false
        }
        Err(e) => {
            tracing::debug!(url, error = %e, "webhook failed");
            false
        }
    };
    if !delivered {
        bump(&shared.counters.webhook_failures);
    }
    bump(&shared.counters.webhooks_sent);
}

//! The keys webhook callbacks are signed with, made when the simulator starts, and each
//! protocol's signature headers: fal's (ED25519 over the request id, user id, timestamp and body
//! hash, with the public key published as JWKS) and Replicate's (Standard Webhooks, HMAC-SHA256
//! with a `whsec_` secret).

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ed25519_dalek::{Signer as _, SigningKey};
use hmac::{Hmac, Mac};
use rand::rngs::OsRng;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::time::{SystemTime, UNIX_EPOCH};

/// The user id fal callbacks carry.
const FAL_USER_ID: &str = "sim-user";
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

/// Seconds since the Unix epoch, the timestamp both signature schemes sign.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

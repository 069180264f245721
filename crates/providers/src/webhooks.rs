//! Verifying the providers' callbacks before anything they say is believed: fal signs with
//! ED25519 keys published in its JWKS; Replicate signs with a Standard Webhooks HMAC-SHA256
//! secret. Both carry a timestamp, refused when more than five minutes off (replays).

use crate::transport::Transport;
use crate::{FalSettings, ProviderName, ReplicateSettings};
use base64::Engine as _;
use ed25519_dalek::{Signature, VerifyingKey};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::Mutex;

/// Why a callback is not believed.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// Callbacks of a provider that is not configured.
    #[error("provider {0} is not configured")]
    NotConfigured(ProviderName),
    /// A signing header is missing or unreadable.
    #[error("the callback is not signed: {0}")]
    Unsigned(String),
    /// The signed timestamp is too far from now.
    #[error("the callback's timestamp is more than five minutes off")]
    Stale,
    /// No key verifies the signature.
    #[error("the callback's signature does not verify")]
    BadSignature,
    /// The verification keys could not be obtained.
    #[error("cannot obtain the provider's signing keys: {0}")]
    Keys(String),
    /// Signed, but not a callback we can read.
    #[error("the callback cannot be read: {0}")]
    Body(String),
}

/// Callbacks older or newer than this are refused.
const TOLERANCE_SECS: i64 = 300;
/// fal's keys are fetched again after this, or sooner when a signature fails to verify.
const KEYS_FRESH_FOR: Duration = Duration::from_secs(3600);
/// No more than one early fetch of fal's keys in this time, so forged callbacks cannot make us
/// hammer the JWKS.
const REFETCH_AT_MOST_EVERY: Duration = Duration::from_secs(60);

/// The keys fetched so far.
#[derive(Default)]
pub(crate) struct KeyCache {
    fal: Mutex<Option<(Instant, Vec<VerifyingKey>)>>,
    replicate: Mutex<Option<Vec<u8>>>,
}

fn required(header: &(dyn Fn(&str) -> Option<String> + Sync), name: &str) -> Result<String, WebhookError> {
    header(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| WebhookError::Unsigned(format!("no {name} header")))
}

fn check_fresh(timestamp: &str) -> Result<(), WebhookError> {
    let at: i64 = timestamp.parse().map_err(|_| WebhookError::Unsigned(format!("timestamp {timestamp:?}")))?;
    let now =
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    if (now - at).abs() > TOLERANCE_SECS {
        return Err(WebhookError::Stale);
    }
    Ok(())
}

/// The message fal signs: request id, user id, timestamp and the body's SHA-256 (hex), one per
/// line.
pub(crate) fn fal_message(request_id: &str, user_id: &str, timestamp: &str, body: &[u8]) -> Vec<u8> {
    format!("{request_id}\n{user_id}\n{timestamp}\n{}", hex::encode(Sha256::digest(body))).into_bytes()
}

/// A callback fal sent for another fal user (another account's request, replayed to us) is
/// refused when we know our own user id.
fn check_fal_user(ours: Option<&str>, sent: &str) -> Result<(), WebhookError> {
    match ours {
        Some(ours) if ours != sent => {
            Err(WebhookError::Unsigned(format!("the callback is for fal user {sent:?}, not ours")))
        }
        _ => Ok(()),
    }
}

pub(crate) async fn verify_fal(
    transport: &Transport,
    cache: &KeyCache,
    fal: &FalSettings,
    header: &(dyn Fn(&str) -> Option<String> + Sync),
    body: &[u8],
) -> Result<String, WebhookError> {
    let request_id = required(header, "x-fal-webhook-request-id")?;
    let user_id = required(header, "x-fal-webhook-user-id")?;
    check_fal_user(fal.user_id.as_deref(), &user_id)?;
    let timestamp = required(header, "x-fal-webhook-timestamp")?;
    let signature = required(header, "x-fal-webhook-signature")?;
    check_fresh(&timestamp)?;
    let signature = hex::decode(&signature)
        .ok()
        .and_then(|bytes| <[u8; 64]>::try_from(bytes.as_slice()).ok())
        .map(|bytes| Signature::from_bytes(&bytes))
        .ok_or_else(|| WebhookError::Unsigned("the signature is not 64 bytes of hex".into()))?;
    let message = fal_message(&request_id, &user_id, &timestamp, body);
    let mut keys = cache.fal.lock().await;
    let stale = keys.as_ref().is_none_or(|(at, _)| at.elapsed() > KEYS_FRESH_FOR);
    if stale {
        *keys = Some((Instant::now(), fal_keys(transport, &fal.jwks_url).await?));
    }
    let verifies = |keys: &[VerifyingKey]| keys.iter().any(|key| key.verify_strict(&message, &signature).is_ok());
    if keys.as_ref().is_some_and(|(_, k)| verifies(k)) {
        return Ok(request_id);
    }
    // fal may have rotated its keys since the last fetch.
    if keys.as_ref().is_some_and(|(at, _)| at.elapsed() > REFETCH_AT_MOST_EVERY) {
        *keys = Some((Instant::now(), fal_keys(transport, &fal.jwks_url).await?));
        if keys.as_ref().is_some_and(|(_, k)| verifies(k)) {
            return Ok(request_id);
        }
    }
    Err(WebhookError::BadSignature)
}

/// The ED25519 keys of a JWKS (`{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": ...}]}`).
async fn fal_keys(transport: &Transport, url: &str) -> Result<Vec<VerifyingKey>, WebhookError> {
    let jwks = transport.get_json(url).await.map_err(|e| WebhookError::Keys(format!("{url}: {e}")))?;
    let keys: Vec<VerifyingKey> = jwks
        .get("keys")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter(|k| {
            k.get("kty").and_then(|v| v.as_str()) == Some("OKP")
                && k.get("crv").and_then(|v| v.as_str()) == Some("Ed25519")
        })
        .filter_map(|k| {
            let x = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(k.get("x")?.as_str()?.trim_end_matches('='))
                .ok()?;
            VerifyingKey::from_bytes(&<[u8; 32]>::try_from(x.as_slice()).ok()?).ok()
        })
        .collect();
    if keys.is_empty() {
        return Err(WebhookError::Keys(format!("{url} lists no Ed25519 key")));
    }
    Ok(keys)
}

/// The Standard Webhooks signature of a message: base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}`.
pub(crate) fn standard_signature(secret: &[u8], id: &str, timestamp: &str, body: &[u8]) -> Vec<u8> {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(secret).unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize().into_bytes().to_vec()
}

/// The key bytes of a `whsec_...` secret.
pub(crate) fn secret_bytes(secret: &str) -> Result<Vec<u8>, WebhookError> {
    let encoded = secret.trim().strip_prefix("whsec_").unwrap_or(secret.trim());
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| WebhookError::Keys("the webhook secret is not whsec_ followed by base64".into()))
}

pub(crate) async fn verify_replicate(
    transport: &Transport,
    cache: &KeyCache,
    replicate: &ReplicateSettings,
    header: &(dyn Fn(&str) -> Option<String> + Sync),
    body: &[u8],
) -> Result<(), WebhookError> {
    let id = required(header, "webhook-id")?;
    let timestamp = required(header, "webhook-timestamp")?;
    let signatures = required(header, "webhook-signature")?;
    check_fresh(&timestamp)?;
    let secret = {
        let mut cached = cache.replicate.lock().await;
        match cached.as_ref() {
            Some(secret) => secret.clone(),
            None => {
                let secret = match &replicate.webhook_secret {
                    Some(secret) => secret_bytes(secret)?,
                    None => replicate_secret(transport, replicate).await?,
                };
                *cached = Some(secret.clone());
                secret
            }
        }
    };
    let expected = standard_signature(&secret, &id, &timestamp, body);
    let matches = signatures.split_whitespace().filter_map(|s| s.strip_prefix("v1,")).any(|given| {
        base64::engine::general_purpose::STANDARD
            .decode(given)
            .is_ok_and(|given| subtle::ConstantTimeEq::ct_eq(given.as_slice(), expected.as_slice()).into())
    });
    if matches {
        Ok(())
    } else {
        Err(WebhookError::BadSignature)
    }
}

/// The account's webhook secret, read from `GET /v1/webhooks/default/secret`.
async fn replicate_secret(transport: &Transport, replicate: &ReplicateSettings) -> Result<Vec<u8>, WebhookError> {
    let url = format!("{}/v1/webhooks/default/secret", replicate.api_url.trim_end_matches('/'));
    let auth = crate::replicate::auth(replicate);
    let answer = transport
        .call(ProviderName::Replicate, reqwest::Method::GET, &url, &auth, None, false)
        .await
        .map_err(|e| WebhookError::Keys(e.to_string()))?;
    let key = answer
        .get("key")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| WebhookError::Keys("the secret answer has no `key`".into()))?;
    secret_bytes(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callback_for_another_fal_user_is_refused() {
        assert!(check_fal_user(Some("us"), "us").is_ok());
        assert!(check_fal_user(None, "anyone").is_ok());
        let refused = check_fal_user(Some("us"), "them").unwrap_err().to_string();
        assert!(refused.contains("\"them\", not ours"), "{refused}");
    }
    use ed25519_dalek::{Signer, SigningKey};

    #[test]
    fn fal_signatures_cover_every_signed_part() {
        let key = SigningKey::generate(&mut rand::rngs::OsRng);
        let body = br#"{"request_id":"r1","status":"OK"}"#;
        let signature = key.sign(&fal_message("r1", "u", "1700000000", body));
        let verify = |message: Vec<u8>| key.verifying_key().verify_strict(&message, &signature).is_ok();
        assert!(verify(fal_message("r1", "u", "1700000000", body)));
        assert!(!verify(fal_message("r2", "u", "1700000000", body)));
        assert!(!verify(fal_message("r1", "u", "1700000001", body)));
        assert!(!verify(fal_message("r1", "u", "1700000000", b"{}")));
    }

    #[test]
    fn standard_webhook_signatures_match_the_reference() {
        // The Standard Webhooks specification's test vector.
        let secret = secret_bytes("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        let signature = standard_signature(&secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", body);
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(signature),
            "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn stale_timestamps_are_refused() {
        assert!(matches!(check_fresh("1000"), Err(WebhookError::Stale)));
        assert!(matches!(check_fresh("soon"), Err(WebhookError::Unsigned(_))));
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        assert!(check_fresh(&now.to_string()).is_ok());
    }
}

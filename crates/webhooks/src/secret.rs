//! Signing secrets and signatures: HMAC-SHA256 over `{id}.{timestamp}.{body}`, keyed with the
//! secret's bytes, base64-encoded and prefixed `v1,`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;

/// The prefix of a secret as it is shown and stored.
const PREFIX: &str = "whsec_";
/// Bytes of a new secret (the convention asks for 24 to 64).
const SECRET_BYTES: usize = 32;

/// A webhook signing secret: random bytes, shown as `whsec_` followed by their base64.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret(Vec<u8>);

/// A stored secret that does not read as `whsec_<base64>`.
#[derive(Debug, thiserror::Error)]
#[error("not a webhook signing secret (whsec_ followed by base64)")]
pub struct InvalidSecret;

impl SigningSecret {
    /// A new random secret.
    pub fn generate() -> SigningSecret {
        let bytes: [u8; SECRET_BYTES] = rand::random();
        SigningSecret(bytes.to_vec())
    }

    /// Reads `whsec_<base64>`.
    pub fn parse(text: &str) -> Result<SigningSecret, InvalidSecret> {
        let encoded = text.trim().strip_prefix(PREFIX).ok_or(InvalidSecret)?;
        let bytes = STANDARD.decode(encoded).map_err(|_| InvalidSecret)?;
        if bytes.is_empty() {
            return Err(InvalidSecret);
        }
        Ok(SigningSecret(bytes))
    }

    /// The signature of message `id` sent at `timestamp` (Unix seconds) with `body`: `v1,<base64>`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

impl fmt::Display for SigningSecret {
    /// The secret as it is handed to its owner and stored: `whsec_<base64>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", STANDARD.encode(&self.0))
    }
}

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(..)")
    }
}

/// The `webhook-signature` header of a message: one signature per secret, separated by spaces
/// (while a rotated-out secret still signs, receivers holding either one verify).
pub fn signature_header(secrets: &[SigningSecret], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets.iter().map(|secret| secret.sign(id, timestamp, body)).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks reference libraries' tests.
    #[test]
    fn signs_like_the_reference_implementation() {
        let secret = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn secrets_round_trip_and_refuse_other_text() {
        let secret = SigningSecret::generate();
        let shown = secret.to_string();
        assert!(shown.starts_with("whsec_"));
        assert_eq!(SigningSecret::parse(&shown).unwrap(), secret);
        assert_ne!(SigningSecret::generate(), secret);
        for bad in ["", "whsec_", "whsec_***", "sk_abc"] {
            assert!(SigningSecret::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(format!("{secret:?}"), "SigningSecret(..)", "never in logs");
    }

    #[test]
    fn every_secret_signs_the_header() {
        let (a, b) = (SigningSecret::generate(), SigningSecret::generate());
        let header = signature_header(&[a.clone(), b.clone()], "msg_1", 5, b"{}");
        assert_eq!(header, format!("{} {}", a.sign("msg_1", 5, b"{}"), b.sign("msg_1", 5, b"{}")));
    }
}

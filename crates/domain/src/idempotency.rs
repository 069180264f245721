//! Idempotency keys: a client's name for one spending request, so that a retry after a timeout
//! or a dropped connection gets the job it already created instead of a second one (and a second
//! charge).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// How long a key is remembered, in milliseconds: a retry within it gets the original job; after
/// it, the key names a new request.
pub const WINDOW_MILLIS: i64 = 24 * 60 * 60 * 1000;

/// Longest key accepted, in characters (Stripe's limit; UUIDs and ULIDs fit with room to spare).
pub const MAX_CHARS: usize = 255;

/// A valid idempotency key: 1 to [`MAX_CHARS`] characters, not all spaces, with no ASCII control
/// characters. Keys are opaque: any such text a client can send in a header (or a tool argument)
/// names a request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

/// Why a presented idempotency key is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Idempotency-Key must be 1 to {MAX_CHARS} characters without control characters (a UUID is a good choice)")]
pub struct InvalidIdempotencyKey;

impl IdempotencyKey {
    /// Checks a key as a client sent it.
    pub fn parse(raw: &str) -> Result<IdempotencyKey, InvalidIdempotencyKey> {
        let length = raw.chars().count();
        let valid = (1..=MAX_CHARS).contains(&length)
            && !raw.chars().all(|c| c == ' ')
            // Line breaks and other C0 controls would forge log lines; C1 controls (ISO-8859-1
            // bytes 0x80 to 0x9F) are harmless text.
            && !raw.chars().any(|c| (c < ' ' && c != '\t') || c == '\u{7f}');
        if valid {
            Ok(IdempotencyKey(raw.to_string()))
        } else {
            Err(InvalidIdempotencyKey)
        }
    }

    /// A key from an HTTP header's bytes, read as ISO-8859-1 as HTTP reads field values.
    pub fn from_header_bytes(bytes: &[u8]) -> Result<IdempotencyKey, InvalidIdempotencyKey> {
        IdempotencyKey::parse(&bytes.iter().map(|&b| char::from(b)).collect::<String>())
    }

    /// The key as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What identifies a request under an idempotency key: SHA-256 (hex) of the endpoint and the body
/// in a canonical JSON form (object keys sorted), so a retry that orders its fields differently is
/// still the same request.
pub fn fingerprint(endpoint: &str, body: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(body, &mut canonical);
    let mut hash = Sha256::new();
    hash.update(endpoint.as_bytes());
    hash.update([0]);
    hash.update(canonical.as_bytes());
    hex::encode(hash.finalize())
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (name, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_bounded_text_without_control_characters() {
        for good in ["4f1c2a9e-7b1d-4c55-9a0e-2d8f6b1e3c77", "order 42 / try", "é", &"k".repeat(MAX_CHARS)] {
            assert!(IdempotencyKey::parse(good).is_ok(), "{good:?}");
        }
        for bad in ["", "   ", "line\nbreak", "nul\0", "del\u{7f}", &"k".repeat(MAX_CHARS + 1)] {
            assert_eq!(IdempotencyKey::parse(bad), Err(InvalidIdempotencyKey), "{bad:?}");
        }
        // Header bytes are ISO-8859-1: 0xE9 is é.
        assert_eq!(IdempotencyKey::from_header_bytes(b"caf\xe9").unwrap().as_str(), "café");
    }

    #[test]
    fn the_fingerprint_ignores_field_order_but_not_values_or_endpoints() {
        let a = json!({"model": "m", "params": {"w": 1, "h": 2}, "prompt": "p"});
        let b = json!({"prompt": "p", "params": {"h": 2, "w": 1}, "model": "m"});
        assert_eq!(fingerprint("generate", &a), fingerprint("generate", &b));
        assert_ne!(fingerprint("generate", &a), fingerprint("reel", &a));
        let c = json!({"model": "m", "params": {"w": 1, "h": 3}, "prompt": "p"});
        assert_ne!(fingerprint("generate", &a), fingerprint("generate", &c));
        // Arrays keep their order: photo 1 then 2 is not photo 2 then 1.
        assert_ne!(fingerprint("e", &json!([1, 2])), fingerprint("e", &json!([2, 1])));
    }
}

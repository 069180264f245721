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

/// A valid idempotency key: 1 to [`MAX_CHARS`] visible ASCII characters or spaces, not all spaces
/// (the pattern [`PATTERN`]). Keys are opaque: any such text names a request. UUIDs and ULIDs are
/// the usual choice; the same rule holds in a header and in a tool argument.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

/// The rule of [`IdempotencyKey`] as a JSON Schema pattern (ECMA-262), for the documents that
/// describe it.
pub const PATTERN: &str = "^[ -~]*[!-~][ -~]*$";

/// Why a presented idempotency key is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Idempotency-Key must be 1 to {MAX_CHARS} visible ASCII characters or spaces, not all spaces (a UUID is a good choice)")]
pub struct InvalidIdempotencyKey;

impl IdempotencyKey {
    /// Checks a key as a client sent it.
    pub fn parse(raw: &str) -> Result<IdempotencyKey, InvalidIdempotencyKey> {
        // Visible ASCII only: line breaks and other controls would forge log lines, and other
        // text reads differently in a header (ISO-8859-1) than in JSON (UTF-8).
        let valid = (1..=MAX_CHARS).contains(&raw.len())
            && raw.bytes().all(|b| (b' '..=b'~').contains(&b))
            && raw.bytes().any(|b| b != b' ');
        if valid {
            Ok(IdempotencyKey(raw.to_string()))
        } else {
            Err(InvalidIdempotencyKey)
        }
    }

    /// Checks a key as its header's bytes arrived.
    pub fn from_header_bytes(bytes: &[u8]) -> Result<IdempotencyKey, InvalidIdempotencyKey> {
        std::str::from_utf8(bytes).map_err(|_| InvalidIdempotencyKey).and_then(IdempotencyKey::parse)
    }

    /// The key as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for IdempotencyKey {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(MAX_CHARS))
            .pattern(Some(PATTERN))
            .description(Some(
                "A unique value per request, such as a UUID: 1 to 255 visible ASCII characters or spaces. \
                 The same key and request within 24 hours returns the original task, with nothing held or \
                 queued again (safe to retry after a timeout); the same key with another request is refused.",
            ))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for IdempotencyKey {}

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
    fn keys_are_bounded_visible_ascii_matching_their_pattern() {
        let pattern = |key: &str| {
            // PATTERN, spelled out: visible ASCII or spaces, at least one visible.
            key.bytes().all(|b| (b' '..=b'~').contains(&b)) && key.bytes().any(|b| b != b' ')
        };
        for good in ["4f1c2a9e-7b1d-4c55-9a0e-2d8f6b1e3c77", "order 42 / try", " x ", &"k".repeat(MAX_CHARS)] {
            assert!(IdempotencyKey::parse(good).is_ok() && pattern(good), "{good:?}");
        }
        for bad in ["", "   ", "line\nbreak", "tab\t", "nul\0", "del\u{7f}", "é", &"k".repeat(MAX_CHARS + 1)] {
            assert_eq!(IdempotencyKey::parse(bad), Err(InvalidIdempotencyKey), "{bad:?}");
        }
        assert_eq!(PATTERN, "^[ -~]*[!-~][ -~]*$");
        // Header bytes outside ASCII are refused, not reinterpreted.
        assert!(IdempotencyKey::from_header_bytes(b"caf\xe9").is_err());
        assert_eq!(IdempotencyKey::from_header_bytes(b"retry-7").unwrap().as_str(), "retry-7");
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

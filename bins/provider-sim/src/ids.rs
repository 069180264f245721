//! Random identifiers: job ids, media URL tokens and webhook message ids.

/// A random id of 32 lowercase hex digits.
pub(crate) fn random_hex_id() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

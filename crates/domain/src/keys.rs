//! API-key secrets: their format and the hash that is stored instead of them.

use sha2::{Digest, Sha256};

/// Every secret starts with this, so leaked keys are recognisable by secret scanners.
pub const SECRET_PREFIX: &str = "mgk_";

/// Builds a secret from 32 bytes of operating-system randomness.
pub fn secret_from_random(random: [u8; 32]) -> String {
    format!("{SECRET_PREFIX}{}", hex::encode(random))
}

/// Characters of a secret shown in listings: the prefix and 8 hex digits (32 bits), enough to tell
/// keys apart and useless for guessing the rest.
pub const DISPLAY_PREFIX_CHARS: usize = SECRET_PREFIX.len() + 8;

/// The part of a secret that may be shown again after creation.
pub fn display_prefix(secret: &str) -> String {
    secret.chars().take(DISPLAY_PREFIX_CHARS).collect()
}

/// The stored form of a secret: SHA-256, hex encoded.
///
/// Keys are looked up by this hash, so a comparison never runs over the secret itself and its
/// timing reveals nothing about stored keys. A fast hash is right here: the secret carries 256 bits
/// of entropy, so there is nothing to brute-force.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Whether a presented token has the shape of one of our secrets (checked before any lookup).
pub fn looks_like_secret(token: &str) -> bool {
    token
        .strip_prefix(SECRET_PREFIX)
        .is_some_and(|rest| rest.len() == 64 && rest.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_have_shape_and_distinct_hashes() {
        let a = secret_from_random([7; 32]);
        let b = secret_from_random([8; 32]);
        assert!(looks_like_secret(&a));
        assert!(!looks_like_secret("mgk_short"));
        assert!(!looks_like_secret("Bearer x"));
        assert_ne!(hash_secret(&a), hash_secret(&b));
        assert_eq!(hash_secret(&a).len(), 64);
        assert_eq!(display_prefix(&a), "mgk_07070707");
    }
}

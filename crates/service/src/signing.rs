//! Signed, expiring download URLs for outputs, so `output[].url` works without the bearer header
//! and cannot be guessed.

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Signs and checks `(path, expiry)` pairs with a deployment secret.
#[derive(Clone)]
pub struct UrlSigner {
    secret: Vec<u8>,
}

impl UrlSigner {
    /// A signer over `secret` (at least 32 bytes of randomness in production).
    pub fn new(secret: &[u8]) -> UrlSigner {
        UrlSigner { secret: secret.to_vec() }
    }

    fn mac(&self, path: &str, expires: i64) -> HmacSha256 {
        // HMAC takes keys of any length, so this cannot fail.
        let mut mac = HmacSha256::new_from_slice(&self.secret).unwrap_or_else(|_| unreachable!());
        mac.update(path.as_bytes());
        mac.update(b"\n");
        mac.update(expires.to_string().as_bytes());
        mac
    }

    /// The signature of `path` valid until `expires` (Unix seconds), hex encoded.
    pub fn sign(&self, path: &str, expires: i64) -> String {
        hex::encode(self.mac(path, expires).finalize().into_bytes())
    }

    /// Whether `signature` is valid for `path` and `expires` has not passed at `now` (Unix
    /// seconds). The comparison runs in constant time.
    pub fn verify(&self, path: &str, expires: i64, signature: &str, now: i64) -> bool {
        let Ok(bytes) = hex::decode(signature) else { return false };
        expires >= now && self.mac(path, expires).verify_slice(&bytes).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_bind_path_and_expiry() {
        let signer = UrlSigner::new(b"secret-secret-secret-secret-0000");
        let sig = signer.sign("tasks/t/0.png", 100);
        assert!(signer.verify("tasks/t/0.png", 100, &sig, 99));
        assert!(!signer.verify("tasks/t/0.png", 100, &sig, 101), "expired");
        assert!(!signer.verify("tasks/t/1.png", 100, &sig, 99), "other path");
        assert!(!signer.verify("tasks/t/0.png", 101, &sig, 99), "other expiry");
        assert!(!signer.verify("tasks/t/0.png", 100, "zz", 99));
        assert!(!UrlSigner::new(b"other").verify("tasks/t/0.png", 100, &sig, 99));
    }
}

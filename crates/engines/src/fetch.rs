//! Fetching a job's input media from the URLs the client gave: `data:` URIs are decoded in place;
//! http(s) URLs are downloaded with time and size limits, refusing private, loopback, link-local
//! and metadata addresses after DNS resolution and again on every redirect, so a job cannot make
//! the service reach into its own network.

use base64::Engine as _;
use futures::StreamExt;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Why an input could not be had; always the client's to fix.
#[derive(Debug, thiserror::Error)]
#[error("{url_label}: {reason}")]
pub struct FetchError {
    /// Which input (such as `image_url`).
    pub url_label: String,
    /// What went wrong.
    pub reason: String,
}

/// Limits for input downloads.
#[derive(Clone, Debug)]
pub struct FetchPolicy {
    /// Largest accepted input, bytes.
    pub max_bytes: usize,
    /// Whole-request time limit.
    pub timeout: Duration,
    /// Allow private and loopback addresses (for tests and closed networks only).
    pub allow_private: bool,
    /// URLs under this prefix are this service's own outputs and may be fetched even when the
    /// service's address is private (for example `http://127.0.0.1:8080/files/`).
    pub trusted_prefix: Option<String>,
}

impl Default for FetchPolicy {
    fn default() -> Self {
        FetchPolicy {
            max_bytes: 64 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            allow_private: false,
            trusted_prefix: None,
        }
    }
}

/// Downloads inputs under a [`FetchPolicy`].
#[derive(Clone)]
pub struct InputFetcher {
    public_only: reqwest::Client,
    any_address: reqwest::Client,
    policy: FetchPolicy,
}

/// Whether an address is one a job must never make us contact.
pub fn is_forbidden_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1])) // carrier-grade NAT
                || (o[0] == 198 && (o[1] == 18 || o[1] == 19)) // benchmarking
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_forbidden_address(IpAddr::V4(v4));
            }
            let s = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link local
        }
    }
}

/// A resolver that drops forbidden addresses, so a public name pointing inside fails.
struct PublicOnlyResolver;

impl Resolve for PublicOnlyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|addr| !is_forbidden_address(addr.ip()))
                .collect();
            if addrs.is_empty() {
                return Err(format!("{host} resolves to no public address").into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

fn host_is_forbidden_literal(url: &reqwest::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => is_forbidden_address(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => is_forbidden_address(IpAddr::V6(ip)),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost") || d.ends_with(".localhost"),
        None => true,
    }
}

fn safe_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        // IP literals bypass the resolver, so redirects to them are checked here.
        if attempt.previous().len() >= 5 {
            attempt.error("too many redirects")
        } else if host_is_forbidden_literal(attempt.url()) {
            attempt.error("redirect to a private address")
        } else {
            attempt.follow()
        }
    })
}

impl InputFetcher {
    /// A fetcher enforcing `policy`.
    pub fn new(policy: FetchPolicy) -> InputFetcher {
        let build = |public_only: bool| {
            let mut builder = reqwest::Client::builder()
                .timeout(policy.timeout)
                .connect_timeout(Duration::from_secs(10))
                .user_agent("media-gateway-fetcher/1.0");
            builder = if public_only {
                builder.dns_resolver(Arc::new(PublicOnlyResolver)).redirect(safe_redirects())
            } else {
                builder.redirect(reqwest::redirect::Policy::limited(5))
            };
            builder.build().unwrap_or_default()
        };
        InputFetcher { public_only: build(true), any_address: build(false), policy }
    }

    /// The bytes behind `url` (an http(s) URL or a base64 `data:` URI); `label` names the field
    /// in errors.
    pub async fn fetch(&self, label: &str, url: &str) -> Result<Vec<u8>, FetchError> {
        let fail = |reason: String| FetchError { url_label: label.to_string(), reason };
        if let Some(rest) = url.strip_prefix("data:") {
            let (_, data) = rest.split_once(',').ok_or_else(|| fail("malformed data: URI".into()))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|e| fail(format!("data: URI is not valid base64: {e}")))?;
            return Ok(bytes);
        }
        let parsed = reqwest::Url::parse(url).map_err(|e| fail(format!("not a valid URL: {e}")))?;
        let trusted = self.policy.trusted_prefix.as_deref().is_some_and(|p| url.starts_with(p));
        let client = if trusted || self.policy.allow_private {
            &self.any_address
        } else {
            if host_is_forbidden_literal(&parsed) {
                return Err(fail("refusing to fetch from a private or loopback address".into()));
            }
            &self.public_only
        };
        let response = client.get(parsed).send().await.map_err(|e| fail(format!("download failed: {e}")))?;
        if !response.status().is_success() {
            return Err(fail(format!("download answered HTTP {}", response.status().as_u16())));
        }
        if response.content_length().is_some_and(|n| n > self.policy.max_bytes as u64) {
            return Err(fail(format!("larger than the {} byte input limit", self.policy.max_bytes)));
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| fail(format!("download failed: {e}")))?;
            if body.len() + chunk.len() > self.policy.max_bytes {
                return Err(fail(format!("larger than the {} byte input limit", self.policy.max_bytes)));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "169.254.169.254",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "100.64.0.1",
            "0.0.0.0",
        ] {
            assert!(is_forbidden_address(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(!is_forbidden_address(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn private_urls_are_refused_and_data_uris_decoded() {
        let fetcher = InputFetcher::new(FetchPolicy::default());
        let err = fetcher.fetch("image_url", "http://127.0.0.1:9/x.png").await.unwrap_err();
        assert!(err.to_string().contains("private"), "{err}");
        let err = fetcher.fetch("image_url", "http://localhost:9/x.png").await.unwrap_err();
        assert!(err.to_string().contains("private"), "{err}");
        assert_eq!(fetcher.fetch("image_url", "data:text/plain;base64,aGk=").await.unwrap(), b"hi");
    }
}

#[cfg(test)]
mod limit_tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A loopback server answering every request with `body` after `delay`.
    async fn serve(body: Vec<u8>, delay: Duration) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let body = body.clone();
                tokio::spawn(async move {
                    let mut request = [0u8; 1024];
                    let _ = socket.read(&mut request).await;
                    tokio::time::sleep(delay).await;
                    let head =
                        format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len());
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(&body).await;
                });
            }
        });
        format!("http://{addr}/input.png")
    }

    fn policy(max_bytes: usize, timeout: Duration) -> FetchPolicy {
        FetchPolicy { max_bytes, timeout, allow_private: true, trusted_prefix: None }
    }

    #[tokio::test]
    async fn size_and_time_limits_hold() {
        let url = serve(vec![7u8; 4096], Duration::ZERO).await;
        assert_eq!(
            InputFetcher::new(policy(8192, Duration::from_secs(5))).fetch("image_url", &url).await.unwrap().len(),
            4096
        );
        let err = InputFetcher::new(policy(1000, Duration::from_secs(5))).fetch("image_url", &url).await.unwrap_err();
        assert!(err.to_string().starts_with("image_url: larger than"), "{err}");
        let slow = serve(vec![1u8; 10], Duration::from_secs(5)).await;
        let err =
            InputFetcher::new(policy(8192, Duration::from_millis(200))).fetch("video_url", &slow).await.unwrap_err();
        assert!(err.to_string().starts_with("video_url: download failed"), "{err}");
    }

    #[tokio::test]
    async fn own_outputs_are_trusted_even_on_loopback() {
        let url = serve(b"png".to_vec(), Duration::ZERO).await;
        let prefix = url.trim_end_matches("input.png").to_string();
        let fetcher = InputFetcher::new(FetchPolicy { trusted_prefix: Some(prefix), ..FetchPolicy::default() });
        assert_eq!(fetcher.fetch("image_url", &url).await.unwrap(), b"png");
    }
}

//! Fetching a job's input media from the URLs the client gave: `data:` URIs are decoded in place;
//! http(s) URLs are downloaded with time and size limits, refusing private, loopback, link-local
//! and metadata addresses after DNS resolution and again on every redirect, so a job cannot make
//! the service reach into its own network.

use base64::Engine as _;
use futures::StreamExt;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// Why an input (or a provider's file) could not be had.
#[derive(Debug, thiserror::Error)]
#[error("{url_label}: {reason}")]
pub struct FetchError {
    /// Which input (such as `image_url`).
    pub url_label: String,
    /// What went wrong.
    pub reason: String,
    /// Whether a later try may succeed: the host answered 5xx, 408 or 429, timed out, could not
    /// be connected to, or dropped the body midway.
    pub transient: bool,
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

/// Longest wait for a connection to an input's host.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for the next bytes of an answer (its headers, then each part of its body): a
/// server that stalls is given up after this, whatever the whole-download limit.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Downloads inputs under a [`FetchPolicy`].
#[derive(Clone)]
pub struct InputFetcher {
    /// The HTTP clients; none in a fetcher that reads prefetched inputs only (building them
    /// loads the system's trust store, which a job's process has no use for).
    clients: Option<Clients>,
    /// Where this service's own outputs live, parsed from the policy's trusted prefix.
    own_origin: Option<(url::Origin, String)>,
    forbidden: fn(IpAddr) -> bool,
    policy: FetchPolicy,
    /// Where inputs moved out of the job at submit are kept (see [`STORED_INPUT_PREFIX`]).
    stored_inputs: Option<crate::OutputStore>,
    /// When set, the job's inputs were fetched before it started: URLs are read from these files
    /// and nothing is downloaded.
    prefetched: Option<Arc<PrefetchedInputs>>,
}

/// An [`InputFetcher`]'s HTTP clients, one per kind of address it may fetch from.
#[derive(Clone)]
struct Clients {
    /// Public addresses only: filtered resolver, filtered redirects.
    public_only: reqwest::Client,
    /// The service's own outputs: any address (the service may listen on loopback), no redirects.
    own_outputs: reqwest::Client,
    /// Any address, for operators who allow private inputs.
    any_address: reqwest::Client,
}

/// A job's inputs fetched before it started: the file holding each URL's bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PrefetchedInputs {
    /// The file of each fetched URL.
    pub files: std::collections::HashMap<String, std::path::PathBuf>,
}

/// Whether `url` is fetched from somewhere (an http(s) URL or a stored input), rather than
/// carrying its bytes (a `data:` URI).
pub fn needs_fetching(url: &str) -> bool {
    !url.starts_with("data:")
}

/// How a job refers to an input the service moved to its object store at submit: the prefix and
/// the object's path. Clients cannot send it: only http(s) URLs and `data:` URIs pass validation.
pub const STORED_INPUT_PREFIX: &str = "stored-input:";

/// Why an [`InputFetcher`] could not be built; the service must not start without one.
#[derive(Debug, thiserror::Error)]
pub enum FetcherSetupError {
    /// The HTTP client (TLS, resolver) could not be built.
    #[error("input fetcher: {0}")]
    Client(String),
    /// The trusted prefix is not an absolute http(s) URL.
    #[error("input fetcher: the trusted output prefix {0:?} is not an http(s) URL")]
    TrustedPrefix(String),
}

/// Whether an address is one a job must never make us contact: anything that is not global
/// unicast (private, loopback, link-local, shared, reserved, documentation, benchmarking,
/// multicast), and IPv6 forms that embed or tunnel to IPv4 (mapped and compatible addresses,
/// NAT64, 6to4, Teredo), which could reach a private IPv4 address through a gateway.
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
                || (o[0] == 100 && (64..128).contains(&o[1])) // shared address space (CGN)
                || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
                || (o[0] == 192 && o[1] == 88 && o[2] == 99) // 6to4 relay anycast
                || (o[0] == 198 && (o[1] == 18 || o[1] == 19)) // benchmarking
                || o[0] >= 240 // reserved
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_forbidden_address(IpAddr::V4(v4));
            }
            let s = v6.segments();
            let global_unicast = (s[0] & 0xe000) == 0x2000;
            !global_unicast
                || (s[0] == 0x2001 && s[1] < 0x0200) // 2001::/23 IETF special purpose, with Teredo
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || s[0] == 0x2002 // 6to4
                || (s[0] & 0xfff0) == 0x3ff0 // documentation 3fff::/20
        }
    }
}

/// Name resolution as the fetcher sees it: system DNS in production, a fixed table in tests.
pub type Lookup =
    Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> + Send + Sync>;

/// The network the fetcher talks to: how names resolve and which addresses are off limits.
/// [`InputFetcher::new`] uses the system resolver and [`is_forbidden_address`]; tests inject
/// their own to exercise the DNS and redirect paths.
#[derive(Clone)]
pub struct Network {
    /// Resolves a host name.
    pub lookup: Lookup,
    /// Whether an address must not be contacted.
    pub forbidden: fn(IpAddr) -> bool,
}

impl Default for Network {
    fn default() -> Self {
        let lookup: Lookup = Arc::new(|host: String| {
            Box::pin(async move { Ok(tokio::net::lookup_host((host.as_str(), 0)).await?.map(|a| a.ip()).collect()) })
        });
        Network { lookup, forbidden: is_forbidden_address }
    }
}

/// A name that does not resolve, or whose every address is forbidden: a refusal, never worth
/// another try. Both read the same, so a client cannot tell an internal name from an unknown one.
#[derive(Debug, thiserror::Error)]
#[error("{0} resolves to no public address")]
struct NoPublicAddress(String);

/// Whether `error` comes from [`NoPublicAddress`].
fn refused_by_resolver(error: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if cause.is::<NoPublicAddress>() {
            return true;
        }
        source = cause.source();
    }
    false
}

/// A resolver that drops forbidden addresses, so a public name pointing inside fails.
struct PublicOnlyResolver(Network);

impl Resolve for PublicOnlyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let network = self.0.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let resolved = (network.lookup)(host.clone()).await.unwrap_or_default();
            let addrs: Vec<SocketAddr> =
                resolved.into_iter().filter(|ip| !(network.forbidden)(*ip)).map(|ip| SocketAddr::new(ip, 0)).collect();
            if addrs.is_empty() {
                return Err(Box::new(NoPublicAddress(host)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// A resolver for HTTP clients that must reach public addresses only: a name resolving to no
/// public address fails to connect. (Address literals bypass resolvers: check them first.)
pub fn public_only_resolver(network: Network) -> Arc<impl Resolve + 'static> {
    Arc::new(PublicOnlyResolver(network))
}

/// Checks that `url` points at a public address on `network`, resolving its name: the check a
/// URL the service will call later (a webhook receiver) gets when a client hands it over, so a
/// private target is refused at once. The call itself goes through [`public_only_resolver`]
/// again, in case the name changed meanwhile.
pub async fn check_public_target(url: &reqwest::Url, network: &Network) -> Result<(), String> {
    if host_is_forbidden_literal(url, network.forbidden) {
        return Err("points at a private, loopback or reserved address".into());
    }
    let Some(url::Host::Domain(host)) = url.host() else { return Ok(()) };
    let resolved = (network.lookup)(host.to_string()).await.unwrap_or_default();
    if resolved.is_empty() || resolved.iter().all(|ip| (network.forbidden)(*ip)) {
        return Err(format!("{host} resolves to no public address"));
    }
    Ok(())
}

fn host_is_forbidden_literal(url: &reqwest::Url, forbidden: fn(IpAddr) -> bool) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => forbidden(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => forbidden(IpAddr::V6(ip)),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost") || d.ends_with(".localhost"),
        None => true,
    }
}

fn safe_redirects(forbidden: fn(IpAddr) -> bool) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        // IP literals bypass the resolver, so redirects to them are checked here.
        if attempt.previous().len() >= 5 {
            attempt.error("too many redirects")
        } else if !matches!(attempt.url().scheme(), "http" | "https") {
            attempt.error("redirect to a scheme other than http(s)")
        } else if host_is_forbidden_literal(attempt.url(), forbidden) {
            attempt.error("redirect to a private address")
        } else {
            attempt.follow()
        }
    })
}

impl InputFetcher {
    /// A fetcher enforcing `policy` on the real network. Fails (rather than falling back to an
    /// unfiltered client) when the HTTP client cannot be built.
    pub fn new(policy: FetchPolicy) -> Result<InputFetcher, FetcherSetupError> {
        InputFetcher::with_network(policy, Network::default())
    }

    /// This fetcher, reading inputs moved to `store` at submit (`stored-input:` references).
    pub fn with_stored_inputs(mut self, store: crate::OutputStore) -> InputFetcher {
        self.stored_inputs = Some(store);
        self
    }

    /// This fetcher, reading every URL from `inputs` and downloading nothing: for work whose
    /// inputs were fetched before it started (a job's process, which has no network).
    pub fn with_prefetched(mut self, inputs: PrefetchedInputs) -> InputFetcher {
        self.prefetched = Some(Arc::new(inputs));
        self
    }

    /// A fetcher that reads every URL from `inputs`, `data:` URIs from themselves, and has no
    /// network at all (it builds no HTTP client): a job's process, whose inputs were fetched
    /// before it started.
    pub fn prefetched_only(policy: FetchPolicy, inputs: PrefetchedInputs) -> InputFetcher {
        InputFetcher {
            clients: None,
            own_origin: None,
            forbidden: is_forbidden_address,
            policy,
            stored_inputs: None,
            prefetched: Some(Arc::new(inputs)),
        }
    }

    /// A fetcher enforcing `policy` on `network`.
    pub fn with_network(policy: FetchPolicy, network: Network) -> Result<InputFetcher, FetcherSetupError> {
        // `no_proxy`: an environment proxy would resolve client URLs itself, past our filter.
        let builder = || {
            reqwest::Client::builder()
                .no_proxy()
                .timeout(policy.timeout)
                .connect_timeout(CONNECT_TIMEOUT)
                .read_timeout(STALL_TIMEOUT)
                .user_agent("media-gateway-fetcher/1.0")
        };
        let built = |b: reqwest::ClientBuilder| b.build().map_err(|e| FetcherSetupError::Client(e.to_string()));
        let forbidden = network.forbidden;
        let public_only =
            built(builder().dns_resolver(Arc::new(PublicOnlyResolver(network))).redirect(safe_redirects(forbidden)))?;
        let own_outputs = built(builder().redirect(reqwest::redirect::Policy::none()))?;
        let any_address = built(builder().redirect(reqwest::redirect::Policy::limited(5)))?;
        let own_origin = match &policy.trusted_prefix {
            Some(prefix) => {
                let url = reqwest::Url::parse(prefix)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
                    .ok_or_else(|| FetcherSetupError::TrustedPrefix(prefix.clone()))?;
                Some((url.origin(), url.path().to_string()))
            }
            None => None,
        };
        Ok(InputFetcher {
            clients: Some(Clients { public_only, own_outputs, any_address }),
            own_origin,
            forbidden,
            policy,
            stored_inputs: None,
            prefetched: None,
        })
    }

    /// Whether `url` (parsed, so dot segments, encoded or not, are already resolved) is one of
    /// this service's own outputs: the same origin and a path under the outputs' prefix.
    fn is_own_output(&self, url: &reqwest::Url) -> bool {
        self.own_origin.as_ref().is_some_and(|(origin, path)| {
            url.origin() == *origin && url.path().starts_with(path.as_str()) && url.username().is_empty()
        })
    }

    /// The bytes behind `url` (an http(s) URL or a base64 `data:` URI); `label` names the field
    /// in errors.
    pub async fn fetch(&self, label: &str, url: &str) -> Result<Vec<u8>, FetchError> {
        let fail = |reason: String| FetchError { url_label: label.to_string(), reason, transient: false };
        if let (Some(prefetched), true) = (&self.prefetched, needs_fetching(url)) {
            let file =
                prefetched.files.get(url).ok_or_else(|| fail("the input was not fetched before the job".into()))?;
            return std::fs::read(file).map_err(|e| fail(format!("reading the fetched input: {e}")));
        }
        if let Some(path) = url.strip_prefix(STORED_INPUT_PREFIX) {
            let store = self.stored_inputs.as_ref().ok_or_else(|| fail("no store for stored inputs".into()))?;
            let uri = store.get(path).await.map_err(|e| fail(format!("stored input: {e}")))?;
            let uri = std::str::from_utf8(&uri).map_err(|_| fail("stored input is not a data: URI".into()))?;
            if !uri.starts_with("data:") {
                return Err(fail("stored input is not a data: URI".into()));
            }
            return Box::pin(self.fetch(label, uri)).await;
        }
        if let Some(rest) = url.strip_prefix("data:") {
            let (_, data) = rest.split_once(',').ok_or_else(|| fail("malformed data: URI".into()))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|e| fail(format!("data: URI is not valid base64: {e}")))?;
            return Ok(bytes);
        }
        let parsed = reqwest::Url::parse(url).map_err(|e| fail(format!("not a valid URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(fail("only http(s) URLs and data: URIs can be fetched".into()));
        }
        let mut body = Vec::new();
        self.download(label, parsed, &mut body).await?;
        Ok(body)
    }

    /// The bytes behind `url`, as [`InputFetcher::fetch`] has them, written to `sink` as they
    /// arrive: an http(s) download is never held in memory whole. Returns the bytes written.
    pub async fn fetch_to<W: tokio::io::AsyncWrite + Unpin>(
        &self,
        label: &str,
        url: &str,
        sink: &mut W,
    ) -> Result<u64, FetchError> {
        use tokio::io::AsyncWriteExt;
        let parsed = reqwest::Url::parse(url).ok().filter(|u| matches!(u.scheme(), "http" | "https"));
        let written = match parsed {
            Some(parsed) if self.prefetched.is_none() => self.download(label, parsed, sink).await?,
            _ => {
                let bytes = self.fetch(label, url).await?;
                sink.write_all(&bytes).await.map_err(|e| self.sink_failed(label, &e))?;
                bytes.len() as u64
            }
        };
        sink.flush().await.map_err(|e| self.sink_failed(label, &e))?;
        Ok(written)
    }

    fn sink_failed(&self, label: &str, error: &std::io::Error) -> FetchError {
        FetchError {
            url_label: label.to_string(),
            reason: format!("writing the download here: {error}"),
            transient: true,
        }
    }

    /// Downloads the http(s) `parsed` into `sink` under the policy; the bytes written.
    async fn download<W: tokio::io::AsyncWrite + Unpin>(
        &self,
        label: &str,
        parsed: reqwest::Url,
        sink: &mut W,
    ) -> Result<u64, FetchError> {
        use tokio::io::AsyncWriteExt;
        let fail = |reason: String| FetchError { url_label: label.to_string(), reason, transient: false };
        let passing = |reason: String| FetchError { transient: true, ..fail(reason) };
        let Some(clients) = &self.clients else {
            return Err(fail("this job's inputs were to be fetched before it started".into()));
        };
        let client = if self.is_own_output(&parsed) {
            &clients.own_outputs
        } else if self.policy.allow_private {
            &clients.any_address
        } else {
            if host_is_forbidden_literal(&parsed, self.forbidden) {
                return Err(fail("refusing to fetch from a private or loopback address".into()));
            }
            &clients.public_only
        };
        let response = client.get(parsed).send().await.map_err(|e| {
            let reason = format!("download failed: {}", describe(&e));
            if (e.is_timeout() || e.is_connect()) && !refused_by_resolver(&e) {
                passing(reason)
            } else {
                fail(reason)
            }
        })?;
        if response.status().is_redirection() {
            return Err(fail("our own output URL answered with a redirect".into()));
        }
        let status = response.status();
        if !status.is_success() {
            let reason = format!("download answered HTTP {}", status.as_u16());
            let busy = status.is_server_error() || matches!(status.as_u16(), 408 | 429);
            return Err(if busy { passing(reason) } else { fail(reason) });
        }
        if response.content_length().is_some_and(|n| n > self.policy.max_bytes as u64) {
            return Err(fail(format!("larger than the {} byte input limit", self.policy.max_bytes)));
        }
        let mut written = 0usize;
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| passing(format!("download failed: {}", describe(&e))))?;
            written += chunk.len();
            if written > self.policy.max_bytes {
                return Err(fail(format!("larger than the {} byte input limit", self.policy.max_bytes)));
            }
            sink.write_all(&chunk).await.map_err(|e| self.sink_failed(label, &e))?;
        }
        Ok(written as u64)
    }
}

/// A download error with its causes, so "resolves to no public address" or "redirect to a
/// private address" reaches the client instead of a bare "error sending request".
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
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
            "192.0.0.170",
            "198.18.0.1",
            "198.19.255.255",
            "240.0.0.1",
            "255.255.255.255",
            "64:ff9b::a00:1",      // NAT64 of 10.0.0.1
            "64:ff9b:1::1",        // local-use NAT64
            "::127.0.0.1",         // IPv4-compatible
            "::a00:1",             // IPv4-compatible 10.0.0.1
            "2002:a00:1::1",       // 6to4 of 10.0.0.1
            "2001:0:4136:e378::1", // Teredo
            "fec0::1",             // site-local
            "2001:db8::1",         // documentation
            "100::1",              // discard
            "ff02::1",             // multicast
        ] {
            assert!(is_forbidden_address(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "8.8.8.8", "2a00:1450:4001::200e", "1.1.1.1"] {
            assert!(!is_forbidden_address(ip.parse().unwrap()), "{ip}");
        }
    }

    /// A job's process reads its inputs from the files fetched for it and `data:` URIs from
    /// themselves, and, having no HTTP client, refuses any URL that was not fetched for it.
    #[tokio::test]
    async fn a_prefetched_only_fetcher_reads_its_files_and_downloads_nothing() {
        let dir = std::env::temp_dir().join(format!("prefetched-only-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("photo");
        std::fs::write(&file, b"fetched bytes").unwrap();
        let fetched = "https://example.com/photo.jpg";
        let inputs = PrefetchedInputs { files: [(fetched.to_string(), file)].into_iter().collect() };
        let fetcher = InputFetcher::prefetched_only(FetchPolicy::default(), inputs);
        assert!(fetcher.clients.is_none());
        assert_eq!(fetcher.fetch("image_url", fetched).await.unwrap(), b"fetched bytes");
        assert_eq!(fetcher.fetch("image_url", "data:text/plain;base64,aGk=").await.unwrap(), b"hi");
        let mut sink = Vec::new();
        fetcher.fetch_to("image_url", fetched, &mut sink).await.unwrap();
        assert_eq!(sink, b"fetched bytes");
        let refused = fetcher.fetch("image_url", "https://example.com/other.jpg").await.unwrap_err();
        assert!(refused.reason.contains("not fetched before the job"), "{}", refused.reason);
        let refused =
            fetcher.fetch_to("image_url", "https://example.com/other.jpg", &mut Vec::new()).await.unwrap_err();
        assert!(refused.reason.contains("not fetched before the job"), "{}", refused.reason);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn private_urls_are_refused_and_data_uris_decoded() {
        let fetcher = InputFetcher::new(FetchPolicy::default()).unwrap();
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

    /// A server on `addr` answering every request with `body`.
    async fn serve_on(addr: &str, body: Vec<u8>) -> String {
        serve_at(addr, body, Duration::ZERO).await
    }

    /// A loopback server answering every request with `body` after `delay`.
    async fn serve(body: Vec<u8>, delay: Duration) -> String {
        serve_at("127.0.0.1:0", body, delay).await
    }

    async fn serve_at(addr: &str, body: Vec<u8>, delay: Duration) -> String {
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
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
            InputFetcher::new(policy(8192, Duration::from_secs(5)))
                .unwrap()
                .fetch("image_url", &url)
                .await
                .unwrap()
                .len(),
            4096
        );
        let err = InputFetcher::new(policy(1000, Duration::from_secs(5)))
            .unwrap()
            .fetch("image_url", &url)
            .await
            .unwrap_err();
        assert!(err.to_string().starts_with("image_url: larger than") && !err.transient, "{err}");
        let slow = serve(vec![1u8; 10], Duration::from_secs(5)).await;
        let err = InputFetcher::new(policy(8192, Duration::from_millis(200)))
            .unwrap()
            .fetch("video_url", &slow)
            .await
            .unwrap_err();
        assert!(err.to_string().starts_with("video_url: download failed") && err.transient, "{err}");
    }

    #[tokio::test]
    async fn busy_hosts_are_transient_and_missing_files_are_not() {
        for (status, transient) in [(503, true), (429, true), (404, false), (403, false)] {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                let (mut socket, _) = listener.accept().await.unwrap();
                let _ = socket.read(&mut [0u8; 1024]).await;
                let head = format!("HTTP/1.1 {status} Status\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = socket.write_all(head.as_bytes()).await;
            });
            let fetcher = InputFetcher::new(policy(8192, Duration::from_secs(5))).unwrap();
            let err = fetcher.fetch("provider output", &format!("http://{addr}/out.png")).await.unwrap_err();
            assert_eq!(err.transient, transient, "{status}: {err}");
        }
    }

    #[tokio::test]
    async fn own_outputs_are_trusted_even_on_loopback() {
        let url = serve(b"png".to_vec(), Duration::ZERO).await;
        let prefix = url.trim_end_matches("input.png").to_string();
        let fetcher =
            InputFetcher::new(FetchPolicy { trusted_prefix: Some(prefix), ..FetchPolicy::default() }).unwrap();
        assert_eq!(fetcher.fetch("image_url", &url).await.unwrap(), b"png");
    }

    /// A network where 127.0.0.2 plays a public server and `inside.test` resolves to loopback.
    fn test_network() -> Network {
        let lookup: Lookup = Arc::new(|host: String| {
            Box::pin(async move {
                match host.as_str() {
                    "inside.test" => Ok(vec!["127.0.0.1".parse().unwrap()]),
                    "public.test" => Ok(vec!["127.0.0.2".parse().unwrap()]),
                    _ => Err(std::io::Error::other("unknown test host")),
                }
            })
        });
        Network { lookup, forbidden: |ip| ip != IpAddr::from([127, 0, 0, 2]) && is_forbidden_address(ip) }
    }

    /// A server on 127.0.0.2 that redirects every request to `location`.
    async fn redirecting_to(location: String) -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.2:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let location = location.clone();
                tokio::spawn(async move {
                    let mut request = [0u8; 1024];
                    let _ = socket.read(&mut request).await;
                    let head = format!(
                        "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    );
                    let _ = socket.write_all(head.as_bytes()).await;
                });
            }
        });
        port
    }

    #[tokio::test]
    async fn names_resolving_inside_and_redirects_inside_are_refused() {
        let fetcher = InputFetcher::with_network(FetchPolicy::default(), test_network()).unwrap();
        let inside = serve(b"secret".to_vec(), Duration::ZERO).await; // on 127.0.0.1
        let port: u16 = inside.rsplit(':').next().unwrap().trim_end_matches("/input.png").parse().unwrap();

        // A public-looking name that resolves to loopback, and one that does not resolve at all,
        // read the same: a client cannot probe which internal names exist.
        let err = fetcher.fetch("image_url", &format!("http://inside.test:{port}/input.png")).await.unwrap_err();
        assert!(err.to_string().contains("no public address") && !err.transient, "{err}");
        let unknown = fetcher.fetch("image_url", &format!("http://nowhere.test:{port}/input.png")).await.unwrap_err();
        assert_eq!(unknown.to_string().replace("nowhere.test", "inside.test"), err.to_string());
        assert!(!unknown.transient, "{unknown}");

        // An allowed server redirecting to a private literal, and to a name resolving inside.
        for target in [inside.clone(), format!("http://inside.test:{port}/input.png")] {
            let hop = redirecting_to(target.clone()).await;
            let err = fetcher.fetch("image_url", &format!("http://public.test:{hop}/a.png")).await.unwrap_err();
            let text = err.to_string();
            assert!(text.contains("private address") || text.contains("no public address"), "{target}: {text}");
        }

        // The same allowed server is reachable when it does not redirect inside.
        let public = serve_on("127.0.0.2:0", b"ok".to_vec()).await;
        let url = public.replace("127.0.0.2", "public.test");
        assert_eq!(fetcher.fetch("image_url", &url).await.unwrap(), b"ok");
    }

    #[tokio::test]
    async fn own_output_trust_is_by_origin_and_path_not_by_prefix() {
        let url = serve(b"png".to_vec(), Duration::ZERO).await;
        let base = url.trim_end_matches("/input.png").to_string();
        let policy = FetchPolicy { trusted_prefix: Some(format!("{base}/files/")), ..FetchPolicy::default() };
        let fetcher = InputFetcher::new(policy).unwrap();
        assert_eq!(fetcher.fetch("image_url", &format!("{base}/files/tasks/x.png")).await.unwrap(), b"png");
        for escape in [
            format!("{base}/files/../openapi.json"),
            format!("{base}/files/%2e%2e/openapi.json"),
            format!("{base}/files/%2E%2E/%2e%2e/etc"),
            format!("{base}/filesX/a.png"),
            format!("{base}@evil.example/files/a.png"),
        ] {
            // Not trusted: the loopback server is refused (or, for the userinfo trick, the real
            // host is looked up and is not ours).
            let result = fetcher.fetch("image_url", &escape).await;
            assert!(result.is_err(), "{escape} was fetched as our own output");
        }
    }

    #[test]
    fn an_environment_proxy_is_never_used() {
        // The proxy would resolve names itself, past the filter; `no_proxy` keeps it out. This
        // proves the setting by pointing every proxy variable at a closed port, in a child run of
        // this test alone: a test binary's own environment must not change while other tests run
        // on its other threads.
        const CHILD: &str = "FETCH_PROXY_TEST_CHILD";
        if std::env::var_os(CHILD).is_none() {
            // The test's name as the harness knows it: its path without the crate's name.
            let module = module_path!().split_once("::").map_or("", |(_, rest)| rest);
            let this_test = format!("{module}::an_environment_proxy_is_never_used");
            let status = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", &this_test, "--test-threads", "1"])
                .env(CHILD, "1")
                .env("HTTP_PROXY", "http://127.0.0.1:9")
                .env("ALL_PROXY", "http://127.0.0.1:9")
                .output()
                .unwrap();
            let report = String::from_utf8_lossy(&status.stdout);
            // A wrong test name would run nothing and pass: the child must have run this test.
            assert!(status.status.success() && report.contains("1 passed"), "the child run: {report}");
            return;
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let body = serve(b"direct".to_vec(), Duration::ZERO).await;
            let fetcher = InputFetcher::new(policy(1024, Duration::from_secs(5))).unwrap();
            assert_eq!(fetcher.fetch("image_url", &body).await.unwrap(), b"direct");
        });
    }
}

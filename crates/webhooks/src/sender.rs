//! One delivery attempt: a signed POST to the receiver, on public addresses only, given up after
//! a time limit, with at most a little of the answer read (for the delivery log).

use crate::secret::{signature_header, SigningSecret};
use engines::fetch::{check_public_target, public_only_resolver, Network};
use futures::StreamExt;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Limits of an attempt.
#[derive(Clone, Debug)]
pub struct SenderSettings {
    /// Longest an attempt may take, connecting and the answer's headers included.
    pub timeout: Duration,
    /// Allow private and loopback receivers (closed networks and tests only).
    pub allow_private: bool,
}

impl Default for SenderSettings {
    fn default() -> Self {
        SenderSettings { timeout: Duration::from_secs(10), allow_private: false }
    }
}

/// Most bytes of a refusing receiver's answer kept in the delivery log.
const ANSWER_EXCERPT_BYTES: usize = 256;

/// A message to deliver.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    /// Its id, the same on every attempt (the receiver's dedup key).
    pub id: &'a str,
    /// The JSON body.
    pub body: &'a [u8],
    /// The secrets that sign it.
    pub secrets: &'a [SigningSecret],
}

/// What one attempt came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The receiver's status code, when it answered.
    pub status_code: Option<u16>,
    /// Why the attempt does not count as delivered; `None` after a 2xx.
    pub error: Option<String>,
    /// How long it took.
    pub elapsed: Duration,
}

impl Attempt {
    /// Whether the receiver took the message (answered 2xx).
    pub fn delivered(&self) -> bool {
        self.error.is_none()
    }
}

/// Why a sender could not be built.
#[derive(Debug, thiserror::Error)]
#[error("webhook sender: {0}")]
pub struct SetupError(String);

/// Sends webhook messages.
#[derive(Clone)]
pub struct Sender {
    client: reqwest::Client,
    network: Network,
    settings: SenderSettings,
}

impl Sender {
    /// A sender on the real network.
    pub fn new(settings: SenderSettings) -> Result<Sender, SetupError> {
        Sender::with_network(settings, Network::default())
    }

    /// A sender on `network` (tests inject their own name resolution).
    pub fn with_network(settings: SenderSettings, network: Network) -> Result<Sender, SetupError> {
        // No redirects: a receiver that moved answers 3xx, which is a refusal the log shows. No
        // environment proxy: it would resolve names itself, past the address filter.
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout)
            .user_agent("media-gateway-webhooks/1.0");
        if !settings.allow_private {
            builder = builder.dns_resolver(public_only_resolver(network.clone()));
        }
        let client = builder.build().map_err(|e| SetupError(e.to_string()))?;
        Ok(Sender { client, network, settings })
    }

    /// The longest one attempt may take.
    pub fn timeout(&self) -> Duration {
        self.settings.timeout
    }

    /// Checks a receiver's URL as a client hands it over: a public address, unless private ones
    /// are allowed.
    pub async fn check_target(&self, url: &str) -> Result<(), String> {
        let parsed = reqwest::Url::parse(url).map_err(|_| "not an absolute http(s) URL".to_string())?;
        if self.settings.allow_private {
            return Ok(());
        }
        check_public_target(&parsed, &self.network).await
    }

    /// One attempt to deliver `message` to `url`.
    pub async fn send(&self, url: &str, message: Message<'_>) -> Attempt {
        let started = Instant::now();
        let failed = |error: String, status_code: Option<u16>| Attempt {
            status_code,
            error: Some(error),
            elapsed: started.elapsed(),
        };
        // Address literals are not resolved, so the resolver's filter cannot see them.
        if let Err(reason) = self.check_literal(url) {
            return failed(reason, None);
        }
        let timestamp =
            SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let request = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", message.id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature_header(message.secrets, message.id, timestamp, message.body))
            .body(message.body.to_vec());
        let answer = match request.send().await {
            Ok(answer) => answer,
            Err(e) => return failed(describe(&e), None),
        };
        let status = answer.status();
        if status.is_success() {
            // The body is not needed: dropping the answer closes the connection at once.
            return Attempt { status_code: Some(status.as_u16()), error: None, elapsed: started.elapsed() };
        }
        let excerpt = excerpt(answer, self.settings.timeout.saturating_sub(started.elapsed())).await;
        let reason = match excerpt.trim() {
            "" => format!("the receiver answered {status}"),
            text => format!("the receiver answered {status}: {text}"),
        };
        failed(reason, Some(status.as_u16()))
    }

    fn check_literal(&self, url: &str) -> Result<(), String> {
        let parsed = reqwest::Url::parse(url).map_err(|_| "not an absolute http(s) URL".to_string())?;
        let literal = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
            _ => None,
        };
        match literal {
            Some(ip) if !self.settings.allow_private && (self.network.forbidden)(ip) => {
                Err("the receiver's address is private, loopback or reserved".into())
            }
            _ => Ok(()),
        }
    }
}

/// The start of a refusing answer's body, read for at most `limit`.
async fn excerpt(answer: reqwest::Response, limit: Duration) -> String {
    let mut kept = Vec::new();
    let mut stream = answer.bytes_stream();
    let read = async {
        while let Some(Ok(chunk)) = stream.next().await {
            kept.extend_from_slice(&chunk[..chunk.len().min(ANSWER_EXCERPT_BYTES - kept.len())]);
            if kept.len() >= ANSWER_EXCERPT_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(limit, read).await;
    String::from_utf8_lossy(&kept).chars().filter(|c| !c.is_control()).collect()
}

/// An error of the HTTP client in a few words.
fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "the receiver did not answer in time".into()
    } else if error.is_connect() {
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            if cause.to_string().contains("no public address") {
                return "the receiver's name resolves to no public address".into();
            }
            source = cause.source();
        }
        "could not connect to the receiver".into()
    } else {
        format!("sending failed: {error}")
    }
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").field("settings", &self.settings).finish_non_exhaustive()
    }
}

//! HTTP to the providers: bounded time and size, no redirects (a provider's answer cannot send us
//! to another address), and every failure classified as a refusal, an outage or a bad answer.

use crate::answers::error_reason;
use crate::{ProviderError, ProviderName, MAX_ANSWER_BYTES};
use bytes::Bytes;
use futures::StreamExt;
use std::time::Duration;

pub(crate) struct Transport {
    client: reqwest::Client,
}

/// Whether `url` has the scheme, host and port of `base`.
pub(crate) fn same_origin(base: &str, url: &str) -> bool {
    match (url::Url::parse(base), url::Url::parse(url)) {
        (Ok(base), Ok(url)) => {
            base.scheme() == url.scheme()
                && base.host_str() == url.host_str()
                && base.port_or_known_default() == url.port_or_known_default()
        }
        _ => false,
    }
}

impl Transport {
    pub(crate) fn new(timeout: Duration) -> Result<Transport, reqwest::Error> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("media-gateway/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Transport { client })
    }

    /// Sends one request and reads its JSON answer. A 4xx (but 408 and 429) is a refusal with the
    /// provider's reason; a 5xx, 408, 429, timeout or broken connection is an outage. With
    /// `retry_connect`, a request is sent once more when its connection could not be made: nothing
    /// reached the provider. A connection that breaks after the request went out, or a timeout, is
    /// never retried, as the provider may have accepted the request (it would run, and be paid
    /// for, twice).
    pub(crate) async fn call(
        &self,
        provider: ProviderName,
        method: reqwest::Method,
        url: &str,
        authorization: &str,
        body: Option<&serde_json::Value>,
        retry_connect: bool,
    ) -> Result<serde_json::Value, ProviderError> {
        let send = || {
            let request =
                self.client.request(method.clone(), url).header(reqwest::header::AUTHORIZATION, authorization);
            match body {
                Some(body) => request.json(body),
                None => request,
            }
            .send()
        };
        let response = match send().await {
            Err(e) if retry_connect && e.is_connect() => {
                tracing::warn!(%provider, error = %e, "connecting to the provider failed; trying once more");
                send().await
            }
            other => other,
        };
        let response = response.map_err(|e| outage(provider, &e))?;
        let status = response.status();
        let bytes = read_limited(provider, response, MAX_ANSWER_BYTES).await?;
        if status.is_success() {
            if bytes.iter().all(u8::is_ascii_whitespace) {
                return Ok(serde_json::Value::Null);
            }
            return serde_json::from_slice(&bytes).map_err(|e| ProviderError::Malformed {
                provider,
                reason: format!("HTTP {} with a body that is not JSON: {e}", status.as_u16()),
            });
        }
        let reason = error_reason(&bytes).unwrap_or_else(|| format!("HTTP {}", status.as_u16()));
        if status.is_client_error()
            && status != reqwest::StatusCode::REQUEST_TIMEOUT
            && status != reqwest::StatusCode::TOO_MANY_REQUESTS
        {
            Err(ProviderError::Refused { provider, status: status.as_u16(), reason })
        } else {
            Err(ProviderError::Unavailable { provider, reason: format!("HTTP {}: {reason}", status.as_u16()) })
        }
    }

    /// Downloads `url` (no credentials: media URLs are capabilities of their own).
    pub(crate) async fn download(
        &self,
        provider: ProviderName,
        url: &str,
        max_bytes: usize,
    ) -> Result<(Bytes, Option<String>), ProviderError> {
        let response = self.download_response(provider, url).await?;
        let content_type = content_type(&response);
        Ok((read_limited(provider, response, max_bytes).await?, content_type))
    }

    /// Streams a produced file into `sink` as it arrives, at most `max_bytes`; returns the bytes
    /// written and the stated MIME type.
    pub(crate) async fn download_to<W: tokio::io::AsyncWrite + Unpin>(
        &self,
        provider: ProviderName,
        url: &str,
        max_bytes: usize,
        sink: &mut W,
    ) -> Result<(u64, Option<String>), ProviderError> {
        use tokio::io::AsyncWriteExt;
        let response = self.download_response(provider, url).await?;
        let content_type = content_type(&response);
        let too_large =
            || ProviderError::Malformed { provider, reason: format!("the file is larger than {max_bytes} bytes") };
        if response.content_length().is_some_and(|n| n > max_bytes as u64) {
            return Err(too_large());
        }
        let mut written = 0u64;
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| outage(provider, &e))?;
            written += chunk.len() as u64;
            if written > max_bytes as u64 {
                return Err(too_large());
            }
            sink.write_all(&chunk).await.map_err(|e| ProviderError::Unavailable {
                provider,
                reason: format!("writing the downloaded file here: {e}"),
            })?;
        }
        sink.flush().await.map_err(|e| ProviderError::Unavailable { provider, reason: e.to_string() })?;
        Ok((written, content_type))
    }

    async fn download_response(&self, provider: ProviderName, url: &str) -> Result<reqwest::Response, ProviderError> {
        let response = self.client.get(url).send().await.map_err(|e| outage(provider, &e))?;
        let status = response.status();
        if !status.is_success() {
            let reason = format!("downloading {url}: HTTP {}", status.as_u16());
            return Err(if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
                ProviderError::Unavailable { provider, reason }
            } else {
                ProviderError::Refused { provider, status: status.as_u16(), reason }
            });
        }
        Ok(response)
    }

    /// A plain GET of a public document (fal's JWKS), JSON.
    pub(crate) async fn get_json(&self, url: &str) -> Result<serde_json::Value, String> {
        let response = self.client.get(url).send().await.map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("HTTP {}", response.status().as_u16()));
        }
        let bytes = read_limited(ProviderName::Fal, response, MAX_ANSWER_BYTES).await.map_err(|e| e.to_string())?;
        serde_json::from_slice(&bytes).map_err(|e| e.to_string())
    }
}

fn outage(provider: ProviderName, error: &reqwest::Error) -> ProviderError {
    let what = if error.is_timeout() {
        "no answer in time"
    } else if error.is_connect() {
        "cannot connect"
    } else {
        "the connection failed"
    };
    // The full error names the URL, which may carry a request id; that is fine for our logs.
    ProviderError::Unavailable { provider, reason: format!("{what} ({})", without_url(error)) }
}

fn without_url(error: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    let mut last = error.to_string();
    while let Some(cause) = source {
        last = cause.to_string();
        source = cause.source();
    }
    last
}

/// The body of `response`, refused once it passes `limit` bytes (stated or received).
/// The MIME type an answer states, lower-case, without parameters.
fn content_type(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or(v).trim().to_ascii_lowercase())
}

async fn read_limited(
    provider: ProviderName,
    response: reqwest::Response,
    limit: usize,
) -> Result<Bytes, ProviderError> {
    let too_large =
        || ProviderError::Malformed { provider, reason: format!("the answer is larger than {limit} bytes") };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| outage(provider, &e))?;
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}

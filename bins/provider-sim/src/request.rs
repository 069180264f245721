//! A provider API request as the fal and Replicate handlers read it: method, path segments,
//! credentials, query parameters and the body, plus the check both apply to webhook URLs.

use bytes::Bytes;
use hyper::header::AUTHORIZATION;
use hyper::http::request::Parts;
use hyper::{HeaderMap, Method};

/// An API request with its body read.
pub(crate) struct ApiRequest {
    /// The method.
    pub method: Method,
    path: String,
    query: Option<String>,
    headers: HeaderMap,
    /// The body.
    pub body: Bytes,
}

impl ApiRequest {
    /// The request whose head is `parts` and whose whole body is `body`.
    pub fn new(parts: Parts, body: Bytes) -> ApiRequest {
        ApiRequest {
            method: parts.method,
            path: parts.uri.path().to_string(),
            query: parts.uri.query().map(str::to_string),
            headers: parts.headers,
            body,
        }
    }

    /// The path's non-empty segments.
    pub fn segments(&self) -> Vec<&str> {
        self.path.split('/').filter(|s| !s.is_empty()).collect()
    }

    /// The `Authorization` header, trimmed, if readable.
    pub fn authorization(&self) -> Option<&str> {
        self.headers.get(AUTHORIZATION)?.to_str().ok().map(str::trim)
    }

    /// The decoded value of query parameter `name`.
    pub fn query_param(&self, name: &str) -> Option<String> {
        let query = self.query.as_deref()?;
        url::form_urlencoded::parse(query.as_bytes()).find(|(key, _)| key == name).map(|(_, value)| value.into_owned())
    }
}

/// Whether `url` is an absolute http(s) URL, as both providers require of a webhook.
pub(crate) fn is_web_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

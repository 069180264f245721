//! Extractors that give handlers an authenticated caller, and its parsed JSON body, so no
//! handler repeats the authenticate, read body, parse preamble. The key is checked before the body
//! is read, so an anonymous client cannot make us buffer a body; the providers' callbacks are the
//! one exception (their signature covers the body, and `read_body` still bounds it).

use crate::errors::ApiError;
use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::web::{Bytes, BytesMut, Data};
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use domain::idempotency::{IdempotencyKey, InvalidIdempotencyKey};
use domain::rate_limit::RateClass;
use futures::future::LocalBoxFuture;
use futures::{Stream, StreamExt};
use serde::de::DeserializeOwned;
use service::{Caller, ErrorCode, Service, ServiceError};

/// The service the app was configured with.
fn service(req: &HttpRequest) -> Result<Data<Service>, ApiError> {
    req.app_data::<Data<Service>>()
        .cloned()
        .ok_or_else(|| ApiError::new(ErrorCode::Internal, "the service is not configured"))
}

/// Resolves the request's bearer key.
pub(crate) async fn authenticate(req: &HttpRequest, service: &Service) -> Result<Caller, ApiError> {
    Ok(service.api().authenticate(bearer_token(req)).await?)
}

/// The token of an `Authorization: Bearer <token>` header.
pub(crate) fn bearer_token(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

/// Counts the request against the caller's rate of `class`, leaving where the key stands in the
/// request's extensions for the `RateLimit` headers (see `request_log`); 429 past it.
pub(crate) async fn admit(
    req: &HttpRequest,
    service: &Service,
    caller: &Caller,
    class: RateClass,
) -> Result<(), ApiError> {
    let admitted = service.api().admit(caller, class).await;
    let status = match &admitted {
        Ok(status) => *status,
        Err(refusal) => refusal.status,
    };
    if let Some(status) = status {
        req.extensions_mut().insert(status);
    }
    admitted.map(|_| ()).map_err(|refusal| ApiError::from(ServiceError::from(refusal)))
}

/// The caller of a request authenticated by its bearer key (401 otherwise), counted against its
/// rate of other requests (429 past it).
pub(crate) struct Authenticated(pub Caller);

impl FromRequest for Authenticated {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let service = service(&req)?;
            let caller = authenticate(&req, &service).await?;
            admit(&req, &service, &caller, RateClass::Read).await?;
            Ok(Authenticated(caller))
        })
    }
}

/// An authenticated caller of a spending request and its JSON body `T`: 401 before the body is
/// read, 429 past the key's rate of spending requests, then 413 beyond [`crate::MAX_BODY_BYTES`],
/// 415 for a body that is not JSON, 400 naming the field at fault.
pub(crate) struct AuthenticatedJson<T> {
    /// Who is calling.
    pub caller: Caller,
    /// The parsed body.
    pub body: T,
}

impl<T: DeserializeOwned + 'static> FromRequest for AuthenticatedJson<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let (req, payload) = (req.clone(), payload.take());
        Box::pin(async move {
            let service = service(&req)?;
            let caller = authenticate(&req, &service).await?;
            admit(&req, &service, &caller, RateClass::Submit).await?;
            let bytes = read_body(&req, payload).await?;
            Ok(AuthenticatedJson { caller, body: parse_json(&req, &bytes)? })
        })
    }
}

/// Reads a request body of at most [`crate::MAX_BODY_BYTES`] (413 beyond).
pub(crate) async fn read_body(
    req: &HttpRequest,
    mut payload: impl Stream<Item = Result<Bytes, PayloadError>> + Unpin,
) -> Result<Bytes, ApiError> {
    let too_large = || {
        ApiError::new(ErrorCode::PayloadTooLarge, format!("request body larger than {} bytes", crate::MAX_BODY_BYTES))
    };
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > crate::MAX_BODY_BYTES as u64) {
        return Err(too_large());
    }
    let mut body = BytesMut::with_capacity(declared.unwrap_or(0) as usize);
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::new(ErrorCode::InvalidInput, format!("reading the request body: {e}")))?;
        if body.len() + chunk.len() > crate::MAX_BODY_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// Parses a JSON body, insisting on a JSON content type; errors name the problem.
pub(crate) fn parse_json<T: DeserializeOwned>(req: &HttpRequest, body: &Bytes) -> Result<T, ApiError> {
    let content_type = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let mime = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    if mime != "application/json" && !mime.ends_with("+json") {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "send the body as JSON with the header Content-Type: application/json",
        ));
    }
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        // Name the offending field when the JSON is well formed but a value has the wrong type.
        let path = e.path().to_string();
        let inner = e.inner().to_string();
        let missing = inner.strip_prefix("missing field `").and_then(|rest| rest.split_once('`')).map(|(f, _)| f);
        let message = match (path.as_str(), missing) {
            (".", Some(field)) => format!("{field}: required"),
            (".", None) => format!("invalid JSON body: {inner}"),
            (_, Some(field)) => format!("{path}.{field}: required"),
            (_, None) => format!("{path}: {inner}"),
        };
        ApiError::new(ErrorCode::InvalidInput, message)
    })
}

/// The client's `Idempotency-Key` header on a spending request, if sent (400 when malformed). A
/// retry with the same key and body within 24 hours is answered with the task the first try
/// created; the same key with another body is a 422.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub(crate) struct Idempotency {
    /// A unique value per request, such as a UUID (1 to 255 visible ASCII characters or spaces). A
    /// retry with the same key and body within 24 hours returns the original task, with nothing
    /// held or queued again, even while the first try is still in flight; the same key with a
    /// different body is a 422. Errors (400, 401, 402, ...) are not remembered: their retries run
    /// afresh.
    #[param(rename = "Idempotency-Key", value_type = Option<IdempotencyKey>)]
    pub key: Option<IdempotencyKey>,
}

impl FromRequest for Idempotency {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let header = req.headers().get("idempotency-key");
        std::future::ready(match header {
            None => Ok(Idempotency { key: None }),
            Some(value) => IdempotencyKey::from_header_bytes(value.as_bytes())
                .map(|key| Idempotency { key: Some(key) })
                .map_err(|e: InvalidIdempotencyKey| ApiError::new(ErrorCode::InvalidInput, e.to_string())),
        })
    }
}

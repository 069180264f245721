//! The errors every use-case returns; each front end maps them once (HTTP status, MCP result).

use storage::{InviteError, StorageError, SubmitError};

/// Why a use-case did not complete. Messages are meant for the client and name what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Missing, unknown or revoked key (HTTP 401).
    #[error("{0}")]
    Unauthorized(String),
    /// Bad input; the message names the field (HTTP 400).
    #[error("{0}")]
    BadRequest(String),
    /// Spend cap reached or free allowance used up (HTTP 402).
    #[error("{0}")]
    PaymentRequired(String),
    /// No such task for this key, or no such file (HTTP 404).
    #[error("{0}")]
    NotFound(String),
    /// A download signature is wrong or expired (HTTP 403).
    #[error("{0}")]
    Forbidden(String),
    /// Too many attempts in a short time, such as failed sign-ins (HTTP 429).
    #[error("{message}")]
    TooManyRequests {
        /// What happened and when to try again.
        message: String,
        /// Seconds until a new attempt can succeed.
        retry_after_secs: u64,
    },
    /// An upstream provider refused or failed (HTTP 502).
    #[error("{0}")]
    ProviderFailed(String),
    /// The database cannot be reached right now (HTTP 503).
    #[error("service temporarily unavailable: {0}")]
    Unavailable(String),
    /// A fault of ours (HTTP 500); details go to the log, not the client.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    /// The HTTP status every web front end (the API, the console) answers this error with.
    pub fn http_status(&self) -> u16 {
        match self {
            ServiceError::Unauthorized(_) => 401,
            ServiceError::BadRequest(_) => 400,
            ServiceError::PaymentRequired(_) => 402,
            ServiceError::NotFound(_) => 404,
            ServiceError::Forbidden(_) => 403,
            ServiceError::TooManyRequests { .. } => 429,
            ServiceError::ProviderFailed(_) => 502,
            ServiceError::Unavailable(_) => 503,
            ServiceError::Internal(_) => 500,
        }
    }
}

impl From<StorageError> for ServiceError {
    fn from(e: StorageError) -> Self {
        if e.is_unavailable() {
            tracing::warn!(error = %e, "database unavailable");
            return ServiceError::Unavailable("database unreachable; retry shortly".into());
        }
        match e {
            StorageError::NotFound(what) => ServiceError::NotFound(format!("{what} not found")),
            StorageError::AlreadyExists(what) => ServiceError::BadRequest(format!("{what} already exists")),
            other => ServiceError::Internal(other.to_string()),
        }
    }
}

impl From<InviteError> for ServiceError {
    fn from(e: InviteError) -> Self {
        match e {
            InviteError::Invalid => ServiceError::NotFound(e.to_string()),
            InviteError::Storage(e) => e.into(),
        }
    }
}

impl From<SubmitError> for ServiceError {
    fn from(e: SubmitError) -> Self {
        match e {
            SubmitError::Refused(refusal) => ServiceError::PaymentRequired(refusal.to_string()),
            SubmitError::Storage(e) => e.into(),
            SubmitError::Revoked => ServiceError::Unauthorized("invalid or revoked API key".into()),
        }
    }
}

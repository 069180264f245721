//! The errors every use-case returns, and the stable codes clients tell them apart by; each front
//! end maps them once (the HTTP status table lives in `http`, the tool result in `mcp`).

use domain::BillingRefusal;
use serde::{Deserialize, Serialize};
use storage::{InviteError, StorageError, SubmitError};

/// A stable, machine-readable name for an error, sent beside its message (`{"error": "...",
/// "code": "..."}`) by the API and the connector. Messages may be reworded; codes never change
/// meaning, and new ones are only added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A field is missing or invalid; the message names it (400).
    InvalidInput,
    /// `model` names no live engine (400).
    UnknownModel,
    /// The API key (or other credential) is missing, unknown or revoked (401).
    Unauthorized,
    /// The key's spend cap would be passed by this job (402).
    SpendCapReached,
    /// The free allowance does not cover this job and no card is on file (402).
    FreeAllowanceUsed,
    /// A download signature is wrong or expired, or the action is not allowed (403).
    Forbidden,
    /// No such task, reel, file or endpoint for this caller (404).
    NotFound,
    /// The method is not allowed on this endpoint (405).
    MethodNotAllowed,
    /// The request body is larger than the server accepts (413).
    PayloadTooLarge,
    /// The body is not JSON (415).
    UnsupportedMediaType,
    /// Too many attempts in a short time; retry after `Retry-After` (429).
    RateLimited,
    /// The task already ended (succeeded or failed), so it cannot be cancelled (409).
    AlreadyFinished,
    /// The `Idempotency-Key` was already used with a different request (422).
    IdempotencyKeyReused,
    /// The task finished longer ago than the retention period and was removed (410).
    Expired,
    /// A fault of ours; it has been logged (500).
    Internal,
    /// An upstream provider refused or failed the job; nothing was billed (502).
    ProviderFailed,
    /// A synchronous recipe failed for a reason other than its input; nothing was billed (502).
    RecipeFailed,
    /// The database or store is unreachable for a moment; retry with backoff (503).
    Unavailable,
}

impl ErrorCode {
    /// Every code, in the order of their statuses.
    pub const ALL: [ErrorCode; 18] = [
        ErrorCode::InvalidInput,
        ErrorCode::UnknownModel,
        ErrorCode::Unauthorized,
        ErrorCode::SpendCapReached,
        ErrorCode::FreeAllowanceUsed,
        ErrorCode::Forbidden,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::PayloadTooLarge,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::AlreadyFinished,
        ErrorCode::RateLimited,
        ErrorCode::IdempotencyKeyReused,
        ErrorCode::Expired,
        ErrorCode::Internal,
        ErrorCode::ProviderFailed,
        ErrorCode::RecipeFailed,
        ErrorCode::Unavailable,
    ];
}

/// Why a use-case did not complete. Messages are meant for the client and name what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Missing, unknown or revoked key.
    #[error("{0}")]
    Unauthorized(String),
    /// Bad input; the message names the field.
    #[error("{0}")]
    BadRequest(String),
    /// The requested model is not a live engine.
    #[error("{0}")]
    UnknownModel(String),
    /// Spend cap reached or free allowance used up.
    #[error("{0}")]
    PaymentRequired(BillingRefusal),
    /// No such task for this key, or no such file.
    #[error("{0}")]
    NotFound(String),
    /// A download signature is wrong or expired.
    #[error("{0}")]
    Forbidden(String),
    /// A cancel of a task that already ended; the message names its state.
    #[error("{0}")]
    AlreadyFinished(String),
    /// An idempotency key sent again with a different request.
    #[error("{0}")]
    IdempotencyKeyReused(String),
    /// The task was removed by retention.
    #[error("{0}")]
    Expired(String),
    /// Too many attempts in a short time, such as failed sign-ins.
    #[error("{message}")]
    TooManyRequests {
        /// What happened and when to try again.
        message: String,
        /// Seconds until a new attempt can succeed.
        retry_after_secs: u64,
    },
    /// An upstream provider refused or failed.
    #[error("{0}")]
    ProviderFailed(String),
    /// A synchronous recipe failed for a reason other than its input.
    #[error("{0}")]
    RecipeFailed(String),
    /// The database cannot be reached right now.
    #[error("service temporarily unavailable: {0}")]
    Unavailable(String),
    /// A fault of ours; details go to the log, not the client.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            ServiceError::Unauthorized(_) => ErrorCode::Unauthorized,
            ServiceError::BadRequest(_) => ErrorCode::InvalidInput,
            ServiceError::UnknownModel(_) => ErrorCode::UnknownModel,
            ServiceError::PaymentRequired(BillingRefusal::SpendCapReached { .. }) => ErrorCode::SpendCapReached,
            ServiceError::PaymentRequired(BillingRefusal::AllowanceUsedUp { .. }) => ErrorCode::FreeAllowanceUsed,
            ServiceError::NotFound(_) => ErrorCode::NotFound,
            ServiceError::Forbidden(_) => ErrorCode::Forbidden,
            ServiceError::AlreadyFinished(_) => ErrorCode::AlreadyFinished,
            ServiceError::IdempotencyKeyReused(_) => ErrorCode::IdempotencyKeyReused,
            ServiceError::Expired(_) => ErrorCode::Expired,
            ServiceError::TooManyRequests { .. } => ErrorCode::RateLimited,
            ServiceError::ProviderFailed(_) => ErrorCode::ProviderFailed,
            ServiceError::RecipeFailed(_) => ErrorCode::RecipeFailed,
            ServiceError::Unavailable(_) => ErrorCode::Unavailable,
            ServiceError::Internal(_) => ErrorCode::Internal,
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
            SubmitError::Refused(refusal) => ServiceError::PaymentRequired(refusal),
            SubmitError::Storage(e) => e.into(),
            SubmitError::AlreadySubmitted(earlier) => ServiceError::Internal(format!(
                "a retry of task {} reached the error mapping instead of its replay",
                earlier.task_id
            )),
            SubmitError::Revoked => ServiceError::Unauthorized("invalid or revoked API key".into()),
            SubmitError::NoWebhookSecret => ServiceError::BadRequest(
                "webhook_url: this API key has no webhook signing secret yet (keys made before webhooks \
                 existed); make one in the console's Keys page (Webhooks) or with `api-server admin key \
                 webhook KEY_ID --rotate-secret`, then submit again"
                    .into(),
            ),
            SubmitError::InputsOverLimit { held, limit } => ServiceError::TooManyRequests {
                message: format!(
                    "this key's unfinished jobs hold {} MB of inputs and at most {} MB may wait at once; \
                     send more when some have finished",
                    held >> 20,
                    limit >> 20
                ),
                retry_after_secs: 10,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn all_lists_every_code_once_with_a_distinct_wire_name() {
        // Exhaustive: a new code does not compile here until it has its place in `ALL`.
        let place = |code: ErrorCode| match code {
            ErrorCode::InvalidInput => 0,
            ErrorCode::UnknownModel => 1,
            ErrorCode::Unauthorized => 2,
            ErrorCode::SpendCapReached => 3,
            ErrorCode::FreeAllowanceUsed => 4,
            ErrorCode::Forbidden => 5,
            ErrorCode::NotFound => 6,
            ErrorCode::MethodNotAllowed => 7,
            ErrorCode::PayloadTooLarge => 8,
            ErrorCode::UnsupportedMediaType => 9,
            ErrorCode::AlreadyFinished => 10,
            ErrorCode::RateLimited => 11,
            ErrorCode::IdempotencyKeyReused => 12,
            ErrorCode::Expired => 13,
            ErrorCode::Internal => 14,
            ErrorCode::ProviderFailed => 15,
            ErrorCode::RecipeFailed => 16,
            ErrorCode::Unavailable => 17,
        };
        let mut names = std::collections::BTreeSet::new();
        for (index, code) in ErrorCode::ALL.into_iter().enumerate() {
            assert_eq!(place(code), index, "{code:?}");
            // The wire name is serde's alone: snake_case and distinct.
            let name = serde_json::to_value(code).unwrap().as_str().unwrap().to_string();
            assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
            assert!(names.insert(name));
        }
    }
}

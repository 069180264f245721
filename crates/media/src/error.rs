/// Failure of a media operation.
///
/// Kept to three coarse kinds so callers can map them onto API errors
/// (client fault vs. server fault) without knowing codec details.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediaError {
    /// The input bytes could not be parsed as the expected media format.
    #[error("media decode failed: {0}")]
    Decode(String),
    /// Producing the output container or codec stream failed.
    #[error("media encode failed: {0}")]
    Encode(String),
    /// The arguments are structurally unusable (empty, mismatched or too large).
    #[error("invalid media input: {0}")]
    InvalidInput(String),
    /// A shipped model could not be loaded or run (a fault of the service, not of the input).
    #[error("model inference failed: {0}")]
    Inference(String),
}

//! The task lifecycle: `queued -> running -> succeeded | failed`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Status of a task as clients see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Accepted and waiting for a worker.
    Queued,
    /// A worker holds a lease on it and is running it.
    Running,
    /// Finished with outputs; billed.
    Succeeded,
    /// Finished without outputs; not billed.
    Failed,
}

impl TaskStatus {
    /// The status as stored and sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Queued => "queued",
            TaskStatus::Running => "running",
            TaskStatus::Succeeded => "succeeded",
            TaskStatus::Failed => "failed",
        }
    }

    /// Whether the status is final.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Succeeded | TaskStatus::Failed)
    }

    /// Whether a task may move from `self` to `next`.
    ///
    /// `running -> running` is a new attempt: a worker re-claims a task whose previous worker's
    /// lease expired. `queued -> failed` is a job that never started: its provider refused it at
    /// submit, or the submission was interrupted. A task never goes back to `queued`, so clients
    /// see a monotonic lifecycle.
    pub fn can_become(self, next: TaskStatus) -> bool {
        use TaskStatus::*;
        matches!(
            (self, next),
            (Queued, Running) | (Queued, Failed) | (Running, Running) | (Running, Succeeded) | (Running, Failed)
        )
    }
}

/// Why a task failed: the client's input could not be used, or anything else went wrong (an
/// engine, a provider, a worker that kept dying). Synchronous recipes answer 400 for the first and
/// 502 for the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The input is unusable (undecodable image, points outside the image, unreachable URL).
    Input,
    /// The job failed for a reason that is not the client's input.
    Job,
}

impl FailureKind {
    /// The kind as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Input => "input",
            FailureKind::Job => "job",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error for an unknown status string.
#[derive(Debug, thiserror::Error)]
#[error("unknown task status {0:?}")]
pub struct UnknownStatus(pub String);

impl FromStr for TaskStatus {
    type Err = UnknownStatus;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "queued" => TaskStatus::Queued,
            "running" => TaskStatus::Running,
            "succeeded" => TaskStatus::Succeeded,
            "failed" => TaskStatus::Failed,
            other => return Err(UnknownStatus(other.to_string())),
        })
    }
}

/// The media kind of one output (`output[].type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OutputKind {
    /// A PNG or JPEG picture.
    Image,
    /// An MP4 video.
    Video,
    /// A WAV recording.
    Audio,
    /// Timed text: SRT or WebVTT captions.
    Text,
    /// A print-ready PDF.
    Document,
}

#[cfg(test)]
mod tests {
    use super::TaskStatus::*;
    use super::*;

    #[test]
    fn only_forward_transitions_are_legal() {
        let all = [Queued, Running, Succeeded, Failed];
        let legal: Vec<_> =
            all.iter().flat_map(|a| all.iter().map(move |b| (*a, *b))).filter(|(a, b)| a.can_become(*b)).collect();
        assert_eq!(
            legal,
            vec![(Queued, Running), (Queued, Failed), (Running, Running), (Running, Succeeded), (Running, Failed)]
        );
        assert!(all.iter().filter(|s| s.is_terminal()).all(|s| all.iter().all(|n| !s.can_become(*n))));
    }

    #[test]
    fn round_trips_through_strings() {
        for status in [Queued, Running, Succeeded, Failed] {
            assert_eq!(status.as_str().parse::<TaskStatus>().ok(), Some(status));
        }
        assert!("done".parse::<TaskStatus>().is_err());
    }
}

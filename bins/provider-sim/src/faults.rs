//! The faults the simulator injects, set from the library or over `POST /_sim/faults`.

use serde::{Deserialize, Serialize};

/// How the simulated providers misbehave. The default is a well-behaved provider that finishes
/// every job at once. Timing fields are taken from the faults in force when a job is submitted;
/// the others apply to each request as it arrives.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Faults {
    /// Milliseconds added before every API answer (media downloads and `/_sim` are not delayed).
    pub latency_ms: u64,
    /// Milliseconds a new job stays queued (fal `IN_QUEUE`, Replicate `starting`).
    pub queue_ms: u64,
    /// Milliseconds a job then stays in progress (fal `IN_PROGRESS`, Replicate `processing`)
    /// before it is done.
    pub run_ms: u64,
    /// While true, jobs submitted stay in progress once they get there, until
    /// [`Simulator::release_held`](crate::Simulator::release_held) lets them finish.
    pub hold: bool,
    /// Jobs end in failure: fal answers a content-policy 422 for the result, Replicate reports
    /// `failed` with an error message.
    pub fail_jobs: bool,
    /// Submissions are answered with this HTTP status and the protocol's error body, and no job
    /// is created.
    pub refuse_submit: Option<u16>,
    /// Status polls and results are answered 200 with a body that is not the documented shape.
    pub malformed: bool,
    /// The next this many status polls answer 503 (counts down).
    pub status_errors: u32,
    /// API requests are never answered: the connection stays open and silent.
    pub hang: bool,
    /// The next this many API requests have their connection closed without an answer (counts
    /// down).
    pub drop_connections: u32,
    /// Each media URL can be downloaded once; later downloads get 404, as provider URLs expire.
    pub expire_media: bool,
    /// Milliseconds each media download waits before it is answered (a slow file host).
    pub media_delay_ms: u64,
    /// Zero bytes appended to every media file downloaded (a result far larger than its media:
    /// readers of the format stop at its end).
    pub media_padding_bytes: u64,
}

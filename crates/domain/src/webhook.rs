//! Completion webhooks as a client asks for them: the target URL, the events, and the schedule
//! on which a refused delivery is tried again.

use crate::limits::MAX_URL_CHARS;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// An event a task's webhook may be sent for. Terminal states (`succeeded`, `failed`, a cancel
/// included) are always sent; `running` only when asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum WebhookEvent {
    /// A worker or a provider started the job.
    Running,
    /// The task reached `succeeded` or `failed` (always sent).
    Completed,
}

impl WebhookEvent {
    /// The event as stored and shown in the delivery log.
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookEvent::Running => "running",
            WebhookEvent::Completed => "completed",
        }
    }
}

/// Where a task's webhooks go, and whether its start is sent too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskWebhook {
    /// The receiver (checked with [`check_webhook_url`]).
    pub url: String,
    /// Whether `running` is sent as well as the terminal state.
    pub on_running: bool,
}

impl TaskWebhook {
    /// The webhook a request names: its `url` and its `events` (`None`: terminal states only);
    /// `None` when it names no `url`.
    pub fn requested(url: Option<&str>, events: Option<&[WebhookEvent]>) -> Result<Option<TaskWebhook>, String> {
        match url {
            None => Ok(None),
            Some(url) => Ok(Some(TaskWebhook { url: check_webhook_url(url)?, on_running: sends_running(events) })),
        }
    }
}

/// Whether `events` ask for `running` too.
pub fn sends_running(events: Option<&[WebhookEvent]>) -> bool {
    events.is_some_and(|events| events.contains(&WebhookEvent::Running))
}

/// Checks the form of a webhook URL: absolute http(s), with a host, at most [`MAX_URL_CHARS`].
/// Where it points (no private or loopback address) is checked where names are resolved.
pub fn check_webhook_url(url: &str) -> Result<String, String> {
    let url = url.trim();
    if url.len() > MAX_URL_CHARS {
        return Err(format!("webhook_url: longer than {MAX_URL_CHARS} characters"));
    }
    let parsed = url::Url::parse(url).map_err(|_| "webhook_url: must be an absolute http(s) URL".to_string())?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none_or(str::is_empty) {
        return Err("webhook_url: must be an absolute http(s) URL".into());
    }
    if crate::url_host::has_reserved_label(&parsed) {
        return Err(format!("webhook_url: {}", crate::url_host::RESERVED_LABEL));
    }
    Ok(url.to_string())
}

/// The waits before each retry of a refused delivery, after the first attempt (sent at once):
/// 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h and 12 h, so ten attempts over about 23 hours
/// (Svix and Stripe space theirs alike). A delivery refused by every attempt is given up.
pub const RETRY_DELAYS: [Duration; 9] = [
    Duration::from_secs(5),
    Duration::from_secs(30),
    Duration::from_secs(120),
    Duration::from_secs(600),
    Duration::from_secs(1_800),
    Duration::from_secs(3_600),
    Duration::from_secs(10_800),
    Duration::from_secs(21_600),
    Duration::from_secs(43_200),
];

/// The wait before attempt `next` (numbered from 1) of a delivery under `delays`, or `None` when
/// there is no such attempt: the delivery is given up.
pub fn wait_before(next: u32, delays: &[Duration]) -> Option<Duration> {
    let index = usize::try_from(next).ok()?.checked_sub(2)?;
    delays.get(index).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_spans_about_a_day() {
        let total: Duration = RETRY_DELAYS.iter().sum();
        assert!(total > Duration::from_secs(20 * 3600) && total < Duration::from_secs(26 * 3600), "{total:?}");
        assert_eq!(wait_before(2, &RETRY_DELAYS), Some(Duration::from_secs(5)));
        assert_eq!(wait_before(10, &RETRY_DELAYS), Some(Duration::from_secs(43_200)));
        assert_eq!(wait_before(11, &RETRY_DELAYS), None, "ten attempts in all");
        assert_eq!(wait_before(1, &RETRY_DELAYS), None, "the first attempt is not a retry");
    }

    #[test]
    fn requests_name_a_url_and_events() {
        assert_eq!(TaskWebhook::requested(None, None), Ok(None));
        assert_eq!(TaskWebhook::requested(None, Some(&[WebhookEvent::Running])), Ok(None), "the key's default's");
        let hook = TaskWebhook::requested(Some(" https://example.com/hook "), Some(&[WebhookEvent::Running]));
        assert_eq!(hook, Ok(Some(TaskWebhook { url: "https://example.com/hook".into(), on_running: true })));
        let hook = TaskWebhook::requested(Some("https://example.com/hook"), Some(&[WebhookEvent::Completed]));
        assert!(!hook.unwrap().unwrap().on_running);
        for bad in ["ftp://example.com/", "/relative", "https://", "not a url"] {
            assert!(check_webhook_url(bad).is_err(), "{bad}");
        }
    }
}

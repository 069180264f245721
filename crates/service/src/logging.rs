//! Process logging for the binaries: one line per event on standard error, as text (the default)
//! or as JSON objects (`LOG_FORMAT=json`, for log collectors), filtered by `RUST_LOG`. Lines are
//! written by a background thread, so a request never waits on a slow terminal or pipe; its queue
//! holds 128k lines, and past that writers wait rather than lose lines.

use tracing_subscriber::EnvFilter;

/// Keeps the log writer's thread running; dropping it flushes what is queued.
pub struct LogGuard {
    _writer: tracing_appender::non_blocking::WorkerGuard,
}

/// The log line format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, with the request span's fields (`request.id`).
    Json,
}

impl LogFormat {
    /// `LOG_FORMAT` as set (`text` or `json`; unset is text).
    pub fn from_env() -> Result<LogFormat, String> {
        match std::env::var("LOG_FORMAT").as_deref() {
            Err(_) | Ok("") | Ok("text") => Ok(LogFormat::Text),
            Ok("json") => Ok(LogFormat::Json),
            Ok(other) => Err(format!("LOG_FORMAT must be `text` or `json`, not {other:?}")),
        }
    }
}

/// Installs the process's logger: `RUST_LOG` if set, else `default_filter`.
pub fn init(format: LogFormat, default_filter: &str) -> LogGuard {
    let (writer, guard) =
        tracing_appender::non_blocking::NonBlockingBuilder::default().lossy(false).finish(std::io::stderr());
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(false).init(),
    }
    LogGuard { _writer: guard }
}

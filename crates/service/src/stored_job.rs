//! A queued job as its task row keeps it (the `tasks.job` column), in a versioned format.
//!
//! Rows outlive releases: a job queued before a deploy runs after it, on a worker of the new
//! release. The row is therefore an envelope, `{"format": 1, "job": {...}}`, whose `job` is an
//! engine job (a validated generate request) or a recipe job (tagged by `recipe`). Rows written
//! before the envelope existed (format 0) hold the bare job and are read as format 1. A change to
//! a stored type must keep reading the rows of the format it replaces (serde aliases and
//! defaults, or a new format number with a conversion here); the fixture rows in
//! `tests/fixtures/queued_jobs.json`, written by format 1, hold every later release to that.
//! The format is described in docs/architecture.md ("Queued job rows").

use domain::{JobKind, OutputKind, ValidatedJob};
use recipes::RecipeJob;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An output as the task row keeps it (the `tasks.outputs` column); URLs are signed afresh on every read.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct StoredOutput {
    pub(crate) path: String,
    pub(crate) kind: OutputKind,
    pub(crate) content_type: String,
    pub(crate) width: Option<u32>,
    pub(crate) height: Option<u32>,
    pub(crate) duration_secs: Option<f64>,
}

impl StoredOutput {
    /// The record of a file of `info` stored at `path`.
    pub(crate) fn of(path: String, info: &engines::upstream::FileInfo) -> StoredOutput {
        StoredOutput {
            path,
            kind: info.kind,
            content_type: info.content_type().to_string(),
            width: info.width,
            height: info.height,
            duration_secs: info.duration_secs,
        }
    }
}

/// Where output `index` (with `extension`) of `attempt` of a task is stored. Each attempt writes
/// its own names, so a late writer of an old attempt never overwrites the outputs a client reads.
pub(crate) fn output_path(task_id: &str, attempt: i32, index: usize, extension: &str) -> String {
    format!("tasks/{task_id}/{attempt}-{index}.{extension}")
}

/// The kind of an engine job: its engine's family, while the catalog lists the engine.
pub(crate) fn engine_job_kind(job: &ValidatedJob, catalog: &engines::Catalog) -> JobKind {
    JobKind::of_engine(catalog.get_any(&job.model).map(|spec| spec.family))
}

/// The format this release writes.
pub(crate) const JOB_FORMAT: u64 = 1;

/// A task's work: an engine job or a recipe.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum StoredJob {
    /// A recipe (tagged by its `recipe` field, which engine jobs never have).
    Recipe(RecipeJob),
    /// An engine job.
    Engine(ValidatedJob),
}

impl StoredJob {
    /// The work's input URLs (`data:` URIs included; [`crate::job_inputs::fetch`] leaves those to
    /// the work): field label and URL.
    pub(crate) fn input_urls(&self) -> Vec<(String, String)> {
        match self {
            StoredJob::Recipe(recipe) => recipe.input_urls(),
            StoredJob::Engine(job) => engines::input_urls(job),
        }
    }

    /// Whether the work may call a provider: a recipe, while any engine is routed to one (its
    /// steps run their engines where they are routed). Engine jobs routed to a provider are
    /// tracked by workers, never run as work.
    pub(crate) fn may_call_providers(&self, catalog: &engines::Catalog) -> bool {
        matches!(self, StoredJob::Recipe(_))
            && catalog.routes().any(|(_, route)| providers::ProviderName::of(route).is_some())
    }

    /// The kind of work, which picks its deadline.
    pub(crate) fn kind(&self, catalog: &engines::Catalog) -> JobKind {
        match self {
            StoredJob::Recipe(recipe) => JobKind::Recipe(recipe.kind()),
            StoredJob::Engine(job) => engine_job_kind(job, catalog),
        }
    }

    /// The prefix of the job's id, which is also its id space: reels are `reel_...` and polled at
    /// their own endpoint; everything else is a `task_...`.
    pub(crate) fn id_space(&self) -> IdSpace {
        match self {
            StoredJob::Recipe(RecipeJob::Reel(_)) => IdSpace::Reel,
            _ => IdSpace::Task,
        }
    }

    /// The row's form of this job, in the current format.
    pub(crate) fn encode(&self) -> Result<Value, serde_json::Error> {
        Ok(serde_json::json!({"format": JOB_FORMAT, "job": serde_json::to_value(self)?}))
    }

    /// Reads a row written by this release or an earlier one; the error says why it cannot be
    /// read (a newer format, or a job this release does not know).
    pub(crate) fn decode(row: &str) -> Result<StoredJob, String> {
        let mut value: Value = serde_json::from_str(row).map_err(|e| format!("not JSON: {e}"))?;
        // An envelope has both members; a bare job of format 0 may have a `format` of its own (a
        // listing-enhance job's file format), never a numeric one beside a `job`.
        let format = value.get("job").and(value.get("format")).and_then(Value::as_u64);
        let job = match format {
            Some(JOB_FORMAT) => value.get_mut("job").map(Value::take).ok_or("format 1 without its job")?,
            Some(newer) => {
                return Err(format!(
                    "format {newer} was written by a newer release (this one reads up to {JOB_FORMAT})"
                ))
            }
            // Format 0: the bare job, as rows were written before the envelope.
            None => value,
        };
        serde_json::from_value(job).map_err(|e| format!("format {}: {e}", format.unwrap_or(0)))
    }
}

/// The id spaces of jobs: each is read only at its own endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdSpace {
    /// `task_...`, polled at `GET /v1/tasks/{id}`.
    Task,
    /// `reel_...`, polled at `GET /v1/recipes/reel/{reel_id}`.
    Reel,
}

impl IdSpace {
    /// The id prefix (before the underscore).
    pub(crate) fn prefix(self) -> &'static str {
        match self {
            IdSpace::Task => "task",
            IdSpace::Reel => "reel",
        }
    }

    /// The space an id belongs to.
    pub(crate) fn of(id: &str) -> IdSpace {
        if id.starts_with("reel_") {
            IdSpace::Reel
        } else {
            IdSpace::Task
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows as format 1 wrote them, one per kind of job, and bare rows of format 0.
    const FIXTURE: &str = include_str!("../tests/fixtures/queued_jobs.json");

    fn fixture() -> Vec<(String, Value)> {
        let rows: serde_json::Map<String, Value> = serde_json::from_str(FIXTURE).expect("fixture");
        rows.into_iter().collect()
    }

    #[test]
    fn only_work_that_may_call_a_provider_gets_its_credentials() {
        let mut config = crate::AppConfig::from_env().unwrap();
        config.fal_key = Some("fal-secret".into());
        let settings = config.engine_settings();
        assert!(settings.calls_providers());
        let stripped = settings.without_providers();
        assert!(!stripped.calls_providers());
        assert!(!serde_json::to_string(&stripped).unwrap().contains("fal-secret"));

        let mut catalog = engines::Catalog::builtin();
        let row = |name: &str| {
            let (_, row) = fixture().into_iter().find(|(n, _)| n == name).unwrap();
            StoredJob::decode(&row.to_string()).unwrap()
        };
        let (engine, reel) = (row("format 1 engine beta-image"), row("format 1 recipe reel"));
        assert!(!reel.may_call_providers(&catalog), "no engine is routed to a provider");
        catalog.set_route("tts", domain::catalog::Route::Fal { app: "fal-ai/tts".into() }).unwrap();
        assert!(reel.may_call_providers(&catalog));
        assert!(!engine.may_call_providers(&catalog));
    }

    #[test]
    fn rows_of_earlier_releases_are_read_and_written_back_unchanged() {
        let rows = fixture();
        assert!(rows.len() >= 6, "every kind of job has a row");
        for (name, row) in rows {
            let job = StoredJob::decode(&row.to_string()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let kind = match &job {
                StoredJob::Recipe(recipe) => recipe.name().to_string(),
                StoredJob::Engine(engine) => engine.model.clone(),
            };
            assert!(name.ends_with(&kind), "{name} read as {kind}");
            // Every field survives: a renamed or dropped field of a stored type changes the row.
            let written = job.encode().expect("encode");
            let expected = if row.get("job").is_some() { row } else { serde_json::json!({"format": 1, "job": row}) };
            assert_eq!(written, expected, "{name}");
        }
    }

    #[test]
    fn unknown_formats_and_jobs_are_named() {
        let newer = StoredJob::decode(r#"{"format": 2, "job": {}}"#).unwrap_err();
        assert!(newer.contains("newer release"), "{newer}");
        let unknown = StoredJob::decode(r#"{"format": 1, "job": {"recipe": "teleport"}}"#).unwrap_err();
        assert!(unknown.starts_with("format 1:"), "{unknown}");
        assert!(StoredJob::decode("{").unwrap_err().starts_with("not JSON"));
    }
}

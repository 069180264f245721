//! A job's work, wherever it runs: an engine's job or a recipe, run to what it produced and what
//! it costs, or to a failure with its client-facing message.

use crate::stored_job::{StoredJob, StoredOutput};
use domain::{billing, FailureKind, JobKind, Usd, ValidatedJob};
use engines::{EngineError, Engines, OutputFile};
use recipes::{RecipeError, RecipeJob};
use serde::{Deserialize, Serialize};

/// A finished job's files: in memory (the job ran in this process), or already in the output
/// store (they streamed there from the job's process).
#[derive(Debug)]
pub(crate) enum Outputs {
    Files(Vec<OutputFile>),
    Stored(Vec<StoredOutput>),
}

impl Outputs {
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Outputs::Files(files) => files.is_empty(),
            Outputs::Stored(stored) => stored.is_empty(),
        }
    }
}

/// What a job produced, whatever ran it.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) outputs: Outputs,
    pub(crate) cost: Usd,
    pub(crate) sandbox: bool,
    pub(crate) result: Option<serde_json::Value>,
}

/// Why a job failed: the client-facing message and whose fault it was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JobFailure {
    pub(crate) message: String,
    pub(crate) kind: FailureKind,
}

impl JobFailure {
    pub(crate) fn job(message: String) -> JobFailure {
        JobFailure { message, kind: FailureKind::Job }
    }

    pub(crate) fn input(message: String) -> JobFailure {
        JobFailure { message, kind: FailureKind::Input }
    }

    /// The job's output could not be written to the output store (`detail`, the store's own
    /// error, goes to the log only: it names paths and buckets). Nothing is billed for an output
    /// that was not kept; the job fails at once rather than running again into the same store.
    pub(crate) fn unstored(task_id: &str, detail: &str) -> JobFailure {
        tracing::error!(task = %task_id, error = %detail, "the job's output could not be stored");
        let full = ["No space left", "os error 28", "Disk quota", "os error 122", "QuotaExceeded"];
        let why = if full.iter().any(|sign| detail.contains(sign)) {
            "the output store is full"
        } else {
            "the output store refused the write"
        };
        JobFailure::job(format!("the job's output could not be stored ({why}); nothing was billed"))
    }

    /// A job of `kind` ran past its `deadline`.
    pub(crate) fn past_deadline(kind: JobKind, deadline: std::time::Duration) -> JobFailure {
        JobFailure::job(format!("the job ran past its deadline ({kind}: {} s) and was stopped", deadline.as_secs()))
    }
}

/// Runs a job's work in this process: an engine's or a recipe's.
pub(crate) async fn produce_here(engines: &Engines, job: &StoredJob, price: Usd) -> Result<Finished, JobFailure> {
    match job {
        StoredJob::Engine(job) => run_engine(engines, job).await,
        StoredJob::Recipe(job) => run_recipe(engines, job, price).await,
    }
}

async fn run_engine(engines: &Engines, job: &ValidatedJob) -> Result<Finished, JobFailure> {
    let output = engines.run(job).await.map_err(|e| match e {
        EngineError::Fetch(_) | EngineError::InvalidInput(_) => JobFailure::input(client_message(&e)),
        _ => JobFailure::job(client_message(&e)),
    })?;
    let spec = engines.catalog().get_any(&job.model);
    let cost = billing::job_cost(job.price, spec.map(|spec| (&spec.price, &output.produced)));
    Ok(Finished { outputs: Outputs::Files(output.files), cost, sandbox: output.sandbox, result: None })
}

async fn run_recipe(engines: &Engines, job: &RecipeJob, price: Usd) -> Result<Finished, JobFailure> {
    let output = recipes::run(engines, job).await.map_err(recipe_failure)?;
    Ok(Finished {
        outputs: Outputs::Files(output.files),
        cost: billing::job_cost(price, None),
        sandbox: false,
        result: Some(output.result),
    })
}

/// A failed recipe's failure: the client's input, or the recipe.
pub(crate) fn recipe_failure(error: RecipeError) -> JobFailure {
    match error {
        RecipeError::InvalidInput(m) => JobFailure::input(m),
        failed @ RecipeError::Failed(_) => JobFailure::job(failed.to_string()),
    }
}

/// An input that cannot be fetched (a host that does not resolve, a refused or failed download):
/// the client's error, for engines and recipes alike (HTTP 400 where a client waits).
pub(crate) fn unfetchable_input(error: engines::FetchError) -> JobFailure {
    JobFailure::input(error.to_string())
}

fn client_message(error: &EngineError) -> String {
    match error {
        EngineError::Failed(m) => format!("engine failed: {m}"),
        other => other.to_string(),
    }
}

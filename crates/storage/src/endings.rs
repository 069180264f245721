//! Jobs' ends settled together: the successes and failures that workers of one process report
//! at the same moment share one transaction (see `group_commit`). The tasks are locked in id
//! order, and nothing else: the balances' changes are recorded beside the accounts' and keys' rows
//! (see `balances`), so a settlement never waits for a submit. Each end is checked against its
//! task as the ends before it in the batch left it (a second end of one attempt finds it ended),
//! and the balances' changes, the ledger and the notification are written once for the batch. The result is what settling the ends one
//! after another would give.

use crate::connection::AnyConnection;
use crate::group_commit::GroupCommit;
use crate::settlement::{self, Books, Holding, Success};
use crate::task_record::TaskRecord;
use crate::{dialect, now_millis, Database, StorageError, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::Text;
use domain::{Capture, FailureKind, TaskStatus, Usd};
use std::collections::HashMap;
use std::sync::LazyLock;

/// How a job ended, as its worker reports it.
#[derive(Clone, Debug)]
pub(crate) enum End {
    /// Succeeded (see [`Success`]).
    Succeeded {
        outputs_json: String,
        result_json: Option<String>,
        cost: Usd,
        sandbox: bool,
        provider_millis: Option<i64>,
        provider_cost: Option<Usd>,
    },
    /// Failed with an error of a kind.
    Failed { error: String, kind: FailureKind },
}

impl End {
    /// The end of a success.
    pub(crate) fn succeeded(success: &Success) -> End {
        End::Succeeded {
            outputs_json: success.outputs_json.to_string(),
            result_json: success.result_json.map(str::to_string),
            cost: success.cost,
            sandbox: success.sandbox,
            provider_millis: success.provider_millis,
            provider_cost: success.provider_cost,
        }
    }
}

/// One attempt's end, waiting to be settled.
#[derive(Clone, Debug)]
pub(crate) struct Ending {
    pub(crate) task_id: String,
    pub(crate) attempt: i32,
    pub(crate) holding: Holding,
    pub(crate) end: End,
}

/// What settling an end did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    /// The task succeeded with this capture.
    Succeeded(Capture),
    /// The task failed, its hold released.
    Failed,
    /// The attempt no longer held the task (it had ended, or a newer attempt took it): nothing
    /// was written.
    NotHeld,
}

/// Ends waiting to share a transaction, per pool.
static ENDINGS: LazyLock<GroupCommit<Ending, StorageResult<Settled>>> = LazyLock::new(GroupCommit::default);

impl Database {
    /// Settles `ending`, in a transaction it may share with ends reported at the same moment.
    pub(crate) fn settle(&self, ending: Ending) -> StorageResult<Settled> {
        ENDINGS.run(
            &self.instance.to_string(),
            ending,
            |batch, _| self.settle_all(&batch),
            || Err(StorageError::Interrupted("the settlement's transaction ended without an answer".into())),
        )
    }

    /// Settles `batch` in one transaction, each end in turn. When the transaction fails as a
    /// whole, each end is settled again in its own, so one cannot fail the others; when the
    /// database cannot be reached, each is told so.
    fn settle_all(&self, batch: &[Ending]) -> Vec<StorageResult<Settled>> {
        let alone = |ending: &Ending| match self.transaction(|conn| settle_batch(conn, std::slice::from_ref(ending))) {
            Ok(mut results) => {
                results.pop().unwrap_or_else(|| Err(StorageError::Interrupted("the settlement gave no answer".into())))
            }
            Err(error) => Err(error),
        };
        if batch.len() == 1 {
            return batch.iter().map(alone).collect();
        }
        match self.transaction(|conn| settle_batch(conn, batch)) {
            Ok(results) => results,
            Err(error) if error.is_unavailable() => {
                let shown = error.to_string();
                batch.iter().map(|_| Err(StorageError::Unavailable(shown.clone()))).collect()
            }
            Err(_) => batch.iter().map(alone).collect(),
        }
    }
}

/// Settles `batch` in `conn`'s transaction. `Err` only for a failure of the whole transaction;
/// an end the lifecycle refuses is its own entry, and nothing is written for it.
fn settle_batch(conn: &mut AnyConnection, batch: &[Ending]) -> StorageResult<Vec<StorageResult<Settled>>> {
    let mut ids: Vec<&str> = batch.iter().map(|ending| ending.task_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let listed = vec!["?"; ids.len()].join(", ");
    let mut lock_tasks =
        dialect::sql_query(conn, &format!("SELECT * FROM tasks WHERE id IN ({listed}) ORDER BY id{{FOR_UPDATE}}"))
            .into_boxed();
    for id in &ids {
        lock_tasks = lock_tasks.bind::<Text, _>(*id);
    }
    let mut tasks: HashMap<String, TaskRecord> =
        lock_tasks.load::<TaskRecord>(conn)?.into_iter().map(|task| (task.id.clone(), task)).collect();
    // Read the clock once the rows are held, as a claim does: an end that waited for its task
    // would otherwise be stamped before the moment it was recorded, and a key's next job, claimed
    // as soon as this one is seen ended, could seem to start before it.
    let now = now_millis();
    let mut books = Books::default();
    let mut results = Vec::with_capacity(batch.len());
    for ending in batch {
        let Some(task) = tasks.get(&ending.task_id).filter(|task| holds(task, ending)) else {
            results.push(Ok(Settled::NotHeld));
            continue;
        };
        let settled = match &ending.end {
            End::Succeeded { outputs_json, result_json, cost, sandbox, provider_millis, provider_cost } => {
                let success = Success {
                    outputs_json,
                    result_json: result_json.as_deref(),
                    cost: *cost,
                    sandbox: *sandbox,
                    provider_millis: *provider_millis,
                    provider_cost: *provider_cost,
                };
                settlement::succeed(conn, task, &success, now, &mut books).map(Settled::Succeeded)
            }
            End::Failed { error, kind } => {
                settlement::fail(conn, task, error, *kind, now, &mut books).map(|()| Settled::Failed)
            }
        };
        match settled {
            Ok(settled) => {
                // Ended: a later end of the same attempt in this batch finds it gone.
                tasks.remove(&ending.task_id);
                results.push(Ok(settled));
            }
            // Refused before anything was written for it: its own answer.
            Err(refused @ StorageError::Corrupt(_)) => results.push(Err(refused)),
            Err(other) => return Err(other),
        }
    }
    books.write(conn, now)?;
    Ok(results)
}

/// Whether `ending`'s attempt still holds `task`.
fn holds(task: &TaskRecord, ending: &Ending) -> bool {
    let status_holds = match ending.holding {
        Holding::Running => task.status == TaskStatus::Running.as_str(),
        Holding::QueuedOrRunning => {
            task.status == TaskStatus::Queued.as_str() || task.status == TaskStatus::Running.as_str()
        }
    };
    status_holds && task.attempt == ending.attempt
}

//! Creating tasks: one account's submits, one or many, in one transaction. The account's and
//! keys' rows are locked once, what settlements moved since the last submit is added to them
//! (see `balances`), each submit is checked in turn against the limits as the ones
//! before it left them (revocation, idempotency, inputs held, the billing hold, the webhook), and
//! everything accepted is written together (see `submission_writes`). The result is what running
//! the submits one after another would give, at the cost of one commit (see `group_commit`).

use crate::accounts::Account;
use crate::balances;
use crate::connection::AnyConnection;
use crate::idempotency::{self, EarlierRequest, IdempotencyClaim};
use crate::keys::ApiKey;
use crate::schema::tasks;
use crate::submission_writes::{self, Accepted, BatchHolds};
use crate::task_record::TaskRecord;
use crate::webhooks::WebhookChoice;
use crate::{dialect, now_millis, StorageError};
use diesel::prelude::*;
use diesel::sql_types::{Bool, Nullable, Text};
use domain::{billing, BillingRefusal, Hold, TaskStatus, Usd};
use std::collections::HashMap;

/// What is needed to create a task.
#[derive(Clone, Debug)]
pub struct NewTask {
    /// Task id (`task_...`).
    pub id: String,
    /// Submitting key.
    pub key_id: String,
    /// The key's account, billed for the task.
    pub account_id: String,
    /// Engine id.
    pub engine: String,
    /// The validated job as JSON.
    pub job: String,
    /// Quoted price, to be held.
    pub price: Usd,
    /// Claim order: higher first (a caller waiting on the result).
    pub priority: i32,
    /// The upstream provider the job is submitted to; such a task is never claimed to run here,
    /// only tracked (see `Database::claim_tracked`).
    pub provider: Option<String>,
    /// Bytes of the inputs moved to the object store for it at submit.
    pub input_bytes: i64,
    /// Most bytes of stored inputs the key may have in queued and running tasks at once, this
    /// task's included.
    pub key_input_limit: i64,
    /// The client's idempotency key for this request, if it sent one.
    pub idempotency: Option<IdempotencyClaim>,
    /// Where the task's webhooks go.
    pub webhook: WebhookChoice,
}

/// Why a task was not created.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The billing rules refuse the job (HTTP 402).
    #[error(transparent)]
    Refused(#[from] BillingRefusal),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The key was revoked before the job could be held (HTTP 401).
    #[error("this API key has been revoked")]
    Revoked,
    /// The key's queued and running tasks already hold this many bytes of stored inputs, and
    /// this task's would take them past the limit.
    #[error("the key's unfinished jobs hold {held} bytes of inputs; at most {limit} at once")]
    InputsOverLimit {
        /// Bytes held by the key's unfinished tasks.
        held: i64,
        /// The limit.
        limit: i64,
    },
    /// The request's idempotency key already created a task (within its window): the same request
    /// is answered with that task, another request under the key is refused.
    #[error("this idempotency key was used by an earlier request (task {})", .0.task_id)]
    AlreadySubmitted(EarlierRequest),
    /// The request names a webhook, and its key has no signing secret to sign it with.
    #[error("this API key has no webhook signing secret")]
    NoWebhookSecret,
}

impl From<diesel::result::Error> for SubmitError {
    fn from(e: diesel::result::Error) -> Self {
        SubmitError::Storage(e.into())
    }
}

impl From<r2d2::Error> for SubmitError {
    fn from(e: r2d2::Error) -> Self {
        SubmitError::Storage(e.into())
    }
}

/// A key's row, locked, with its webhook settings, read in the same round trip (nearly every
/// submit asks for the key's default webhook).
const LOCKED_KEY: &str = "SELECT api_keys.*, \
     EXISTS (SELECT 1 FROM key_webhooks w WHERE w.key_id = api_keys.id) AS has_webhook_secret, \
     (SELECT w.default_url FROM key_webhooks w WHERE w.key_id = api_keys.id) AS webhook_default_url, \
     COALESCE((SELECT w.default_on_running FROM key_webhooks w WHERE w.key_id = api_keys.id), FALSE) \
       AS webhook_on_running \
     FROM api_keys WHERE api_keys.id = ?{FOR_UPDATE}";

/// A row of [`LOCKED_KEY`].
#[derive(QueryableByName)]
struct LockedKey {
    // Not named `row`: the derive's own code names the row it reads so.
    #[diesel(embed)]
    key: ApiKey,
    #[diesel(sql_type = Bool)]
    has_webhook_secret: bool,
    #[diesel(sql_type = Nullable<Text>)]
    webhook_default_url: Option<String>,
    #[diesel(sql_type = Bool)]
    webhook_on_running: bool,
}

/// A key as this batch has it: its row, locked, and what the batch's earlier submits took.
struct KeyState {
    row: ApiKey,
    /// Bytes of stored inputs its queued and running tasks hold (read when first needed).
    inputs_held: Option<i64>,
    /// Its webhook settings: `None` when it has no signing secret.
    webhook: Option<KeyDefaultWebhook>,
    /// Holds this batch placed on it.
    held_here: i64,
}

/// A key's signing secret exists; its default target, if it has one.
struct KeyDefaultWebhook {
    url: Option<String>,
    on_running: bool,
}

/// What a submit that passed its checks comes to.
struct Passed {
    record: TaskRecord,
    hold: Hold,
    /// Its webhook's target and whether it announces `running`.
    webhook: Option<(String, bool)>,
}

/// Runs `batch` (submits of one account, in order) in `conn`'s transaction. `Err` only for a
/// failure of the whole transaction; each submit's refusal is its own entry.
pub(crate) fn submit_batch(
    conn: &mut AnyConnection,
    batch: &[NewTask],
) -> Result<Vec<Result<TaskRecord, SubmitError>>, StorageError> {
    let Some(first) = batch.first() else { return Ok(Vec::new()) };
    // Lock order account -> key everywhere, so concurrent holds and revocations serialise per
    // account without deadlocks (settlements take neither: see `balances`); keys in id order, so
    // two batches never wait on each other in a cycle. On SQLite the IMMEDIATE transaction
    // already holds the database's write lock, and the rows are simply read.
    let mut account: Account = dialect::sql_query(conn, "SELECT * FROM accounts WHERE id = ?{FOR_UPDATE}")
        .bind::<Text, _>(&first.account_id)
        .get_result(conn)?;
    let mut key_ids: Vec<&str> = batch.iter().map(|new| new.key_id.as_str()).collect();
    key_ids.sort_unstable();
    key_ids.dedup();
    let mut keys: HashMap<String, KeyState> = HashMap::new();
    for id in key_ids {
        let locked: LockedKey = dialect::sql_query(conn, LOCKED_KEY).bind::<Text, _>(id).get_result(conn)?;
        let webhook = locked
            .has_webhook_secret
            .then_some(KeyDefaultWebhook { url: locked.webhook_default_url, on_running: locked.webhook_on_running });
        keys.insert(id.to_string(), KeyState { row: locked.key, inputs_held: None, webhook, held_here: 0 });
    }
    // What the account's settlements moved since its last submit, added to the rows now held, so
    // the checks below see every settlement committed before this point.
    let added = balances::add_in(conn, &account.id)?;
    let total = added.account();
    account.free_held_units += total.free_held;
    account.free_used_units += total.free_used;
    account.invoice_units += total.invoice;
    for (id, moved) in &added.keys {
        if let Some(key) = keys.get_mut(id) {
            key.row.held_units += moved.held;
            key.row.spent_units += moved.spent;
        }
    }
    let mut free_held_here = 0;
    // Idempotency keys claimed earlier in this batch: (key id, idempotency key) -> (task, hash).
    let mut claimed: HashMap<(String, String), (String, String)> = HashMap::new();
    // The clock the checks read (an idempotency key's window); the tasks' own creation time is
    // stamped below, once nothing but their rows is left to write.
    let now = now_millis();
    let mut accepted: Vec<Accepted> = Vec::new();
    let mut results = Vec::with_capacity(batch.len());
    for new in batch {
        let Some(key) = keys.get_mut(&new.key_id) else {
            // Every key of the batch was read above.
            results.push(Err(StorageError::NotFound(format!("key {:?}", new.key_id)).into()));
            continue;
        };
        let outcome = accept(conn, new, &mut account, key, &mut claimed, now);
        results.push(match outcome {
            Ok(Passed { record, hold, webhook }) => {
                key.held_here += hold.total.units();
                free_held_here += hold.from_allowance.units();
                accepted.push(Accepted {
                    record: record.clone(),
                    input_bytes: new.input_bytes,
                    webhook,
                    claim: new.idempotency.clone(),
                });
                Ok(record)
            }
            Err(refusal) => Err(refusal),
        });
    }
    if accepted.is_empty() {
        return Ok(results);
    }
    // A task is created when its batch has held the rows it needs, just before its row is written
    // (with the balances, in one round trip on PostgreSQL): its `created_at`, and so its pickup
    // latency, leaves out the lock waits and the batch's reads.
    let created = now_millis().max(now);
    for record in accepted.iter_mut().map(|accepted| &mut accepted.record).chain(results.iter_mut().flatten()) {
        record.created_at = created;
        record.updated_at = created;
    }
    let mut held_keys: Vec<(&str, i64)> =
        keys.iter().filter(|(_, key)| key.held_here != 0).map(|(id, key)| (id.as_str(), key.held_here)).collect();
    held_keys.sort_unstable();
    let holds = BatchHolds { account_id: &account.id, free_held: free_held_here, keys: held_keys };
    submission_writes::write(conn, &holds, &accepted, created)?;
    Ok(results)
}

/// Checks one submit against the state the batch has reached and, when it passes, updates that
/// state: the record to write, its hold, and its webhook target.
fn accept(
    conn: &mut AnyConnection,
    new: &NewTask,
    account: &mut Account,
    key: &mut KeyState,
    claimed: &mut HashMap<(String, String), (String, String)>,
    now: i64,
) -> Result<Passed, SubmitError> {
    if key.row.account_id != account.id || new.account_id != account.id {
        return Err(StorageError::NotFound(format!("key {:?} of account {:?}", key.row.id, new.account_id)).into());
    }
    // A key revoked while this submit waited for its row is refused: the check that let the
    // request in ran before the lock.
    if key.row.revoked_at.is_some() {
        return Err(SubmitError::Revoked);
    }
    // After the row locks, so a concurrent try of the same request sees this one's record.
    if let Some(claim) = &new.idempotency {
        let earlier = match claimed.get(&(key.row.id.clone(), claim.key.clone())) {
            Some((task_id, hash)) => {
                Some(EarlierRequest { task_id: task_id.clone(), same_request: *hash == claim.request_hash })
            }
            None => idempotency::find(conn, &key.row.id, claim, now)?,
        };
        if let Some(earlier) = earlier {
            return Err(SubmitError::AlreadySubmitted(earlier));
        }
    }
    if new.input_bytes > 0 {
        let held = match key.inputs_held {
            Some(held) => held,
            None => *key.inputs_held.insert(inputs_held(conn, &key.row.id)?),
        };
        if held.saturating_add(new.input_bytes) > new.key_input_limit {
            return Err(SubmitError::InputsOverLimit { held, limit: new.key_input_limit });
        }
    }
    let hold = billing::place_hold(&key.row.limits(), &account.limits(), new.price)?;
    let webhook = match &new.webhook {
        WebhookChoice::Off => None,
        WebhookChoice::Requested(webhook) => match &key.webhook {
            Some(_) => Some((webhook.url.clone(), webhook.on_running)),
            None => return Err(SubmitError::NoWebhookSecret),
        },
        WebhookChoice::KeyDefault(on_running) => key
            .webhook
            .as_ref()
            .and_then(|default| Some((default.url.clone()?, on_running.unwrap_or(default.on_running)))),
    };
    // Accepted: what follows in the batch sees this submit's hold and inputs.
    key.row.held_units += hold.total.units();
    account.free_held_units += hold.from_allowance.units();
    if let Some(held) = key.inputs_held.as_mut() {
        *held = held.saturating_add(new.input_bytes);
    }
    if let Some(claim) = &new.idempotency {
        claimed.insert((key.row.id.clone(), claim.key.clone()), (new.id.clone(), claim.request_hash.clone()));
    }
    let record = TaskRecord {
        id: new.id.clone(),
        key_id: key.row.id.clone(),
        account_id: account.id.clone(),
        engine: new.engine.clone(),
        job: new.job.clone(),
        status: TaskStatus::Queued.as_str().to_string(),
        created_at: now,
        updated_at: now,
        started_at: None,
        finished_at: None,
        lease_owner: None,
        lease_expires_at: None,
        attempt: 0,
        outputs: None,
        price_units: hold.total.units(),
        hold_allowance_units: hold.from_allowance.units(),
        cost_units: None,
        error: None,
        sandbox: false,
        priority: new.priority,
        result: None,
        failure_kind: None,
        provider: new.provider.clone(),
        provider_handle: None,
        provider_callback: None,
        provider_millis: None,
        provider_cost_units: None,
        expired_at: None,
    };
    Ok(Passed { record, hold, webhook })
}

/// Bytes of stored inputs held by `key_id`'s queued and running tasks.
fn inputs_held(conn: &mut AnyConnection, key_id: &str) -> QueryResult<i64> {
    Ok(tasks::table
        .filter(tasks::key_id.eq(key_id))
        .filter(tasks::status.eq_any([TaskStatus::Queued.as_str(), TaskStatus::Running.as_str()]))
        .filter(tasks::input_bytes.gt(0))
        .select(tasks::input_bytes)
        .load::<i64>(conn)?
        .into_iter()
        .fold(0, i64::saturating_add))
}

//! The queue and the billing ledger against real SQLite and PostgreSQL databases.

use domain::{keys, BillingRefusal, FailureKind, TaskStatus, Usd};
use std::sync::{Arc, Barrier};
use std::thread;
use storage::test_support::{TestDatabase, BACKENDS};
use storage::{new_id, Database, NewTask, RunningShares, SubmitError};

fn usd(text: &str) -> Usd {
    text.parse().expect("valid amount")
}

fn account_and_key(db: &Database, allowance: &str, card: bool, cap: Option<&str>) -> String {
    let name = new_id("acct-name");
    db.create_account(&name, card, usd(allowance)).expect("account");
    let secret = keys::secret_from_random(rand_bytes());
    db.create_key(&name, &keys::hash_secret(&secret), None, cap.map(usd)).expect("key").id
}

fn rand_bytes() -> [u8; 32] {
    let id = new_id("x");
    let mut out = [0u8; 32];
    out[..id.len().min(32)].copy_from_slice(&id.as_bytes()[..id.len().min(32)]);
    out
}

fn new_task(db: &Database, key_id: &str, price: &str) -> NewTask {
    NewTask {
        idempotency: None,
        webhook: storage::WebhookChoice::Off,
        id: new_id("task"),
        key_id: key_id.to_string(),
        account_id: db.key(key_id).expect("key").account_id,
        engine: "tts".into(),
        job: "{}".into(),
        price: usd(price),
        priority: 0,
        provider: None,
        input_bytes: 0,
        key_input_limit: i64::MAX,
    }
}

fn each_backend(test: impl Fn(&Database)) {
    for backend in BACKENDS {
        let test_db = TestDatabase::new(backend)
            .unwrap_or_else(|e| panic!("{backend:?} test database unavailable (is PostgreSQL running?): {e}"));
        test(&test_db.db);
        assert_eq!(test_db.db.verify_ledger().expect("verify"), vec![], "{backend:?}: books must balance");
    }
}

/// A key's jobs are taken from the queue in the order they were submitted, those of one batch
/// (which share their creation time) too.
#[test]
fn jobs_are_claimed_in_the_order_they_were_submitted() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        let batch: Vec<NewTask> = (0..20).map(|_| new_task(db, &key, "0.01")).collect();
        let submitted: Vec<String> =
            db.submit_tasks(&batch).into_iter().map(|task| task.expect("accepted").id).collect();
        let claimed: Vec<String> = (0..20)
            .map(|_| db.claim_task("w", 60_000, RunningShares::UNLIMITED).unwrap().expect("claimed").task.id)
            .collect();
        assert_eq!(claimed, submitted);
    });
}

#[test]
fn lifecycle_bills_once_on_success() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        let task = db.submit_task(&new_task(db, &key, "0.4000")).expect("submit");
        assert_eq!(task.status().unwrap(), TaskStatus::Queued);
        let claimed = db.claim_task("w1", 60_000, RunningShares::UNLIMITED).expect("claim").expect("a task");
        assert_eq!((claimed.task.id.as_str(), claimed.attempt), (task.id.as_str(), 1));
        assert!(
            db.claim_task("w2", 60_000, RunningShares::UNLIMITED).expect("claim").is_none(),
            "a leased task is not claimed twice"
        );
        let capture =
            db.finish_succeeded(&task.id, 1, "[]", None, usd("0.25"), true).expect("finish").expect("captured");
        assert_eq!((capture.cost, capture.released), (usd("0.25"), usd("0.15")));
        assert!(db.finish_succeeded(&task.id, 1, "[]", None, usd("0.25"), true).expect("again").is_none());
        assert!(!db.finish_failed(&task.id, 1, "late", FailureKind::Job).expect("late failure"));
        let usage = db.usage(&key, 10).expect("usage");
        assert_eq!((usage.key.spent_units, usage.key.held_units), (2_500, 0));
        assert_eq!((usage.account.free_used_units, usage.account.free_held_units), (2_500, 0));
        assert_eq!(usage.recent_charges.len(), 1);
    });
}

#[test]
fn failure_costs_nothing() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, Some("1"));
        let task = db.submit_task(&new_task(db, &key, "0.9")).expect("submit");
        let claimed = db.claim_task("w1", 60_000, RunningShares::UNLIMITED).expect("claim").expect("task");
        assert!(db.finish_failed(&task.id, claimed.attempt, "engine broke", FailureKind::Job).expect("fail"));
        let usage = db.usage(&key, 10).expect("usage");
        assert_eq!((usage.key.spent_units, usage.key.held_units, usage.account.free_used_units), (0, 0, 0));
        assert_eq!(db.task(&task.id).unwrap().unwrap().status().unwrap(), TaskStatus::Failed);
    });
}

#[test]
fn expired_lease_is_reclaimed_and_late_finisher_is_fenced_out() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        let task = db.submit_task(&new_task(db, &key, "0.1")).expect("submit");
        let first = db.claim_task("dead-worker", 30, RunningShares::UNLIMITED).expect("claim").expect("task");
        thread::sleep(std::time::Duration::from_millis(80));
        let second = db.claim_task("live-worker", 60_000, RunningShares::UNLIMITED).expect("claim").expect("reclaimed");
        assert_eq!((second.task.id.as_str(), second.attempt), (task.id.as_str(), 2));
        assert!(!db.renew_lease(&task.id, first.attempt, 60_000).unwrap(), "old attempt lost its lease");
        assert!(db.finish_succeeded(&task.id, first.attempt, "[]", None, usd("0.1"), true).unwrap().is_none());
        assert!(db.finish_succeeded(&task.id, second.attempt, "[]", None, usd("0.1"), true).unwrap().is_some());
        assert_eq!(db.usage(&key, 10).unwrap().key.spent_units, 1_000);
        assert_eq!(db.task_ledger(&task.id).unwrap().iter().filter(|e| e.kind == "capture").count(), 1);
    });
}

/// The claim takes exactly the tasks the domain lets run: queued ones, and running ones whose lease
/// lapsed; never a leased, succeeded or failed one.
#[test]
fn the_claim_takes_exactly_the_tasks_the_domain_lets_run() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        let submit = || db.submit_task(&new_task(db, &key, "0.1")).expect("submit").id;
        let succeeded = submit();
        let claimed = db.claim_task("w", 60_000, RunningShares::UNLIMITED).unwrap().expect("a task");
        assert!(db.finish_succeeded(&succeeded, claimed.attempt, "[]", None, usd("0.1"), true).unwrap().is_some());
        let failed = submit();
        let claimed = db.claim_task("w", 60_000, RunningShares::UNLIMITED).unwrap().expect("a task");
        assert!(db.finish_failed(&failed, claimed.attempt, "broke", FailureKind::Job).unwrap());
        let leased = submit();
        assert_eq!(db.claim_task("w", 60_000, RunningShares::UNLIMITED).unwrap().expect("a task").task.id, leased);
        let lapsed = submit();
        assert_eq!(db.claim_task("w", 30, RunningShares::UNLIMITED).unwrap().expect("a task").task.id, lapsed);
        thread::sleep(std::time::Duration::from_millis(80));
        let queued = submit();

        let before: Vec<(String, TaskStatus)> = [&succeeded, &failed, &leased, &lapsed, &queued]
            .iter()
            .map(|id| ((*id).clone(), db.task(id).unwrap().unwrap().status().unwrap()))
            .collect();
        let mut taken = Vec::new();
        while let Some(claimed) = db.claim_task("checker", 60_000, RunningShares::UNLIMITED).unwrap() {
            taken.push(claimed.task.id);
        }
        assert_eq!(taken, [lapsed.clone(), queued.clone()]);
        // What was taken is what the domain lets become running; the leased task is running too,
        // but its lease still holds.
        let runnable: Vec<&TaskStatus> =
            before.iter().filter(|(id, _)| taken.contains(id)).map(|(_, status)| status).collect();
        assert_eq!(runnable, [&TaskStatus::Running, &TaskStatus::Queued]);
        assert!(runnable.iter().all(|status| status.can_become(TaskStatus::Running)));
    });
}

#[test]
fn released_task_is_claimed_again_at_once() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        db.submit_task(&new_task(db, &key, "0.1")).expect("submit");
        let first = db.claim_task("stopping", 60_000, RunningShares::UNLIMITED).unwrap().unwrap();
        assert!(db.renew_lease(&first.task.id, first.attempt, 60_000).unwrap());
        assert!(db.release_task(&first.task.id, first.attempt).unwrap());
        let again = db.claim_task("other", 60_000, RunningShares::UNLIMITED).unwrap().unwrap();
        assert_eq!((again.task.id, again.attempt), (first.task.id, 2));
    });
}

#[test]
fn allowance_needs_a_card_once_used_up() {
    each_backend(|db| {
        let name = new_id("acct");
        db.create_account(&name, false, usd("1")).unwrap();
        let key = db.create_key(&name, &keys::hash_secret(&new_id("s")), None, None).unwrap().id;
        db.submit_task(&new_task(db, &key, "0.6")).unwrap();
        match db.submit_task(&new_task(db, &key, "0.6")) {
            Err(SubmitError::Refused(BillingRefusal::AllowanceUsedUp { .. })) => {}
            other => panic!("expected allowance refusal, got {other:?}"),
        }
        db.set_card_on_file(&name, true).unwrap();
        let task = db.submit_task(&new_task(db, &key, "0.6")).unwrap();
        assert_eq!(task.hold_allowance_units, 4_000, "the rest of the allowance is drawn first");
    });
}

/// 64 clients submit at once against a cap that fits exactly 10 of them.
#[test]
fn concurrent_submits_never_pass_the_cap() {
    each_backend(|db| {
        let key = account_and_key(db, "1000", false, Some("1.0000"));
        let barrier = Arc::new(Barrier::new(64));
        let handles: Vec<_> = (0..64)
            .map(|_| {
                let (db, key, barrier) = (db.clone(), key.clone(), barrier.clone());
                thread::spawn(move || {
                    barrier.wait();
                    db.submit_task(&new_task(&db, &key, "0.1"))
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().expect("thread")).collect();
        let accepted = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(accepted, 10);
        assert!(results
            .iter()
            .all(|r| matches!(r, Ok(_) | Err(SubmitError::Refused(BillingRefusal::SpendCapReached { .. })))));
        // Settle them all concurrently: half succeed at a lower cost, half fail.
        let mut claims = Vec::new();
        while let Some(c) = db.claim_task("w", 60_000, RunningShares::UNLIMITED).unwrap() {
            claims.push(c);
        }
        assert_eq!(claims.len(), 10);
        let handles: Vec<_> = claims
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let db = db.clone();
                thread::spawn(move || {
                    if i % 2 == 0 {
                        db.finish_succeeded(&c.task.id, c.attempt, "[]", None, usd("0.07"), true).map(|r| r.is_some())
                    } else {
                        db.finish_failed(&c.task.id, c.attempt, "no", FailureKind::Job)
                    }
                })
            })
            .collect();
        assert!(handles.into_iter().all(|h| h.join().expect("thread").expect("finish")));
        let usage = db.usage(&key, 100).unwrap();
        assert_eq!((usage.key.spent_units, usage.key.held_units), (3_500, 0));
    });
}

/// Many finalisers race on one task (a retried finalisation after a crash, overlapping workers):
/// exactly one capture.
#[test]
fn concurrent_finalisation_captures_once() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        let task = db.submit_task(&new_task(db, &key, "0.5")).unwrap();
        let claim = db.claim_task("w", 60_000, RunningShares::UNLIMITED).unwrap().unwrap();
        let barrier = Arc::new(Barrier::new(8));
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (db, id, barrier) = (db.clone(), task.id.clone(), barrier.clone());
                thread::spawn(move || {
                    barrier.wait();
                    if i % 4 == 3 {
                        db.finish_failed(&id, claim.attempt, "x", FailureKind::Job).map(u8::from)
                    } else {
                        db.finish_succeeded(&id, claim.attempt, "[]", None, usd("0.5"), true)
                            .map(|c| u8::from(c.is_some()))
                    }
                })
            })
            .collect();
        let winners: u8 = handles.into_iter().map(|h| h.join().expect("thread").expect("finish")).sum();
        assert_eq!(winners, 1);
        let ledger = db.task_ledger(&task.id).unwrap();
        assert_eq!(ledger.iter().filter(|e| e.kind != "hold").map(|e| e.amount_units).sum::<i64>(), 5_000);
    });
}

#[test]
fn revoked_keys_do_not_authenticate() {
    each_backend(|db| {
        let name = new_id("acct");
        db.create_account(&name, false, usd("5")).unwrap();
        let hash = keys::hash_secret("mgk_secret");
        let key = db.create_key(&name, &hash, Some("ci"), None).unwrap();
        assert_eq!(db.authenticate(&hash).unwrap().map(|k| k.key_id), Some(key.id.clone()));
        db.revoke_key(&key.id).unwrap();
        assert!(db.authenticate(&hash).unwrap().is_none());
        assert_eq!(db.list_keys(&name).unwrap().len(), 1);
    });
}

/// Revoking a key cancels every unfinished job it queued, unbilled: the queued ones, and the
/// running one, whose worker can then no longer finish it; other keys' jobs are untouched.
#[test]
fn revoking_a_key_cancels_its_queued_jobs_unbilled() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        let other = account_and_key(db, "5", false, None);
        let running = db.submit_task(&new_task(db, &key, "0.1000")).expect("submit");
        let claimed = db.claim_task("w1", 60_000, RunningShares::UNLIMITED).expect("claim").expect("a task");
        assert_eq!(claimed.task.id, running.id);
        let queued: Vec<String> =
            (0..3).map(|_| db.submit_task(&new_task(db, &key, "0.2000")).expect("submit").id).collect();
        let others = db.submit_task(&new_task(db, &other, "0.3000")).expect("submit");

        let revoked = db.revoke_key(&key).expect("revoke");
        assert!(revoked.key.revoked_at.is_some());
        let mut all = queued.clone();
        all.push(running.id.clone());
        assert_eq!(revoked.cancelled.iter().collect::<std::collections::BTreeSet<_>>(), all.iter().collect());
        assert!(db.task(&running.id).unwrap().unwrap().error.unwrap_or_default().contains("revoked while it ran"));
        assert!(
            db.finish_succeeded(&running.id, claimed.attempt, "[]", None, usd("0.1"), false).unwrap().is_none(),
            "the running attempt was fenced out"
        );
        assert!(!db.renew_lease(&running.id, claimed.attempt, 60_000).unwrap(), "its worker lets go");
        for id in &all {
            let task = db.task(id).unwrap().unwrap();
            assert_eq!(task.status().unwrap(), TaskStatus::Failed, "{id}");
            assert!(task.error.as_deref().unwrap_or_default().contains("revoked"), "{task:?}");
            assert_eq!(task.cost(), None);
        }
        // Nothing is held or spent.
        let key_row = db.key(&key).unwrap();
        assert_eq!((key_row.held_units, key_row.spent_units), (0, 0));
        assert_eq!(db.task(&others.id).unwrap().unwrap().status().unwrap(), TaskStatus::Queued);
        // A second revoke changes nothing.
        assert_eq!(db.revoke_key(&key).expect("revoke again").cancelled, Vec::<String>::new());
        assert_eq!(
            db.claim_task("w2", 60_000, RunningShares::UNLIMITED).expect("claim").map(|c| c.task.id),
            Some(others.id)
        );
    });
}

#[test]
fn settings_are_read_and_removed() {
    for backend in BACKENDS {
        let test_db = TestDatabase::new(backend).expect("database");
        let db = &test_db.db;
        assert_eq!(db.setting("url_signing_secret").unwrap(), None);
        assert!(!db.remove_setting("url_signing_secret").unwrap());
        test_db.put_setting("url_signing_secret", "kept-by-an-earlier-version").unwrap();
        assert_eq!(db.setting("url_signing_secret").unwrap().as_deref(), Some("kept-by-an-earlier-version"));
        assert!(db.remove_setting("url_signing_secret").unwrap());
        assert_eq!(db.setting("url_signing_secret").unwrap(), None);
    }
}

/// A finalisation that fails midway (here its ledger write is refused by a real constraint, as a
/// crash before commit would stop it) leaves nothing half-done: the task is still running, nothing
/// is captured. Run again once the fault is gone, it charges exactly once; run a third time, nothing.
#[test]
fn interrupted_finalisation_is_all_or_nothing_and_charges_once_when_rerun() {
    for backend in BACKENDS {
        let test_db = TestDatabase::new(backend).expect("database");
        let db = &test_db.db;
        let key = account_and_key(db, "5", false, None);
        let task = db.submit_task(&new_task(db, &key, "0.3")).unwrap();
        let claim = db.claim_task("w", 60_000, RunningShares::UNLIMITED).unwrap().unwrap();
        // A stray capture row for this task makes the finalising transaction's ledger insert fail.
        let stray = format!(
            "INSERT INTO ledger (task_id, key_id, account_id, kind, amount_units, allowance_units, created_at) \
             VALUES ('{}', '{}', '{}', 'capture', 1, 1, 0)",
            task.id, task.key_id, task.account_id
        );
        let cleanup = format!("DELETE FROM ledger WHERE task_id = '{}' AND amount_units = 1", task.id);
        let raw = |sql: &str| raw_sql(&test_db, backend, sql).expect("sql");
        raw(&stray);
        assert!(db.finish_succeeded(&task.id, claim.attempt, "[]", None, usd("0.3"), true).is_err());
        let record = db.task(&task.id).unwrap().unwrap();
        assert_eq!((record.status.as_str(), record.cost_units), ("running", None), "rolled back");
        let usage = db.usage(&key, 10).unwrap();
        assert_eq!((usage.key.spent_units, usage.key.held_units), (0, 3_000), "no money moved");

        raw(&cleanup);
        assert!(db.finish_succeeded(&task.id, claim.attempt, "[]", None, usd("0.3"), true).unwrap().is_some());
        assert!(db.finish_succeeded(&task.id, claim.attempt, "[]", None, usd("0.3"), true).unwrap().is_none());
        let usage = db.usage(&key, 10).unwrap();
        assert_eq!((usage.key.spent_units, usage.key.held_units), (3_000, 0));
        assert_eq!(db.verify_ledger().unwrap(), vec![]);
    }
}

/// `verify-ledger` on a live system: two writers submit, claim and settle jobs while it runs
/// over and over; it must never report a half-finished settlement as a mismatch.
#[test]
fn verify_ledger_reads_one_snapshot_under_load() {
    const SETTLEMENTS: usize = 60;
    each_backend(|db| {
        let key = account_and_key(db, "1000", true, None);
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let (db, key) = (db.clone(), key.clone());
                thread::spawn(move || {
                    let mut settled = 0;
                    while settled < SETTLEMENTS {
                        db.submit_task(&new_task(&db, &key, "0.0100")).expect("submit");
                        if let Some(claim) =
                            db.claim_task(&format!("writer-{w}"), 60_000, RunningShares::UNLIMITED).expect("claim")
                        {
                            db.finish_succeeded(&claim.task.id, claim.attempt, "[]", None, usd("0.006"), true)
                                .expect("finish");
                            settled += 1;
                        }
                    }
                })
            })
            .collect();
        // Checks run for as long as the writers do.
        let mut checks = 0;
        while checks < 5 || !writers.iter().all(|w| w.is_finished()) {
            assert_eq!(db.verify_ledger().expect("verify"), vec![], "mismatch under load (check {checks})");
            checks += 1;
        }
        writers.into_iter().for_each(|w| w.join().expect("writer"));
        assert_eq!(db.usage(&key, 1).unwrap().key.spent_units, 2 * SETTLEMENTS as i64 * 60);
    });
}

/// Task statuses, failure kinds and ledger kinds are closed sets in the schema itself: a stray
/// write of any other value is refused by the database.
#[test]
fn the_schema_refuses_unknown_statuses_and_ledger_kinds() {
    for backend in BACKENDS {
        let test_db = TestDatabase::new(backend).expect("database");
        let db = &test_db.db;
        let key = account_and_key(db, "5", false, None);
        let task = db.submit_task(&new_task(db, &key, "0.1000")).expect("submit");
        for sql in [
            format!("UPDATE ledger SET kind = 'refund' WHERE task_id = '{}'", task.id),
            format!("UPDATE tasks SET status = 'paused' WHERE id = '{}'", task.id),
            format!("UPDATE tasks SET failure_kind = 'other' WHERE id = '{}'", task.id),
        ] {
            let error = raw_sql(&test_db, backend, &sql).expect_err(&sql);
            assert!(error.to_lowercase().contains("check constraint"), "{backend:?} {sql}: {error}");
        }
        assert_eq!(db.task(&task.id).unwrap().unwrap().status, "queued");
        assert_eq!(db.verify_ledger().expect("verify"), vec![]);
    }
}

fn raw_sql(test_db: &TestDatabase, backend: storage::Backend, sql: &str) -> Result<(), String> {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    let result = match backend {
        storage::Backend::Sqlite => diesel::SqliteConnection::establish(test_db.url.trim_start_matches("sqlite://"))
            .expect("connect")
            .batch_execute(sql),
        storage::Backend::Postgres => {
            diesel::PgConnection::establish(&test_db.url).expect("connect").batch_execute(sql)
        }
    };
    result.map_err(|e| e.to_string())
}

/// A key revoked after the request was let in (while its submit waited for the key's row) is
/// refused under the lock, and nothing is held.
#[test]
fn a_key_revoked_before_its_hold_is_refused() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        db.revoke_key(&key).expect("revoke");
        assert!(matches!(db.submit_task(&new_task(db, &key, "0.1000")), Err(SubmitError::Revoked)));
        assert_eq!(db.usage(&key, 10).unwrap().key.held_units, 0);
    });
}

/// A poll reads what it shows, not the job (whose inputs can be megabytes).
#[test]
fn a_poll_reads_the_task_without_its_job() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        let mut new = new_task(db, &key, "0.1000");
        new.job = format!("{{\"inputs\": \"{}\"}}", "x".repeat(1 << 20));
        let task = db.submit_task(&new).expect("submit");
        let polled = db.task_for_key(&task.id, &key).expect("poll").expect("visible to its key");
        assert_eq!(polled.job, "");
        assert_eq!(
            (polled.id.as_str(), polled.status.as_str(), polled.price_units),
            (task.id.as_str(), "queued", 1_000)
        );
        assert_eq!(db.task(&task.id).unwrap().unwrap().job.len(), new.job.len(), "workers still read the job");
        assert!(db.task_for_key(&task.id, "key_other").unwrap().is_none());
    });
}

/// Eight workers race to claim forty jobs (on PostgreSQL through `FOR UPDATE SKIP LOCKED`, on
/// SQLite through its single writer): every job is claimed exactly once.
#[test]
fn racing_workers_claim_every_job_exactly_once() {
    const JOBS: usize = 40;
    each_backend(|db| {
        let key = account_and_key(db, "100", false, None);
        let ids: std::collections::BTreeSet<String> =
            (0..JOBS).map(|_| db.submit_task(&new_task(db, &key, "0.0100")).expect("submit").id).collect();
        let barrier = Arc::new(Barrier::new(8));
        let handles: Vec<_> = (0..8)
            .map(|w| {
                let (db, barrier) = (db.clone(), barrier.clone());
                thread::spawn(move || {
                    barrier.wait();
                    let mut claimed = Vec::new();
                    while let Some(claim) =
                        db.claim_task(&format!("racer-{w}"), 60_000, RunningShares::UNLIMITED).expect("claim")
                    {
                        claimed.push(claim.task.id);
                    }
                    claimed
                })
            })
            .collect();
        let mut claimed: Vec<String> = handles.into_iter().flat_map(|h| h.join().expect("racer")).collect();
        claimed.sort();
        let unique: std::collections::BTreeSet<String> = claimed.iter().cloned().collect();
        assert_eq!(claimed.len(), JOBS, "no job claimed twice");
        assert_eq!(unique, ids, "every job claimed");
        for id in &ids {
            db.finish_failed(id, 1, "test over", FailureKind::Job).expect("finish");
        }
    });
}

/// A provider's task: never claimed to run here; tracked as a timer by attempts that fence each
/// other; woken by a callback even while a look holds it; failed unbilled when its submission is
/// refused.
#[test]
fn provider_tasks_are_timers_fenced_by_attempt() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        let mut new = new_task(db, &key, "0.0400");
        new.provider = Some("fal".into());
        let task = db.submit_task(&new).expect("submit");
        assert!(
            db.claim_task("w", 60_000, RunningShares::UNLIMITED).unwrap().is_none(),
            "the job loop never takes a provider's task"
        );
        assert!(db.claim_tracked("t", 60_000, 10).unwrap().is_empty(), "left alone while it is submitted");
        assert!(db.record_submission(&task.id, r#"{"provider":"fal"}"#, 0).unwrap());
        assert!(!db.record_submission(&task.id, "{}", 0).unwrap(), "recorded once");
        std::thread::sleep(std::time::Duration::from_millis(5));

        let first = db.claim_tracked("t1", 60_000, 10).unwrap();
        assert_eq!(first.len(), 1);
        assert!(db.claim_tracked("t2", 60_000, 10).unwrap().is_empty(), "one look at a time");
        // A callback during the look: the lease stands, and the look's reschedule makes it due now.
        assert!(db.wake_tracked(&task.id).unwrap());
        assert!(db.claim_tracked("t2", 60_000, 10).unwrap().is_empty());
        assert!(db.reschedule_tracked(&task.id, first[0].attempt, 60_000, true).unwrap());
        let second = db.claim_tracked("t2", 60_000, 10).unwrap();
        assert_eq!(second.len(), 1, "due at once, not in a minute");
        assert_eq!(second[0].task.status().unwrap(), TaskStatus::Running);
        // The older attempt is fenced out; the newer one finishes and bills once.
        assert!(!db.reschedule_tracked(&task.id, first[0].attempt, 0, false).unwrap());
        let success = storage::Success { outputs_json: "[]", cost: usd("0.0400"), ..Default::default() };
        assert!(db.finish_tracked(&task.id, first[0].attempt, &success).unwrap().is_none());
        assert!(db.finish_tracked(&task.id, second[0].attempt, &success).unwrap().is_some());
        assert!(db.finish_tracked(&task.id, second[0].attempt, &success).unwrap().is_none(), "never twice");

        // A refused submission: failed at once from `queued`, its hold released.
        let refused = db.submit_task(&NewTask { id: new_id("task"), ..new.clone() }).expect("submit");
        assert!(db.fail_unsubmitted(&refused.id, "provider submit failed: no").unwrap());
        let refused = db.task(&refused.id).unwrap().unwrap();
        assert_eq!((refused.status().unwrap(), refused.cost_units), (TaskStatus::Failed, None));
        assert!(!db.fail_unsubmitted(&task.id, "no").unwrap(), "only a task still waiting for its submission");
        assert_eq!(db.key(&key).unwrap().held_units, 0);
    });
}

/// The queued tasks of a flooding key, of a second key of its account, and of another account's key.
struct Backlog {
    flood: Vec<String>,
    sibling_tasks: Vec<String>,
    others: Vec<String>,
}

/// Six tasks of a flooding key, then two of a second key of its account, then `others` of
/// another account's key.
fn backlog(db: &Database, others: usize) -> Backlog {
    let flooder = account_and_key(db, "50", false, None);
    let account = db.key(&flooder).unwrap().account_id;
    let name = db.account(&account).unwrap().name;
    let sibling = db.create_key(&name, &keys::hash_secret(&keys::secret_from_random(rand_bytes())), None, None);
    let sibling = sibling.expect("second key").id;
    let other = account_and_key(db, "5", false, None);
    let submit = |key: &str, n: usize| -> Vec<String> {
        (0..n).map(|_| db.submit_task(&new_task(db, key, "0.1")).unwrap().id).collect()
    };
    Backlog { flood: submit(&flooder, 6), sibling_tasks: submit(&sibling, 2), others: submit(&other, others) }
}

/// A key (and an account) that floods the queue gets no more than its share of running tasks,
/// even with claims racing on several workers, and another key's task is claimed past its backlog.
#[test]
fn a_flooding_key_runs_only_its_share_and_others_pass_it() {
    each_backend(|db| {
        let Backlog { flood, sibling_tasks, others } = backlog(db, 1);
        let others = others[0].clone();
        let shares = RunningShares { per_key: 2, per_account: 3 };
        let barrier = Barrier::new(8);
        let claimed: Vec<String> = thread::scope(|scope| {
            let racers: Vec<_> = (0..8)
                .map(|w| {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        barrier.wait();
                        db.claim_task(&format!("racer-{w}"), 60_000, shares).expect("claim").map(|c| c.task.id)
                    })
                })
                .collect();
            racers.into_iter().filter_map(|r| r.join().unwrap()).collect()
        });
        let count = |ids: &[String]| claimed.iter().filter(|c| ids.contains(c)).count();
        assert_eq!(count(&flood), 2, "the flooding key ran more than its share: {claimed:?}");
        assert_eq!(count(&sibling_tasks), 1, "the account ran more than its share: {claimed:?}");
        assert_eq!(count(&[others]), 1, "the other key's task waited behind the flood: {claimed:?}");
        assert_eq!(claimed.len(), 4, "{claimed:?}");
    });
}

/// A mailed link works once and not past its time; a verified address earns the allowance once
/// per identity and a bounded number of times per range, with verifications racing.
#[test]
fn links_work_once_and_allowances_hold_their_bounds_under_races() {
    use storage::{AllowanceGrant, LinkPurpose, Verified};
    each_backend(|db| {
        let sign_up = |email: &str| db.sign_up(email, "hash", Usd::ZERO).expect("sign-up").id;
        let account = sign_up(&format!("{}@example.com", new_id("link")));
        db.create_link(LinkPurpose::Verify, &account, "live-hash", 60_000).unwrap();
        db.create_link(LinkPurpose::Verify, &account, "stale-hash", -1).unwrap();
        assert_eq!(db.use_link(LinkPurpose::Reset, "live-hash").unwrap(), None, "another purpose");
        assert_eq!(db.link_account(LinkPurpose::Verify, "live-hash").unwrap().as_deref(), Some(account.as_str()));
        assert_eq!(db.use_link(LinkPurpose::Verify, "live-hash").unwrap().as_deref(), Some(account.as_str()));
        assert_eq!(db.use_link(LinkPurpose::Verify, "live-hash").unwrap(), None, "used once");
        assert_eq!(db.use_link(LinkPurpose::Verify, "stale-hash").unwrap(), None, "expired");

        let range = new_id("range");
        let grant = |identity: &str| AllowanceGrant {
            identity: identity.to_string(),
            address_range: range.clone(),
            allowance: usd("5"),
            per_range: 2,
            window_ms: 60_000,
        };
        let shared = new_id("same-person");
        let accounts: Vec<String> = (0..6).map(|i| sign_up(&format!("{}-{i}@example.com", new_id("racer")))).collect();
        let barrier = Barrier::new(accounts.len());
        let outcomes: Vec<Verified> = thread::scope(|scope| {
            let racers: Vec<_> = accounts
                .iter()
                .enumerate()
                .map(|(i, account)| {
                    let (barrier, grant) = (&barrier, &grant);
                    // Two of them are the same identity.
                    let identity = if i < 2 { shared.clone() } else { new_id("identity") };
                    scope.spawn(move || {
                        barrier.wait();
                        db.verify_login(account, &grant(&identity)).expect("verify")
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert_eq!(outcomes.iter().filter(|o| **o == Verified::Granted).count(), 2, "{outcomes:?}");
        let allowances: i64 = accounts.iter().map(|a| db.account(a).unwrap().free_allowance_units).sum();
        assert_eq!(allowances, 2 * usd("5").units(), "{outcomes:?}");
        assert_eq!(db.verify_login(&accounts[0], &grant("x")).unwrap(), Verified::AlreadyVerified);
        assert!(db.login_of(&accounts[5]).unwrap().unwrap().verified_at.is_some());
    });
}

/// The stored inputs of a key's unfinished tasks are bounded, and a finished task's no longer count.
#[test]
fn a_keys_unfinished_tasks_hold_a_bounded_number_of_input_bytes() {
    each_backend(|db| {
        let key = account_and_key(db, "50", false, None);
        let with_inputs =
            |bytes: i64| NewTask { input_bytes: bytes, key_input_limit: 1000, ..new_task(db, &key, "0.1") };
        let first = db.submit_task(&with_inputs(600)).expect("under the limit");
        assert!(matches!(
            db.submit_task(&with_inputs(600)),
            Err(SubmitError::InputsOverLimit { held: 600, limit: 1000 })
        ));
        db.submit_task(&with_inputs(400)).expect("exactly at the limit");
        // Both run; the first ends, and the 400 bytes still running leave room for 600.
        let claims: Vec<_> =
            (0..2).map(|_| db.claim_task("w", 60_000, RunningShares::UNLIMITED).unwrap().expect("a task")).collect();
        let claimed = claims.iter().find(|c| c.task.id == first.id).expect("the first was claimed");
        assert!(db.finish_failed(&first.id, claimed.attempt, "done", FailureKind::Job).unwrap());
        db.submit_task(&with_inputs(600)).expect("the finished task's inputs no longer count");
        assert!(matches!(db.submit_task(&with_inputs(1)), Err(SubmitError::InputsOverLimit { held: 1000, .. })));
    });
}

#[test]
fn a_shared_rate_bucket_never_gives_more_than_it_holds_to_concurrent_takers() {
    use domain::rate_limit::{Rate, RateClass};
    each_backend(|db| {
        let key = account_and_key(db, "5", true, None);
        // 60 a minute in bursts of 10: 32 threads each asking for 2 tokens get 10 in all (a
        // token more if a second passes meanwhile).
        let rate = Rate::new(60, 10);
        let granted: u32 = std::thread::scope(|scope| {
            let takers: Vec<_> = (0..32)
                .map(|_| {
                    scope.spawn(|| db.take_rate_tokens(&key, RateClass::Submit, rate, 2, 0).expect("take").granted)
                })
                .collect();
            takers.into_iter().map(|t| t.join().expect("taker")).sum()
        });
        assert!((10..=11).contains(&granted), "{granted}");
        let refused = db.take_rate_tokens(&key, RateClass::Submit, rate, 1, 0).expect("take");
        assert_eq!(refused.granted, 0);
        assert!(refused.retry_after_ms > 0 && refused.retry_after_ms <= 1000, "{refused:?}");
        // Another class of the same key has its own bucket; returned tokens go back.
        assert_eq!(db.take_rate_tokens(&key, RateClass::Read, rate, 4, 0).expect("take").granted, 4);
        assert_eq!(db.take_rate_tokens(&key, RateClass::Read, rate, 10, 3).expect("take").granted, 9);
    });
}

/// Waits up to ten seconds for `done`, failing with `what`.
fn wait_until(what: &str, done: &dyn Fn() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{what}");
        thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// An api-server answers verified keys from memory, and a key changed by any other process
/// (revoked, given a new secret or new rates) is forgotten by every cache as the change commits,
/// not when its entry would expire: announced by `NOTIFY` on PostgreSQL, counted in the shared
/// count of key changes beside the file on SQLite.
#[test]
fn a_key_changed_anywhere_is_forgotten_by_every_cache_of_verified_keys() {
    for backend in BACKENDS {
        let test_db = TestDatabase::new(backend).expect("test database");
        // Two processes: an api-server that caches keys (its entries held for a minute, so only
        // the announcements can make it forget one), and an operator's command.
        let server = &test_db.db;
        let operator = Database::connect(&test_db.url, 2).expect("second handle");
        TestDatabase::hold_verified_keys_for(server, std::time::Duration::from_secs(60));
        let listener = server.cache_verified_keys();
        assert!(listener.is_some(), "{backend:?}");
        let wait_until = |what: &str, done: &dyn Fn() -> bool| wait_until(&format!("{backend:?}: {what}"), done);
        wait_until("the cache starts once its listener connects", &|| server.caches_verified_keys());
        let name = new_id("acct");
        operator.create_account(&name, false, usd("5")).unwrap();
        let (first, second) = (keys::hash_secret("mgk_first"), keys::hash_secret("mgk_second"));
        let key = operator.create_key(&name, &first, None, None).unwrap();
        let other = operator.create_key(&name, &second, None, None).unwrap();
        let authenticated = |hash: &str| server.authenticate(hash).unwrap();
        assert_eq!(authenticated(&first).map(|k| k.key_id), Some(key.id.clone()));

        // A change made behind the service's back (no notification) is not seen while cached.
        raw_sql(&test_db, backend, &format!("UPDATE api_keys SET read_rate_per_minute = 7 WHERE id = '{}'", key.id))
            .unwrap();
        let cached = authenticated(&first).unwrap().read_rate_per_minute;
        assert_eq!(cached, None, "{backend:?}: the verified key is answered from memory");

        let listening = || server.caches_verified_keys();
        // Any key's change, made by another process, makes the server read every key again.
        assert!(listening(), "the listener stayed up");
        operator.set_key_rates(&other.id, Some(60), None).unwrap();
        wait_until("a change notified by another process is heard", &|| {
            authenticated(&first).and_then(|k| k.read_rate_per_minute) == Some(7)
        });

        // Revoked by the operator: refused by the server, which had it cached.
        assert!(authenticated(&second).is_some() && listening());
        operator.revoke_key(&other.id).unwrap();
        wait_until("a revocation is heard", &|| authenticated(&second).is_none());

        // A new secret: the old one stops working, the new one works.
        let third = keys::hash_secret("mgk_third");
        let secret = storage::NewKeySecret { hash: &third, prefix: None, webhook_secret: None };
        assert!(listening());
        operator.replace_key_secret(&key.id, &secret).unwrap().expect("live key");
        wait_until("a replaced secret is heard", &|| authenticated(&first).is_none());
        assert_eq!(authenticated(&third).map(|k| k.key_id), Some(key.id.clone()));

        // The server's own change is forgotten before its call returns.
        server.revoke_key(&key.id).unwrap();
        assert!(authenticated(&third).is_none());
        drop(listener);
        assert!(!server.caches_verified_keys(), "a stopped listener stops the cache");
    }
}

/// A poll's reads: on SQLite done at once on the caller's thread (the key, then its own task
/// only), except when the key's use is due to be recorded, a write left to the blocking path; on
/// PostgreSQL never on the caller's thread.
#[test]
fn a_polls_reads_are_done_at_once_only_on_sqlite_and_only_without_a_write() {
    each_backend(|db| {
        let hash = keys::hash_secret("mgk_poller");
        let name = new_id("acct");
        db.create_account(&name, true, usd("5")).unwrap();
        let other = db.create_key(&name, &keys::hash_secret("mgk_other"), None, None).unwrap();
        let poller = db.create_key(&name, &hash, None, None).unwrap();
        let mine = new_task(db, &poller.id, "0.01");
        let theirs = new_task(db, &other.id, "0.01");
        db.submit_task(&mine).unwrap();
        db.submit_task(&theirs).unwrap();
        let postgres = db.backend() == storage::Backend::Postgres;
        // Never used: its first use is to be recorded, which is a write.
        assert!(db.poll_reads_at_once(&hash, Some(&mine.id)).is_none());
        let blocking = db.poll_reads(&hash, Some(&mine.id)).unwrap();
        assert_eq!(blocking.task.as_ref().map(|t| t.id.clone()), Some(mine.id.clone()));
        let at_once = db.poll_reads_at_once(&hash, Some(&mine.id));
        assert_eq!(at_once.is_none(), postgres, "done at once on SQLite only");
        if let Some(reads) = at_once {
            let reads = reads.unwrap();
            assert_eq!(reads.key.map(|k| k.key_id), Some(poller.id.clone()));
            // The one statement reads every column the blocking path reads.
            assert_eq!(reads.task, blocking.task);
            let foreign = db.poll_reads_at_once(&hash, Some(&theirs.id)).unwrap().unwrap();
            assert!(foreign.key.is_some() && foreign.task.is_none(), "another key's task is invisible");
            for no_task in [None, Some("task_none"), Some("")] {
                let reads = db.poll_reads_at_once(&hash, no_task).unwrap().unwrap();
                assert!(reads.key.is_some() && reads.task.is_none(), "{no_task:?}");
            }
            let unknown = db.poll_reads_at_once(&keys::hash_secret("mgk_nobody"), Some(&mine.id)).unwrap().unwrap();
            assert!(unknown.key.is_none() && unknown.task.is_none());
            db.revoke_key(&poller.id).unwrap();
            let revoked = db.poll_reads_at_once(&hash, Some(&mine.id)).unwrap().unwrap();
            assert!(revoked.key.is_none() && revoked.task.is_none(), "a revoked key reads nothing");
        }
    });
}

/// A poll of an ended task is answered from memory, reading nothing, only to the key that created
/// it and only while that key lives; a task not ended, one near its expiry by retention, or one
/// this process expired is read again.
#[test]
fn ended_tasks_are_answered_from_memory_to_their_own_live_key_only() {
    for backend in BACKENDS {
        let test_db = TestDatabase::new(backend).expect("test database");
        let (server, operator) = (&test_db.db, Database::connect(&test_db.url, 2).expect("second handle"));
        let _listener = server.cache_verified_keys().expect("keys are cached");
        let wait_until = |what: &str, done: &dyn Fn() -> bool| wait_until(&format!("{backend:?}: {what}"), done);
        wait_until("the key cache starts", &|| server.caches_verified_keys());
        let day = std::time::Duration::from_secs(86_400);
        server.cache_ended_tasks(Some(30 * day));
        let name = new_id("acct");
        operator.create_account(&name, true, usd("5")).unwrap();
        let (mine, theirs) = (keys::hash_secret("mgk_mine"), keys::hash_secret("mgk_theirs"));
        let key = operator.create_key(&name, &mine, None, None).unwrap();
        operator.create_key(&name, &theirs, None, None).unwrap();
        let poll = |hash: &str, id: &str| {
            let reads = server.poll_reads(hash, Some(id)).unwrap();
            server.keep_polled_task(&reads);
            reads
        };
        let in_memory = |hash: &str, id: &str| server.poll_reads_in_memory(hash, Some(id)).and_then(|r| r.task);

        let task = operator.submit_task(&new_task(&operator, &key.id, "0.4")).unwrap();
        assert_eq!(poll(&mine, &task.id).task.map(|t| t.status), Some("queued".to_string()));
        assert!(in_memory(&mine, &task.id).is_none(), "{backend:?}: a queued task is read every time");
        let claimed = operator.claim_task("w1", 60_000, RunningShares::UNLIMITED).unwrap().expect("claimed");
        operator.finish_succeeded(&task.id, claimed.attempt, "[]", None, usd("0.25"), true).unwrap();
        let ended = poll(&mine, &task.id).task.expect("read");
        assert_eq!(ended.status, "succeeded");
        assert_eq!(in_memory(&mine, &task.id), Some(ended.clone()), "{backend:?}: answered from memory");
        assert!(poll(&theirs, &task.id).task.is_none());
        assert!(in_memory(&theirs, &task.id).is_none(), "{backend:?}: another key never sees it");

        // This process expires it: read again (and found expired).
        assert!(server.expire_task(&task.id, storage::now_millis()).unwrap());
        assert!(in_memory(&mine, &task.id).is_none(), "{backend:?}: an expired task is forgotten");
        assert!(poll(&mine, &task.id).task.expect("read").expired_at.is_some());

        // A task whose expiry is near is not kept: the sweeper of another process may expire it.
        server.cache_ended_tasks(Some(std::time::Duration::from_secs(90)));
        let near = operator.submit_task(&new_task(&operator, &key.id, "0.4")).unwrap();
        let claimed = operator.claim_task("w1", 60_000, RunningShares::UNLIMITED).unwrap().expect("claimed");
        operator.finish_failed(&near.id, claimed.attempt, "broke", FailureKind::Job).unwrap();
        assert_eq!(poll(&mine, &near.id).task.map(|t| t.status), Some("failed".to_string()));
        assert!(in_memory(&mine, &near.id).is_none(), "{backend:?}: kept within two minutes of its expiry");
        server.cache_ended_tasks(None);
        poll(&mine, &near.id);
        assert!(in_memory(&mine, &near.id).is_some(), "{backend:?}: with no retention an ended task is kept");

        // Its key revoked by another process: nothing is answered from memory any more.
        operator.revoke_key(&key.id).unwrap();
        wait_until("the revocation is heard", &|| in_memory(&mine, &near.id).is_none());
        let reads = poll(&mine, &near.id);
        assert!(reads.key.is_none() && reads.task.is_none(), "{backend:?}");
    }
}

/// On SQLite a poll of a task still queued or running is answered from memory, to its own live
/// key only, until any process changes the task: another pool on the file (as another process
/// would) claims it, this pool cancels it, a change to it lands between the count's reading and
/// the read. Tasks the changes do not touch stay answered.
#[test]
fn live_tasks_are_answered_from_memory_until_any_process_changes_them() {
    let test_db = TestDatabase::new(storage::Backend::Sqlite).expect("test database");
    let (server, worker) = (&test_db.db, Database::connect(&test_db.url, 2).expect("second handle"));
    let _listener = server.cache_verified_keys().expect("keys are cached");
    wait_until("the key cache starts", &|| server.caches_verified_keys());
    let name = new_id("acct");
    worker.create_account(&name, true, usd("5")).unwrap();
    let (mine, theirs) = (keys::hash_secret("mgk_mine"), keys::hash_secret("mgk_theirs"));
    let key = worker.create_key(&name, &mine, None, None).unwrap();
    worker.create_key(&name, &theirs, None, None).unwrap();
    // The first poll of each key records its use (a write), on the blocking path.
    server.poll_reads(&mine, None).unwrap();
    server.poll_reads(&theirs, None).unwrap();
    let poll = |id: &str| server.poll_reads_at_once(&mine, Some(id)).expect("done at once").unwrap().task;
    let in_memory = |hash: &str, id: &str| server.poll_reads_in_memory(hash, Some(id)).and_then(|r| r.task);
    let status = |task: Option<storage::TaskRecord>| task.map(|t| t.status);

    let task = worker.submit_task(&new_task(&worker, &key.id, "0.4")).unwrap();
    // Both may be created in the same millisecond: the claim takes the first made, by its id.
    let bystander = worker.submit_task(&new_task(&worker, &key.id, "0.4")).unwrap();
    assert_eq!(status(poll(&task.id)), Some("queued".into()));
    assert_eq!(status(poll(&bystander.id)), Some("queued".into()));
    assert_eq!(in_memory(&mine, &task.id), poll(&task.id), "a queued task is answered from memory");
    assert!(in_memory(&theirs, &task.id).is_none(), "another key never sees it");

    // Claimed by another process: the next poll reads it again and sees it running.
    let claimed = worker.claim_task("w1", 60_000, RunningShares::UNLIMITED).unwrap().expect("claimed");
    assert_eq!(claimed.task.id, task.id, "the older task is claimed first");
    assert!(in_memory(&mine, &task.id).is_none(), "a task another process changed is read again");
    assert_eq!(status(in_memory(&mine, &bystander.id)), Some("queued".into()), "an unchanged task stays");
    assert_eq!(status(poll(&task.id)), Some("running".into()));
    assert_eq!(status(in_memory(&mine, &task.id)), Some("running".into()));

    // Cancelled by this process: read again, and an ended task is not kept as a live one.
    server.cancel_task(&bystander.id, &key.id).unwrap();
    assert!(in_memory(&mine, &bystander.id).is_none(), "a task this process changed is read again");
    assert_eq!(status(poll(&bystander.id)), Some("failed".into()));
    assert!(in_memory(&mine, &bystander.id).is_none(), "an ended task is kept only by the ended tasks' cache");

    // Its key revoked by another process: nothing is answered from memory any more.
    worker.revoke_key(&key.id).unwrap();
    wait_until("the revocation is heard", &|| in_memory(&mine, &task.id).is_none());
}

/// One transaction of many submits of one account checks each as if it ran alone after the ones
/// before it: caps, the allowance, idempotency keys, webhooks and inputs held, all within the
/// batch.
#[test]
fn a_batch_of_submits_checks_each_in_turn() {
    each_backend(|db| {
        let name = new_id("acct-name");
        let account = db.create_account(&name, false, usd("1")).expect("account");
        let create_key = |cap: Option<&str>| {
            let secret = keys::secret_from_random(rand_bytes());
            db.create_key(&name, &keys::hash_secret(&secret), None, cap.map(usd)).expect("key").id
        };
        let (capped, open) = (create_key(Some("0.6")), create_key(None));
        let claim = |key: &str| storage::IdempotencyClaim { key: key.into(), request_hash: "h1".into() };
        let mut batch = vec![
            new_task(db, &capped, "0.4"),
            new_task(db, &capped, "0.3"),
            new_task(db, &capped, "0.2"),
            new_task(db, &open, "0.3"),
            new_task(db, &open, "0.2"),
            NewTask { idempotency: Some(claim("k1")), ..new_task(db, &open, "0.1") },
            NewTask { idempotency: Some(claim("k1")), ..new_task(db, &open, "0.1") },
            NewTask {
                webhook: storage::WebhookChoice::Requested(domain::TaskWebhook {
                    url: "https://example.com/hook".into(),
                    on_running: false,
                }),
                ..new_task(db, &open, "0")
            },
            NewTask { input_bytes: 10, key_input_limit: 5, ..new_task(db, &capped, "0") },
        ];
        batch[6].idempotency.as_mut().expect("claim").request_hash = "h2".into();
        let results = db.submit_tasks(&batch);
        let outcome: Vec<&str> = results
            .iter()
            .map(|result| match result {
                Ok(_) => "ok",
                Err(SubmitError::Refused(BillingRefusal::SpendCapReached { .. })) => "cap",
                Err(SubmitError::Refused(BillingRefusal::AllowanceUsedUp { .. })) => "allowance",
                Err(SubmitError::AlreadySubmitted(_)) => "again",
                Err(SubmitError::NoWebhookSecret) => "no secret",
                Err(SubmitError::InputsOverLimit { .. }) => "inputs",
                Err(_) => "other",
            })
            .collect();
        assert_eq!(outcome, ["ok", "cap", "ok", "ok", "allowance", "ok", "again", "no secret", "inputs"]);
        let Err(SubmitError::AlreadySubmitted(earlier)) = &results[6] else { unreachable!() };
        assert_eq!((earlier.task_id.as_str(), earlier.same_request), (batch[5].id.as_str(), false));
        let held = |key: &str| db.key(key).expect("key").held_units;
        assert_eq!((held(&capped), held(&open)), (6_000, 4_000));
        assert_eq!(db.account(&account.id).expect("account").free_held_units, 10_000);
        for (new, result) in batch.iter().zip(&results) {
            assert_eq!(db.task(&new.id).expect("read").is_some(), result.is_ok(), "only accepted tasks are stored");
        }
        // The batch's idempotency record holds for a later request.
        let again = NewTask { idempotency: Some(claim("k1")), ..new_task(db, &open, "0") };
        assert!(matches!(db.submit_task(&again), Err(SubmitError::AlreadySubmitted(e)) if e.task_id == batch[5].id));
    });
}

/// One batch of an account's submits under three keys (one with a signing secret and a default
/// webhook, one with a secret only, one with neither): each task gets the webhook its request and
/// its key give it, as the deliveries made at its start and its end show.
#[test]
fn a_batch_gives_each_task_the_webhook_of_its_request_and_key() {
    each_backend(|db| {
        let name = new_id("acct-name");
        db.create_account(&name, false, usd("5")).expect("account");
        let create_key = || {
            let secret = keys::secret_from_random(rand_bytes());
            db.create_key(&name, &keys::hash_secret(&secret), None, None).expect("key").id
        };
        let (hooked, secret_only, plain) = (create_key(), create_key(), create_key());
        for key in [&hooked, &secret_only] {
            db.set_webhook_secret(key, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("secret");
        }
        let default = domain::TaskWebhook { url: "https://example.com/default".into(), on_running: true };
        db.set_default_webhook(&hooked, Some(&default)).expect("default webhook");
        let named = || {
            storage::WebhookChoice::Requested(domain::TaskWebhook {
                url: "https://example.com/named".into(),
                on_running: false,
            })
        };
        let with = |key: &str, webhook| NewTask { webhook, ..new_task(db, key, "0.1") };
        let batch = [
            with(&hooked, storage::WebhookChoice::KeyDefault(None)),
            with(&hooked, storage::WebhookChoice::KeyDefault(Some(false))),
            with(&hooked, named()),
            with(&hooked, storage::WebhookChoice::Off),
            with(&secret_only, storage::WebhookChoice::KeyDefault(None)),
            with(&secret_only, named()),
            with(&plain, storage::WebhookChoice::KeyDefault(Some(true))),
            with(&plain, named()),
        ];
        let results = db.submit_tasks(&batch);
        assert!(matches!(results[7], Err(SubmitError::NoWebhookSecret)), "{:?}", results[7]);
        assert!(results[..7].iter().all(Result::is_ok), "{results:?}");
        while let Some(task) = db.claim_task("w1", 60_000, RunningShares::UNLIMITED).expect("claim") {
            db.finish_succeeded(&task.task.id, task.attempt, "[]", None, usd("0.1"), true).expect("finish");
        }
        let mut sent: Vec<(String, String, String)> = db
            .claim_webhook_deliveries(60_000, 100)
            .expect("deliveries")
            .into_iter()
            .map(|delivery| (delivery.task_id, delivery.event, delivery.url))
            .collect();
        sent.sort();
        let (default, named) = ("https://example.com/default", "https://example.com/named");
        let mut expected: Vec<(String, String, String)> = [
            (0, "completed", default),
            (0, "running", default),
            (1, "completed", default),
            (2, "completed", named),
            (5, "completed", named),
        ]
        .into_iter()
        .map(|(n, event, url)| (batch[n].id.clone(), event.to_string(), url.to_string()))
        .collect();
        expected.sort();
        assert_eq!(sent, expected);
        let held = |key: &str| db.key(key).expect("key").held_units;
        assert_eq!((held(&hooked), held(&secret_only), held(&plain)), (0, 0, 0), "every hold settled");
    });
}

/// Two api-servers (two pools, each batching its own submits) and 32 clients each submit at once
/// to one key under a cap and an allowance: exactly what fits is accepted, and each idempotency
/// key makes one task between them.
#[test]
fn batches_of_two_processes_never_pass_the_cap() {
    for backend in BACKENDS {
        let test_db = TestDatabase::new(backend).expect("test database");
        let first = test_db.db.clone();
        let second = Database::connect(&test_db.url, 8).expect("second pool");
        let key = account_and_key(&first, "100", false, Some("2.5"));
        let barrier = Arc::new(Barrier::new(64));
        let handles: Vec<_> = (0..64)
            .map(|i| {
                let db = if i % 2 == 0 { first.clone() } else { second.clone() };
                let (key, barrier) = (key.clone(), barrier.clone());
                thread::spawn(move || {
                    // Eight requests are tries of one request; the rest are their own.
                    let idempotency =
                        (i < 8).then(|| storage::IdempotencyClaim { key: "same".into(), request_hash: "h".into() });
                    let new = NewTask { idempotency, ..new_task(&db, &key, "0.1") };
                    barrier.wait();
                    db.submit_task(&new)
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().expect("thread")).collect();
        let accepted = results.iter().filter(|r| r.is_ok()).count();
        let tries_accepted = results[..8].iter().filter(|r| r.is_ok()).count();
        assert_eq!(accepted, 25, "{backend:?}: the cap fits 25 submits");
        assert!(tries_accepted <= 1, "{backend:?}: the eight tries of one request made {tries_accepted} tasks");
        assert!(results.iter().all(|r| matches!(
            r,
            Ok(_)
                | Err(SubmitError::AlreadySubmitted(_))
                | Err(SubmitError::Refused(BillingRefusal::SpendCapReached { .. }))
        )));
        assert_eq!(first.key(&key).expect("key").held_units, 25_000);
        assert_eq!(first.verify_ledger().expect("verify"), vec![], "{backend:?}: books must balance");
    }
}

/// A submit whose write fails (here a task id already taken) fails its batch's transaction; the
/// others of the batch are then run again alone and accepted, and nothing of the failed one stays.
#[test]
fn a_failed_write_in_a_batch_fails_only_its_own_submit() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        let taken = db.submit_task(&new_task(db, &key, "0.1")).expect("first submit");
        let again = NewTask { id: taken.id.clone(), ..new_task(db, &key, "0.2") };
        let batch = [new_task(db, &key, "0.1"), again, new_task(db, &key, "0.1")];
        let results = db.submit_tasks(&batch);
        assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
        assert!(matches!(results[1], Err(SubmitError::Storage(_))), "{:?}", results[1]);
        assert_eq!(db.key(&key).expect("key").held_units, 3_000, "three holds of 0.1, none of 0.2");
        assert_eq!(db.task(&taken.id).expect("read").expect("stored").price_units, 1_000);
    });
}

/// One claim takes as many tasks as asked, oldest first, and still gives no key or account more
/// than its share, counting the ones it already runs and the ones taken in the same claim.
#[test]
fn one_claim_takes_many_tasks_within_the_shares() {
    each_backend(|db| {
        let Backlog { flood, sibling_tasks, others } = backlog(db, 2);
        let shares = RunningShares { per_key: 2, per_account: 3 };

        let in_queue_order = |ids: &[&String]| {
            let mut tasks: Vec<_> = ids.iter().map(|id| db.task(id).unwrap().unwrap()).collect();
            tasks.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
            tasks.into_iter().map(|task| task.id).collect::<Vec<String>>()
        };
        let first: Vec<String> =
            db.claim_tasks("w", 60_000, shares, 10).unwrap().into_iter().map(|c| c.task.id).collect();
        // Each key's first two in its line, and of those the account's first three (tasks submitted
        // within one millisecond keep no order of submission: their ids order them).
        let flood_first_two = &in_queue_order(&flood.iter().collect::<Vec<_>>())[..2];
        let sibling_first_two = &in_queue_order(&sibling_tasks.iter().collect::<Vec<_>>())[..2];
        let account_first_three =
            in_queue_order(&flood_first_two.iter().chain(sibling_first_two).collect::<Vec<_>>())[..3].to_vec();
        let expected: Vec<&String> = account_first_three.iter().chain(&others).collect();
        assert_eq!(
            first,
            in_queue_order(&expected),
            "three of the account's within its keys' shares, the other key's two"
        );
        assert!(db.claim_tasks("w", 60_000, shares, 10).unwrap().is_empty(), "every key and account is at its share");

        // One task of the account ends: it may run one more, the oldest its keys' shares allow.
        let (ended, still_running) = account_first_three.split_first().expect("three tasks");
        assert!(db.finish_succeeded(ended, 1, "[]", None, usd("0.1"), true).unwrap().is_some());
        let next: Vec<String> =
            db.claim_tasks("w", 60_000, shares, 10).unwrap().into_iter().map(|c| c.task.id).collect();
        let running_per_key = |key_tasks: &[String]| still_running.iter().filter(|id| key_tasks.contains(id)).count();
        let waiting: Vec<&String> = [&flood, &sibling_tasks]
            .into_iter()
            .filter(|key_tasks| running_per_key(key_tasks) < 2)
            .flatten()
            .filter(|id| !first.contains(id))
            .collect();
        assert_eq!(next, in_queue_order(&waiting)[..1]);

        // A claim takes no more than asked, the oldest first.
        let unlimited: Vec<String> =
            db.claim_tasks("w", 60_000, RunningShares::UNLIMITED, 2).unwrap().into_iter().map(|c| c.task.id).collect();
        let queued: Vec<&String> =
            flood.iter().chain(&sibling_tasks).filter(|id| !first.contains(id) && !next.contains(id)).collect();
        assert_eq!(unlimited, in_queue_order(&queued)[..2]);
        let running: Vec<&String> = first.iter().filter(|id| *id != ended).chain(&next).chain(&unlimited).collect();
        for id in running {
            assert!(db.finish_failed(id, 1, "test over", FailureKind::Job).unwrap());
        }
    });
}

/// Ends reported at the same moment by two processes' workers, some of them twice (a job's end
/// and a duplicate of it), share transactions: each task ends once, billed once if it succeeded,
/// and the books balance.
#[test]
fn ends_settled_together_bill_each_task_once() {
    const JOBS: usize = 24;
    for backend in BACKENDS {
        let test_db = TestDatabase::new(backend).expect("test database");
        let first = test_db.db.clone();
        let second = Database::connect(&test_db.url, 8).expect("second pool");
        let key = account_and_key(&first, "100", false, None);
        for _ in 0..JOBS {
            first.submit_task(&new_task(&first, &key, "0.1")).expect("submit");
        }
        let claimed = first.claim_tasks("w", 60_000, RunningShares::UNLIMITED, JOBS).expect("claim");
        assert_eq!(claimed.len(), JOBS);
        // Each task is ended by two threads, one per process: every third one fails.
        let barrier = Arc::new(Barrier::new(2 * JOBS));
        let handles: Vec<_> = (0..2 * JOBS)
            .map(|i| {
                let db = if i % 2 == 0 { first.clone() } else { second.clone() };
                let (claim, barrier) = (claimed[i / 2].clone(), barrier.clone());
                thread::spawn(move || {
                    barrier.wait();
                    if (i / 2) % 3 == 0 {
                        db.finish_failed(&claim.task.id, claim.attempt, "broke", FailureKind::Job).map(u8::from)
                    } else {
                        db.finish_succeeded(&claim.task.id, claim.attempt, "[]", None, usd("0.0600"), false)
                            .map(|capture| u8::from(capture.is_some()))
                    }
                })
            })
            .collect();
        let won: Vec<u8> = handles.into_iter().map(|h| h.join().expect("thread").expect("settle")).collect();
        for (job, pair) in won.chunks(2).enumerate() {
            assert_eq!(pair.iter().sum::<u8>(), 1, "{backend:?}: job {job} ended {pair:?} times");
        }
        let succeeded = (0..JOBS).filter(|job| job % 3 != 0).count() as i64;
        let key_row = first.key(&key).expect("key");
        assert_eq!(key_row.spent_units, succeeded * 600, "{backend:?}: each success billed once");
        assert_eq!(key_row.held_units, 0, "{backend:?}: every hold released");
        for (job, claim) in claimed.iter().enumerate() {
            let ledger = first.task_ledger(&claim.task.id).expect("ledger");
            let kinds: Vec<&str> = ledger.iter().map(|entry| entry.kind.as_str()).collect();
            let expected: &[&str] = if job % 3 == 0 { &["hold", "release"] } else { &["hold", "capture", "release"] };
            assert_eq!(kinds, expected, "{backend:?}: {}", claim.task.id);
        }
        assert_eq!(first.verify_ledger().expect("verify"), vec![], "{backend:?}: books must balance");
    }
}

/// A settlement locks only its task: it commits while another session holds the account's and
/// key's rows as a submit does (PostgreSQL; SQLite has one writer), every reader sees what it
/// moved at once, and the account's next submit, or a revocation, adds that into the rows.
#[test]
fn settlements_do_not_wait_for_a_submit() {
    use diesel::connection::SimpleConnection;
    use diesel::{Connection, RunQueryDsl};
    let test_db = TestDatabase::postgres().expect("PostgreSQL test database");
    let db = &test_db.db;
    let key = account_and_key(db, "5", false, None);
    let account_id = db.key(&key).expect("key").account_id;
    let task = db.submit_task(&new_task(db, &key, "0.4000")).expect("submit");
    let claimed = db.claim_task("w1", 60_000, RunningShares::UNLIMITED).expect("claim").expect("a task");
    let mut submit = diesel::PgConnection::establish(&test_db.url).expect("connect");
    submit
        .batch_execute(&format!(
            "BEGIN; SELECT id FROM accounts WHERE id = '{account_id}' FOR UPDATE; \
             SELECT id FROM api_keys WHERE id = '{key}' FOR UPDATE;"
        ))
        .expect("hold the rows");
    let (done, settled) = std::sync::mpsc::channel();
    {
        let (db, task_id) = (db.clone(), task.id.clone());
        thread::spawn(move || {
            let _ = done.send(db.finish_succeeded(&task_id, claimed.attempt, "[]", None, usd("0.2500"), false));
        });
    }
    // A deadlock guard, not a timing: the settlement needs none of the rows held.
    let capture = settled
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the settlement waited for the rows a submit holds")
        .expect("settled");
    assert_eq!(capture.map(|c| c.cost), Some(usd("0.2500")));
    let usage = db.usage(&key, 10).expect("usage");
    assert_eq!((usage.key.spent_units, usage.key.held_units), (2_500, 0));
    assert_eq!((usage.account.free_used_units, usage.account.free_held_units), (2_500, 0));
    assert_eq!(db.verify_ledger().expect("verify"), vec![], "the books balance before the changes are added in");
    submit.batch_execute("COMMIT").expect("release the rows");

    db.submit_task(&new_task(db, &key, "0.1000")).expect("submit");
    let mut stored = |sql: &str| -> i64 {
        diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(sql)).get_result(&mut submit).expect(sql)
    };
    assert_eq!(stored("(SELECT CAST(COUNT(*) AS BIGINT) FROM balance_changes)"), 0, "added in and deleted");
    assert_eq!(stored(&format!("(SELECT spent_units FROM api_keys WHERE id = '{key}')")), 2_500);
    assert_eq!(stored(&format!("(SELECT held_units FROM api_keys WHERE id = '{key}')")), 1_000);
    assert_eq!(stored(&format!("(SELECT free_used_units FROM accounts WHERE id = '{account_id}')")), 2_500);
    assert_eq!(stored(&format!("(SELECT free_held_units FROM accounts WHERE id = '{account_id}')")), 1_000);
    assert_eq!(db.verify_ledger().expect("verify"), vec![]);

    // A revocation cancels the queued job (its release recorded as a change) and, holding the
    // account, adds that in too: an account whose last key this was may never submit again.
    assert_eq!(db.revoke_key(&key).expect("revoke").cancelled.len(), 1);
    assert_eq!(stored("(SELECT CAST(COUNT(*) AS BIGINT) FROM balance_changes)"), 0, "added in by the revocation");
    assert_eq!(stored(&format!("(SELECT held_units FROM api_keys WHERE id = '{key}')")), 0);
    assert_eq!(stored(&format!("(SELECT free_held_units FROM accounts WHERE id = '{account_id}')")), 0);
    assert_eq!(db.verify_ledger().expect("verify"), vec![]);
}

/// The delivery log shows every attempt: one under way is left out until its lease lapses, one
/// whose sender died before recording the answer then shows as unrecorded, and a late record of
/// it fills the answer in without changing the delivery.
#[test]
fn the_delivery_log_keeps_attempts_whose_sender_died() {
    each_backend(|db| {
        let key = account_and_key(db, "5", false, None);
        db.set_webhook_secret(&key, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("secret");
        let webhook = domain::TaskWebhook { url: "https://example.com/hook".into(), on_running: false };
        let new = NewTask { webhook: storage::WebhookChoice::Requested(webhook), ..new_task(db, &key, "0.1") };
        let task = db.submit_task(&new).expect("submit");
        db.claim_task("w1", 60_000, RunningShares::UNLIMITED).expect("claim").expect("the task");
        db.finish_succeeded(&task.id, 1, "[]", None, usd("0.1"), true).expect("finish").expect("captured");
        let log = || {
            let scope = storage::DeliveriesOf::Key { key_id: &key, task_id: Some(&task.id) };
            let mut listed = db.webhook_deliveries(scope, 10).expect("log");
            assert_eq!(listed.len(), 1, "one completed message");
            let (delivery, attempts) = listed.remove(0);
            let shown: Vec<(i32, Option<i32>, Option<String>)> =
                attempts.into_iter().map(|a| (a.attempt, a.status_code, a.error)).collect();
            (delivery.status, shown)
        };
        let refused = storage::AttemptResult { status_code: Some(503), error: Some("503".into()), duration_ms: 4 };
        let taken = storage::AttemptResult { status_code: Some(200), error: None, duration_ms: 3 };
        let lost = Some(storage::UNRECORDED_ATTEMPT.to_string());

        let first = db.claim_webhook_deliveries(60_000, 10).expect("claim");
        assert_eq!(first.len(), 1);
        assert_eq!(log(), ("pending".into(), vec![]), "an attempt under way is not listed");
        assert!(db.record_webhook_attempt(&first[0].id, 1, &refused, Some(0)).expect("record"));
        // The second attempt's sender dies: its lease (1 ms) lapses with no answer.
        assert_eq!(db.claim_webhook_deliveries(1, 10).expect("claim")[0].attempts, 2);
        thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(log().1, vec![(1, Some(503), Some("503".into())), (2, None, lost.clone())]);
        let third = db.claim_webhook_deliveries(60_000, 10).expect("claim");
        assert_eq!(third[0].attempts, 3);
        assert!(db.record_webhook_attempt(&third[0].id, 3, &taken, None).expect("record"));
        assert_eq!(
            log(),
            ("delivered".into(), vec![(1, Some(503), Some("503".into())), (2, None, lost), (3, Some(200), None)])
        );
        // The second sender was only slow: its answer is logged, and counts for nothing.
        assert!(!db.record_webhook_attempt(&third[0].id, 2, &refused, Some(0)).expect("late record"));
        let (status, attempts) = log();
        assert_eq!((status.as_str(), attempts[1].1), ("delivered", Some(503)));
    });
}

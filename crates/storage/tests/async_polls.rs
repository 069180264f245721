//! A poll's task read on the caller's own PostgreSQL connection answers exactly what the blocking
//! read answers, only for a key verified in memory, and stops with the key's revocation.

use domain::{keys, Usd};
use std::time::{Duration, Instant};
use storage::test_support::TestDatabase;
use storage::{new_id, Database, NewTask, PollReads, RunningShares, WebhookChoice};

fn new_task(key_id: &str, account_id: &str) -> NewTask {
    NewTask {
        idempotency: None,
        webhook: WebhookChoice::Off,
        id: new_id("task"),
        key_id: key_id.into(),
        account_id: account_id.into(),
        engine: "tts".into(),
        job: "{\"prompt\": \"a long job the poll never shows\"}".into(),
        price: Usd::from_units(1_000),
        priority: 0,
        provider: None,
        input_bytes: 0,
        key_input_limit: i64::MAX,
    }
}

/// The async read once this thread's connection is open (the first tries open it and say `None`).
async fn poll_async(db: &Database, hash: &str, task_id: &str) -> Option<PollReads> {
    let started = Instant::now();
    loop {
        if let Some(read) = db.poll_reads_async(hash, Some(task_id)) {
            return read.await;
        }
        if started.elapsed() > Duration::from_secs(10) {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[test]
fn the_threads_connection_reads_what_the_pool_reads() {
    let test_db = TestDatabase::postgres().expect("PostgreSQL test database (is PostgreSQL running?)");
    let db = &test_db.db;
    let _listener = db.cache_verified_keys().expect("a listener on PostgreSQL");
    let started = Instant::now();
    while !db.caches_verified_keys() {
        assert!(started.elapsed() < Duration::from_secs(10), "the key cache never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    let name = new_id("acct");
    let account = db.create_account(&name, true, Usd::ZERO).expect("account");
    let (hash, other_hash) = (keys::hash_secret("mgk_async_one"), keys::hash_secret("mgk_async_two"));
    let key = db.create_key(&name, &hash, None, None).expect("key");
    db.create_key(&name, &other_hash, None, None).expect("other key");
    let running = db.submit_task(&new_task(&key.id, &account.id)).expect("submit");
    let finished = db.submit_task(&new_task(&key.id, &account.id)).expect("submit");
    let claimed = loop {
        let claim = db.claim_task("w", 60_000, RunningShares::UNLIMITED).expect("claim").expect("a task");
        if claim.task.id == finished.id {
            break claim;
        }
    };
    db.finish_succeeded(
        &finished.id,
        claimed.attempt,
        "[\"out.wav\"]",
        Some("{\"a\": 1}"),
        Usd::from_units(500),
        false,
    )
    .expect("finish");

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        assert!(db.poll_reads_async(&hash, Some(&running.id)).is_none(), "not verified in memory yet");
        db.authenticate(&hash).expect("authenticate").expect("live key");
        db.authenticate(&other_hash).expect("authenticate").expect("live key");
        for task in [&running.id, &finished.id] {
            let read = poll_async(db, &hash, task).await.expect("the thread's connection answers");
            assert_eq!(read.key.map(|k| k.key_id), Some(key.id.clone()));
            assert_eq!(read.task, db.task_for_key(task, &key.id).expect("blocking read"), "{task}");
            assert!(read.task.is_some_and(|t| t.job.is_empty()), "the job is never read by a poll");
        }
        let theirs = poll_async(db, &other_hash, &running.id).await.expect("answers");
        assert_eq!(theirs.task, None, "another key's task is invisible");
        db.revoke_key(&key.id).expect("revoke");
        assert!(db.poll_reads_async(&hash, Some(&running.id)).is_none(), "a revoked key is not answered from memory");
    });
}

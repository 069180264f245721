//! Lease behaviour with real databases: a job whose worker stops heart-beating is finished by
//! another worker exactly once, and a job released at shutdown is finished by the next worker.

use domain::GenerateRequest;
use service::{AppConfig, Caller, JobOutcome, Service};
use std::time::Duration;
use storage::test_support::{TestDatabase, BACKENDS};
use tokio::sync::watch;
use worker::WorkerConfig;

struct Fixture {
    service: Service,
    caller: Caller,
    output_dir: std::path::PathBuf,
    _db: TestDatabase,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.output_dir);
    }
}

async fn fixture(backend: storage::Backend) -> Fixture {
    fixture_with(backend, &[]).await
}

/// A fixture whose service is configured with `settings` on top of the defaults.
async fn fixture_with(backend: storage::Backend, settings: &[(&str, &str)]) -> Fixture {
    let db = TestDatabase::new(backend).unwrap_or_else(|e| panic!("{backend:?}: {e}"));
    let output_dir = std::env::temp_dir().join(storage::new_id("worker-test"));
    let mut config = AppConfig::from_settings(settings.iter().copied()).expect("config");
    config.output_dir = output_dir.display().to_string();
    config.url_signing_secret = Some("test-secret".into());
    config.job_isolation = service::IsolationMode::Inline;
    let service = config.build_service_on(db.db.clone()).expect("service");
    let caller = new_caller(&service).await;
    Fixture { service, caller, output_dir, _db: db }
}

/// The caller of a key of a new account.
async fn new_caller(service: &Service) -> Caller {
    let name = storage::new_id("acct");
    service.operator().create_account(&name, false).await.expect("account");
    let secret = service.operator().create_key(&name, None, None).await.expect("key").secret;
    service.api().authenticate(Some(&secret)).await.expect("caller")
}

fn worker_config(lease: Duration, grace: Duration) -> WorkerConfig {
    WorkerConfig {
        worker_id: storage::new_id("w"),
        concurrency: 2,
        lease,
        heartbeat: lease / 4,
        poll_interval: Duration::from_millis(50),
        max_attempts: 3,
        shutdown_grace: grace,
    }
}

/// A worker running in the background until [`RunningWorker::stop`].
struct RunningWorker {
    stop: watch::Sender<bool>,
    handle: tokio::task::JoinHandle<()>,
}

fn start_worker(service: Service, config: WorkerConfig) -> RunningWorker {
    let (stop, stop_rx) = watch::channel(false);
    RunningWorker { stop, handle: tokio::spawn(worker::run(service, config, stop_rx)) }
}

impl RunningWorker {
    async fn stop(self) {
        let _ = self.stop.send(true);
        self.handle.await.expect("worker task");
    }
}

fn request(model: &str, extra: serde_json::Value) -> GenerateRequest {
    let mut body = serde_json::json!({ "model": model });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    serde_json::from_value(body).expect("request")
}

async fn wait_terminal(service: &Service, caller: &Caller, id: &str) -> service::views::TaskView {
    for _ in 0..2400 {
        let task = service.api().task(caller, id).await.expect("task");
        if task.status.is_terminal() {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} did not finish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_workers_job_is_finished_once_by_another() {
    for backend in BACKENDS {
        let f = fixture(backend).await;
        let queued = f
            .service
            .api()
            .submit(&f.caller, request("tts", serde_json::json!({"prompt": "hello there"})))
            .await
            .unwrap();
        // A worker claims the job with a short lease and then dies: it never renews the lease.
        let dead = f.service.runner().claim("dead-worker", 300).await.unwrap().expect("claimed");
        assert_eq!(dead.attempt(), 1);

        let live = start_worker(f.service.clone(), worker_config(Duration::from_millis(300), Duration::from_secs(5)));
        let task = wait_terminal(&f.service, &f.caller, &queued.id).await;
        assert_eq!(task.status, domain::TaskStatus::Succeeded, "{backend:?}");

        // The dead worker comes back and finishes its stale attempt: fenced out, nothing billed.
        assert_eq!(f.service.runner().execute(&dead).await.unwrap(), JobOutcome::Superseded);
        let ledger = f.service.database().task_ledger(&queued.id).unwrap();
        assert_eq!(ledger.iter().filter(|e| e.kind == "capture").count(), 1, "{backend:?}: charged exactly once");
        let record = f.service.database().task(&queued.id).unwrap().unwrap();
        assert!(record.attempt >= 2, "finished by a later attempt: {record:?}");
        assert_eq!(f.service.operator().verify_ledger().await.unwrap(), vec![]);
        live.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_releases_unfinished_jobs_to_the_next_worker() {
    let f = fixture(storage::Backend::Sqlite).await;
    // Long enough to be running when the shutdown arrives.
    let body = serde_json::json!({"prompt": "long walkthrough", "params": {"duration": 3, "resolution": "480p"}});
    let queued = f.service.api().submit(&f.caller, request("lambda-t2v", body)).await.unwrap();
    let first = start_worker(f.service.clone(), worker_config(Duration::from_secs(30), Duration::ZERO));
    for _ in 0..200 {
        if f.service.database().task(&queued.id).unwrap().unwrap().attempt == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    first.stop().await;
    let record = f.service.database().task(&queued.id).unwrap().unwrap();
    assert_eq!(record.status, "running", "released, not finished: {record:?}");
    assert_eq!(record.lease_expires_at, Some(0), "the lease was given back at once");

    let second = start_worker(f.service.clone(), worker_config(Duration::from_secs(30), Duration::from_secs(60)));
    let task = wait_terminal(&f.service, &f.caller, &queued.id).await;
    assert_eq!(task.status, domain::TaskStatus::Succeeded, "{task:?}");
    assert_eq!(f.service.database().task(&queued.id).unwrap().unwrap().attempt, 2);
    assert_eq!(f.service.operator().verify_ledger().await.unwrap(), vec![]);
    second.stop().await;
}

/// On PostgreSQL a worker in another process is woken by NOTIFY: with its polling fallback set to
/// an hour, it still picks a job up as soon as another service instance accepts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_notifications_wake_workers_of_other_processes() {
    let f = fixture(storage::Backend::Postgres).await;
    // A second instance over its own pool, as another process would have.
    let mut config = AppConfig::from_settings([]).expect("config");
    config.output_dir = f.output_dir.display().to_string();
    config.url_signing_secret = Some("test-secret".into());
    config.job_isolation = service::IsolationMode::Inline;
    let other_db = storage::Database::connect(&f._db.url, 4).expect("second pool");
    let other = config.build_service_on(other_db).expect("second service");
    let mut lazy = worker_config(Duration::from_secs(30), Duration::from_secs(5));
    lazy.poll_interval = Duration::from_secs(3600);
    let running = start_worker(other, lazy);
    // Let the worker make its first (empty) claim and go idle.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let queued =
        f.service.api().submit(&f.caller, request("tts", serde_json::json!({"prompt": "ping"}))).await.unwrap();
    let task = wait_terminal(&f.service, &f.caller, &queued.id).await;
    assert_eq!(task.status, domain::TaskStatus::Succeeded);
    running.stop().await;
}

/// An output store that cannot write fails the job at once with a reason that says so, and bills
/// nothing (the job's work is lost with its output); it is not run again into the same store. Once
/// the store works again, the next job succeeds and is billed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unwritable_store_fails_the_job_unbilled() {
    let f = fixture(storage::Backend::Sqlite).await;
    // A file where the store needs a directory: every write fails, even for root.
    let blocker = f.output_dir.join("tasks");
    std::fs::write(&blocker, b"not a directory").unwrap();
    let lost = f.service.api().submit(&f.caller, request("tts", serde_json::json!({"prompt": "lost"}))).await.unwrap();
    let mut config = worker_config(Duration::from_millis(300), Duration::from_secs(5));
    config.max_attempts = 50;
    let running = start_worker(f.service.clone(), config);
    let task = wait_terminal(&f.service, &f.caller, &lost.id).await;
    assert_eq!(task.status, domain::TaskStatus::Failed);
    let error = task.error.unwrap_or_default();
    assert!(error.contains("could not be stored (the output store refused the write)"), "{error}");
    assert_eq!(f.service.database().task(&lost.id).unwrap().unwrap().attempt, 1, "not run again");
    assert!(f.service.database().task_ledger(&lost.id).unwrap().iter().all(|e| e.kind != "capture"), "nothing billed");

    std::fs::remove_file(&blocker).unwrap();
    let kept = f.service.api().submit(&f.caller, request("tts", serde_json::json!({"prompt": "kept"}))).await.unwrap();
    let task = wait_terminal(&f.service, &f.caller, &kept.id).await;
    assert_eq!(task.status, domain::TaskStatus::Succeeded);
    let ledger = f.service.database().task_ledger(&kept.id).unwrap();
    assert_eq!(ledger.iter().filter(|e| e.kind == "capture").count(), 1);
    assert_eq!(f.service.operator().verify_ledger().await.unwrap(), vec![]);
    running.stop().await;
}

/// A worker whose shutdown sender is dropped stops (it does not spin on a closed channel).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_shutdown_sender_stops_the_worker() {
    let f = fixture(storage::Backend::Sqlite).await;
    let (stop, stop_rx) = watch::channel(false);
    let running =
        tokio::spawn(worker::run(f.service.clone(), worker_config(Duration::from_secs(30), Duration::ZERO), stop_rx));
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(stop);
    tokio::time::timeout(Duration::from_secs(5), running).await.expect("worker stopped").unwrap();
}

/// The heartbeat keeps the lease of a job that outlives it alive, so the job stays on its first
/// attempt, and a worker with one slot never runs two jobs at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn heartbeats_keep_long_jobs_and_slots_bound_concurrency() {
    let f = fixture(storage::Backend::Sqlite).await;
    let body = serde_json::json!({"prompt": "slow walkthrough", "params": {"duration": 5, "resolution": "480p"}});
    let mut ids = Vec::new();
    for _ in 0..2 {
        ids.push(f.service.api().submit(&f.caller, request("lambda-t2v", body.clone())).await.unwrap().id);
    }
    let lease = Duration::from_millis(250);
    let mut config = worker_config(lease, Duration::from_secs(30));
    config.concurrency = 1;
    config.heartbeat = Duration::from_millis(50);
    let running = start_worker(f.service.clone(), config);
    loop {
        let records: Vec<_> = ids.iter().map(|id| f.service.database().task(id).unwrap().unwrap()).collect();
        assert!(records.iter().filter(|r| r.status == "running").count() <= 1, "one slot, one job: {records:?}");
        // Without heartbeats a running job's lease would lapse after 250 ms and another worker
        // could take it.
        let now = storage::now_millis();
        for record in records.iter().filter(|r| r.status == "running") {
            assert!(record.lease_expires_at.is_some_and(|at| at > now), "lease kept alive: {record:?}");
        }
        if records.iter().all(|r| r.status == "succeeded" || r.status == "failed") {
            for record in &records {
                assert_eq!((record.status.as_str(), record.attempt), ("succeeded", 1), "{record:?}");
                let ran = record.finished_at.unwrap() - record.started_at.unwrap();
                assert!(
                    ran > lease.as_millis() as i64,
                    "the job ({ran} ms) must outlive its lease for this to prove anything"
                );
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    running.stop().await;
}

/// A key held to its share of running jobs (one, by default with two slots) has its next job
/// claimed as soon as the one before it ends, not at the worker's next poll: with a poll a
/// minute apart, three queued jobs of one key all finish well inside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_ends_starts_the_next_of_its_key_without_waiting_for_a_poll() {
    for backend in BACKENDS {
        let f = fixture(backend).await;
        let mut ids = Vec::new();
        for i in 0..3 {
            let body = serde_json::json!({"prompt": format!("Listing {i}: two beds.")});
            ids.push(f.service.api().submit(&f.caller, request("tts", body)).await.unwrap().id);
        }
        let mut config = worker_config(Duration::from_secs(30), Duration::from_secs(5));
        config.poll_interval = Duration::from_secs(60);
        let running = start_worker(f.service.clone(), config);
        let all_done = async {
            for id in &ids {
                wait_terminal(&f.service, &f.caller, id).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(20), all_done)
            .await
            .unwrap_or_else(|_| panic!("{backend:?}: the key's later jobs waited for a poll"));
        running.stop().await;
    }
}

/// One claim fills every free slot within the fair shares: with four slots free and the queue
/// holding two jobs of one key before one each of two other keys, the worker starts one job of
/// each key together, in one claim (one start time, read once by the claim), and the first key's
/// other job only when the one before it has ended (a key's share is one running job).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_claim_fills_the_free_slots_within_each_keys_share() {
    for backend in BACKENDS {
        let f = fixture(backend).await;
        let mut callers = vec![f.caller.clone()];
        for _ in 0..2 {
            callers.push(new_caller(&f.service).await);
        }
        let mut ids = Vec::new();
        for (i, caller) in [&callers[0], &callers[0], &callers[1], &callers[2]].into_iter().enumerate() {
            let body = serde_json::json!({"prompt": format!("Listing {i}: two beds.")});
            ids.push(f.service.api().submit(caller, request("tts", body)).await.unwrap().id);
        }
        let mut config = worker_config(Duration::from_secs(30), Duration::from_secs(5));
        config.concurrency = 4;
        config.poll_interval = Duration::from_secs(60);
        let running = start_worker(f.service.clone(), config);
        let owners = [&callers[0], &callers[0], &callers[1], &callers[2]];
        for (id, caller) in ids.iter().zip(owners) {
            tokio::time::timeout(Duration::from_secs(20), wait_terminal(&f.service, caller, id))
                .await
                .unwrap_or_else(|_| panic!("{backend:?}: {id} did not end"));
        }
        running.stop().await;
        let records: Vec<_> = ids.iter().map(|id| f.service.database().task(id).unwrap().unwrap()).collect();
        let started: Vec<i64> = records.iter().map(|r| r.started_at.expect("started")).collect();
        assert!(records.iter().all(|r| r.status == "succeeded"), "{backend:?}: {records:?}");
        // The first key's two jobs may share a millisecond of submission, and then their ids
        // settle which is first in its line.
        let (first, second) = if started[0] <= started[1] { (0, 1) } else { (1, 0) };
        assert_eq!((started[first], started[first]), (started[2], started[3]), "{backend:?}: one claim for three keys");
        let first_ended = records[first].finished_at.expect("finished");
        assert!(started[second] >= first_ended, "{backend:?}: the key's second job started before its first ended: started {started:?}, first ended {first_ended}, {records:?}");
    }
}

/// A job's slot goes back once its work is done, before its end is recorded: with one slot, while
/// the first job's end waits (another session holds what every settlement writes), the next job is
/// already claimed. Both end once, billed once, when the hold ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_slot_goes_back_before_its_jobs_end_is_recorded() {
    let f = fixture(storage::Backend::Postgres).await;
    let other = new_caller(&f.service).await;
    let tts = |prompt: &str| request("tts", serde_json::json!({ "prompt": prompt }));
    let first = f.service.api().submit(&f.caller, tts("first")).await.unwrap();
    let second = f.service.api().submit(&other, tts("second")).await.unwrap();

    // Another session holds every settlement back for a few seconds, as a stalled database would.
    let holder = SettlementsHeld::start(&f._db.url, 6).await;
    let mut config = worker_config(Duration::from_secs(30), Duration::from_secs(10));
    config.concurrency = 1;
    let running = start_worker(f.service.clone(), config);
    let mut claimed_while_first_unrecorded = false;
    for _ in 0..60 {
        let first_now = f.service.database().task(&first.id).unwrap().unwrap();
        let second_now = f.service.database().task(&second.id).unwrap().unwrap();
        if first_now.status == "running" && second_now.attempt >= 1 {
            claimed_while_first_unrecorded = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(claimed_while_first_unrecorded, "the second job waited for the first one's end to be recorded");

    holder.finish();
    for (id, caller) in [(&first.id, &f.caller), (&second.id, &other)] {
        let task = wait_terminal(&f.service, caller, id).await;
        assert_eq!(task.status, domain::TaskStatus::Succeeded);
        let ledger = f.service.database().task_ledger(id).unwrap();
        assert_eq!(ledger.iter().filter(|e| e.kind == "capture").count(), 1, "charged exactly once");
    }
    assert_eq!(f.service.operator().verify_ledger().await.unwrap(), vec![]);
    running.stop().await;
}

/// Another database session holding the table of balance changes, which every settlement writes
/// to, in a mode that lets claims and reads through and stops settlements, as a stalled database
/// would. (Submits add the changes in and stop too: the tests submit before the hold.)
struct SettlementsHeld {
    psql: std::process::Child,
    url: String,
    seconds: u32,
}

impl SettlementsHeld {
    /// Holds settlements for `seconds` and returns once the lock is held.
    async fn start(url: &str, seconds: u32) -> SettlementsHeld {
        let psql = std::process::Command::new("psql")
            .args(["-q", "-X", url, "-c"])
            .arg(format!("BEGIN; LOCK TABLE balance_changes IN SHARE MODE; SELECT pg_sleep({seconds}); COMMIT;"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("psql");
        let hold = SettlementsHeld { psql, url: url.to_string(), seconds };
        for _ in 0..100 {
            if hold.sessions_sleeping() == 1 {
                return hold;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the other session never took the table");
    }

    /// The condition that finds the holding session in `pg_stat_activity`.
    fn holding_session(&self) -> String {
        format!(
            "datname = current_database() AND query LIKE '%pg_sleep({})%' AND query NOT LIKE '%pg_stat_activity%'",
            self.seconds
        )
    }

    fn sessions_sleeping(&self) -> usize {
        let sql =
            format!("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND {}", self.holding_session());
        let out = std::process::Command::new("psql").args(["-Atq", "-X", &self.url, "-c", &sql]).output();
        out.ok().and_then(|out| String::from_utf8_lossy(&out.stdout).trim().parse().ok()).unwrap_or(0)
    }

    /// Waits for the hold to end by itself.
    fn finish(mut self) {
        assert!(self.psql.wait().expect("psql").success(), "the holding session ended cleanly");
    }

    /// Ends the hold now: the sleeping statement is cancelled and its transaction rolled back.
    fn release(mut self) {
        let sql = format!("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE {}", self.holding_session());
        let cancelled = std::process::Command::new("psql").args(["-Atq", "-X", &self.url, "-c", &sql]).status();
        assert!(cancelled.is_ok_and(|s| s.success()), "cancelled the holding session");
        let _ = self.psql.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ends_past_the_recording_places_keep_their_slot() {
    // Shares wide enough that one key may run every job here: only the slot and the recording
    // places decide what is claimed.
    let wide = [("JOBS_RUNNING_PER_KEY", "1000"), ("JOBS_RUNNING_PER_ACCOUNT", "1000")];
    let f = fixture_with(storage::Backend::Postgres, &wide).await;
    let other = new_caller(&f.service).await;
    let tts = |prompt: String| request("tts", serde_json::json!({ "prompt": prompt }));

    // One more job than there are recording places, then another account's, submitted before the hold.
    let mut held = Vec::new();
    for n in 0..=worker::RECORDING_PLACES {
        held.push(f.service.api().submit(&f.caller, tts(format!("job {n}"))).await.unwrap().id);
    }
    let last = f.service.api().submit(&other, tts("the other account".into())).await.unwrap();
    let holder = SettlementsHeld::start(&f._db.url, 300).await;

    let mut config = worker_config(Duration::from_secs(60), Duration::from_secs(10));
    config.concurrency = 1;
    let running = start_worker(f.service.clone(), config);
    let claimed = |id: &str| f.service.database().task(id).unwrap().unwrap().attempt >= 1;
    let mut all_held_claimed = false;
    for _ in 0..1200 {
        if held.iter().all(|id| claimed(id)) {
            all_held_claimed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(all_held_claimed, "every one of the first jobs ran on the one slot while its ends waited");
    // The last of them found no recording place and keeps the only slot: nothing more is claimed.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let unrecorded = held.iter().filter(|id| f.service.database().task(id).unwrap().unwrap().status == "running");
    assert_eq!(unrecorded.count(), held.len(), "no end was recorded while settlements were held");
    assert!(!claimed(&last.id), "a job was claimed while every recording place and the slot were taken");

    holder.release();
    for id in &held {
        let task = wait_terminal(&f.service, &f.caller, id).await;
        assert_eq!(task.status, domain::TaskStatus::Succeeded);
    }
    let task = wait_terminal(&f.service, &other, &last.id).await;
    assert_eq!(task.status, domain::TaskStatus::Succeeded);
    for id in held.iter().chain([&last.id]) {
        let ledger = f.service.database().task_ledger(id).unwrap();
        assert_eq!(ledger.iter().filter(|e| e.kind == "capture").count(), 1, "charged exactly once");
    }
    assert_eq!(f.service.operator().verify_ledger().await.unwrap(), vec![]);
    running.stop().await;
}

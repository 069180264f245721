//! Faults a real local engine cannot show, from a mocked provider: over-reported usage, an empty
//! result, a failure. Money must stay right in each: never more than the quote, nothing for
//! nothing, nothing on failure; and a job that hangs is failed at its deadline, its hold released.

use domain::{GenerateRequest, Usd};
use engines::{
    Catalog, EngineError, EngineOutput, Engines, FetchPolicy, InputFetcher, MockRunner, OutputFile, OutputStore,
};
use service::{Deadlines, JobIsolation, JobOutcome, Service, ServiceConfig, UrlSigner};
use std::sync::Arc;
use storage::test_support::TestDatabase;

struct Fixture {
    service: Service,
    caller: service::Caller,
    dir: std::path::PathBuf,
    _db: TestDatabase,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn fixture(provider: MockRunner) -> Fixture {
    fixture_with(provider, Default::default()).await
}

async fn fixture_with(provider: MockRunner, deadlines: Deadlines) -> Fixture {
    let db = TestDatabase::sqlite().expect("database");
    let dir = std::env::temp_dir().join(storage::new_id("provider-faults"));
    let engines = Engines::with_runner(
        Catalog::builtin(),
        InputFetcher::new(FetchPolicy::default()).unwrap(),
        Arc::new(provider),
    );
    let config = ServiceConfig {
        public_base_url: "http://127.0.0.1:1".into(),
        free_allowance: "5".parse().unwrap(),
        output_url_ttl: std::time::Duration::from_secs(60),
        sync_recipe_wait: std::time::Duration::from_secs(60),
        fair_housing: Default::default(),
        isolation: JobIsolation::InProcess,
        deadlines,
        console_sign_up: true,
        trusted_proxies: Default::default(),
        console_sign_ups_per_address: None,
        provider_webhooks: false,
        task_retention: None,
        metrics_token: None,
        access_log_reads: std::num::NonZeroU32::MIN,
        rate_limits: service::rate_limit::RateLimits { submits_per_minute: 0, reads_per_minute: 0, burst_secs: 10 },
        running_shares: storage::RunningShares::UNLIMITED,
        mailer: service::mail::Mailer {
            transport: service::mail::MailTransport::Directory(dir.join("mail")),
            from: "console@example.com".into(),
        },
        allowances_per_address_range: 3,
        stored_input_bytes_per_key: i64::MAX,
        inputs: service::InputSettings { dir: dir.join("inputs"), budget: std::time::Duration::from_secs(60) },
        webhooks: service::WebhookSettings::standard().unwrap(),
        oauth_access_token_secs: 3600,
    };
    let store = OutputStore::local_dir(&dir.display().to_string()).expect("store");
    let service = Service::new(db.db.clone(), engines, store, UrlSigner::new(b"test"), config);
    service.operator().create_account("acme", false).await.unwrap();
    let secret = service.operator().create_key("acme", None, None).await.unwrap().secret;
    let caller = service.api().authenticate(Some(&secret)).await.unwrap();
    Fixture { service, caller, dir, _db: db }
}

fn one_image_job() -> GenerateRequest {
    serde_json::from_value(serde_json::json!({"model": "beta-image", "prompt": "porch"})).unwrap()
}

fn png_file() -> OutputFile {
    // A real (tiny) PNG, so the stored output is valid media.
    let mut bytes = Vec::new();
    image::DynamicImage::new_rgb8(2, 2)
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .unwrap();
    OutputFile::image(bytes, "png", 2, 2)
}

async fn run_one(f: &Fixture) -> (JobOutcome, storage::TaskRecord) {
    let queued = f.service.api().submit(&f.caller, one_image_job()).await.unwrap();
    let claimed = f.service.runner().claim("w", 60_000).await.unwrap().expect("claimed");
    let outcome = f.service.runner().execute(&claimed).await.unwrap();
    (outcome, f.service.database().task(&queued.id).unwrap().unwrap())
}

#[tokio::test]
async fn over_reported_usage_is_billed_at_the_quote() {
    let mut provider = MockRunner::new();
    provider.expect_run().times(1).returning(|_, _, _| {
        let produced = domain::validation::Produced { images: 10, pixels: 10 << 20, ..Default::default() };
        Box::pin(async move { Ok(EngineOutput { files: vec![png_file()], produced, sandbox: false }) })
    });
    let f = fixture(provider).await;
    let (outcome, record) = run_one(&f).await;
    let quote: Usd = "0.04".parse().unwrap();
    assert_eq!(outcome, JobOutcome::Succeeded(quote));
    assert_eq!(record.cost(), Some(quote));
    let usage = f.service.api().usage(&f.caller).await.unwrap();
    assert_eq!(usage.spent_usd, quote);
    assert!(f.service.operator().verify_ledger().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_empty_result_fails_and_costs_nothing() {
    let mut provider = MockRunner::new();
    provider.expect_run().times(1).returning(|_, _, _| {
        let produced = domain::validation::Produced { images: 1, ..Default::default() };
        Box::pin(async move { Ok(EngineOutput { files: vec![], produced, sandbox: false }) })
    });
    let f = fixture(provider).await;
    let (outcome, record) = run_one(&f).await;
    assert!(matches!(outcome, JobOutcome::Failed(ref m) if m.contains("no output")), "{outcome:?}");
    assert_eq!((record.status.as_str(), record.cost_units), ("failed", None));
    assert_eq!(f.service.api().usage(&f.caller).await.unwrap().spent_usd, Usd::ZERO);
}

#[tokio::test]
async fn a_provider_failure_is_reported_and_costs_nothing() {
    let mut provider = MockRunner::new();
    provider
        .expect_run()
        .times(1)
        .returning(|_, _, _| Box::pin(async { Err(EngineError::Failed("upstream timed out".into())) }));
    let f = fixture(provider).await;
    let (outcome, record) = run_one(&f).await;
    assert_eq!(outcome, JobOutcome::Failed("engine failed: upstream timed out".into()));
    assert_eq!(record.error.as_deref(), Some("engine failed: upstream timed out"));
    let usage = f.service.api().usage(&f.caller).await.unwrap();
    assert_eq!((usage.spent_usd, usage.held_usd), (Usd::ZERO, Usd::ZERO));
    let task = f.service.api().task(&f.caller, &record.id).await.unwrap();
    assert!(task.output.is_none() && task.cost_usd.is_none());
}

#[tokio::test]
async fn a_hung_job_in_process_fails_at_its_deadline_and_costs_nothing() {
    let mut provider = MockRunner::new();
    provider.expect_run().times(1).returning(|_, _, _| {
        Box::pin(async {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            Err(EngineError::Failed("never reached".into()))
        })
    });
    let deadlines = Deadlines::with_overrides("image_generation=1").unwrap();
    let f = fixture_with(provider, deadlines).await;
    let started = std::time::Instant::now();
    let (outcome, record) = run_one(&f).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let message = "the job ran past its deadline (image_generation: 1 s) and was stopped";
    assert_eq!(outcome, JobOutcome::Failed(message.into()));
    assert_eq!(record.error.as_deref(), Some(message));
    let usage = f.service.api().usage(&f.caller).await.unwrap();
    assert_eq!((usage.spent_usd, usage.held_usd), (Usd::ZERO, Usd::ZERO));
    assert!(f.service.operator().verify_ledger().await.unwrap().is_empty());
}

//! One POST body to the agent connector, as the HTTP layer hands it over after authentication:
//! the JSON-RPC envelope checks, method dispatch and every tool's argument parsing, over a real
//! service on a scratch SQLite database. Any reply but a panic or a hang is fine; a billed tool
//! call only queues a job (no worker runs here).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

struct Harness {
    runtime: tokio::runtime::Runtime,
    connector: mcp::Connector,
    caller: service::Caller,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("fuzz-json-rpc-{}", std::process::id()));
        let database = storage::Database::connect(&format!("sqlite://{}/db.sqlite", dir.display()), 2)
            .expect("scratch database");
        let fetcher = engines::InputFetcher::new(engines::FetchPolicy::default()).expect("fetcher");
        let engines = engines::Engines::new(engines::Catalog::builtin(), fetcher);
        let store = engines::OutputStore::local_dir(&dir.join("files").display().to_string()).expect("store");
        let config = service::ServiceConfig {
            public_base_url: "http://127.0.0.1:1".into(),
            free_allowance: "5".parse().expect("decimal"),
            output_url_ttl: std::time::Duration::from_secs(60),
            sync_recipe_wait: std::time::Duration::from_millis(10),
            fair_housing: Default::default(),
            isolation: service::JobIsolation::InProcess,
            deadlines: Default::default(),
        };
        let service =
            service::Service::new(database, engines, store, service::UrlSigner::new(&[7u8; 32]), config);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let caller = runtime.block_on(async {
            service.create_account("fuzz", false).await.expect("account");
            let secret = service.create_key("fuzz", None, None).await.expect("key").secret;
            service.authenticate(Some(&secret)).await.expect("caller")
        });
        Harness { runtime, connector: mcp::Connector::new(service), caller }
    })
}

fuzz_target!(|body: &[u8]| {
    let h = harness();
    let reply = h.runtime.block_on(h.connector.handle(h.caller.clone(), body));
    // Whatever is answered must itself be JSON.
    match reply {
        mcp::Reply::Response(text) | mcp::Reply::Invalid(text) => {
            assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok(), "reply is not JSON: {text}");
        }
        mcp::Reply::Accepted => {}
    }
});

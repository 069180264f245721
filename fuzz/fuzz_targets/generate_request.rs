//! A generate body as the HTTP layer receives it: parsed, then validated and quoted against the
//! built-in catalog. Any outcome but a panic is fine.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn catalog() -> &'static engines::Catalog {
    static CATALOG: OnceLock<engines::Catalog> = OnceLock::new();
    CATALOG.get_or_init(engines::Catalog::builtin)
}

fuzz_target!(|body: &[u8]| {
    if let Ok(request) = serde_json::from_slice::<domain::GenerateRequest>(body) {
        if let Some(spec) = catalog().get(&request.model) {
            let _ = spec.validate(&request);
        }
    }
});

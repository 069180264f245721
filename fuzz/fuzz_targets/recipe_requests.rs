//! Each recipe's body as the HTTP layer receives it: parsed into its request type, then checked
//! by the recipe's `prepare` (boundary geometry, GeoJSON, scales, listing details, colours, the
//! Fair Housing rewrite).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    let Some((&which, body)) = body.split_first() else { return };
    match which % 4 {
        0 => {
            if let Ok(request) = serde_json::from_slice::<domain::ListingEnhanceRequest>(body) {
                let _ = recipes::listing_enhance::prepare(request);
            }
        }
        1 => {
            if let Ok(request) = serde_json::from_slice::<domain::LotTraceRequest>(body) {
                let _ = recipes::lot_trace::prepare(request);
            }
        }
        2 => {
            if let Ok(request) = serde_json::from_slice::<domain::ReelRequest>(body) {
                let _ = recipes::reel::prepare(request);
            }
        }
        _ => {
            // The kit's prepare also runs the Fair Housing rewrite over every client text.
            if let Ok(request) = serde_json::from_slice::<domain::ListingKitRequest>(body) {
                let policy = recipes::listing_kit::fair_housing::Policy { master_to_primary: which & 4 != 0 };
                let _ = recipes::listing_kit::prepare(request, policy);
            }
        }
    }
});

//! Each recipe's body as the HTTP layer receives it: parsed into its request type, then checked
//! by the recipe's `prepare` (boundary geometry, GeoJSON, scales, listing details, colours).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    let Some((&which, body)) = body.split_first() else { return };
    match which % 3 {
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
        _ => {
            if let Ok(request) = serde_json::from_slice::<domain::ReelRequest>(body) {
                let _ = recipes::reel::prepare(request);
            }
        }
    }
});

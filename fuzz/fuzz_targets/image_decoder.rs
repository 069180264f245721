//! Client bytes through the still-image decoder (PNG and JPEG, with its size limits).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let _ = media::codecs::decode_image(bytes);
});

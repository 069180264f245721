//! Client bytes through the WAV decoder, whose length must come from the data, not the header.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok((samples, _)) = media::audio::decode_wav(bytes, 60.0) {
        assert!(samples.len() <= bytes.len(), "more samples than bytes");
    }
});

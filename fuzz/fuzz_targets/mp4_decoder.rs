//! Client bytes through the MP4 probe and the frame-by-frame H.264 decoder (at most a few
//! frames, so a run stays fast).
//!
//! The `mp4` crate still panics on some malformed tables; the service parses behind
//! `catch_unwind` (`media::video`'s parser guard), which turns those panics into decode errors.
//! libFuzzer's panic hook would report even a caught panic as a crash, so the default hook is
//! restored: a panic that escapes the guard still aborts the run and is reported.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Once;

fuzz_target!(|bytes: &[u8]| {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let _ = media::video::probe_mp4(bytes);
    let mut frames = 0;
    let _ = media::video::for_each_frame(bytes, |_| {
        frames += 1;
        Ok(frames < 4)
    });
});

//! Pure-Rust media processing behind the built-in local engines.
//!
//! Everything here runs in-process without ffmpeg or model weights, so the
//! service can produce real (if classical or procedural) media offline.

pub mod audio;
pub mod enhance;
mod error;
pub mod imaging;
mod seed;
pub mod speech;
pub mod video;

pub use error::MediaError;

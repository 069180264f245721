//! placeholder

pub mod media;

//! Rebuilds the crate when a migration changes: they are embedded at compile time.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}

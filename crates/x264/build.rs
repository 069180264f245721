//! Builds x264 from the bundled release with its own `configure` and `make` (its SIMD assembly
//! needs `nasm` 2.13 or later; without it the C paths are built, several times slower), then
//! the small C shim the Rust side calls.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARBALL: &str = "vendor/x264-0.164.3095.tar.gz";
const SOURCE_DIR: &str = "x264-0.164.3095+gitbaee400";

fn main() {
    println!("cargo:rerun-if-changed={TARBALL}");
    println!("cargo:rerun-if-changed=src/shim.c");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let source = out.join(SOURCE_DIR);
    if !source.join("libx264.a").exists() {
        build_library(&manifest.join(TARBALL), &out, &source);
    }
    cc::Build::new().file("src/shim.c").include(&source).opt_level(2).warnings(true).compile("x264shim");
    // After the shim, which needs it: static libraries resolve left to right.
    println!("cargo:rustc-link-search=native={}", source.display());
    println!("cargo:rustc-link-lib=static=x264");
    println!("cargo:rustc-link-lib=pthread");
    println!("cargo:rustc-link-lib=m");
    println!("cargo:include={}", source.display());
}

fn build_library(tarball: &Path, out: &Path, source: &Path) {
    let _ = std::fs::remove_dir_all(source);
    run(Command::new("tar").arg("xzf").arg(tarball).arg("-C").arg(out), "unpacking x264");
    let compiler = cc::Build::new().get_compiler();
    let configure = |with_assembly: bool| {
        let mut command = Command::new("sh");
        command
            .current_dir(source)
            .env("CC", compiler.path())
            .arg("./configure")
            .args(["--enable-static", "--enable-pic", "--disable-cli", "--disable-opencl"])
            .args(["--bit-depth=8", "--chroma-format=420", "--disable-interlaced"])
            .args(["--disable-avs", "--disable-swscale", "--disable-lavf", "--disable-ffms"])
            .args(["--disable-gpac", "--disable-lsmash"]);
        if !with_assembly {
            command.arg("--disable-asm");
        }
        command.status().map(|status| status.success()).unwrap_or(false)
    };
    if !configure(true) {
        println!("cargo:warning=x264: nasm 2.13 or later not found; building its C paths only (apt-get install nasm)");
        if !configure(false) {
            panic!("x264's configure failed; see the build output above");
        }
    }
    let jobs = env::var("NUM_JOBS").unwrap_or_else(|_| "1".into());
    run(Command::new("make").current_dir(source).arg(format!("-j{jobs}")).arg("libx264.a"), "building x264");
}

fn run(command: &mut Command, what: &str) {
    match command.status() {
        Ok(status) if status.success() => {}
        Ok(status) => panic!("{what}: {status}"),
        Err(e) => panic!("{what}: {e}"),
    }
}

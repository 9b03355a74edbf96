//! Passes the target triple to the tests and benches, which drive the C
//! compiler through the `cc` crate (it needs the triple, as in a build
//! script) to build `examples/c` against the static library.

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=FAIRWAY_FFI_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}

//! With the `ebpf` feature: compiles each eBPF program in `bpf/` with
//! clang (`-target bpf`) into `OUT_DIR`, where `src/object.rs` embeds it.
//! Without it: nothing, so that the crate builds with only Rust and a C
//! compiler.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The programs, by file stem (`bpf/<stem>.bpf.c` -> `<stem>.o`).
const PROGRAMS: [&str; 2] = ["ingress_drop", "xdp_redirect"];

fn main() {
    println!("cargo:rerun-if-changed=bpf");
    println!("cargo:rerun-if-env-changed=CLANG");
    if env::var_os("CARGO_FEATURE_EBPF").is_none() {
        return;
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let clang = env::var("CLANG").unwrap_or_else(|_| "clang".into());
    for stem in PROGRAMS {
        compile(&clang, stem, &out);
    }
}

/// The directory of the target's `asm/` UAPI headers on Debian-style
/// systems (`/usr/include/x86_64-linux-gnu`), which `linux/types.h`
/// includes and which clang does not search for `-target bpf`.
fn multiarch_include() -> Option<PathBuf> {
    let target = env::var("TARGET").ok()?;
    let arch = target.split('-').next()?;
    let env = target.rsplit('-').next()?;
    let dir = PathBuf::from(format!("/usr/include/{arch}-linux-{env}"));
    dir.is_dir().then_some(dir)
}

fn compile(clang: &str, stem: &str, out: &Path) {
    let src = Path::new("bpf").join(format!("{stem}.bpf.c"));
    let obj = out.join(format!("{stem}.o"));
    let mut cmd = Command::new(clang);
    // -g: BTF, which the XSKMAP's map definition and the loader's
    // relocations need.
    cmd.args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&obj);
    if let Some(dir) = multiarch_include() {
        cmd.arg("-I").arg(dir);
    }
    match cmd.status() {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("fairway-bpf: `{cmd:?}` failed ({s}); see clang's messages above"),
        Err(e) => panic!(
            "fairway-bpf: the `ebpf` feature compiles {} with `{clang}`, which could not run ({e}): \
             install clang (Debian/Ubuntu: apt-get install clang) or name it in CLANG",
            src.display()
        ),
    }
}

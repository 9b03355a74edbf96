//! Compiles a C program from `examples/c` against `include/fairway.h` and
//! this crate's static library, with the C compiler the `cc` crate finds
//! (`CC` / `CFLAGS` are honoured as in a build script). Shared by the C
//! example test and the ABI benchmark.

#![allow(dead_code)] // each user needs a different subset

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// `libfairway_ffi.a` of the profile this test or bench was built with: it
/// sits next to the test binary in `target/<profile>/deps`, or one level up.
pub fn static_library() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let deps = exe.parent().ok_or("test binary has no directory")?;
    for dir in [deps, deps.parent().unwrap_or(deps)] {
        let lib = dir.join("libfairway_ffi.a");
        if lib.is_file() {
            return Ok(lib);
        }
    }
    Err(format!(
        "libfairway_ffi.a not found next to {} (cargo builds it with the crate's lib target)",
        exe.display()
    ))
}

/// The C compiler and its base flags for this target.
fn compiler(opt_level: u32) -> cc::Tool {
    let target = env!("FAIRWAY_FFI_TARGET");
    cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(opt_level)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler()
}

/// The C++ compiler for this target (for checking that the header
/// compiles as C++).
pub fn cxx_compiler() -> cc::Tool {
    let target = env!("FAIRWAY_FFI_TARGET");
    cc::Build::new()
        .cpp(true)
        .target(target)
        .host(target)
        .opt_level(2)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler()
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fairway-c");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Libraries the Rust standard library inside the static library needs
/// (`rustc --print native-static-libs` on Linux).
const NATIVE_LIBS: &[&str] = &[
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

/// Start of the error returned when the C compiler cannot be started.
pub const NO_COMPILER: &str = "no C compiler";

/// The directory of the committed `fairway.h`.
pub fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// A directory under the tests' scratch space, created if missing.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = out_dir().join(name);
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Compiles and links `src` into an executable named `name`; `flags` are
/// extra compiler flags (optimisation, sanitizers). Warnings are errors.
pub fn build_c_program(src: &Path, name: &str, flags: &[&str]) -> Result<PathBuf, String> {
    build_c_program_with(src, name, flags, &include_dir())
}

/// [`build_c_program`] with the header taken from `include` instead of
/// the committed one.
pub fn build_c_program_with(
    src: &Path,
    name: &str,
    flags: &[&str],
    include: &Path,
) -> Result<PathBuf, String> {
    let lib = static_library()?;
    let exe = out_dir().join(name);
    let mut cmd = compiler(2).to_command();
    cmd.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .args(flags)
        .arg("-I")
        .arg(include)
        .arg(src)
        .arg(&lib)
        .args(NATIVE_LIBS)
        .arg("-o")
        .arg(&exe);
    let out = cmd
        .output()
        .map_err(|e| format!("{NO_COMPILER} ({:?}: {e})", cmd.get_program()))?;
    if !out.status.success() {
        return Err(format!(
            "C build of {} failed ({:?}):\n{}",
            src.display(),
            cmd,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(exe)
}

/// The AddressSanitizer flags if this toolchain can build and run an
/// instrumented program, else why not.
pub fn asan_flags() -> Result<[&'static str; 2], String> {
    let flags = ["-fsanitize=address", "-fno-omit-frame-pointer"];
    let dir = out_dir();
    let src = dir.join("asan_probe.c");
    std::fs::write(&src, "int main(void) { return 0; }\n").map_err(|e| e.to_string())?;
    let exe = dir.join("asan_probe");
    let mut cmd = compiler(0).to_command();
    let out = cmd
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("running the C compiler: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the C compiler rejects -fsanitize=address: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    match Command::new(&exe).output() {
        Ok(o) if o.status.success() => Ok(flags),
        Ok(o) => Err(format!(
            "an instrumented program does not run: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
        )),
        Err(e) => Err(format!("an instrumented program does not run: {e}")),
    }
}

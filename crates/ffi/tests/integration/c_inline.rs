//! The header's inline `fairway_sched_enqueue` and `fairway_sched_dequeue`,
//! driven from C (`tests/c/inline_checks.c`, built with the C compiler the
//! `cc` crate finds, under AddressSanitizer when the toolchain supports
//! it): through them every misuse is refused as by the exported functions
//! (null, misaligned, foreign, poisoned and destroyed handles, null and
//! misaligned `out`, lengths beyond `u32`), on every catalogue scheduler.
//! Also: the same program with `FAIRWAY_NO_INLINE` (the exported functions
//! only); against a header of another layout, whose inline calls must fall
//! back to the exported functions and still pass; and against headers with
//! one inline check removed, each of which must make the program fail (so
//! the checks are what the program tests). And the header compiles as C++.

use crate::c_build::{
    asan_flags, build_c_program_with, cxx_compiler, include_dir, scratch_dir, NO_COMPILER,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every catalogue scheduler at its defaults, then the SCHED+ ones at a
/// non-default aggregate size.
fn specs() -> Vec<String> {
    let mut specs: Vec<String> = fairway_core::SchedKind::ALL
        .iter()
        .map(|k| k.name().to_string())
        .collect();
    specs.extend(["qfq+:m=8", "wf2q++:m=4"].map(String::from));
    specs
}

fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/inline_checks.c")
}

fn header() -> String {
    std::fs::read_to_string(include_dir().join("fairway.h")).expect("read fairway.h")
}

/// Builds the program against `header_text` (written to its own include
/// directory `name`), or `None` if there is no C compiler.
fn build(name: &str, header_text: &str, flags: &[&str]) -> Option<PathBuf> {
    let include = scratch_dir(&format!("include-{name}"));
    std::fs::write(include.join("fairway.h"), header_text).expect("write header");
    match build_c_program_with(&source(), name, flags, &include) {
        Ok(exe) => Some(exe),
        Err(e) if e.starts_with(NO_COMPILER) => {
            eprintln!("{name}: skipped, {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn run(exe: &Path, spec: &str) -> Output {
    Command::new(exe)
        .arg(spec)
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        .output()
        .expect("run inline_checks")
}

/// Runs the program on every spec; each run must pass and print `banner`.
fn passes_on_every_spec(exe: &Path, banner: &str) {
    for spec in specs() {
        let out = run(exe, &spec);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("\nok"),
            "{spec}: inline_checks failed ({}):\n{stdout}\n{stderr}",
            out.status
        );
        assert!(stdout.contains(banner), "{spec}: {stdout}");
    }
}

#[test]
#[cfg_attr(miri, ignore = "runs the C compiler and a child process")]
fn inline_calls_refuse_every_misuse() {
    let asan = asan_flags();
    let mut flags = vec!["-g"];
    match &asan {
        Ok(a) => {
            eprintln!("inline_checks.c: built with AddressSanitizer");
            flags.extend(a.iter().copied());
        }
        Err(why) => eprintln!("inline_checks.c: AddressSanitizer skipped: {why}"),
    }
    let Some(exe) = build("inline_checks", &header(), &flags) else {
        return;
    };
    passes_on_every_spec(&exe, "inline calls: yes; live tag matches: yes");
    flags.push("-DFAIRWAY_NO_INLINE");
    let Some(exe) = build("inline_checks_no_inline", &header(), &flags) else {
        return;
    };
    passes_on_every_spec(&exe, "inline calls: no; live tag matches: yes");
}

/// A program compiled against the header of another layout (its live tag
/// differs) never takes this library's handles as live: its inline calls
/// fall back to the exported functions, and everything still works.
#[test]
#[cfg_attr(miri, ignore = "runs the C compiler and a child process")]
fn a_header_of_another_layout_falls_back_to_the_exported_functions() {
    let ours = format!(
        "#define FAIRWAY_SCHED_LIVE_TAG {}\n",
        fairway_ffi::FAIRWAY_SCHED_LIVE_TAG
    );
    let text = header();
    assert_eq!(text.matches(&ours).count(), 1, "{ours:?} not in the header");
    // The live tag of layout 2: "FWS2".
    let other = u64::from(u32::from_le_bytes(*b"FWS2"));
    assert_ne!(other, fairway_ffi::FAIRWAY_SCHED_LIVE_TAG);
    let text = text.replace(&ours, &format!("#define FAIRWAY_SCHED_LIVE_TAG {other}\n"));
    let Some(exe) = build("inline_checks_other_layout", &text, &[]) else {
        return;
    };
    passes_on_every_spec(&exe, "inline calls: yes; live tag matches: no");
}

/// Each check of the inline calls, removed from the header, makes the
/// program fail (a crash or a wrong status).
#[test]
#[cfg_attr(miri, ignore = "runs the C compiler and a child process")]
fn each_inline_check_is_needed() {
    let text = header();
    let tag_test = "if (FAIRWAY_LIKELY_(tag == FAIRWAY_SCHED_LIVE_TAG)) {";
    let (enq, deq) = {
        let first = text.find(tag_test).expect("tag test");
        let second = first + 1 + text[first + 1..].find(tag_test).expect("second tag test");
        (first, second)
    };
    let without_at = |at: usize| {
        let mut t = text.clone();
        t.replace_range(at..at + tag_test.len(), "if (1) {");
        t
    };
    let without = |from: &str, to: &str| {
        assert_eq!(
            text.matches(from).count(),
            1,
            "{from:?} not once in the header"
        );
        text.replace(from, to)
    };
    let mutants = [
        (
            "enqueue_null_handle",
            without("if (FAIRWAY_LIKELY_(h != NULL)) {", "if (1) {"),
        ),
        ("enqueue_tag", without_at(enq)),
        (
            "dequeue_null_handle",
            without("FAIRWAY_LIKELY_(h != NULL && out", "FAIRWAY_LIKELY_(out"),
        ),
        (
            "dequeue_null_out",
            without("h != NULL && out != NULL &&", "h != NULL &&"),
        ),
        (
            "dequeue_out_alignment",
            without(
                "&&\n                      (uintptr_t)out % offsetof(FairwayPacketAlign_, p) == 0)",
                ")",
            ),
        ),
        ("dequeue_tag", without_at(deq)),
    ];
    for (name, text) in mutants {
        assert_ne!(text, header());
        let Some(exe) = build(&format!("inline_checks_without_{name}"), &text, &[]) else {
            return;
        };
        let out = run(&exe, "drr");
        assert!(
            !out.status.success(),
            "without the {name} check the program still passes:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// The header, inline calls included, compiles as C++ without warnings.
#[test]
#[cfg_attr(miri, ignore = "runs the C++ compiler")]
fn the_header_compiles_as_cpp() {
    let dir = scratch_dir("cpp");
    let src = dir.join("header_check.cpp");
    std::fs::write(
        &src,
        "#include \"fairway.h\"\n\
         int main() {\n\
           FairwayPacket p;\n\
           FairwayScheduler *s = nullptr;\n\
           return fairway_sched_dequeue(s, &p) == FAIRWAY_OK &&\n\
                  fairway_sched_enqueue(s, 0, p.data, p.len) == FAIRWAY_OK;\n\
         }\n",
    )
    .expect("write C++ source");
    let mut cmd = cxx_compiler().to_command();
    cmd.args([
        "-std=c++11",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        "-fsyntax-only",
    ])
    .arg("-I")
    .arg(include_dir())
    .arg(&src);
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("C++ check skipped: no C++ compiler ({e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "fairway.h does not compile as C++:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

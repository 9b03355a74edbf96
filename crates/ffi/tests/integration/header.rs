//! The committed C header must be exactly what cbindgen generates from the
//! current sources. `FAIRWAY_BLESS_HEADER=1` rewrites it instead of failing.

use std::path::Path;

fn generate() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        // lib.rs pulls in its modules.
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen parses the crate");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("UTF-8 header")
}

/// The first line where two texts differ, for a readable failure.
fn first_difference(a: &str, b: &str) -> Option<(usize, String, String)> {
    let (mut la, mut lb) = (a.lines(), b.lines());
    for n in 1.. {
        match (la.next(), lb.next()) {
            (None, None) => return None,
            (x, y) if x == y => continue,
            (x, y) => {
                return Some((
                    n,
                    x.unwrap_or("<end>").to_string(),
                    y.unwrap_or("<end>").to_string(),
                ))
            }
        }
    }
    unreachable!()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "cbindgen parses the sources: slow under Miri, no unsafe of ours"
)]
fn committed_header_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/fairway.h");
    let fresh = generate();
    if std::env::var_os("FAIRWAY_BLESS_HEADER").is_some() {
        std::fs::write(&path, &fresh).expect("write header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if let Some((line, old, new)) = first_difference(&committed, &fresh) {
        panic!(
            "include/fairway.h is stale (line {line}: committed {old:?}, generated {new:?}); \
             run FAIRWAY_BLESS_HEADER=1 cargo test -p fairway-ffi --test integration header::"
        );
    }
}

/// The comparison can fail: a header missing one declaration is reported.
#[test]
#[cfg_attr(
    miri,
    ignore = "cbindgen parses the sources: slow under Miri, no unsafe of ours"
)]
fn a_stale_header_is_detected() {
    let fresh = generate();
    assert!(fresh.contains("fairway_sched_enqueue"));
    let stale = fresh.replace("fairway_sched_enqueue", "fairway_sched_enqueue_old");
    assert!(first_difference(&stale, &fresh).is_some());
    assert!(first_difference(&fresh, &fresh).is_none());
}

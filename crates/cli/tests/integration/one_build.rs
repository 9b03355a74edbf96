//! `cargo build --release` followed by the README's `cargo run --release --
//! demo` must not build a second time. Cargo compiles a crate differently
//! when a cdylib under LTO depends on it, so the two commands share one build
//! exactly when the default members are every member except the cdylibs
//! (which `cargo run` does not build). This checks the manifest for that.

use std::fs;
use std::path::Path;

fn manifest(path: &Path) -> toml::Table {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn strings(v: Option<&toml::Value>) -> Vec<String> {
    v.and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn is_cdylib(root: &Path, member: &str) -> bool {
    let m = manifest(&root.join(member).join("Cargo.toml"));
    let types = strings(m.get("lib").and_then(|l| l.get("crate-type")));
    types.iter().any(|t| t == "cdylib")
}

#[test]
fn default_members_are_every_member_but_the_cdylibs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let ws = manifest(&root.join("Cargo.toml"));
    let ws = ws["workspace"].as_table().expect("[workspace]");
    let members = strings(ws.get("members"));
    let defaults = strings(ws.get("default-members"));
    assert!(!members.is_empty(), "no workspace members");
    let mut expected: Vec<String> = members
        .iter()
        .filter(|m| !is_cdylib(&root, m))
        .cloned()
        .collect();
    let mut got = defaults.clone();
    expected.sort();
    got.sort();
    assert_eq!(
        got, expected,
        "default-members must be every member except the cdylibs (crates/ffi), \
         or `cargo run --release` rebuilds after `cargo build --release`"
    );
    assert!(
        members.iter().any(|m| is_cdylib(&root, m)),
        "the check looks for cdylibs; crates/ffi is one"
    );
}

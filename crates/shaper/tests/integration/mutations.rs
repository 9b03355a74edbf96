//! Damaged copies of the shipped examples (bytes replaced by characters
//! that matter to CSV, JSON and TOML) are refused or accepted, never a
//! panic, and every problem is one line.

use crate::support::scratch;
use fairway_shaper::{load, Source};

/// The next value of a xorshift generator: the same damage every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

const BYTES: &[u8] = b"\"{}[],:#\n\r0123456789.-/ =ae\\\xc3\xa9";

fn damaged(text: &str, state: &mut u64) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + next(state) % 4 {
        let at = (next(state) % bytes.len() as u64) as usize;
        bytes[at] = BYTES[(next(state) % BYTES.len() as u64) as usize];
    }
    bytes
}

#[test]
fn damaged_examples_never_panic() {
    let dir = format!("{}/../../examples/shaper", env!("CARGO_MANIFEST_DIR"));
    let read = |n: &str| std::fs::read_to_string(format!("{dir}/{n}")).unwrap();
    let (csv, json, toml) = (
        read("ShapedDevices.csv"),
        read("network.json"),
        read("shaper.toml"),
    );
    let mut state = 0x9e37_79b9_7f4a_7c15;
    let mut refused = 0;
    for round in 0..100 {
        let c = scratch("mut.csv", "");
        let j = scratch("mut.json", "");
        std::fs::write(&c, damaged(&csv, &mut state)).unwrap();
        std::fs::write(&j, damaged(&json, &mut state)).unwrap();
        let t = scratch("mut.toml", "");
        let toml = toml
            .replace("ShapedDevices.csv", "mut.csv")
            .replace("network.json", "mut.json");
        std::fs::write(&t, damaged(&toml, &mut state)).unwrap();
        let sources = [
            Source::Libreqos {
                shaped_devices: c.clone(),
                network: Some(j.clone()),
            },
            Source::ShaperFile(t.clone()),
        ];
        for src in &sources {
            if let Err(e) = load(src) {
                refused += 1;
                assert!(
                    e.iter().all(|p| !p.to_string().contains('\n')),
                    "round {round}: {e:#?}"
                );
            }
        }
    }
    // The damage is real: most copies are refused.
    assert!(refused > 100, "{refused}");
}

//! Plans for the data path's unit tests, built in code.

use crate::loc::Loc;
use crate::plan::{Bandwidth, Circuit, Interfaces, Node, Plan, Rates};
use crate::validate::{check, Checked};

/// A location for built plans.
pub fn at() -> Loc {
    Loc {
        file: std::sync::Arc::from("test"),
        line: None,
        col: None,
    }
}

/// The same min and max both ways, bit/s.
pub fn rates(min: Option<u64>, max: u64) -> Rates {
    let b = Bandwidth { min, max };
    Rates {
        download: b,
        upload: b,
    }
}

/// A plan with a link of `link` bit/s.
pub fn plan(link: u64) -> Plan {
    Plan {
        interfaces: Some(Interfaces {
            internet: "a".into(),
            subscribers: "b".into(),
            download: link,
            upload: link,
            io: Default::default(),
            at: at(),
        }),
        ..Plan::default()
    }
}

/// Adds a node.
pub fn node(p: &mut Plan, name: &str, parent: Option<&str>, max: u64, weight: Option<u32>) {
    p.nodes.push(Node {
        name: name.into(),
        parent: parent.map(Into::into),
        rates: rates(None, max),
        weight,
        scheduler: crate::plan::default_scheduler(),
        at: at(),
    });
}

/// Adds a circuit.
pub fn circuit(
    p: &mut Plan,
    id: &str,
    parent: Option<&str>,
    min: Option<u64>,
    max: u64,
    weight: Option<u32>,
) {
    p.circuits.push(Circuit {
        id: id.into(),
        name: id.into(),
        parent: parent.map(Into::into),
        rates: rates(min, max),
        weight,
        at: at(),
    });
}

/// The plan, checked (it must pass).
pub fn checked(p: Plan) -> Checked {
    match check(p) {
        Ok(c) => c,
        Err(e) => panic!("test plan refused: {}", e[0]),
    }
}

/// A small deterministic generator for the tests' random plans and
/// edits (xorshift64 from `seed`): each call gives a number below `n`.
pub fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed | 1;
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}

/// The repository's example shaper file (`examples/shaper/shaper.toml`,
/// which pulls in the LibreQoS examples), as a source and loaded.
pub fn example_source() -> (crate::load::Source, std::sync::Arc<Checked>) {
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/shaper/shaper.toml");
    let source = crate::load::Source::ShaperFile(file);
    let c = crate::load::load(&source).unwrap_or_else(|e| panic!("{}", e[0]));
    (source, std::sync::Arc::new(c))
}

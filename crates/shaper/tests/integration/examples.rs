//! The shipped examples check.

use fairway_shaper::summary::Summary;
use fairway_shaper::{load, Source};

fn dir() -> String {
    format!("{}/../../examples/shaper", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_libreqos_examples_check() {
    let src = Source::Libreqos {
        shaped_devices: format!("{}/ShapedDevices.csv", dir()).into(),
        network: Some(format!("{}/network.json", dir()).into()),
    };
    let ck = load(&src).unwrap();
    let p = &ck.plan;
    assert_eq!(
        (p.nodes.len(), p.circuits.len(), p.devices.len()),
        (6, 8, 12)
    );
    assert!(p
        .devices
        .iter()
        .any(|d| d.prefixes.iter().any(|x| x.net.to_string().contains(':'))));
    let s = Summary::of(&ck);
    assert_eq!(s.levels.len(), 4, "{s}");
}

#[test]
fn the_shaper_file_example_checks() {
    let ck = load(&Source::ShaperFile(format!("{}/shaper.toml", dir()).into())).unwrap();
    let p = &ck.plan;
    assert_eq!(
        (
            p.nodes.len(),
            p.circuits.len(),
            p.devices.len(),
            p.rules.len()
        ),
        (7, 9, 13, 1)
    );
    assert!(p.interfaces.is_some() && p.default_class.is_some());
}

#[test]
fn the_walk_through_example_checks_and_names_the_readmes_interfaces() {
    let path = format!("{}/namespaces.toml", dir());
    let ck = load(&Source::ShaperFile(path.into())).unwrap();
    let ifs = ck.plan.interfaces.as_ref().unwrap();
    assert_eq!(
        (ifs.internet.as_str(), ifs.subscribers.as_str()),
        ("in0", "out0")
    );
    assert_eq!(ck.plan.circuits.len(), 1);
    assert!(ck.plan.default_class.is_some());
}

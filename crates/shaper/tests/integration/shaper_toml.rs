//! The shaper file: its tables, tc units, LibreQoS's files pulled in, and
//! each way a value is refused with its line:column.

use crate::support::{only, path, problems, scratch, shaper, HEADER};

const NODE: &str =
    "[[node]]\nname = \"n\"\nrate = { download = \"100mbit\", upload = \"50mbit\" }\n";

#[test]
fn the_tables_make_a_plan() {
    let text = format!(
        "[interfaces]\ninternet = \"eth0\"\nsubscribers = \"eth1\"\nrate = {{ download = \"1gbit\", upload = \"500mbit\" }}\n\n{NODE}policy = \"drr:quantum=3000\"\nweight = 3\n\n\
         [[circuit]]\nid = \"c\"\nparent = \"n\"\nreservation = {{ download = \"1.5mbit\" }}\nrate = {{ download = \"10mbit\", upload = \"500kbit\" }}\n\n\
         [[device]]\nid = \"d\"\ncircuit = \"c\"\nmac = \"aabb.ccdd.eeff\"\nipv4 = [\"10.0.0.0/24\"]\nipv6 = [\"2001:db8::/64\"]\n\n\
         [[rule]]\ncircuit = \"c\"\nprotocol = \"tcp\"\ndst_ports = \"80-443\"\ndscp = 10\nvlan = 7\n\n\
         [default_class]\nrate = {{ download = \"5mbit\", upload = \"5mbit\" }}\n"
    );
    let ck = shaper("tables", &text).unwrap();
    let p = &ck.plan;
    let i = p.interfaces.as_ref().unwrap();
    assert_eq!((i.download, i.upload), (1_000_000_000, 500_000_000));
    assert_eq!(p.nodes[0].scheduler.to_string(), "drr:quantum=3000");
    assert_eq!(p.nodes[0].weight, Some(3));
    assert_eq!(p.circuits[0].rates.download.min, Some(1_500_000));
    assert_eq!(p.circuits[0].rates.upload.min, None);
    assert_eq!(p.devices[0].prefixes.len(), 2);
    let m = &p.rules[0].matches;
    assert_eq!((m.protocol, m.dscp, m.vlan), (Some(6), Some(10), Some(7)));
    assert_eq!(m.dst_ports.map(|r| (r.lo, r.hi)), Some((80, 443)));
    assert_eq!(ck.circuit_parent, [Some(0)]);
}

#[test]
fn libreqos_files_are_pulled_in_relative_to_the_shaper_file() {
    scratch("pulled.csv", &format!("{HEADER}\n1,a,d1,x,n,,,,1,1,2,2,\n"));
    let text = format!("libreqos = {{ shaped_devices = \"pulled.csv\" }}\n{NODE}");
    let ck = shaper("pull", &text).unwrap();
    assert_eq!(ck.plan.circuits[0].parent.as_deref(), Some("n"));
    assert_eq!(ck.circuit_parent, [Some(0)]);
}

#[test]
fn an_unknown_unit_is_refused_with_the_allowed_list() {
    let text = NODE.replace("50mbit", "50 furlongs");
    let e = problems(shaper("unit", &text));
    only(
        &e,
        &format!("{}:3:41", path("unit.toml")),
        &format!(
            "rate.upload: rate \"50 furlongs\": unknown unit \"furlongs\" (allowed: {})",
            fairway_shaper::rate::UNITS
        ),
    );
    // tc's bytes, LibreQoS's bits: refused rather than guessed.
    let text = NODE.replace("50mbit", "50mbps");
    let e = problems(shaper("mbps", &text));
    only(
        &e,
        &format!("{}:3:41", path("mbps.toml")),
        "rate.upload: rate \"50mbps\": unit \"mbps\" is bits/s to some and bytes/s to tc; write mbit (or Mbit/s) for bits, MB/s for bytes",
    );
}

#[test]
fn rates_are_the_policy_file_s_one_string_or_a_table_of_directions() {
    // The policy file's spelling, and one string for both directions.
    let text = "[[node]]\nname = \"n\"\nrate = \"100 Mbit/s\"\nreservation = \"2 MB/s\"\n";
    let ck = shaper("one", text).unwrap();
    let r = ck.plan.nodes[0].rates;
    assert_eq!((r.download.max, r.upload.max), (100_000_000, 100_000_000));
    assert_eq!(
        (r.download.min, r.upload.min),
        (Some(16_000_000), Some(16_000_000))
    );
    // A ceiling needs both directions; a bad one string names `rate`.
    let text = "[[node]]\nname = \"n\"\nrate = { download = \"1mbit\" }\n\n[[node]]\nname = \"m\"\nrate = \"100\"\n";
    let e = problems(shaper("dirs", text));
    let f = path("dirs.toml");
    assert_eq!(e.len(), 2, "{e:#?}");
    assert_eq!(
        e[0],
        format!("{f}:3:8: rate.upload is required and may not be empty")
    );
    assert!(
        e[1].starts_with(&format!("{f}:7:8: rate: rate \"100\" has no unit")),
        "{e:#?}"
    );
    let e = problems(shaper(
        "dkey",
        "[[node]]\nname = \"n\"\nrate = { down = \"1mbit\" }\n",
    ));
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(
        e[0].contains("unknown field `down`, expected `download` or `upload`"),
        "{e:#?}"
    );
}

#[test]
fn a_policy_file_s_flow_points_at_circuit() {
    let e = problems(shaper(
        "flow",
        &format!("{NODE}\n[[flow]]\nparent = \"n\"\n"),
    ));
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(
        e[0].starts_with(&format!(
            "{}:5:1: [[flow]]: a policy file's leaf; the shaper's leaf is [[circuit]]",
            path("flow.toml")
        )),
        "{e:#?}"
    );
}

#[test]
fn rates_without_unit_or_not_positive_are_refused() {
    let text = NODE
        .replace("\"100mbit\"", "\"100\"")
        .replace("\"50mbit\"", "\"-1mbit\"");
    let e = problems(shaper("nounit", &text));
    let f = path("nounit.toml");
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(
        e[0].starts_with(&format!(
            "{f}:3:21: rate.download: rate \"100\" has no unit"
        )),
        "{e:#?}"
    );
    assert!(
        e[1].starts_with(&format!(
            "{f}:3:37: rate.upload: rate \"-1mbit\" is negative"
        )),
        "{e:#?}"
    );
}

#[test]
fn unknown_keys_and_syntax_say_where() {
    let e = problems(shaper("key", &format!("{NODE}colour = \"red\"\n")));
    only(
        &e,
        &format!("{}:4:1", path("key.toml")),
        "unknown field `colour`",
    );
    let e = problems(shaper("syn", "[[node]\n"));
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(
        e[0].starts_with(&format!("{}:1:", path("syn.toml"))),
        "{e:#?}"
    );
}

#[test]
fn a_bad_scheduler_spec_is_the_registry_s_error() {
    let e = problems(shaper("spec", &format!("{NODE}policy = \"qfq+:m=65\"\n")));
    only(
        &e,
        &format!("{}:4:10", path("spec.toml")),
        "scheduler: parameter m=65 of qfq+ is outside 1..=64",
    );
}

#[test]
fn rules_and_interfaces_are_range_checked() {
    let text = "[interfaces]\ninternet = \"eth0\"\nsubscribers = \"a-very-long-interface-name\"\nrate = { download = \"1gbit\", upload = \"1gbit\" }\n\n\
        [[circuit]]\nid = \"c\"\nrate = { download = \"1mbit\", upload = \"1mbit\" }\n\n\
        [[rule]]\ncircuit = \"c\"\nprotocol = \"icmp\"\nsrc_ports = \"9-1\"\ndscp = 64\n\n[[rule]]\ncircuit = \"c\"\n";
    let e = problems(shaper("rules", text));
    let f = path("rules.toml");
    assert_eq!(e.len(), 5, "{e:#?}");
    assert!(
        e[0].starts_with(&format!(
            "{f}:3:15: subscribers = \"a-very-long-interface-name\": allowed an interface name"
        )),
        "{e:#?}"
    );
    assert!(e[1].starts_with(&format!("{f}:13:13: src_ports = \"9-1\": allowed a port (0..=65535) or a range LO-HI with LO <= HI")), "{e:#?}");
    assert!(
        e[2].starts_with(&format!(
            "{f}:13:13: src_ports = \"9-1\": allowed only with protocol"
        )),
        "{e:#?}"
    );
    assert!(
        e[3].starts_with(&format!(
            "{f}:14:8: dscp = 64: allowed an integer in 0..=63"
        )),
        "{e:#?}"
    );
    assert!(e[4].starts_with(&format!("{f}:16:1: a match (")), "{e:#?}");
}

#[test]
fn weights_outside_their_range_are_refused() {
    for (w, ok) in [
        ("0", false),
        ("1", true),
        ("65536", true),
        ("65537", false),
        ("-3", false),
    ] {
        let r = shaper("weight", &format!("{NODE}weight = {w}\n"));
        if ok {
            assert_eq!(r.unwrap().plan.nodes[0].weight, Some(w.parse().unwrap()));
        } else {
            let e = problems(r);
            only(
                &e,
                &format!("{}:4:10", path("weight.toml")),
                &format!("weight = {w}: allowed an integer in 1..=65536"),
            );
        }
    }
}

#[test]
fn a_file_is_read_as_policy_files_are() {
    // Not UTF-8: the first bad byte's line and column.
    let bad = scratch("latin1.toml", "");
    std::fs::write(&bad, b"[[node]]\nname = \"caf\xe9\"\n").unwrap();
    let e: Vec<String> = fairway_shaper::load(&fairway_shaper::Source::ShaperFile(bad))
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    only(
        &e,
        &format!("{}:2:12", path("latin1.toml")),
        "not UTF-8 text (save the file as UTF-8)",
    );
    // Past the limit: refused before it is held, with the limit.
    let limit = fairway_shaper::limits::MAX_TOML_BYTES;
    let big = scratch("big.toml", &"#".repeat(limit as usize + 1));
    let e: Vec<String> = fairway_shaper::load(&fairway_shaper::Source::ShaperFile(big.clone()))
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    only(
        &e,
        &path("big.toml"),
        &format!(
            "file is {} bytes, above the limit of {limit} bytes",
            limit + 1
        ),
    );
    std::fs::remove_file(big).ok();
}

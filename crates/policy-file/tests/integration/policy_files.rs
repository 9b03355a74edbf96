//! Policy files end to end: the Eiffel paper's Fig. 6 parsed, every error
//! at its file:line:column, every shipped example valid, and scheduler
//! nodes taking any registry spec with its parameters, a bad one refused
//! with the registry's message at the policy's place.

use fairway_core::policy::Transaction;
use fairway_core::registry::{SchedKind, SchedSpec};
use fairway_policy_file::{load, parse, TREE_POLICIES};

const FIG6: &str = r#"
[[node]]
name = "root"
policy = "stfq"
rate = "20 Mbit/s"

[[node]]
name = "B"
parent = "root"
policy = "stfq"
weight = 7
rate = "10 Mbit/s"

[[flow]]
parent = "root"
weight = 3

[[flow]]
parent = "B"

[[flow]]
parent = "B"
rate = "7 Mbit/s"
"#;

#[test]
fn parses_fig6() {
    let c = parse(FIG6, "fig6.toml").unwrap();
    assert_eq!(c.spec.nodes.len(), 2);
    assert_eq!(c.spec.flows.len(), 3);
    assert_eq!(c.spec.nodes[1].params.rate, Some(1_250_000));
    assert_eq!(c.spec.flows[2].params.rate, Some(875_000));
}

#[test]
fn errors_point_at_line_and_column() {
    let bad = FIG6.replace("parent = \"B\"\nrate", "parent = \"C\"\nrate");
    let e = parse(&bad, "f.toml").unwrap_err();
    assert_eq!((e.line, e.column), (22, 10), "{e}");
    assert!(
        e.to_string()
            .starts_with("f.toml:22:10: unknown node \"C\""),
        "{e}"
    );
    // tc's spelling is the same rate; the ambiguous `Mbps` is refused.
    let tc = FIG6.replace("\"7 Mbit/s\"", "\"7mbit\"");
    assert_eq!(
        parse(&tc, "f.toml").unwrap().spec.flows[2].params.rate,
        Some(875_000)
    );
    let bad = FIG6.replace("\"7 Mbit/s\"", "\"7 Mbps\"");
    let e = parse(&bad, "f.toml").unwrap_err();
    assert_eq!(e.line, 23, "{e}");
    assert!(e.message.contains("bytes/s to tc"), "{e}");
    let bad = FIG6.replace("\"7 Mbit/s\"", "\"0 Mbit/s\"");
    assert!(parse(&bad, "f.toml")
        .unwrap_err()
        .message
        .contains("is zero; rates are > 0"));
    let bad = FIG6.replace("policy = \"stfq\"\nweight", "policy = \"banana\"\nweight");
    let e = parse(&bad, "f.toml").unwrap_err();
    assert_eq!((e.line, e.column), (10, 10), "{e}");
    // A cycle: root's parent is B.
    let bad = FIG6.replace("name = \"root\"\n", "name = \"root\"\nparent = \"B\"\n");
    let e = parse(&bad, "f.toml").unwrap_err();
    assert!(
        e.message.contains("root (node without parent)") || e.message.contains("cycle"),
        "{e}"
    );
    // Syntax errors keep toml's position.
    let e = parse("[[node]\n", "f.toml").unwrap_err();
    assert_eq!(e.line, 1);
    let e = parse("[[node]]\nname = 1\n", "f.toml").unwrap_err();
    assert_eq!(e.line, 2, "{e}");
}

/// A deadline whose nanoseconds do not fit 64 bits is refused, not
/// saturated.
#[test]
fn a_deadline_past_u64_ns_is_refused() {
    let text = "[[node]]\nname = \"r\"\npolicy = \"edf\"\n[[flow]]\nparent = \"r\"\ndeadline_us = 18446744073709552\n";
    let e = parse(text, "f.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.toml:6:15: deadline_us 18446744073709552 outside 0..=18446744073709551"
    );
    let ok = text.replace("552", "551");
    assert!(parse(&ok, "f.toml").is_ok());
}

/// Every shipped example parses and builds.
#[test]
fn shipped_examples_are_valid() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/policies");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            load(p.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 9, "{n} examples");
}

/// A root node of `policy` (on line 3, its value at column 10) over four
/// flows.
fn sched_root(policy: &str) -> String {
    format!("[[node]]\nname = \"root\"\npolicy = \"{policy}\"\n\n[[flow]]\nparent = \"root\"\ncount = 4\n")
}

/// Every scheduler of the registry is a node policy, by name and with its
/// parameters, parsed to exactly the registry's spec.
#[test]
fn scheduler_nodes_take_any_registry_spec() {
    let mut texts: Vec<String> = SchedKind::ALL
        .iter()
        .map(|k| k.name().to_string())
        .collect();
    texts.extend(["qfq+:m=4", "drr:quantum=3000", "wf2q++:m=8"].map(String::from));
    for text in &texts {
        let p = parse(&sched_root(text), "f.toml").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            p.spec.nodes[0].transaction,
            Transaction::Scheduler(SchedSpec::parse(text).unwrap()),
            "{text}"
        );
    }
    let p = parse(&sched_root("qfq+:m=4"), "f.toml").unwrap();
    let Transaction::Scheduler(s) = &p.spec.nodes[0].transaction else {
        panic!("not a scheduler node");
    };
    assert_eq!(s.aggregate_size(), 4);
    let p = parse(&sched_root("drr:quantum=3000"), "f.toml").unwrap();
    let Transaction::Scheduler(s) = &p.spec.nodes[0].transaction else {
        panic!("not a scheduler node");
    };
    assert_eq!(s.param("quantum"), Some(3000));
}

/// Every tree policy of the catalogue is a node policy by its name, with
/// its default queue, and a tree of it builds.
#[test]
fn every_tree_policy_builds_with_its_default_queue() {
    for p in TREE_POLICIES {
        // The ranking policies read each flow's annotator.
        let annotator = match p.name {
            "edf" | "lstf" => "deadline_us = 100\n",
            "pfabric" => "message_bytes = 100000\n",
            _ => "",
        };
        let text = format!("{}{annotator}", sched_root(p.name));
        let file = parse(&text, "f.toml").unwrap_or_else(|e| panic!("{e}"));
        let node = &file.spec.nodes[0];
        assert!(
            !matches!(node.transaction, Transaction::Scheduler(_)),
            "{}",
            p.name
        );
        assert_eq!(node.queue, p.default_queue, "{}", p.name);
    }
}

/// A bad spec is refused with the registry's one-line message (naming the
/// parameter and its range) at the policy's line and column; an unknown
/// name lists the tree's policies and the registry's schedulers.
#[test]
fn a_bad_scheduler_spec_is_refused_where_it_is_written() {
    let err = |policy: &str| {
        parse(&sched_root(policy), "f.toml")
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("qfq+:m=65"),
        "f.toml:3:10: parameter m=65 of qfq+ is outside 1..=64"
    );
    assert_eq!(
        err("qfq+:m=0"),
        "f.toml:3:10: parameter m=0 of qfq+ is outside 1..=64"
    );
    assert_eq!(
        err("drr:quantum=0"),
        "f.toml:3:10: parameter quantum=0 of drr is outside 1..=4294967295"
    );
    assert_eq!(
        err("drr:m=4"),
        "f.toml:3:10: bad parameter 'm=4' for scheduler drr (takes quantum=INTEGER)"
    );
    assert_eq!(
        err("wf2q+:m=4"),
        "f.toml:3:10: bad parameter 'm=4': scheduler wf2q+ takes none"
    );
    assert_eq!(
        err("qfq+:m=4,m=5"),
        "f.toml:3:10: parameter `m` of `qfq+` given twice"
    );
    assert_eq!(
        err("stfq:m=4"),
        "f.toml:3:10: policy \"stfq\" takes no parameters"
    );
    let names: Vec<&str> = TREE_POLICIES
        .iter()
        .map(|p| p.name)
        .chain(SchedKind::ALL.iter().map(|k| k.name()))
        .collect();
    assert_eq!(
        err("banana"),
        format!(
            "f.toml:3:10: unknown policy \"banana\" (one of: {})",
            names.join(", ")
        )
    );
}

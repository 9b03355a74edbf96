//! network.json as LibreQoS writes it: nesting, virtual nodes, the keys
//! LibreQoS ignores, and each way a node is refused with its line:column.

use crate::support::{libreqos, only, path, problems, HEADER};

fn csv(rows: &str) -> String {
    format!("{HEADER}\n{rows}")
}

#[test]
fn nodes_nest_and_keep_their_line_and_column() {
    let json = "{\n  \"Site\": {\n    \"downloadBandwidthMbps\": 1000,\n    \"uploadBandwidthMbps\": \"500\",\n    \"type\": \"site\", \"id\": \"s-1\", \"latitude\": 1.5,\n    \"children\": {\n      \"AP\": {\"downloadBandwidthMbps\": 100.5, \"uploadBandwidthMbps\": 50, \"downloadBandwidthMbpsMin\": 20, \"uploadBandwidthMbpsMin\": 10}\n    }\n  }\n}\n";
    let ck = libreqos("nest", &csv("1,a,d1,x,AP,,,,1,1,2,2,\n"), Some(json)).unwrap();
    let n = &ck.plan.nodes;
    assert_eq!(n.len(), 2);
    assert_eq!((n[0].name.as_str(), n[0].parent.as_deref()), ("Site", None));
    assert_eq!(
        (n[1].name.as_str(), n[1].parent.as_deref()),
        ("AP", Some("Site"))
    );
    assert_eq!(n[0].rates.upload.max, 500_000_000);
    assert_eq!(n[1].rates.download.max, 100_500_000);
    assert_eq!(n[1].rates.download.min, Some(20_000_000));
    assert_eq!((n[0].at.line, n[0].at.col), (Some(2), Some(3)));
    assert_eq!((n[1].at.line, n[1].at.col), (Some(7), Some(7)));
    assert_eq!(n[0].scheduler.to_string(), "qfq+");
    assert_eq!(ck.circuit_parent, [Some(1)]);
}

#[test]
fn virtual_nodes_hand_their_children_and_circuits_to_the_nearest_real_ancestor() {
    let json = r#"{"Site": {"downloadBandwidthMbps": 100, "uploadBandwidthMbps": 100, "children": {
        "Region": {"downloadBandwidthMbps": 100, "uploadBandwidthMbps": 100, "virtual": true, "children": {
            "AP": {"downloadBandwidthMbps": 50, "uploadBandwidthMbps": 50}}},
        "Legacy": {"downloadBandwidthMbps": 10, "uploadBandwidthMbps": 10, "type": "Virtual"}}}}"#;
    let rows =
        "1,a,d1,x,Region,,,,1,1,2,2,\n2,b,d2,x,Legacy,,,,1,1,2,2,\n3,c,d3,x,AP,,,,1,1,2,2,\n";
    let ck = libreqos("virtual", &csv(rows), Some(json)).unwrap();
    let names: Vec<(&str, Option<&str>)> = ck
        .plan
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.parent.as_deref()))
        .collect();
    assert_eq!(names, [("Site", None), ("AP", Some("Site"))]);
    let parents: Vec<Option<&str>> = ck
        .plan
        .circuits
        .iter()
        .map(|c| c.parent.as_deref())
        .collect();
    assert_eq!(parents, [Some("Site"), Some("Site"), Some("AP")]);
    assert_eq!(ck.plan.virtual_nodes.len(), 2);
}

#[test]
fn an_empty_network_is_flat_and_circuits_hang_under_the_root() {
    for (name, json) in [("flat-empty", ""), ("flat-braces", "{ }\n")] {
        let ck = libreqos(name, &csv("1,a,d1,x,AP_9,,,,1,1,2,2,\n"), Some(json)).unwrap();
        assert!(ck.plan.nodes.is_empty());
        assert_eq!(ck.plan.circuits[0].parent, None);
        assert_eq!(ck.plan.flattened_parents, 1);
    }
}

#[test]
fn an_object_under_another_key_than_children_is_refused() {
    let json = "{\"Site\": {\"downloadBandwidthMbps\": 10, \"uploadBandwidthMbps\": 10,\n  \"kids\": {\"AP\": {}}}}";
    let e = problems(libreqos("kids", &csv(""), Some(json)));
    only(
        &e,
        &format!("{}:2:3", path("kids.json")),
        "key \"kids\": an object under a key other than \"children\"",
    );
}

#[test]
fn missing_and_bad_rates_are_refused_at_the_node() {
    let json = "{\n \"A\": {\"uploadBandwidthMbps\": 10},\n \"B\": {\"downloadBandwidthMbps\": -5, \"uploadBandwidthMbps\": true}\n}";
    let e = problems(libreqos("noderates", &csv(""), Some(json)));
    let f = path("noderates.json");
    assert_eq!(e, [
        format!("{f}:2:2: downloadBandwidthMbps of node \"A\" is required and may not be empty"),
        format!("{f}:3:8: downloadBandwidthMbps: rate \"-5\" is negative; rates are > 0"),
        format!("{f}:3:37: uploadBandwidthMbps: rate \"true\" is not a decimal number (digits with an optional fraction, e.g. 2.5)"),
    ]);
}

#[test]
fn names_are_unique_in_the_whole_tree() {
    let json = "{\"A\": {\"downloadBandwidthMbps\": 10, \"uploadBandwidthMbps\": 10, \"children\": {\n\"A\": {\"downloadBandwidthMbps\": 10, \"uploadBandwidthMbps\": 10}}}}";
    let e = problems(libreqos("dupnode", &csv(""), Some(json)));
    let f = path("dupnode.json");
    only(
        &e,
        &format!("{f}:2:1"),
        &format!("node \"A\" is defined twice (first at {f}:1:2)"),
    );
}

#[test]
fn syntax_errors_say_line_and_column() {
    let e = problems(libreqos("syntax", &csv(""), Some("{\n  \"A\": {,}\n}")));
    only(
        &e,
        &format!("{}:2:9", path("syntax.json")),
        "key must be a string",
    );
}

//! Every class of error in a policy file, each at its exact
//! `file:line:column` on one line: syntax, unknown fields, values out of
//! range (on the last leaf, late in the file), names given twice, the
//! tree's shape, fields the policy would ignore, totals past their
//! limits, and what only the built tree finds (horizons, priorities).

use fairway_policy_file::{
    load, parse, read_limited, ReadError, MAX_FILE_BYTES, MAX_FLOWS, MAX_TOTAL_BUCKETS,
};

/// The error of `text` as `line:col: message`, checked to be one line.
fn err(text: &str) -> String {
    let e = parse(text, "f.toml").expect_err("the file must be refused");
    let s = e.to_string();
    assert!(!s.contains('\n'), "not one line: {s}");
    let rest = s.strip_prefix("f.toml:").unwrap_or_else(|| panic!("{s}"));
    rest.to_string()
}

/// A root of `policy` with `root_extra` lines, and one flow with
/// `flow_extra` lines: root on lines 1-3(+), flow after.
fn one(policy: &str, root_extra: &str, flow_extra: &str) -> String {
    format!("[[node]]\nname = \"root\"\npolicy = \"{policy}\"\n{root_extra}\n[[flow]]\nname = \"a\"\nparent = \"root\"\n{flow_extra}")
}

#[test]
fn syntax_and_unknown_fields_are_one_line_at_their_place() {
    assert_eq!(
        err("[[node]\nname = \"r\"\n"),
        "1:8: unclosed array table, expected `]`"
    );
    assert_eq!(
        err(&one("stfq", "foo = 1", "")),
        "4:1: unknown field `foo`, expected one of `name`, `parent`, `policy`, `queue`, `reservation_queue`, `weight`, `priority`, `rate`, `reservation`"
    );
    assert_eq!(
        err(&one(
            "stfq",
            "queue = { kind = \"cffs\", buckets = 8192, granularity = 32768, x = 1 }",
            ""
        )),
        "4:63: unknown field `x`, expected one of `kind`, `buckets`, `granularity`"
    );
    // Not numbers, negative, or not integers: refused by type, where written.
    assert!(err(&one("stfq", "", "weight = nan"))
        .starts_with("8:10: invalid type: floating point `NaN`, expected u32"));
    assert!(err(&one("stfq", "", "weight = inf"))
        .starts_with("8:10: invalid type: floating point `inf`"));
    assert!(err(&one("stfq", "", "weight = -1"))
        .starts_with("8:10: invalid value: integer `-1`, expected u32"));
    assert!(err(&one("stfq", "", "weight = 1.5"))
        .starts_with("8:10: invalid type: floating point `1.5`"));
    assert_eq!(
        err(&one("stfq", "", "rate = \"nan Mbit/s\"")),
        "8:8: rate \"nan Mbit/s\" is not a finite number; rates are > 0"
    );
    assert_eq!(
        err(&one("stfq", "", "rate = \"-5 Mbit/s\"")),
        "8:8: rate \"-5 Mbit/s\" is negative; rates are > 0"
    );
    assert_eq!(
        err(&one("stfq", "", "rate = \"inf\"")),
        "8:8: rate \"inf\" is not a finite number; rates are > 0"
    );
    // The shaper's table of directions: one link here, so refused.
    assert_eq!(
        err(&one("stfq", "", "rate = { download = \"1mbit\", upload = \"1mbit\" }")),
        "8:8: rate: a { download, upload } table is the shaper file's (two links); a policy tree serves one link in one direction: write one rate, e.g. rate = \"10 Mbit/s\""
    );
    assert!(err(&one("stfq", "", "rate = 5"))
        .starts_with("8:8: invalid type: integer `5`, expected a rate string"));
}

#[test]
fn a_file_that_cannot_be_read_says_why_without_a_position() {
    let e = load("/nonexistent/p.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "/nonexistent/p.toml: cannot read: No such file or directory"
    );
    let e = load("/dev/zero").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("/dev/zero: larger than the {MAX_FILE_BYTES}-byte limit for policy files (held in memory while parsed; use `count` for many identical flows)")
    );
    let dir = std::env::temp_dir().join(format!("pfile-utf8-{}", std::process::id()));
    std::fs::write(&dir, b"[[node]]\nname = \"r\xff\"\n").unwrap();
    let e = load(dir.to_str().unwrap()).unwrap_err();
    std::fs::remove_file(&dir).unwrap();
    assert_eq!((e.line, e.column), (2, 10), "{e}");
    assert!(e.message.starts_with("not UTF-8"), "{e}");
}

/// `read_limited` takes any limit as given, the largest `u64` too (no
/// limit in effect), and refuses a file one byte above a limit.
#[test]
fn read_limited_takes_any_limit() {
    let path = std::env::temp_dir().join(format!("pfile-limit-{}", std::process::id()));
    std::fs::write(&path, "a = 1\n").unwrap();
    let whole = read_limited(&path, u64::MAX);
    let exact = read_limited(&path, 6);
    let below = read_limited(&path, 5);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(whole.as_deref(), Ok("a = 1\n"));
    assert_eq!(exact.as_deref(), Ok("a = 1\n"));
    assert_eq!(below, Err(ReadError::TooLarge { size: 6, limit: 5 }));
}

/// A bad value on the last leaf of a long file points at that value.
#[test]
fn a_bad_value_on_the_last_leaf_points_at_it() {
    let mut text = String::from("[[node]]\nname = \"root\"\npolicy = \"strict-priority\"\n");
    for k in 0..10 {
        text.push_str(&format!(
            "\n[[flow]]\nname = \"f{k}\"\nparent = \"root\"\npriority = {k}\n"
        ));
    }
    assert!(parse(&text, "f.toml").is_ok());
    // Line 53 holds the last `priority = 9`; the default queue holds 0..64.
    let bad = text.replace("priority = 9", "priority = 64");
    assert_eq!(
        err(&bad),
        "53:12: priority 64 of flow \"f9\" is outside the queue of its parent \"root\" (64 buckets x granularity 1: priorities 0..64)"
    );
    let bad = text.replace("priority = 9", "priority = 9\nweight = 2");
    assert!(err(&bad).starts_with(
        "54:10: `weight` of flow \"f9\" is ignored: its parent \"root\" is strict-priority"
    ));
    let bad = text.replace("name = \"f9\"", "name = \"f3\"");
    assert_eq!(
        err(&bad),
        "51:8: flow name \"f3\" used twice (also on line 21): flow names must differ"
    );
}

#[test]
fn values_out_of_range_point_at_the_value() {
    assert_eq!(
        err(&one("stfq", "", "weight = 0")),
        "8:10: weight 0 outside 1..=65536"
    );
    assert_eq!(
        err(&one("stfq", "", "weight = 65537")),
        "8:10: weight 65537 outside 1..=65536"
    );
    assert_eq!(
        err(&one("stfq", "", "count = 0")),
        format!("8:9: count 0 outside 1..={MAX_FLOWS}")
    );
    assert_eq!(
        err(&one("edf", "", "deadline_us = 1\nmessage_bytes = 5")),
        "9:17: set deadline_us or message_bytes, not both"
    );
    assert!(err(&one(
        "stfq",
        "queue = { kind = \"heap\", buckets = 1, granularity = 1 }",
        ""
    ))
    .starts_with("4:18: unknown queue \"heap\" in queue (one of: ffs,"));
    assert_eq!(
        err(&one("stfq", "queue = { kind = \"cffs\", buckets = 8191, granularity = 32768 }", "")),
        format!("4:36: buckets 8191 of queue outside 2..={MAX_TOTAL_BUCKETS}, even (two halves) for cffs (the limit on all queues of a file together)")
    );
    assert_eq!(
        err(&one(
            "stfq",
            "queue = { kind = \"cffs\", buckets = 8192, granularity = 0 }",
            ""
        )),
        format!(
            "4:56: granularity 0 of queue outside 1..={} (rank units per bucket)",
            u64::MAX
        )
    );
    assert_eq!(
        err(&one(
            "stfq",
            "queue = { kind = \"binary-heap\", buckets = 8, granularity = 1 }",
            ""
        )),
        "4:43: `buckets` of queue is ignored by binary-heap (a heap holds any rank): remove it"
    );
    assert_eq!(
        err(&one(
            "stfq",
            "queue = { kind = \"cffs\", granularity = 1 }",
            ""
        )),
        "4:9: queue of kind cffs needs `buckets`"
    );
    let sized = |line: &str| format!("{line}\n{}", one("stfq", "", ""));
    assert_eq!(
        err(&sized("max_packets = 0")),
        "1:15: max_packets 0 outside 1..=16777216 (every slot is allocated when the tree is built, 32 bytes each)"
    );
    assert_eq!(err(&sized("max_packets = 16777217")), "1:15: max_packets 16777217 outside 1..=16777216 (every slot is allocated when the tree is built, 32 bytes each)");
    assert!(parse(&sized("max_packets = 16"), "f.toml").is_ok());
    assert_eq!(
        err(&sized("max_packet_len = 65537")),
        "1:18: max_packet_len 65537 outside 1..=65536 (the tree's packet lengths are 16-bit)"
    );
}

#[test]
fn names_given_twice_name_both_lines() {
    let two_nodes = "[[node]]\nname = \"root\"\npolicy = \"stfq\"\n[[node]]\nname = \"root\"\nparent = \"root\"\npolicy = \"stfq\"\n[[flow]]\nparent = \"root\"\n";
    assert_eq!(
        err(two_nodes),
        "5:8: node \"root\" defined twice (first on line 2): node names must differ"
    );
    let two_flows = one("stfq", "", "[[flow]]\nname = \"a\"\nparent = \"root\"\n");
    assert_eq!(
        err(&two_flows),
        "9:8: flow name \"a\" used twice (also on line 6): flow names must differ"
    );
    // `a` with count 3 makes a#0..a#2: a single flow "a#2" collides,
    // "a#3" and "a#02" do not.
    let counted = |single: &str| {
        one(
            "stfq",
            "",
            &format!("count = 3\n[[flow]]\nname = \"{single}\"\nparent = \"root\"\n"),
        )
    };
    assert_eq!(
        err(&counted("a#2")),
        "10:8: flow name \"a#2\" used twice (also on line 6): flow names must differ"
    );
    assert!(parse(&counted("a#3"), "f.toml").is_ok());
    assert!(parse(&counted("a#02"), "f.toml").is_ok());
    // A flow without a name is `flowI`.
    let unnamed = "[[node]]\nname = \"root\"\npolicy = \"stfq\"\n[[flow]]\nparent = \"root\"\n[[flow]]\nname = \"flow0\"\nparent = \"root\"\n";
    assert_eq!(
        err(unnamed),
        "7:8: flow name \"flow0\" used twice (also on line 4): flow names must differ"
    );
}

#[test]
fn the_tree_has_one_root_no_cycle_and_a_flow_below_every_node() {
    let nodes = |extra: &str| {
        format!("[[node]]\nname = \"root\"\npolicy = \"stfq\"\n\n[[node]]\nname = \"b\"\nparent = \"c\"\npolicy = \"stfq\"\n\n[[node]]\nname = \"c\"\nparent = \"b\"\npolicy = \"stfq\"\n{extra}\n[[flow]]\nparent = \"root\"\n[[flow]]\nname = \"x\"\nparent = \"b\"\n")
    };
    assert_eq!(
        err(&nodes("")),
        "7:10: node \"b\" is its own ancestor (cycle: \"b\" -> \"c\" -> \"b\")"
    );
    let two_roots = "[[node]]\nname = \"root\"\npolicy = \"stfq\"\n\n[[node]]\nname = \"other\"\npolicy = \"stfq\"\n[[flow]]\nparent = \"root\"\n[[flow]]\nparent = \"other\"\n";
    assert_eq!(err(two_roots), "5:1: node \"other\" has no `parent`, nor has \"root\" (line 1): a tree has exactly one root");
    let empty = "[[node]]\nname = \"root\"\npolicy = \"stfq\"\n\n[[node]]\nname = \"empty\"\nparent = \"root\"\npolicy = \"pfabric\"\n[[flow]]\nparent = \"root\"\n";
    assert_eq!(err(empty), "5:1: node \"empty\" has no flow below it, so no packet can ever reach it: give it a [[flow]] (parent = \"empty\") or a child node with one, or remove it");
    // A chain one level deeper than the limit.
    let max = fairway_policy_file::MAX_DEPTH;
    let mut deep = String::from("[[node]]\nname = \"n0\"\npolicy = \"stfq\"\n");
    for k in 1..=max {
        deep.push_str(&format!(
            "[[node]]\nname = \"n{k}\"\nparent = \"n{}\"\npolicy = \"stfq\"\n",
            k - 1
        ));
    }
    deep.push_str(&format!("[[flow]]\nparent = \"n{max}\"\n"));
    assert_eq!(err(&deep), format!("{}:1: node \"n{max}\" is on level {} of the tree, past the limit of {max} levels: every packet walks from its flow to the root on enqueue and on dequeue", 4 * max, max + 1));
    let ok = deep
        .replace(
            &format!("[[flow]]\nparent = \"n{max}\""),
            &format!("[[flow]]\nparent = \"n{}\"", max - 1),
        )
        .replace(
            &format!(
                "[[node]]\nname = \"n{max}\"\nparent = \"n{}\"\npolicy = \"stfq\"\n",
                max - 1
            ),
            "",
        );
    assert!(parse(&ok, "f.toml").is_ok());
}

#[test]
fn fields_the_policy_ignores_are_refused_where_written() {
    assert_eq!(
        err(&one("edf", "", "deadline_us = 10\nreservation = \"1 Mbit/s\"")),
        "9:15: `reservation` of flow \"a\" is ignored: its parent \"root\" is edf, and only hclock reads it"
    );
    assert_eq!(
        err(&one("edf", "reservation_queue = { kind = \"cffs\", buckets = 2, granularity = 1 }", "deadline_us = 10")),
        "4:21: `reservation_queue` of node \"root\" is ignored: only an hclock node has one, and its policy is edf"
    );
    assert_eq!(
        err(&one(
            "hclock",
            "reservation_queue = { kind = \"cffs\", buckets = 2, granularity = 1 }",
            ""
        )),
        "4:21: `reservation_queue` of node \"root\" is ignored: no child of it sets `reservation`"
    );
    assert_eq!(
        err(&one(
            "drr",
            "queue = { kind = \"cffs\", buckets = 2, granularity = 1 }",
            ""
        )),
        "4:9: `queue` of node \"root\" is ignored: the scheduler drr holds its children"
    );
    assert!(err(&one("fifo", "", "weight = 2")).starts_with("8:10: `weight` of flow \"a\" is ignored: its parent \"root\" is fifo, and stfq, hclock and the schedulers that share by weight (all but fifo) read it"));
    assert_eq!(
        err(&one("hclock", "", "rate = \"1 Mbit/s\"\nreservation = \"2 Mbit/s\"")),
        "9:15: reservation of flow \"a\" (250000 B/s) above its own `rate` limit (125000 B/s): it could never be met"
    );
    assert!(parse(
        &one(
            "hclock",
            "",
            "rate = \"2 Mbit/s\"\nreservation = \"2 Mbit/s\""
        ),
        "f.toml"
    )
    .is_ok());
    assert_eq!(
        err(&one("stfq", "", "priority = 2")),
        "8:12: `priority` of flow \"a\" is ignored: its parent \"root\" is stfq, and only strict-priority reads it"
    );
    assert_eq!(
        err(&one("stfq", "weight = 2", "")),
        "4:10: `weight` of node \"root\" is ignored: it is the root, with no parent to read it"
    );
    assert_eq!(
        err(&one("stfq", "", "deadline_us = 10")),
        "8:15: `deadline_us` of flow \"a\" is ignored: no node above it ranks packets (edf and lstf read deadline_us, pfabric message_bytes)"
    );
    assert_eq!(
        err(&one("edf", "", "")),
        "5:1: flow \"a\" needs `deadline_us`: node \"root\" above it is edf and ranks its packets by it (0: rank = arrival)"
    );
    assert_eq!(
        err(&one("pfabric", "", "deadline_us = 10")),
        "8:15: flow \"a\" needs `message_bytes`: node \"root\" above it is pfabric and ranks its packets by it"
    );
    let shaper = format!(
        "[shaper]\nqueue = \"cffs\"\nbuckets = 20000\ngranularity = 100000\n{}",
        one("stfq", "", "")
    );
    assert_eq!(err(&shaper), "1:1: [shaper] is ignored: it holds rate-limited children only, and no node or flow sets `rate`");
    let limited = shaper.replace(
        "parent = \"root\"\n",
        "parent = \"root\"\nrate = \"1 Mbit/s\"\n",
    );
    assert!(parse(&limited, "f.toml").is_ok());
    let ffs = limited.replace("\"cffs\"", "\"ffs\"");
    assert_eq!(
        err(&ffs),
        "2:9: the shaper's ranks are times that only grow: use cffs or binary-heap, not ffs"
    );
}

#[test]
fn totals_past_their_limits_are_refused_before_allocating() {
    // Each count in range, the total not.
    let flows = one(
        "stfq",
        "",
        &format!("count = {MAX_FLOWS}\n[[flow]]\nname = \"b\"\nparent = \"root\"\ncount = 1\n"),
    );
    assert_eq!(
        err(&flows),
        "12:9: this table brings the file to 4194305 flows, past the limit of 4194304 over all [[flow]] tables: each flow costs ~400 bytes, allocated when the file is checked and its tree built"
    );
    // Each queue in range, the buckets of all queues not: 2^23 + 2^23
    // + the default shaper's 20000.
    let q = "queue = { kind = \"hffs\", buckets = 8388608, granularity = 1 }";
    let text = format!("[[node]]\nname = \"root\"\npolicy = \"pfabric\"\n{q}\n[[node]]\nname = \"b\"\nparent = \"root\"\npolicy = \"pfabric\"\n{q}\n[[flow]]\nparent = \"b\"\nmessage_bytes = 1\n");
    assert_eq!(
        err(&text),
        format!("9:9: this queue brings the file's queues to 16797216 buckets, past the limit of {MAX_TOTAL_BUCKETS} over all queues (defaults included): each bucket reserves 64 bytes when its queue is built; give smaller queues")
    );
    // Under a scheduler, the weights' sum.
    let heavy = one("drr", "", "count = 257\nweight = 65536");
    assert_eq!(
        err(&heavy),
        "9:10: flow \"a\" brings the weights under node \"root\" (drr) to 16842752, past the scheduler's limit of 16777216 on their sum"
    );
}

#[test]
fn what_only_the_tree_finds_points_at_the_queue_or_rate_to_change() {
    // 64 kB packets fit STFQ's default queue: its tags are scaled to the
    // largest packet, so a valid file is not refused for an internal reason.
    let big = format!("max_packet_len = 65536\n{}", one("stfq", "", ""));
    assert!(parse(&big, "f.toml").is_ok());
    let given = one(
        "stfq",
        "queue = { kind = \"cffs\", buckets = 2, granularity = 1 }",
        "",
    );
    assert_eq!(
        err(&given),
        "4:9: the queue of node \"root\" has a half window of 1 rank units, and one packet can step 98304000: more buckets or a coarser granularity"
    );
    let hclock = one(
        "hclock",
        "reservation_queue = { kind = \"cffs\", buckets = 2, granularity = 1 }",
        "reservation = \"1 Mbit/s\"",
    );
    assert_eq!(
        err(&hclock),
        "4:21: the reservation_queue of node \"root\" has a half window of 1 rank units, and one packet can step 12000001: more buckets or a coarser granularity"
    );
    // The default shaper (1 s half window) and a 1 kB/s limit: 1.5 s.
    let slow = one("stfq", "", "rate = \"1 kB/s\"");
    assert!(
        err(&slow).starts_with("8:8: the shaper's half window covers 1000000000 ns"),
        "{}",
        err(&slow)
    );
    let prio = one(
        "strict-priority",
        "queue = { kind = \"cffs\", buckets = 2, granularity = 1 }",
        "",
    );
    assert!(
        err(&prio).starts_with("4:9: node \"root\": static priorities are not monotone"),
        "{}",
        err(&prio)
    );
}

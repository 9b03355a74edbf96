//! The fast reader against the `toml` crate: on generated shaper files,
//! valid ones and ones with a line of TOML the fast reader does not
//! build or with a problem put in, [`super::read`] gives exactly what
//! the crate's reading gives (plan, places and problems alike), and a
//! plain file is read by the fast reader.

use super::{fast, read, read_by_crate, read_with, LibreqosFiles};
use crate::error::ConfigError;
use crate::plan::Plan;
use proptest::prelude::*;
use std::sync::Arc;

/// [`read`], every file cut in two (where it has a `[[` header past
/// its middle), each half parsed header line by header line.
fn read_split(
    file: &Arc<str>,
    text: &str,
    plan: &mut Plan,
    errors: &mut Vec<ConfigError>,
) -> Option<LibreqosFiles> {
    read_with(file, text, plan, errors, 0, 1)
}

/// What one reading gives.
fn outcome(
    text: &str,
    by: fn(&Arc<str>, &str, &mut Plan, &mut Vec<ConfigError>) -> Option<LibreqosFiles>,
) -> (Plan, Vec<String>, Option<LibreqosFiles>) {
    let file: Arc<str> = Arc::from("s.toml");
    let (mut plan, mut errors) = (Plan::default(), Vec::new());
    let files = by(&file, text, &mut plan, &mut errors);
    let errors = errors.iter().map(ToString::to_string).collect();
    (plan, errors, files)
}

pub(super) fn pick<T: Clone + std::fmt::Debug + 'static>(
    v: &'static [T],
) -> impl Strategy<Value = T> {
    proptest::sample::select(v)
}

/// Blanks where TOML allows them (or none).
fn pad() -> impl Strategy<Value = &'static str> {
    pick(&["", " ", "  ", "\t", " \t "])
}

/// A line's end: nothing, blanks, or a comment.
fn tail() -> impl Strategy<Value = &'static str> {
    pick(&["", " ", "\t", " # a comment", "# x", " #"])
}

const RATES: &[&str] = &[
    "\"10mbit\"",
    "\"1gbit\"",
    "\"100 Mbit/s\"",
    "\"2.5mbit\"",
    "{ download = \"20mbit\", upload = \"5mbit\" }",
    "{download=\"20mbit\",upload=\"5mbit\"}",
    "{ 'download' = \"20mbit\", \"upload\" = '5mbit' }",
    "{ upload = \"1mbit\" }",
    "{ download = \"3mbit\" }",
];

const PREFIXES: &[&str] = &[
    "[\"10.0.0.1\"]",
    "[\"10.1.0.0/16\", \"10.2.0.0/24\"]",
    "[]",
    "[ \"192.0.2.7/32\" ]",
    "[\n  \"10.0.0.1\", # the first\n  '10.0.0.2',\n]",
];

/// One `key = value` line of a valid table of kind `k`.
fn field(k: usize, i: u32) -> BoxedStrategy<String> {
    let line = |key: &'static str, vals: &'static [&'static str]| {
        (pad(), pad(), pad(), pick(vals), tail())
            .prop_map(move |(a, b, c, v, t)| format!("{a}{key}{b}={c}{v}{t}"))
            .boxed()
    };
    let ids = |key: &'static str, prefix: &'static str| {
        (pad(), tail())
            .prop_map(move |(a, t)| format!("{a}{key} = \"{prefix}{i}\"{t}"))
            .boxed()
    };
    match k {
        0 => prop_oneof![
            ids("name", "n"),
            line("parent", &["\"n0\"", "\"up\""]),
            line("rate", RATES),
            line("reservation", RATES),
            line(
                "weight",
                &["1", "3", "+2", "65536", "1_0", "0x1f", "0o7", "0b11"]
            ),
        ]
        .boxed(),
        1 => prop_oneof![
            ids("id", "c"),
            line(
                "name",
                &[
                    "\"Alice\"",
                    "\"Ünïcode é\"",
                    "\"\"",
                    "\"Al\\tice \\u00e9\\\"\"",
                    "'C:\\path'",
                    "\"\"\"multi\nline\"\"\"",
                    "'''raw'''",
                ],
            ),
            line("parent", &["\"n0\"", "\"n1\""]),
            line("rate", RATES),
            line("reservation", RATES),
            line("weight", &["1", "4", "0", "-1"]),
        ]
        .boxed(),
        _ => prop_oneof![
            ids("id", "d"),
            ids("circuit", "c"),
            line("name", &["\"pbx\""]),
            line("mac", &["\"02:00:00:00:20:01\"", "\"02-00-00-00-20-02\""]),
            line("ipv4", PREFIXES),
            line("ipv6", &["[\"2001:db8::/64\"]", "[]"]),
        ]
        .boxed(),
    }
}

/// A valid table of kind `k` (node, circuit, device), number `i`: its
/// required fields, then some optional ones.
pub(super) fn table(k: usize, i: u32) -> BoxedStrategy<String> {
    let (header, required) = match k {
        0 => ("[[node]]", format!("name = \"n{i}\"\nrate = \"100mbit\"\n")),
        1 => ("[[circuit]]", format!("id = \"c{i}\"\nrate = \"10mbit\"\n")),
        _ => ("[[device]]", format!("id = \"d{i}\"\ncircuit = \"c{i}\"\n")),
    };
    (pad(), tail(), proptest::collection::vec(field(k, i), 0..3))
        .prop_map(move |(a, t, extra)| {
            // A key given twice is the crate's to refuse: keep the first.
            let mut s = format!("{a}{header}{t}\n{required}");
            let mut seen: Vec<String> = required
                .lines()
                .map(|l| l.split('=').next().unwrap_or("").trim().to_string())
                .collect();
            for l in extra {
                let key = l.split('=').next().unwrap_or("").trim().to_string();
                if !seen.contains(&key) {
                    s += &l;
                    s.push('\n');
                    seen.push(key);
                }
            }
            s
        })
        .boxed()
}

/// A valid shaper file: optional `libreqos`, `[interfaces]` and
/// `[default_class]`, then tables; blank and comment lines between;
/// LF or CR LF line ends.
pub(super) fn valid() -> impl Strategy<Value = String> {
    let tables = proptest::collection::vec((0usize..3, 0u32..4), 0..8);
    let head = (
        pick(&[
            "",
            "libreqos = { shaped_devices = \"S.csv\" }\n",
            "libreqos = { shaped_devices = \"S.csv\", network = \"n.json\" }\n",
        ]),
        pick(&[
            "",
            "[interfaces]\ninternet = \"eth0\"\nsubscribers = \"eth1\"\nrate = { download = \"2gbit\", upload = \"1gbit\" }\n",
            "[interfaces]\ninternet = \"eth0\"\nsubscribers = \"eth1\"\nrate = \"1gbit\"\nio = \"frame\"\n",
            "# the link\n[interfaces] # here\n  internet=\"a\"\n\tsubscribers = \"b\"\nrate = \"10gbit\"\n",
        ]),
        pick(&[
            "",
            "[default_class]\nrate = \"5mbit\"\n",
            "[default_class]\nparent = \"n0\"\nrate = { download = \"5mbit\", upload = \"1mbit\" }\nreservation = \"1mbit\"\n",
        ]),
        pick(&[
            "",
            "[[rule]]\ncircuit = \"c0\"\nprotocol = \"udp\"\ndst_ports = \"5060\"\ndscp = 46\n",
            "[[rule]]\ncircuit = \"c1\"\nprefix = \"10.0.0.0/8\"\nvlan = 120\nmac = \"02:00:00:00:00:01\"\n",
        ]),
    );
    (head, tables)
        .prop_flat_map(|((l, i, d, r), tables)| {
            let parts: Vec<BoxedStrategy<String>> =
                tables.into_iter().map(|(k, n)| table(k, n)).collect();
            (
                Just(format!("{l}{i}{d}{r}")),
                parts,
                pick(&["", "\n", "\n# end\n"]),
                any::<bool>(),
            )
        })
        .prop_map(|(head, parts, end, crlf)| {
            let mut s = head;
            for p in parts {
                s.push('\n');
                s += &p;
            }
            s += end;
            if crlf {
                s = s.replace('\n', "\r\n");
            }
            s
        })
}

/// Lines the fast reader does not build (it hands the file to the
/// crate), forms of TOML it reads, or lines with a problem the crate or
/// the conversion reports.
pub(super) const ODD: &[&str] = &[
    "id = \"a\\tb\"",
    "name = 'literal'",
    "name = \"\"\"multi\"\"\"",
    "name = \"\"\"a cut\n[[node]]\nin a string\"\"\"",
    "name = '''a cut\n[b] in a string'''",
    "name = \"\"\"left open\n[[node]]",
    "\"id\" = \"x\"",
    "rate.download = \"1mbit\"",
    "weight = 007",
    "weight = 1_000",
    "weight = 99999999999999999999",
    "weight = 1.5",
    "weight = 1e3",
    "weight = true",
    "weight = \"2\"",
    "weight = 1979-05-27",
    "rate = {}",
    "rate = { download = \"1mbit\", }",
    "rate = { down = \"1mbit\" }",
    "rate = { download = 5 }",
    "rate = { download = \"1mbit\", download = \"2mbit\" }",
    "rate = \"5 furlongs\"",
    "rate = \"-1mbit\"",
    "ipv4 = [\"10.0.0.1\",]",
    "ipv4 = [1]",
    "ipv4 = [\"10.0.0.300\"]",
    "ipv4 = [\n\"10.0.0.1\"]",
    "unknown = \"x\"",
    "[ node ]",
    "[node]",
    "[[node.x]]",
    "[libreqos]",
    "[[flow]]",
    "[interfaces]",
    "[[rule]]",
    "id = \"a\" \"b\"",
    "id = \"x\"\r",
    "id",
    "= \"x\"",
    "id = ",
    "\u{feff}id = \"x\"",
    "mac = \"zz\"",
    "vlan = 5000",
    "policy = \"drr\"",
    "weight = -0",
    "weight = +0",
];

/// A valid file with a few lines put in.
pub(super) fn odd() -> impl Strategy<Value = String> {
    (
        valid(),
        proptest::collection::vec((any::<prop::sample::Index>(), pick(ODD)), 1..3),
    )
        .prop_map(|(text, inserts)| {
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            for (at, line) in inserts {
                let i = at.index(lines.len() + 1);
                lines.insert(i, line.to_string());
            }
            lines.join("\n")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn a_valid_file_is_read_fast_and_alike(text in valid()) {
        prop_assert!(fast::parse(&text, 0..text.len(), fast::BLOCK).is_some(), "not read fast:\n{}", text);
        prop_assert!(fast::parse(&text, 0..text.len(), 1).is_some(), "not read fast in blocks:\n{}", text);
        let by_crate = outcome(&text, read_by_crate);
        prop_assert_eq!(&outcome(&text, read), &by_crate, "{}", text);
        prop_assert_eq!(&outcome(&text, read_split), &by_crate, "cut: {}", text);
    }

    #[test]
    fn any_file_reads_as_the_crate_reads_it(text in odd()) {
        let by_crate = outcome(&text, read_by_crate);
        prop_assert_eq!(&outcome(&text, read), &by_crate, "{}", text);
        prop_assert_eq!(&outcome(&text, read_split), &by_crate, "cut: {}", text);
    }
}

#[test]
fn the_examples_and_the_bench_layout_are_read_fast() {
    let example = include_str!("../../../../examples/shaper/shaper.toml");
    let bench = "# Generated by fairway shape bench.\n[interfaces]\ninternet = \"a\"\n\
        subscribers = \"b\"\nrate = { download = \"1000000000bit\", upload = \"1000000000bit\" }\n\
        \n[[node]]\nname = \"n0\"\nrate = { download = \"60000000bit\", upload = \"60000000bit\" }\n\
        \n[[circuit]]\nid = \"c0\"\nparent = \"n0\"\nrate = { download = \"20000000bit\", upload = \"20000000bit\" }\n\
        reservation = { download = \"1000000bit\", upload = \"1000000bit\" }\nweight = 1\n\
        \n[[device]]\nid = \"d0\"\ncircuit = \"c0\"\nipv4 = [\"10.10.0.2\"]\n";
    for text in [example, bench] {
        assert!(
            fast::parse(text, 0..text.len(), fast::BLOCK).is_some(),
            "{text}"
        );
        assert_eq!(outcome(text, read), outcome(text, read_by_crate));
        assert_eq!(outcome(text, read_split), outcome(text, read_by_crate));
    }
}

#[test]
fn a_table_given_once_in_each_half_is_the_crates_to_refuse() {
    for table in [
        "[interfaces]\ninternet = \"a\"\nsubscribers = \"b\"\nrate = \"1gbit\"\n",
        "[default_class]\nrate = \"1mbit\"\n",
    ] {
        let nodes: String = (0..20)
            .map(|i| format!("[[node]]\nname = \"n{i}\"\nrate = \"10mbit\"\n"))
            .collect();
        let text = format!("{table}{nodes}{table}");
        assert!(fast::split(&text, 0).is_some());
        let by_crate = outcome(&text, read_by_crate);
        assert_eq!(by_crate.1.len(), 1, "{by_crate:?}");
        assert_eq!(outcome(&text, read_split), by_crate);
    }
}

#[test]
fn a_string_over_a_cut_hands_the_file_to_the_crate() {
    for quote in ["\"\"\"", "\'\'\'"] {
        let text = format!(
            "[[circuit]]\nid = \"c\"\nrate = \"1mbit\"\nname = {quote}a\n\
             [[node]]\nname = \"x\"\nrate = \"1mbit\"\n{quote}\n"
        );
        // Whole, the string is read; cut at its `[[node]]` line, the
        // first block's string is left open.
        assert!(fast::parse(&text, 0..text.len(), fast::BLOCK).is_some());
        assert!(fast::parse(&text, 0..text.len(), 1).is_none());
        let by_crate = outcome(&text, read_by_crate);
        assert_eq!(by_crate.0.circuits.len(), 1);
        assert_eq!(outcome(&text, read_split), by_crate);
    }
}

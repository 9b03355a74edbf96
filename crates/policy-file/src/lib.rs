//! # Policy files
//!
//! A scheduling tree of [`fairway_core::policy`] (the Eiffel paper §3.2,
//! §4 "Policy Creation") written in TOML, parsed with `serde` + `toml`,
//! checked by [`PolicyTree::build`](fairway_core::policy::PolicyTree::build),
//! every error reported as `file:line:column: message`. This crate is the
//! one place that reads policy files: `fairway policy`, the evaluation's
//! policy runs and any other front end use [`parse`] / [`load`].
//!
//! ```toml
//! max_packets = 4096          # packets queued at once (pre-allocated)
//! max_packet_len = 1500       # bytes
//!
//! [shaper]                    # the one shared shaper (times in ns)
//! queue = "cffs"
//! buckets = 20000
//! granularity = 100000        # 100 µs per bucket
//!
//! [[node]]
//! name = "root"
//! policy = "stfq"             # see TREE_POLICIES, or a scheduler spec
//! rate = "20 Mbit/s"          # pacing of the whole output
//!
//! [[node]]
//! name = "B"
//! parent = "root"
//! policy = "drr:quantum=3000" # any scheduler of the registry
//! weight = 7
//! rate = "10 Mbit/s"          # limit on an internal node
//!
//! [[flow]]
//! parent = "root"
//! weight = 3
//!
//! [[flow]]
//! parent = "B"
//! count = 2                   # two identical flows
//! rate = "7 Mbit/s"
//! ```
//!
//! Rates (`rate`, `reservation`) are one string read by [`rate`], the one
//! rate parser of every fairway file: `10 Mbit/s` and tc's `10mbit` are
//! the same rate, a plain number is bytes/s, `…bps` is refused as
//! ambiguous. The shaper file (`fairway shape`) is this grammar extended:
//! it reads its rates with the same parser, its rate fields as
//! [`RateField`] (one string, or the `{ download, upload }` table this
//! file refuses), and its text with [`read_limited`] and [`place`].
//!
//! A node's `policy` is one of the tree's own transactions
//! ([`TREE_POLICIES`]) or any scheduler spec of
//! [`fairway_core::registry`] with its parameters (`fifo`,
//! `drr:quantum=3000`, `qfq`, `qfq+:m=4`, `s-kps`, `wf2q+`, `wf2q++:m=8`),
//! parsed and range-checked by the registry. Every node but a scheduler
//! node may set `queue = { kind, buckets, granularity }` (defaults per
//! policy, see [`default_queue`]; a heap takes no `buckets`). Flows may set the packet annotator: `deadline_us`
//! (EDF / LSTF: rank = arrival + deadline) or `message_bytes` (pFabric:
//! rank = bytes left in the flow's current message). Workload flow `k`
//! maps to policy flow `k mod flows`.
//!
//! What is refused, always on one line at the value to change (the
//! crate's checks run before core's tree is built, and core's own errors
//! are pointed back at the table or value they concern): the file past
//! [`MAX_FILE_BYTES`]; totals past [`MAX_FLOWS`], [`MAX_TOTAL_BUCKETS`],
//! [`MAX_PACKETS`], [`MAX_DEPTH`]; names given twice; a second root, a
//! cycle, a node with no flow below it; and any field the policy it
//! concerns would ignore (a `weight` under a strict-priority parent, a
//! `reservation` outside hClock, a `deadline_us` with no edf or lstf node
//! above, …). docs/policies.md lists them.
//!
//! ```
//! let text = "[[node]]\nname = \"root\"\npolicy = \"qfq+:m=4\"\n\n[[flow]]\nparent = \"root\"\ncount = 8\n";
//! let p = fairway_policy_file::parse(text, "mini.toml").unwrap();
//! assert_eq!((p.spec.nodes.len(), p.spec.flows.len()), (1, 8));
//!
//! let bad = text.replace("m=4", "m=65");
//! let e = fairway_policy_file::parse(&bad, "mini.toml").unwrap_err();
//! assert_eq!(e.to_string(), "mini.toml:3:10: parameter m=65 of qfq+ is outside 1..=64");
//! ```

mod build_error_span;
mod child;
mod error;
mod fields;
mod flow;
mod limits;
mod node;
mod parse;
pub mod place;
mod queue;
pub mod rate;
mod rate_field;
mod read;
mod schema;
mod tree_shape;

pub use error::PolicyFileError;
pub use flow::RankSource;
pub use limits::{MAX_DEPTH, MAX_FLOWS, MAX_PACKETS, MAX_PACKET_LEN, MAX_TOTAL_BUCKETS};
pub use node::{default_queue, TreePolicy, TREE_POLICIES};
pub use parse::{load, parse, PolicyFile};
pub use rate::{parse_rate, RateError};
pub use rate_field::{RateField, DIRECTIONS};
pub use read::{read_limited, ReadError, MAX_FILE_BYTES};

//! Why a configuration was refused: a [`ConfigError`] is one problem at
//! one place, printed as one line `file:line[:col]: message`, the message
//! saying what is allowed. Readers and the check collect every problem
//! they find, not only the first.

use crate::loc::Loc;
use crate::mac::MacError;
use crate::rate::RateError;
use fairway_core::SpecError;
use fairway_policy_file::ReadError;
use std::fmt;

/// One problem in a configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Where.
    pub at: Loc,
    /// What (boxed: a problem may carry a second place and names, and
    /// errors travel in `Result`s and long lists).
    pub problem: Box<Problem>,
}

impl ConfigError {
    /// `problem` at `at`.
    pub fn new(at: Loc, problem: Problem) -> Self {
        Self {
            at,
            problem: Box::new(problem),
        }
    }
}

/// What is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The file could not be read, is larger than its limit or is not
    /// UTF-8 (read as policy files are).
    File(ReadError),
    /// More elements than the limit.
    TooMany {
        /// What (`circuits`).
        what: &'static str,
        /// The limit.
        limit: usize,
    },
    /// The file's syntax, in its parser's words.
    Syntax(String),
    /// A required CSV column is missing from the header.
    MissingColumn(&'static str),
    /// A field's rate.
    Rate {
        /// The field.
        field: String,
        /// Why.
        error: RateError,
    },
    /// A MAC.
    Mac(MacError),
    /// An address or prefix.
    Ip {
        /// `IPv4` or `IPv6` (or `IP`).
        family: &'static str,
        /// As written.
        text: String,
    },
    /// A value outside what a field allows.
    Value {
        /// The field.
        field: String,
        /// The value as written (a string quoted, a number not).
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// A node's scheduler spec.
    Spec(SpecError),
    /// A required field is empty or absent.
    Missing(String),
    /// A name or id given twice.
    Duplicate {
        /// `node`, `circuit`, `device`.
        what: &'static str,
        /// The name.
        name: String,
        /// The first one.
        first: Loc,
    },
    /// Rows of one circuit that disagree.
    CircuitConflict {
        /// The circuit id.
        id: String,
        /// The field that differs.
        field: &'static str,
        /// This row's value.
        here: String,
        /// The first row's value.
        first_value: String,
        /// The first row.
        first: Loc,
    },
    /// A parent that is no node.
    UnknownParent {
        /// Whose.
        of: String,
        /// The name.
        parent: String,
    },
    /// A circuit a device or rule names that does not exist.
    UnknownCircuit {
        /// Whose.
        of: String,
        /// The id.
        circuit: String,
    },
    /// Nodes that are their own ancestors.
    Cycle(Vec<String>),
    /// A node deeper than [`crate::limits::MAX_DEPTH`].
    TooDeep {
        /// The node.
        node: String,
        /// Its depth.
        depth: usize,
    },
    /// A min above its max.
    MinAboveMax {
        /// Whose (`circuit "c1"`).
        of: String,
        /// Direction.
        dir: &'static str,
        /// The min, bit/s.
        min: u64,
        /// The max, bit/s.
        max: u64,
    },
    /// A child's max above its parent's.
    MaxAboveParent {
        /// The child.
        of: String,
        /// Direction.
        dir: &'static str,
        /// The child's max.
        max: u64,
        /// The parent (`node "AP_1"` or `the link`).
        parent: String,
        /// The parent's max.
        parent_max: u64,
    },
    /// Guarantees of a node's children that sum above what it can give.
    MinsAboveParent {
        /// The parent.
        parent: String,
        /// Direction.
        dir: &'static str,
        /// The children's guarantees, summed.
        sum: u64,
        /// How many children guarantee something.
        children: usize,
        /// `min` or `max`: which of the parent's rates bounds them.
        bound: &'static str,
        /// That rate.
        limit: u64,
    },
    /// A parent's children's weights its scheduler cannot take.
    Shares {
        /// The parent.
        parent: String,
        /// Direction.
        dir: &'static str,
        /// Why.
        why: crate::share::ShareError,
    },
    /// Two circuits claim the same addresses.
    Overlap {
        /// This prefix.
        prefix: String,
        /// Its circuit.
        circuit: String,
        /// The other prefix.
        other: String,
        /// Its circuit.
        other_circuit: String,
        /// Where the other is written.
        other_at: Loc,
    },
    /// Two circuits claim the same MAC.
    MacReused {
        /// The MAC.
        mac: String,
        /// This circuit.
        circuit: String,
        /// The other circuit.
        other_circuit: String,
        /// Where the other is written.
        other_at: Loc,
    },
    /// A field fairway does not support (yet).
    Unsupported {
        /// The field.
        field: String,
        /// Why and what to do.
        why: &'static str,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.problem)
    }
}

impl std::error::Error for ConfigError {}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::rate::show;
        match self {
            Self::File(e) => e.fmt(f),
            Self::TooMany { what, limit } => write!(
                f,
                "more than {limit} {what}, the limit (it bounds the memory and queues a configuration may take)"
            ),
            Self::Syntax(e) => f.write_str(e),
            Self::MissingColumn(c) => write!(f, "the header has no column {c:?} (required)"),
            Self::Rate { field, error } => write!(f, "{field}: {error}"),
            Self::Mac(e) => e.fmt(f),
            Self::Ip { family, text } => write!(
                f,
                "{family} {text:?} does not parse (allowed: an address or ADDRESS/LEN with no host bits)"
            ),
            Self::Value {
                field,
                value,
                allowed,
            } => write!(f, "{field} = {value}: allowed {allowed}"),
            Self::Spec(e) => write!(f, "scheduler: {e}"),
            Self::Missing(field) => write!(f, "{field} is required and may not be empty"),
            Self::Duplicate { what, name, first } => {
                write!(f, "{what} {name:?} is defined twice (first at {first}); {what} names are unique")
            }
            Self::CircuitConflict {
                id,
                field,
                here,
                first_value,
                first,
            } => write!(
                f,
                "circuit {id:?}: {field} {here:?} differs from {first_value:?} at {first}; rows of one circuit must agree"
            ),
            Self::UnknownParent { of, parent } => {
                write!(f, "{of}: parent {parent:?} is no node (nodes are defined in network.json or [[node]])")
            }
            Self::UnknownCircuit { of, circuit } => write!(f, "{of}: circuit {circuit:?} is not defined"),
            Self::Cycle(path) => write!(f, "nodes form a cycle: {}", path.join(" -> ")),
            Self::TooDeep { node, depth } => write!(
                f,
                "node {node:?} is at depth {depth}, deeper than {} (every frame walks its path to the root)",
                crate::limits::MAX_DEPTH
            ),
            Self::MinAboveMax { of, dir, min, max } => write!(
                f,
                "{of}: {dir} min {} is above its max {}; allowed min <= max",
                show(*min),
                show(*max)
            ),
            Self::MaxAboveParent {
                of,
                dir,
                max,
                parent,
                parent_max,
            } => write!(
                f,
                "{of}: {dir} max {} is above the max {} of its parent {parent}; allowed <= the parent's",
                show(*max),
                show(*parent_max)
            ),
            Self::MinsAboveParent {
                parent,
                dir,
                sum,
                children,
                bound,
                limit,
            } => write!(
                f,
                "{parent}: the {dir} mins of its {children} {} sum to {}, above its {bound} {}; allowed sum <= the parent's {bound}",
                if *children == 1 { "child" } else { "children" },
                show(*sum),
                show(*limit)
            ),
            Self::Shares { parent, dir, why } => {
                write!(f, "{parent}, {dir}: {why}")
            }
            Self::Overlap {
                prefix,
                circuit,
                other,
                other_circuit,
                other_at,
            } => write!(
                f,
                "{prefix} of circuit {circuit:?} overlaps {other} of circuit {other_circuit:?} at {other_at}; circuits' addresses must be disjoint"
            ),
            Self::MacReused {
                mac,
                circuit,
                other_circuit,
                other_at,
            } => write!(
                f,
                "MAC {mac} of circuit {circuit:?} is also in circuit {other_circuit:?} at {other_at}; a MAC belongs to one circuit"
            ),
            Self::Unsupported { field, why } => write!(f, "{field}: {why}"),
        }
    }
}

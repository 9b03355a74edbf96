//! The records of the last shaper file read, kept so that a reload
//! parses only the records that changed.
//!
//! What: a map from each `[[node]]`, `[[circuit]]`, `[[device]]` and
//! `[[rule]]` record's exact text (from its header line, which starts
//! the line, to the next line that starts with `[`) to the plan's item
//! converted from what the fast reader ([`super::fast`]) built from that
//! text alone, its places' lines counted from the record's first line.
//!
//! Why: a live reload reads the whole file at every change, and at
//! thousands of circuits parsing is most of what a reload costs, while
//! a change rewrites a few of the records. A record's text found in
//! the map is taken from it as the plan's item, already converted (its
//! places' lines moved to where the record now starts; a record starts
//! a line, so the columns stay: every place is the new file's); only
//! the others are parsed and converted, a run of them at a time, cut at
//! every header line (each record read as it would be alone).
//!
//! Invariants:
//! - an entry is the item [`super::convert`] makes of what
//!   `fast::parse` builds from its key alone, its lines from the key's
//!   first: a record's parse and conversion depend on its bytes only
//!   (a record with a problem is never kept: the crate reads that file),
//!   so a hit equals parsing and converting the record again. Parsing the file record by record
//!   is parsing it cut at every header line, which `fast_tests` checks
//!   against the `toml` crate; anything the fast reader does not build
//!   (the root's keys and the other tables are parsed as before, in
//!   runs between records) hands the whole file to the crate, so every
//!   message stays the crate's;
//! - the map holds the records of the last file the fast reader read
//!   without a problem, and nothing else: it is replaced, never grown,
//!   so it holds at most one file's records, and a file is read only
//!   up to [`crate::limits::MAX_TOML_BYTES`]: keys of at most that many
//!   bytes, and their items (a few times the text they were built
//!   from);
//! - one cache is kept for the process ([`take`], [`put`]), taken out
//!   while a file is read: a second file read meanwhile (another
//!   thread) finds none and parses every record, which gives the same
//!   result; the shaper's first load fills it for its first reload.

use super::{fast, Conv};
use super::{CircuitToml, DeviceToml, FileToml, NodeToml, RuleToml};
use crate::loc::{LineIndex, Loc};
use crate::plan::{Circuit, Device, Node, Plan, Prefix, Rule};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use toml::Spanned;

/// A record as the fast reader built it.
enum Record {
    Node(Spanned<NodeToml>),
    Circuit(Spanned<CircuitToml>),
    Device(Spanned<DeviceToml>),
    Rule(Spanned<RuleToml>),
}

/// A record converted: the plan's item.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Item {
    Node(Node),
    Circuit(Circuit),
    Device(Device),
    Rule(Rule),
}

/// An item kept, and the last read that found it in its file.
struct Entry {
    item: Item,
    read: AtomicU64,
}

/// Items by their record's text.
type Map = HashMap<Box<str>, Entry, foldhash::fast::RandomState>;

/// The records of the last file read.
#[derive(Default)]
pub(super) struct Cache {
    map: Map,
    /// The read under way: entries found are marked with it, and those
    /// not marked are dropped when it ends ([`Cache::end`]), so that
    /// the map is updated in place rather than built again.
    read: u64,
}

/// A record of the file being read that was not in the cache: where it
/// is, and its item (lines from its first).
pub(super) type Seen = (Range<usize>, Item);

/// What [`Cache::parse`] made of a part of a file: the tables between
/// records as the fast reader built them (to convert), the records'
/// items in the file's order, and the records not found.
pub(super) type Parsed = (FileToml, Plan, Vec<Seen>);

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// The process's cache, taken out (empty if another read has it).
pub(super) fn take() -> Cache {
    let mut slot = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    slot.take().unwrap_or_default()
}

/// Puts `cache` back as the process's cache.
pub(super) fn put(cache: Cache) {
    let mut slot = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *slot = Some(cache);
}

/// Where the part being read is: the file's name and lines.
pub(super) struct Places<'a> {
    pub(super) file: &'a Arc<str>,
    pub(super) lines: &'a LineIndex<'a>,
}

impl Cache {
    /// The tables between the records of `text[part]` as
    /// [`fast::parse`] builds them, the records' items (those found in
    /// the cache taken from it, and marked; the others parsed and
    /// converted) and the records not found; `None` where the fast
    /// reader does not read the part or a record has a problem.
    pub(super) fn parse(
        &self,
        text: &str,
        part: Range<usize>,
        block: usize,
        at: &Places<'_>,
    ) -> Option<Parsed> {
        let mut file = FileToml::empty();
        let mut items = Plan::default();
        let mut seen = Vec::new();
        let mut problems = Vec::new();
        let mut conv = Conv {
            file: at.file,
            lines: at.lines,
            errors: &mut problems,
            rates: HashMap::new(),
        };
        // Text between records: the root's keys and other tables.
        let mut plain: Option<Range<usize>> = None;
        // Records not in the cache, parsed together when a run ends.
        let mut missed: Vec<Range<usize>> = Vec::new();
        let mut start = part.start;
        while start < part.end {
            // The next line that starts with `[`, as `fast` cuts.
            let end = text
                .get(start..part.end)
                .and_then(|t| t.find("\n["))
                .map_or(part.end, |i| start + i + 1);
            let piece = text.get(start..end)?;
            let found = piece.starts_with("[[").then(|| self.map.get(piece));
            if !matches!(found, Some(None)) {
                built(text, &mut missed, &mut conv, &mut items, &mut seen)?;
            }
            match found {
                None => plain = Some(plain.map_or(start..end, |p| p.start..end)),
                Some(None) => {
                    if let Some(p) = plain.take() {
                        add_plain(&mut file, fast::parse(text, p, block)?)?;
                    }
                    missed.push(start..end);
                }
                Some(Some(e)) => {
                    if let Some(p) = plain.take() {
                        add_plain(&mut file, fast::parse(text, p, block)?)?;
                    }
                    e.read.store(self.read, Ordering::Relaxed);
                    let line = at.lines.line(start);
                    e.item.placed(at.file, line).into_plan(&mut items);
                }
            }
            start = end;
        }
        built(text, &mut missed, &mut conv, &mut items, &mut seen)?;
        drop(conv);
        if let Some(p) = plain {
            add_plain(&mut file, fast::parse(text, p, block)?)?;
        }
        problems.is_empty().then_some((file, items, seen))
    }

    /// Begins a read: what [`Cache::parse`] finds is marked with it.
    pub(super) fn begin(&mut self) {
        self.read = self.read.wrapping_add(1);
    }

    /// Ends the read of the file `text`, which built `seen`: the
    /// entries it found are kept, the records it built added, the rest
    /// dropped.
    pub(super) fn end(&mut self, text: &str, seen: Vec<Seen>) {
        let read = self.read;
        for (range, item) in seen {
            let Some(key) = text.get(range) else {
                continue;
            };
            let read = AtomicU64::new(read);
            self.map.insert(Box::from(key), Entry { item, read });
        }
        self.map.retain(|_, e| *e.read.get_mut() == read);
    }

    /// How many records it holds.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }
}

/// The records `missed` (consecutive, emptied) as the fast reader
/// builds them, cut at every header line (so each is read as it would
/// be alone), converted by `conv`: into `items`, and into `seen` with
/// lines from their first. `None` if the fast reader does not build
/// them, one record each, or one has a problem.
fn built(
    text: &str,
    missed: &mut Vec<Range<usize>>,
    conv: &mut Conv<'_>,
    items: &mut Plan,
    seen: &mut Vec<Seen>,
) -> Option<()> {
    let (Some(first), Some(last)) = (missed.first(), missed.last()) else {
        return Some(());
    };
    let f = fast::parse(text, first.start..last.end, 1)?;
    let FileToml {
        interfaces: None,
        libreqos: None,
        default_class: None,
        node,
        circuit,
        device,
        rule,
        flow,
    } = f
    else {
        return None;
    };
    if !flow.is_empty() || node.len() + circuit.len() + device.len() + rule.len() != missed.len() {
        return None;
    }
    let mut records: Vec<Record> = (node.into_iter().map(Record::Node))
        .chain(circuit.into_iter().map(Record::Circuit))
        .chain(device.into_iter().map(Record::Device))
        .chain(rule.into_iter().map(Record::Rule))
        .collect();
    records.sort_by_key(Record::start);
    for (range, r) in missed.drain(..).zip(records) {
        if r.start() != range.start {
            return None;
        }
        let item = r.converted(conv)?;
        // Kept with lines from the record's first (wrapping: back by it).
        let back = 0u32.wrapping_sub(conv.lines.line(range.start));
        seen.push((range, item.placed(conv.file, back)));
        item.into_plan(items);
    }
    Some(())
}

/// What the fast reader built from text between records into `file`;
/// `None` if a table given once is given again, or the text holds a
/// record (then the order of records could differ: the crate's).
fn add_plain(file: &mut FileToml, more: FileToml) -> Option<()> {
    let FileToml {
        interfaces,
        libreqos,
        default_class,
        node,
        circuit,
        device,
        rule,
        flow,
    } = more;
    let records = node.len() + circuit.len() + device.len() + rule.len() + flow.len();
    if records > 0 {
        return None;
    }
    fn once<T>(slot: &mut Option<T>, v: Option<T>) -> Option<()> {
        match (slot.is_some(), v) {
            (true, Some(_)) => None,
            (false, Some(v)) => {
                *slot = Some(v);
                Some(())
            }
            (_, None) => Some(()),
        }
    }
    once(&mut file.interfaces, interfaces)?;
    once(&mut file.libreqos, libreqos)?;
    once(&mut file.default_class, default_class)
}

impl Record {
    /// Where its header starts.
    fn start(&self) -> usize {
        match self {
            Record::Node(n) => n.span().start,
            Record::Circuit(c) => c.span().start,
            Record::Device(d) => d.span().start,
            Record::Rule(r) => r.span().start,
        }
    }

    /// Its item, as [`super::convert`] makes it; `None` if it has a
    /// problem (reported to `conv`).
    fn converted(self, conv: &mut Conv<'_>) -> Option<Item> {
        let before = conv.errors.len();
        let item = match self {
            Record::Node(n) => Item::Node(super::node(conv, &n)?),
            Record::Circuit(c) => Item::Circuit(super::circuit(conv, c).ok()?),
            Record::Device(d) => Item::Device(super::device(conv, d)?),
            Record::Rule(r) => Item::Rule(super::rule(conv, &r)?),
        };
        (conv.errors.len() == before).then_some(item)
    }
}

impl Item {
    /// A copy in `file`, every line moved `by` on (modulo 2^32: a line
    /// moved back by its record's first wraps to its line in the
    /// record, which moved on by where the record now starts is the
    /// line in the file).
    pub(super) fn placed(&self, file: &Arc<str>, by: u32) -> Item {
        let at = |l: &Loc| Loc {
            file: Arc::clone(file),
            line: l.line.map(|n| n.wrapping_add(by)),
            col: l.col,
        };
        match self {
            Item::Node(n) => Item::Node(Node {
                name: n.name.clone(),
                parent: n.parent.clone(),
                rates: n.rates,
                weight: n.weight,
                scheduler: n.scheduler.clone(),
                at: at(&n.at),
            }),
            Item::Circuit(c) => Item::Circuit(Circuit {
                id: c.id.clone(),
                name: c.name.clone(),
                parent: c.parent.clone(),
                rates: c.rates,
                weight: c.weight,
                at: at(&c.at),
            }),
            Item::Device(d) => Item::Device(Device {
                id: d.id.clone(),
                name: d.name.clone(),
                circuit: d.circuit.clone(),
                mac: d.mac,
                prefixes: (d.prefixes.iter())
                    .map(|p| Prefix {
                        net: p.net,
                        at: at(&p.at),
                    })
                    .collect(),
                at: at(&d.at),
            }),
            Item::Rule(r) => Item::Rule(Rule {
                matches: r.matches.clone(),
                circuit: r.circuit.clone(),
                at: at(&r.at),
            }),
        }
    }

    /// Into `plan`, after the items of its kind there.
    fn into_plan(self, plan: &mut Plan) {
        match self {
            Item::Node(n) => plan.nodes.push(n),
            Item::Circuit(c) => plan.circuits.push(c),
            Item::Device(d) => plan.devices.push(d),
            Item::Rule(r) => plan.rules.push(r),
        }
    }
}

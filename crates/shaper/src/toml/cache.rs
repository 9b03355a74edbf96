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
//! every header line (each record read as it would be alone). The
//! entries are kept in the file's order, and a record is looked for
//! first in the entry after the last one found: the records a change
//! leaves alone come in the same order, so most are found by one
//! comparison of memory read in order, the hash table being for the
//! others.
//!
//! Invariants:
//! - an entry is the item [`super::convert`] makes of what
//!   `fast::parse` builds from its key alone, its lines from the key's
//!   first: a record's parse and conversion depend on its bytes only
//!   (a record with a problem is never kept: the crate reads that file),
//!   so a hit equals parsing and converting the record again. Parsing
//!   the file record by record is parsing it cut at every header line, which `fast_tests` checks
//!   against the `toml` crate; anything the fast reader does not build
//!   (the root's keys and the other tables are parsed as before, in
//!   runs between records) hands the whole file to the crate, so every
//!   message stays the crate's;
//! - a record is found only by a comparison of its whole text with a
//!   key (the hash only says where to compare);
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
use crate::fast_hash::Map;
use crate::loc::{LineIndex, Loc};
use crate::plan::{Circuit, Device, Node, Plan, Prefix, Rule};
use std::hash::BuildHasher;
use std::ops::Range;
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

/// An item kept, with its record's text.
pub(super) struct Entry {
    key: Box<str>,
    /// The key's hash ([`Cache::hasher`]).
    hash: u64,
    item: Item,
    /// The next entry whose key has the same hash, or [`NONE`].
    same: u32,
}

/// No entry.
const NONE: u32 = u32::MAX;

/// The records of the last file read.
#[derive(Default)]
pub(super) struct Cache {
    /// In the order of that file: the records of a file read next that
    /// were not changed come in the same order, so each is looked for
    /// first after the last one found (one comparison, memory read in
    /// order), and by its hash only when that fails. Boxed:
    /// [`Cache::end`] puts them in the new file's order moving a pointer
    /// each, and a record built is handed over boxed.
    #[allow(clippy::vec_box)]
    entries: Vec<Box<Entry>>,
    /// The first entry of each hash, the others chained by
    /// [`Entry::same`].
    index: Map<u64, u32>,
    hasher: foldhash::fast::RandomState,
    /// How many entries of each kind (nodes, circuits, devices, rules):
    /// room made for as many items in a part as its share of them.
    kinds: [usize; 4],
}

/// A record of the file being read, in the file's order: found in the
/// cache (its entry's index), or not (its entry, made; small, as there
/// is one for every record).
pub(super) enum Seen {
    Found(u32),
    Built(Box<Entry>),
}

/// What [`Cache::parse`] made of a part of a file: the tables between
/// records as the fast reader built them (to convert), the records'
/// items in the file's order, and its records.
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
        self.make_room(&mut items, part.len(), text.len());
        let mut seen = Vec::with_capacity(self.entries.len());
        let mut problems = Vec::new();
        let mut conv = Conv {
            file: at.file,
            lines: at.lines,
            errors: &mut problems,
            rates: Map::default(),
        };
        // Text between records: the root's keys and other tables.
        let mut plain: Option<Range<usize>> = None;
        // Records not in the cache, parsed together when a run ends.
        let mut missed: Vec<Range<usize>> = Vec::new();
        // Where the next record is looked for first: after the last one
        // found (a first half starts with the first entry).
        let mut next = if part.start == 0 { 0 } else { usize::MAX };
        let header = memchr::memmem::Finder::new(b"\n[");
        let mut start = part.start;
        // The line `start` is on, counted along.
        let mut line = at.lines.line(start);
        while start < part.end {
            // The next line that starts with `[`, as `fast` cuts.
            let end = text
                .get(start..part.end)
                .and_then(|t| header.find(t.as_bytes()))
                .map_or(part.end, |i| start + i + 1);
            let piece = text.get(start..end)?;
            let first = line;
            line = line.wrapping_add(count_lines(piece));
            let found = piece.starts_with("[[").then(|| self.find(piece, next));
            if !matches!(found, Some(None)) {
                let how = (self, &mut conv);
                built(text, &mut missed, how, &mut items, &mut seen)?;
            }
            match found {
                None => plain = Some(plain.map_or(start..end, |p| p.start..end)),
                Some(None) => {
                    if let Some(p) = plain.take() {
                        add_plain(&mut file, fast::parse(text, p, block)?)?;
                    }
                    missed.push(start..end);
                }
                Some(Some(i)) => {
                    if let Some(p) = plain.take() {
                        add_plain(&mut file, fast::parse(text, p, block)?)?;
                    }
                    let e = self.entries.get(i as usize)?;
                    e.item.placed(at.file, first).into_plan(&mut items);
                    seen.push(Seen::Found(i));
                    next = i as usize + 1;
                }
            }
            start = end;
        }
        built(text, &mut missed, (self, &mut conv), &mut items, &mut seen)?;
        drop(conv);
        if let Some(p) = plain {
            add_plain(&mut file, fast::parse(text, p, block)?)?;
        }
        problems.is_empty().then_some((file, items, seen))
    }

    /// The index of the entry whose key is `piece`: the entry `next`
    /// if it is, else the one its hash leads to.
    fn find(&self, piece: &str, next: usize) -> Option<u32> {
        if let Some(e) = self.entries.get(next) {
            if *e.key == *piece {
                return u32::try_from(next).ok();
            }
        }
        let hash = self.hasher.hash_one(piece);
        let mut i = *self.index.get(&hash)?;
        loop {
            let e = self.entries.get(i as usize)?;
            if e.hash == hash && *e.key == *piece {
                return Some(i);
            }
            i = e.same;
        }
    }

    /// Room in `items` for the items of a part of `part` bytes of a
    /// file of `whole`: its share of the last file's, a tenth more.
    fn make_room(&self, items: &mut Plan, part: usize, whole: usize) {
        let share = |n: usize| {
            let n = n.saturating_mul(part) / whole.max(1);
            n.saturating_add(n / 10)
        };
        let [n, c, d, r] = self.kinds.map(share);
        items.nodes.reserve(n);
        items.circuits.reserve(c);
        items.devices.reserve(d);
        items.rules.reserve(r);
    }

    /// A new entry: `item` (lines from its first) of the record `key`.
    fn entry(&self, key: &str, item: Item) -> Box<Entry> {
        Box::new(Entry {
            key: Box::from(key),
            hash: self.hasher.hash_one(key),
            item,
            same: NONE,
        })
    }

    /// Ends the read of a file whose records are `seen` (in its order):
    /// the entries found are kept, the records built added, the rest
    /// dropped; all in that order.
    pub(super) fn end(&mut self, seen: Vec<Seen>) {
        let mut old: Vec<Option<Box<Entry>>> = std::mem::take(&mut self.entries)
            .into_iter()
            .map(Some)
            .collect();
        self.index.clear();
        self.kinds = [0; 4];
        self.entries.reserve(seen.len());
        for s in seen {
            let mut e = match s {
                // A record given twice alike is kept once.
                Seen::Found(i) => match old.get_mut(i as usize).and_then(Option::take) {
                    Some(e) => e,
                    None => continue,
                },
                Seen::Built(e) => e,
            };
            // Entries fewer than a file's bytes: the index fits.
            let Ok(at) = u32::try_from(self.entries.len()) else {
                break;
            };
            e.same = self.index.insert(e.hash, at).unwrap_or(NONE);
            self.kinds[e.item.kind()] += 1;
            self.entries.push(e);
        }
    }

    /// How many records it holds.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The records `missed` (consecutive, emptied) as the fast reader
/// builds them, cut at every header line (so each is read as it would
/// be alone), converted by `conv`: into `items`, and into `seen` as
/// `cache`'s new entries (lines from their first). `None` if the fast reader does not build
/// them, one record each, or one has a problem.
fn built(
    text: &str,
    missed: &mut Vec<Range<usize>>,
    (cache, conv): (&Cache, &mut Conv<'_>),
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
        let key = text.get(range)?;
        seen.push(Seen::Built(cache.entry(key, item.placed(conv.file, back))));
        item.into_plan(items);
    }
    Some(())
}

/// How many lines end in `piece`.
fn count_lines(piece: &str) -> u32 {
    let n = memchr::memchr_iter(b'\n', piece.as_bytes()).count();
    u32::try_from(n).unwrap_or(u32::MAX)
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

    /// Its kind's place in [`Cache::kinds`].
    fn kind(&self) -> usize {
        match self {
            Item::Node(_) => 0,
            Item::Circuit(_) => 1,
            Item::Device(_) => 2,
            Item::Rule(_) => 3,
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

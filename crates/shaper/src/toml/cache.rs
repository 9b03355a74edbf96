//! The records of the last shaper file read, kept so that a reload
//! parses only the records that changed.
//!
//! What: a map from each `[[node]]`, `[[circuit]]`, `[[device]]` and
//! `[[rule]]` record's exact text (from its header line, which starts
//! the line, to the next line that starts with `[`) to what the fast
//! reader ([`super::fast`]) built from that text alone, its spans
//! relative to the record's first byte.
//!
//! Why: a live reload reads the whole file at every change, and at
//! thousands of circuits parsing is most of what a reload costs, while
//! a change rewrites a few of the records. A record's text found in
//! the map is taken from it (its spans moved to where the record now
//! starts, so every place, line and column, is the new file's); only
//! the others are parsed, a run of them at a time, cut at every header
//! line (each record read as it would be alone).
//!
//! Invariants:
//! - an entry is what `fast::parse` builds from its key alone, at
//!   offset 0: a record's parse depends on its bytes only, so a hit
//!   equals parsing the record again. Parsing the file record by record
//!   is parsing it cut at every header line, which `fast_tests` checks
//!   against the `toml` crate; anything the fast reader does not build
//!   (the root's keys and the other tables are parsed as before, in
//!   runs between records) hands the whole file to the crate, so every
//!   message stays the crate's;
//! - the map holds the records of the last file the fast reader read
//!   without a problem, and nothing else: it is replaced, never grown,
//!   so it holds at most one file's records, and a file is read only
//!   up to [`crate::limits::MAX_TOML_BYTES`]: keys of at most that many
//!   bytes, and their values (a few times the text they were built
//!   from);
//! - one cache is kept for the process ([`take`], [`put`]), taken out
//!   while a file is read: a second file read meanwhile (another
//!   thread) finds none and parses every record, which gives the same
//!   result; the shaper's first load fills it for its first reload.

use super::fast;
use super::{CircuitToml, DeviceToml, FileToml, NodeToml, RuleToml};
use fairway_policy_file::RateField;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use toml::Spanned;

/// A record as the fast reader built it.
#[derive(Clone)]
pub(super) enum Record {
    Node(Spanned<NodeToml>),
    Circuit(Spanned<CircuitToml>),
    Device(Spanned<DeviceToml>),
    Rule(Spanned<RuleToml>),
}

/// A record kept, and the last read that found it in its file.
struct Entry {
    record: Record,
    read: AtomicU64,
}

/// Records by their text.
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
/// is, and what was built from it (spans from its start).
pub(super) type Seen = (Range<usize>, Record);

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

impl Cache {
    /// The tables of `text[part]` as [`fast::parse`] builds them, the
    /// records found in the cache taken from it (and marked), and the
    /// records it built; `None` where the fast reader does not read the
    /// part.
    pub(super) fn parse(
        &self,
        text: &str,
        part: Range<usize>,
        block: usize,
    ) -> Option<(FileToml, Vec<Seen>)> {
        let mut file = FileToml::empty();
        let mut seen = Vec::new();
        // Text between records: the root's keys and other tables.
        let mut plain: Option<Range<usize>> = None;
        // Records not in the cache, parsed together when a run ends.
        let mut missed: Vec<Range<usize>> = Vec::new();
        let mut at = part.start;
        while at < part.end {
            // The next line that starts with `[`, as `fast` cuts.
            let end = text
                .get(at..part.end)
                .and_then(|t| t.find("\n["))
                .map_or(part.end, |i| at + i + 1);
            let piece = text.get(at..end)?;
            let found = piece.starts_with("[[").then(|| self.map.get(piece));
            if !matches!(found, Some(None)) {
                built(text, &mut missed, &mut file, &mut seen)?;
            }
            match found {
                None => plain = Some(plain.map_or(at..end, |p| p.start..end)),
                Some(None) => {
                    if let Some(p) = plain.take() {
                        add_plain(&mut file, fast::parse(text, p, block)?)?;
                    }
                    missed.push(at..end);
                }
                Some(Some(e)) => {
                    if let Some(p) = plain.take() {
                        add_plain(&mut file, fast::parse(text, p, block)?)?;
                    }
                    e.read.store(self.read, Ordering::Relaxed);
                    e.record.clone().moved(at).into_file(&mut file);
                }
            }
            at = end;
        }
        built(text, &mut missed, &mut file, &mut seen)?;
        if let Some(p) = plain {
            add_plain(&mut file, fast::parse(text, p, block)?)?;
        }
        Some((file, seen))
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
        for (range, record) in seen {
            let Some(key) = text.get(range) else {
                continue;
            };
            let read = AtomicU64::new(read);
            self.map.insert(Box::from(key), Entry { record, read });
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
/// be alone): into `file`, and into `seen` with spans from their start.
/// `None` if the fast reader does not build them, one record each.
fn built(
    text: &str,
    missed: &mut Vec<Range<usize>>,
    file: &mut FileToml,
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
        // Kept with spans from the record's start (wrapping: back by it).
        let kept = r.clone().moved(0usize.wrapping_sub(range.start));
        seen.push((range, kept));
        r.into_file(file);
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

    /// The record with every span moved `by` bytes on (modulo the
    /// word: a span moved back by its record's start wraps to its place
    /// in the record).
    fn moved(self, by: usize) -> Record {
        match self {
            Record::Node(n) => Record::Node(node(n, by)),
            Record::Circuit(c) => Record::Circuit(circuit(c, by)),
            Record::Device(d) => Record::Device(device(d, by)),
            Record::Rule(r) => Record::Rule(rule(r, by)),
        }
    }

    fn into_file(self, f: &mut FileToml) {
        match self {
            Record::Node(n) => f.node.push(n),
            Record::Circuit(c) => f.circuit.push(c),
            Record::Device(d) => f.device.push(d),
            Record::Rule(r) => f.rule.push(r),
        }
    }
}

/// `s` with its span moved `by` bytes on, its value by `inner`.
fn mv<T>(s: Spanned<T>, by: usize, inner: impl FnOnce(T, usize) -> T) -> Spanned<T> {
    let span = s.span();
    let moved = span.start.wrapping_add(by)..span.end.wrapping_add(by);
    Spanned::new(moved, inner(s.into_inner(), by))
}

fn same<T>(v: T, _by: usize) -> T {
    v
}

fn mv_opt<T>(s: Option<Spanned<T>>, by: usize) -> Option<Spanned<T>> {
    s.map(|s| mv(s, by, same))
}

fn rate(r: Spanned<RateField>, by: usize) -> Spanned<RateField> {
    mv(r, by, |field, by| match field {
        RateField::One(s) => RateField::One(s),
        RateField::PerDirection { download, upload } => RateField::PerDirection {
            download: mv_opt(download, by),
            upload: mv_opt(upload, by),
        },
    })
}

fn node(n: Spanned<NodeToml>, by: usize) -> Spanned<NodeToml> {
    mv(n, by, |n, by| NodeToml {
        name: mv(n.name, by, same),
        parent: mv_opt(n.parent, by),
        policy: mv_opt(n.policy, by),
        weight: mv_opt(n.weight, by),
        rate: rate(n.rate, by),
        reservation: n.reservation.map(|r| rate(r, by)),
    })
}

fn circuit(c: Spanned<CircuitToml>, by: usize) -> Spanned<CircuitToml> {
    mv(c, by, |c, by| CircuitToml {
        id: mv(c.id, by, same),
        name: c.name,
        parent: mv_opt(c.parent, by),
        weight: mv_opt(c.weight, by),
        rate: rate(c.rate, by),
        reservation: c.reservation.map(|r| rate(r, by)),
    })
}

fn device(d: Spanned<DeviceToml>, by: usize) -> Spanned<DeviceToml> {
    mv(d, by, |d, by| DeviceToml {
        id: mv(d.id, by, same),
        name: d.name,
        circuit: mv(d.circuit, by, same),
        mac: mv_opt(d.mac, by),
        ipv4: d.ipv4.into_iter().map(|s| mv(s, by, same)).collect(),
        ipv6: d.ipv6.into_iter().map(|s| mv(s, by, same)).collect(),
    })
}

fn rule(r: Spanned<RuleToml>, by: usize) -> Spanned<RuleToml> {
    mv(r, by, |r, by| RuleToml {
        circuit: mv(r.circuit, by, same),
        prefix: mv_opt(r.prefix, by),
        mac: mv_opt(r.mac, by),
        vlan: mv_opt(r.vlan, by),
        protocol: mv_opt(r.protocol, by),
        src_ports: mv_opt(r.src_ports, by),
        dst_ports: mv_opt(r.dst_ports, by),
        dscp: mv_opt(r.dscp, by),
    })
}

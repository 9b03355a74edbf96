//! A fast reader for the shaper files that tools and people write at
//! scale (the shape bench's 10,000 circuits, a generated file). The
//! text is lexed and parsed by `toml_parser`, the `toml` crate's own
//! lexer and parser, and its scalars decoded by that crate's decoder;
//! what this reader adds is the last step: it builds the same
//! [`FileToml`] the `toml` crate's serde path does, values and the
//! starts of their spans (all a place needs), straight from the
//! parser's events, with no document tree of values and no
//! deserializer in between.
//!
//! It never decides what is wrong: a problem the lexer, the parser or
//! the decoder reports, and anything the builder does not handle (a
//! dotted key, a float, a boolean, a date, an inline table or array
//! inside another, a duplicate or unknown key, a value of the wrong
//! type, a missing field), makes it answer `None`, and the caller reads
//! the file with the `toml` crate, whose messages are the ones the user
//! sees. What it builds, a document means to the crate too
//! (`fast_tests` checks this against the crate on generated files).

use super::{
    CircuitToml, ClassToml, DeviceToml, FileToml, InterfacesToml, LibreqosToml, NodeToml, RuleToml,
    S,
};
use fairway_policy_file::RateField;
use std::borrow::Cow;
use std::ops::Range;
use toml::Spanned;
use toml_parser::decoder::{Encoding, ScalarKind};
use toml_parser::parser::{EventReceiver, ValidateWhitespace};
use toml_parser::{ErrorSink, ParseError, Raw, Source, Span};

/// A value as written: what it holds.
#[derive(Debug)]
enum Val<'t> {
    Str(Cow<'t, str>),
    Int(i64),
    /// `{ k = v, … }`: its entries in order.
    Table(Vec<Entry<'t>>),
    Array(Vec<(Range<usize>, Val<'t>)>),
}

/// `key = value`: the key, the value's span, the value.
#[derive(Debug)]
struct Entry<'t> {
    key: Cow<'t, str>,
    span: Range<usize>,
    val: Val<'t>,
}

/// A field as found: its value's span and value, if given.
type Field<'t> = Option<(Range<usize>, Val<'t>)>;

/// A table being read: its header's name, `[[…]]` or not, where the
/// header starts (the root: no header).
type Header<'t> = Option<(Cow<'t, str>, bool, usize)>;

/// The text is lexed and parsed in blocks of about this many bytes, cut
/// at a header line: one token list for the whole file would be a
/// dozen bytes per byte of text, written once and read once, where a
/// block's list is reused and stays in the cache.
pub(super) const BLOCK: usize = 32 * 1024;

/// The tables of `text[part]` as the crate would deserialize them, or
/// `None` if that part is not one the builder reads (then the crate
/// reads the whole file). `part` is the whole text or a piece [`split`]
/// gave: spans stay offsets in the whole text. It is read in blocks of
/// at least `block` bytes (the last one shorter), each cut where a line
/// starts with `[`: a value running over a cut (a multi-line string or
/// array) starts before it and is left open at the end of its block,
/// where the parser refuses it; otherwise the cut falls between two
/// lines of the document, and the blocks' events are the whole's.
pub(super) fn parse(text: &str, part: Range<usize>, block: usize) -> Option<FileToml> {
    let text = text.get(..part.end)?;
    let mut builder = Builder::new(text, part.clone());
    let mut tokens = Vec::new();
    let mut at = part.start;
    while at < part.end {
        let end = header_line(text, at.saturating_add(block.max(1))).unwrap_or(part.end);
        let source = Source::new(text.get(at..end)?);
        tokens.clear();
        tokens.extend(source.lex());
        builder.offset = at;
        // The first problem is enough: any problem hands the file to the crate.
        let mut problem: Option<ParseError> = None;
        let mut receiver = ValidateWhitespace::new(&mut builder, source);
        toml_parser::parser::parse_document(&tokens, &mut receiver, &mut problem);
        if problem.is_some() || builder.failed {
            return None;
        }
        at = end;
    }
    builder.end_table();
    (!builder.failed).then_some(builder.file)
}

/// The start of the first line at or past `from` that starts with `[`.
fn header_line(text: &str, from: usize) -> Option<usize> {
    let at = text
        .as_bytes()
        .get(from.checked_sub(1)?..)?
        .windows(2)
        .position(|w| w == b"\n[")?;
    Some(from + at)
}

/// Where to cut a text of at least `from` bytes in two for two threads:
/// the start of the first `[[` header line past the middle. A value
/// running over the cut (a multi-line string or array) starts before
/// it and is left open at the end of the first half, where the parser
/// refuses it; otherwise the cut falls between two lines of the
/// document, and the halves' events are the whole's.
pub(super) fn split(text: &str, from: usize) -> Option<usize> {
    if text.len() < from.max(2) {
        return None;
    }
    let mid = text.len() / 2;
    let at = text.as_bytes()[mid..]
        .windows(3)
        .position(|w| w == b"\n[[")?;
    Some(mid + at + 1)
}

/// An inline table or array being read: where it opens, what it holds
/// so far. Only a top-level value opens one: nothing in the file holds
/// a table or array inside another.
enum Open<'t> {
    Table(usize, Vec<Entry<'t>>),
    Array(usize, Vec<(Range<usize>, Val<'t>)>),
}

/// The parser's events, table by table into the typed file.
struct Builder<'t> {
    /// The text up to the end of the part being read.
    text: &'t str,
    /// Where the block being parsed starts in the text: its events'
    /// spans are from there.
    offset: usize,
    file: FileToml,
    header: Header<'t>,
    /// A header being read: `[[` or not, where it starts, its name.
    opening: Option<(bool, usize, Option<Cow<'t, str>>)>,
    /// The current table's entries; the buffer is reused table to table.
    entries: Vec<Entry<'t>>,
    /// The key of the top-level value being read.
    key: Option<Cow<'t, str>>,
    /// The key of the inline table's value being read.
    inner_key: Option<Cow<'t, str>>,
    open: Option<Open<'t>>,
    /// Something the builder does not read: the crate reads the file.
    failed: bool,
}

impl<'t> Builder<'t> {
    fn new(text: &'t str, part: Range<usize>) -> Self {
        let count = |header: &str| {
            text.get(part.clone())
                .map_or(0, |t| t.matches(header).count())
        };
        Builder {
            text,
            offset: part.start,
            file: FileToml {
                interfaces: None,
                libreqos: None,
                default_class: None,
                node: Vec::with_capacity(count("[[node]]")),
                circuit: Vec::with_capacity(count("[[circuit]]")),
                device: Vec::with_capacity(count("[[device]]")),
                rule: Vec::with_capacity(count("[[rule]]")),
                flow: Vec::new(),
            },
            header: None,
            opening: None,
            entries: Vec::with_capacity(8),
            key: None,
            inner_key: None,
            open: None,
            failed: false,
        }
    }

    fn range(&self, span: Span) -> Range<usize> {
        span.start() + self.offset..span.end() + self.offset
    }

    /// A key or scalar as written, with its quoting, for the decoder.
    fn raw(&self, span: Span, kind: Option<Encoding>) -> Option<Raw<'t>> {
        let text = self.text.get(self.range(span))?;
        Some(Raw::new_unchecked(text, kind, span))
    }

    /// The table read so far into the file.
    fn end_table(&mut self) {
        if finish(&mut self.file, self.header.take(), &mut self.entries).is_none() {
            self.failed = true;
        }
    }

    fn open_header(&mut self, array: bool, span: Span) {
        self.end_table();
        let start = span.start() + self.offset;
        self.opening = Some((array, start, None));
    }

    fn close_header(&mut self, array: bool) {
        match self.opening.take() {
            Some((a, start, Some(name))) if a == array => {
                self.header = Some((name, array, start));
            }
            _ => self.failed = true,
        }
    }

    /// A value read: into the open inline table or array, or the table.
    fn value(&mut self, span: Range<usize>, val: Val<'t>) {
        let (key, entries) = match &mut self.open {
            Some(Open::Array(_, items)) => return items.push((span, val)),
            Some(Open::Table(_, entries)) => (self.inner_key.take(), entries),
            None => (self.key.take(), &mut self.entries),
        };
        match key {
            Some(key) if !entries.iter().any(|e| e.key == key) => {
                entries.push(Entry { key, span, val });
            }
            _ => self.failed = true,
        }
    }
}

impl EventReceiver for Builder<'_> {
    fn std_table_open(&mut self, span: Span, _error: &mut dyn ErrorSink) {
        self.open_header(false, span);
    }

    fn std_table_close(&mut self, _span: Span, _error: &mut dyn ErrorSink) {
        self.close_header(false);
    }

    fn array_table_open(&mut self, span: Span, _error: &mut dyn ErrorSink) {
        self.open_header(true, span);
    }

    fn array_table_close(&mut self, _span: Span, _error: &mut dyn ErrorSink) {
        self.close_header(true);
    }

    fn inline_table_open(&mut self, span: Span, _error: &mut dyn ErrorSink) -> bool {
        if self.open.is_some() {
            self.failed = true;
            return false;
        }
        let start = span.start() + self.offset;
        // A rate table has two entries.
        self.open = Some(Open::Table(start, Vec::with_capacity(2)));
        true
    }

    fn inline_table_close(&mut self, span: Span, _error: &mut dyn ErrorSink) {
        match self.open.take() {
            Some(Open::Table(start, entries)) => {
                self.value(start..span.end() + self.offset, Val::Table(entries));
            }
            _ => self.failed = true,
        }
    }

    fn array_open(&mut self, span: Span, _error: &mut dyn ErrorSink) -> bool {
        if self.open.is_some() {
            self.failed = true;
            return false;
        }
        self.open = Some(Open::Array(span.start() + self.offset, Vec::new()));
        true
    }

    fn array_close(&mut self, span: Span, _error: &mut dyn ErrorSink) {
        match self.open.take() {
            Some(Open::Array(start, items)) => {
                self.value(start..span.end() + self.offset, Val::Array(items));
            }
            _ => self.failed = true,
        }
    }

    fn simple_key(&mut self, span: Span, kind: Option<Encoding>, error: &mut dyn ErrorSink) {
        let Some(raw) = self.raw(span, kind) else {
            self.failed = true;
            return;
        };
        let mut key = Cow::Borrowed("");
        raw.decode_key(&mut key, error);
        let slot = match (&mut self.opening, &self.open) {
            (Some((_, _, name)), _) => name,
            (None, Some(Open::Table(..))) => &mut self.inner_key,
            (None, Some(Open::Array(..))) => {
                self.failed = true;
                return;
            }
            (None, None) => &mut self.key,
        };
        // A second key before the value: a dotted key.
        if slot.replace(key).is_some() {
            self.failed = true;
        }
    }

    fn key_sep(&mut self, _span: Span, _error: &mut dyn ErrorSink) {
        // A dotted key: the crate's.
        self.failed = true;
    }

    fn scalar(&mut self, span: Span, kind: Option<Encoding>, error: &mut dyn ErrorSink) {
        let Some(raw) = self.raw(span, kind) else {
            self.failed = true;
            return;
        };
        let mut decoded = Cow::Borrowed("");
        let val = match raw.decode_scalar(&mut decoded, error) {
            ScalarKind::String => Some(Val::Str(decoded)),
            ScalarKind::Integer(radix) => i64::from_str_radix(&decoded, radix.value())
                .ok()
                .map(Val::Int),
            // No field of the file holds one: the crate's to refuse.
            ScalarKind::Boolean(_) | ScalarKind::Float | ScalarKind::DateTime => None,
        };
        match val {
            Some(val) => self.value(self.range(span), val),
            None => self.failed = true,
        }
    }

    fn error(&mut self, _span: Span, _error: &mut dyn ErrorSink) {
        self.failed = true;
    }
}

/// The table `header` names, of `entries` (emptied), into `f`, if its
/// header and keys are ones the file has, once.
fn finish<'t>(f: &mut FileToml, header: Header<'t>, entries: &mut Vec<Entry<'t>>) -> Option<()> {
    let Some((name, array, start)) = header else {
        for e in entries.drain(..) {
            match e.key.as_ref() {
                "libreqos" => f.libreqos = Some(Spanned::new(e.span, libreqos(e.val)?)),
                _ => return None,
            }
        }
        return Some(());
    };
    let span = start..entries.last().map_or(start, |e| e.span.end);
    match (name.as_ref(), array) {
        ("interfaces", false) if f.interfaces.is_none() => {
            f.interfaces = Some(Spanned::new(span, interfaces(entries)?));
        }
        ("default_class", false) if f.default_class.is_none() => {
            f.default_class = Some(Spanned::new(span, class(entries)?));
        }
        ("node", true) => f.node.push(Spanned::new(span, node(entries)?)),
        ("circuit", true) => f.circuit.push(Spanned::new(span, circuit(entries)?)),
        ("device", true) => f.device.push(Spanned::new(span, device(entries)?)),
        ("rule", true) => f.rule.push(Spanned::new(span, rule(entries)?)),
        _ => return None,
    }
    Some(())
}

/// Takes each entry's value into the slot its key names; `None` for a
/// key not in `keys` (the crate refuses unknown fields).
fn fields<'t, const N: usize>(
    entries: &mut Vec<Entry<'t>>,
    keys: [&str; N],
) -> Option<[Field<'t>; N]> {
    let mut out = [const { None }; N];
    for e in entries.drain(..) {
        let i = keys.iter().position(|&k| k == e.key)?;
        out[i] = Some((e.span, e.val));
    }
    Some(out)
}

fn string(v: Field<'_>) -> Option<S> {
    match v? {
        (span, Val::Str(s)) => Some(Spanned::new(span, s.into_owned())),
        _ => None,
    }
}

/// An optional field: absent is `Some(None)`, a wrong type `None`.
fn opt<T>(v: Field<'_>, f: impl FnOnce(Field<'_>) -> Option<T>) -> Option<Option<T>> {
    match v {
        None => Some(None),
        some => f(some).map(Some),
    }
}

fn int(v: Field<'_>) -> Option<Spanned<i64>> {
    match v? {
        (span, Val::Int(i)) => Some(Spanned::new(span, i)),
        _ => None,
    }
}

fn strings(v: Field<'_>) -> Option<Vec<S>> {
    let Some((_, v)) = v else {
        return Some(Vec::new());
    };
    let Val::Array(items) = v else { return None };
    items
        .into_iter()
        .map(|(span, v)| string(Some((span, v))))
        .collect()
}

fn rate(v: Field<'_>) -> Option<Spanned<RateField>> {
    let (span, v) = v?;
    let field = match v {
        Val::Str(s) => RateField::One(s.into_owned()),
        Val::Table(mut entries) => {
            let [download, upload] = fields(&mut entries, ["download", "upload"])?;
            RateField::PerDirection {
                download: opt(download, string)?,
                upload: opt(upload, string)?,
            }
        }
        _ => return None,
    };
    Some(Spanned::new(span, field))
}

fn libreqos(v: Val<'_>) -> Option<LibreqosToml> {
    let Val::Table(mut entries) = v else {
        return None;
    };
    let [shaped_devices, network] = fields(&mut entries, ["shaped_devices", "network"])?;
    Some(LibreqosToml {
        shaped_devices: string(shaped_devices)?,
        network: opt(network, string)?,
    })
}

fn interfaces(entries: &mut Vec<Entry<'_>>) -> Option<InterfacesToml> {
    let [internet, subscribers, rate_, io] =
        fields(entries, ["internet", "subscribers", "rate", "io"])?;
    Some(InterfacesToml {
        internet: string(internet)?,
        subscribers: string(subscribers)?,
        rate: rate(rate_)?,
        io: opt(io, string)?,
    })
}

fn class(entries: &mut Vec<Entry<'_>>) -> Option<ClassToml> {
    let [parent, rate_, reservation] = fields(entries, ["parent", "rate", "reservation"])?;
    Some(ClassToml {
        parent: opt(parent, string)?,
        rate: rate(rate_)?,
        reservation: opt(reservation, rate)?,
    })
}

fn node(entries: &mut Vec<Entry<'_>>) -> Option<NodeToml> {
    let [name, parent, policy, weight, rate_, reservation] = fields(
        entries,
        ["name", "parent", "policy", "weight", "rate", "reservation"],
    )?;
    Some(NodeToml {
        name: string(name)?,
        parent: opt(parent, string)?,
        policy: opt(policy, string)?,
        weight: opt(weight, int)?,
        rate: rate(rate_)?,
        reservation: opt(reservation, rate)?,
    })
}

fn circuit(entries: &mut Vec<Entry<'_>>) -> Option<CircuitToml> {
    let [id, name, parent, weight, rate_, reservation] = fields(
        entries,
        ["id", "name", "parent", "weight", "rate", "reservation"],
    )?;
    Some(CircuitToml {
        id: string(id)?,
        name: opt(name, string)?.map(Spanned::into_inner),
        parent: opt(parent, string)?,
        weight: opt(weight, int)?,
        rate: rate(rate_)?,
        reservation: opt(reservation, rate)?,
    })
}

fn device(entries: &mut Vec<Entry<'_>>) -> Option<DeviceToml> {
    let [id, name, circuit, mac, ipv4, ipv6] =
        fields(entries, ["id", "name", "circuit", "mac", "ipv4", "ipv6"])?;
    Some(DeviceToml {
        id: string(id)?,
        name: opt(name, string)?.map(Spanned::into_inner),
        circuit: string(circuit)?,
        mac: opt(mac, string)?,
        ipv4: strings(ipv4)?,
        ipv6: strings(ipv6)?,
    })
}

fn rule(entries: &mut Vec<Entry<'_>>) -> Option<RuleToml> {
    let [circuit, prefix, mac, vlan, protocol, src_ports, dst_ports, dscp] = fields(
        entries,
        [
            "circuit",
            "prefix",
            "mac",
            "vlan",
            "protocol",
            "src_ports",
            "dst_ports",
            "dscp",
        ],
    )?;
    Some(RuleToml {
        circuit: string(circuit)?,
        prefix: opt(prefix, string)?,
        mac: opt(mac, string)?,
        vlan: opt(vlan, int)?,
        protocol: opt(protocol, string)?,
        src_ports: opt(src_ports, string)?,
        dst_ports: opt(dst_ports, string)?,
        dscp: opt(dscp, int)?,
    })
}

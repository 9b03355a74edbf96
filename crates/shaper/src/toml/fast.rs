//! A fast reader for the plain shaper files that tools and people write
//! at scale (the shape bench's 10,000 circuits, a generated file):
//! `[table]` and `[[array]]` headers with bare names, `key = value`
//! lines with bare keys, values that are basic strings without escapes,
//! decimal integers, one-line inline tables and one-line arrays of such
//! values, and comments. It builds the same [`FileToml`] the `toml`
//! crate does, values and the starts of their spans (all a place
//! needs), in one pass over the text with no token list and no document
//! tree of owned strings.
//!
//! It never decides what is wrong: anything outside that subset (an
//! escape, a dotted or quoted key, a float, a multi-line array, CR LF,
//! a duplicate or unknown key, a value of the wrong type, a missing
//! field) makes it answer `None`, and the caller reads the file with
//! the `toml` crate, whose messages are the ones the user sees. Within
//! the subset a document means to it what it means to the crate
//! (`fast_tests` checks this against the crate on generated files).

use super::{
    CircuitToml, ClassToml, DeviceToml, FileToml, InterfacesToml, LibreqosToml, NodeToml, RuleToml,
    S,
};
use fairway_policy_file::RateField;
use std::ops::Range;
use toml::Spanned;

/// A value as written: its span and what it holds.
#[derive(Debug)]
enum Val<'t> {
    Str(&'t str),
    Int(i64),
    /// `{ k = v, … }`: its entries in order.
    Table(Vec<Entry<'t>>),
    Array(Vec<(Range<usize>, Val<'t>)>),
}

/// `key = value`: the key, the value's span, the value.
#[derive(Debug)]
struct Entry<'t> {
    key: &'t str,
    span: Range<usize>,
    val: Val<'t>,
}

/// A field as found: its value's span and value, if given.
type Field<'t> = Option<(Range<usize>, Val<'t>)>;

/// A table being read: its header's name, `[[…]]` or not, where the
/// header starts (the root: no header).
type Header<'t> = Option<(&'t str, bool, usize)>;

/// The tables of `text[part]` as the crate would deserialize them, or
/// `None` if that part is not in the subset (then the crate reads the
/// whole file). `part` is the whole text or a piece [`split`] gave:
/// spans stay offsets in the whole text.
pub(super) fn parse(text: &str, part: Range<usize>) -> Option<FileToml> {
    // Control characters other than tab and LF (CR among them) are
    // refused by TOML in comments and strings, or change line ends.
    if text.as_bytes()[part.clone()]
        .iter()
        .any(|&b| (b < 0x20 && b != b'\t' && b != b'\n') || b == 0x7f)
    {
        return None;
    }
    read(&text[..part.end], part.start)
}

/// Where to cut a text of at least `from` bytes in two for two threads:
/// the start of the first `[[` header line past the middle. No value of
/// the subset spans lines, so in a text of the subset the cut falls
/// between tables; a value outside it (a multi-line string or array
/// running over the cut) starts before the cut, where the first half's
/// reading refuses it.
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

/// Byte cursor over the text.
struct Cur<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> Cur<'t> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// Blanks, a comment, then the end of the line (or of the text).
    fn line_end(&mut self) -> Option<()> {
        self.blanks();
        if self.peek() == Some(b'#') {
            let rest = &self.text[self.at..];
            self.at += rest.find('\n').unwrap_or(rest.len());
        }
        match self.peek() {
            None => Some(()),
            Some(b'\n') => {
                self.at += 1;
                Some(())
            }
            Some(_) => None,
        }
    }

    /// A bare key: `A-Za-z0-9_-`, at least one.
    fn bare(&mut self) -> Option<&'t str> {
        let start = self.at;
        while matches!(
            self.peek(),
            Some(b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-')
        ) {
            self.at += 1;
        }
        (self.at > start).then(|| &self.text[start..self.at])
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek() == Some(b)).then(|| self.at += 1)
    }

    /// A value and its span.
    fn value(&mut self, nested: bool) -> Field<'t> {
        let start = self.at;
        let val = match self.peek()? {
            b'"' => {
                let rest = &self.text[start + 1..];
                let end = rest.find(['"', '\\'])?;
                // An escape, or `"""` (a multi-line string): the crate's.
                if rest.as_bytes()[end] != b'"' || (end == 0 && rest.starts_with("\"\"")) {
                    return None;
                }
                self.at = start + 1 + end + 1;
                Val::Str(&rest[..end])
            }
            b'0'..=b'9' | b'+' | b'-' => Val::Int(self.int()?),
            b'{' if !nested => Val::Table(self.inline_table()?),
            b'[' if !nested => Val::Array(self.array()?),
            _ => return None,
        };
        Some((start..self.at, val))
    }

    /// A decimal integer: a sign, then `0` or digits not starting with
    /// `0`, ending where a value may end (not `_`, `.`, `e`, `:`, …).
    fn int(&mut self) -> Option<i64> {
        let neg = self.peek() == Some(b'-');
        if matches!(self.peek(), Some(b'+' | b'-')) {
            self.at += 1;
        }
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let digits = &self.text[start..self.at];
        if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
            return None;
        }
        if !matches!(
            self.peek(),
            None | Some(b' ' | b'\t' | b'\n' | b'#' | b',' | b'}' | b']')
        ) {
            return None;
        }
        let magnitude: i128 = digits.parse().ok()?;
        i64::try_from(if neg { -magnitude } else { magnitude }).ok()
    }

    /// `{ k = v, … }` on one line, at least one entry, no trailing comma.
    fn inline_table(&mut self) -> Option<Vec<Entry<'t>>> {
        self.eat(b'{')?;
        // A rate table has two entries.
        let mut entries: Vec<Entry<'t>> = Vec::with_capacity(2);
        loop {
            self.blanks();
            let key = self.bare()?;
            self.blanks();
            self.eat(b'=')?;
            self.blanks();
            let (span, val) = self.value(true)?;
            if entries.iter().any(|e| e.key == key) {
                return None;
            }
            entries.push(Entry { key, span, val });
            self.blanks();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(entries);
                }
                _ => return None,
            }
        }
    }

    /// `[v, …]` on one line, no trailing comma; `[]` is empty.
    fn array(&mut self) -> Option<Vec<(Range<usize>, Val<'t>)>> {
        self.eat(b'[')?;
        self.blanks();
        let mut items = Vec::new();
        if self.eat(b']').is_some() {
            return Some(items);
        }
        loop {
            self.blanks();
            items.push(self.value(true)?);
            self.blanks();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(items);
                }
                _ => return None,
            }
        }
    }
}

/// The text, table by table into the typed file, or `None` outside the
/// subset.
fn read(text: &str, start: usize) -> Option<FileToml> {
    let count = |header: &str| text[start..].matches(header).count();
    let mut f = FileToml {
        interfaces: None,
        libreqos: None,
        default_class: None,
        node: Vec::with_capacity(count("[[node]]")),
        circuit: Vec::with_capacity(count("[[circuit]]")),
        device: Vec::with_capacity(count("[[device]]")),
        rule: Vec::with_capacity(count("[[rule]]")),
        flow: Vec::new(),
    };
    let mut c = Cur { text, at: start };
    let mut header: Header<'_> = None;
    // The current table's entries; the buffer is reused table to table.
    let mut entries: Vec<Entry<'_>> = Vec::with_capacity(8);
    loop {
        c.blanks();
        match c.peek() {
            None => {
                finish(&mut f, header, &mut entries)?;
                return Some(f);
            }
            Some(b'\n' | b'#') => c.line_end()?,
            Some(b'[') => {
                finish(&mut f, header, &mut entries)?;
                let start = c.at;
                c.at += 1;
                let array = c.eat(b'[').is_some();
                let name = c.bare()?;
                c.eat(b']')?;
                if array {
                    c.eat(b']')?;
                }
                c.line_end()?;
                header = Some((name, array, start));
            }
            Some(_) => {
                let key = c.bare()?;
                c.blanks();
                c.eat(b'=')?;
                c.blanks();
                let (span, val) = c.value(false)?;
                c.line_end()?;
                if entries.iter().any(|e| e.key == key) {
                    return None;
                }
                entries.push(Entry { key, span, val });
            }
        }
    }
}

/// The table `header` names, of `entries` (emptied), into `f`, if its
/// header and keys are ones the file has, once.
fn finish<'t>(f: &mut FileToml, header: Header<'t>, entries: &mut Vec<Entry<'t>>) -> Option<()> {
    let Some((name, array, start)) = header else {
        for e in entries.drain(..) {
            match e.key {
                "libreqos" => f.libreqos = Some(Spanned::new(e.span, libreqos(e.val)?)),
                _ => return None,
            }
        }
        return Some(());
    };
    let span = start..entries.last().map_or(start, |e| e.span.end);
    match (name, array) {
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
        (span, Val::Str(s)) => Some(Spanned::new(span, s.to_string())),
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
        Val::Str(s) => RateField::One(s.to_string()),
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

//! The shaper file: fairway's own TOML, the policy file's tables where
//! the concepts match (`[[node]]` with `name`, `parent`, `policy`,
//! `weight`, `rate` for the ceiling and `reservation` for the guarantee,
//! here per direction), extended with the shaper's: `[interfaces]`, `[[circuit]]`,
//! `[[device]]`, `[[rule]]`, `[default_class]` and `libreqos` (LibreQoS's
//! files pulled in, paths relative to the shaper file). Rates are the
//! policy file's, one parser for both ([`crate::rate`]): tc's `100mbit`
//! or `10 Mbit/s`, a unit required; a `rate` or `reservation` is one
//! string (both directions alike) or a `{ download, upload }` table
//! ([`RateField`]). A policy file's `[[flow]]` is refused with a pointer
//! to `[[circuit]]`, the shaper's leaf. Unknown keys are refused; every
//! error names `file:line:column`.
//!
//! ```toml
//! libreqos = { shaped_devices = "ShapedDevices.csv", network = "network.json" }
//!
//! [interfaces]
//! internet = "eth0"          # upload leaves here
//! subscribers = "eth1"       # download leaves here
//! rate = { download = "1gbit", upload = "1gbit" }
//!
//! [[node]]
//! name = "campus"
//! rate = { download = "800mbit", upload = "800mbit" }
//! policy = "qfq+:m=8"        # any registry spec; default qfq+
//!
//! [[circuit]]
//! id = "lab"
//! parent = "campus"
//! rate = { download = "200mbit", upload = "100mbit" }         # ceilings
//! reservation = { download = "50mbit", upload = "20mbit" }   # guarantees
//!
//! [[device]]
//! id = "lab-switch"
//! circuit = "lab"
//! ipv4 = ["10.1.0.0/16"]
//! ipv6 = ["2001:db8:1::/48"]
//!
//! [[rule]]
//! circuit = "lab"
//! vlan = 120
//!
//! [default_class]
//! rate = { download = "100mbit", upload = "100mbit" }
//! ```

use crate::error::{ConfigError, Problem};
use crate::fast_hash::Map;
use crate::libreqos::shaped_devices::parse_prefix;
use crate::loc::{LineIndex, Loc};
use crate::mac::Mac;
use crate::plan::{
    default_scheduler, Bandwidth, Circuit, DefaultClass, Device, FrameIo, Interfaces, Match, Node,
    Plan, PortRange, Prefix, Rates, Rule,
};
use crate::rate::parse_tc_rate;
use ::toml::Spanned;
use fairway_core::policy::tree::MAX_WEIGHT;
use fairway_core::SchedSpec;
use fairway_policy_file::RateError;
use fairway_policy_file::RateField;
use serde::Deserialize;
use std::ops::Range;
use std::sync::Arc;

mod cache;
#[cfg(test)]
mod cache_tests;
mod fast;
#[cfg(test)]
mod fast_tests;

type S = Spanned<String>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    interfaces: Option<Spanned<InterfacesToml>>,
    libreqos: Option<Spanned<LibreqosToml>>,
    default_class: Option<Spanned<ClassToml>>,
    #[serde(default)]
    node: Vec<Spanned<NodeToml>>,
    #[serde(default)]
    circuit: Vec<Spanned<CircuitToml>>,
    #[serde(default)]
    device: Vec<Spanned<DeviceToml>>,
    #[serde(default)]
    rule: Vec<Spanned<RuleToml>>,
    /// A policy file's leaf, refused with a pointer to `[[circuit]]`.
    #[serde(default)]
    flow: Vec<Spanned<::toml::Value>>,
}

impl FileToml {
    /// A file with no tables.
    fn empty() -> Self {
        FileToml {
            interfaces: None,
            libreqos: None,
            default_class: None,
            node: Vec::new(),
            circuit: Vec::new(),
            device: Vec::new(),
            rule: Vec::new(),
            flow: Vec::new(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InterfacesToml {
    internet: S,
    subscribers: S,
    rate: Spanned<RateField>,
    io: Option<S>,
}

/// A `rate` (the ceilings, required) or `reservation` (the guarantees):
/// one string for both directions or `{ download, upload }`.
type RateToml = Spanned<RateField>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LibreqosToml {
    shaped_devices: S,
    network: Option<S>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassToml {
    parent: Option<S>,
    rate: RateToml,
    reservation: Option<RateToml>,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeToml {
    name: S,
    parent: Option<S>,
    policy: Option<S>,
    weight: Option<Spanned<i64>>,
    rate: RateToml,
    reservation: Option<RateToml>,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CircuitToml {
    id: S,
    name: Option<String>,
    parent: Option<S>,
    weight: Option<Spanned<i64>>,
    rate: RateToml,
    reservation: Option<RateToml>,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceToml {
    id: S,
    name: Option<String>,
    circuit: S,
    mac: Option<S>,
    #[serde(default)]
    ipv4: Vec<S>,
    #[serde(default)]
    ipv6: Vec<S>,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleToml {
    circuit: S,
    prefix: Option<S>,
    mac: Option<S>,
    vlan: Option<Spanned<i64>>,
    protocol: Option<S>,
    src_ports: Option<S>,
    dst_ports: Option<S>,
    dscp: Option<Spanned<i64>>,
}

/// LibreQoS's files a shaper file pulls in, as written there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibreqosFiles {
    /// ShapedDevices.csv, relative to the shaper file's folder.
    pub shaped_devices: String,
    /// network.json, if given.
    pub network: Option<String>,
    /// Where `libreqos` is written.
    pub at: Loc,
}

/// Turns spans into places and collects problems.
struct Conv<'a> {
    file: &'a Arc<str>,
    lines: &'a LineIndex<'a>,
    errors: &'a mut Vec<ConfigError>,
    /// Rates already read, by their text: a large file writes the same
    /// few rates thousands of times.
    rates: Map<String, u64>,
}

/// At most this many rates are remembered ([`Conv::rates`]).
const RATES_REMEMBERED: usize = 1024;

impl Conv<'_> {
    /// [`parse_tc_rate`], remembered.
    fn tc_rate(&mut self, text: &str) -> Result<u64, RateError> {
        if let Some(&bits) = self.rates.get(text) {
            return Ok(bits);
        }
        let bits = parse_tc_rate(text)?;
        if self.rates.len() < RATES_REMEMBERED {
            self.rates.insert(text.to_string(), bits);
        }
        Ok(bits)
    }

    fn loc(&self, span: Range<usize>) -> Loc {
        self.lines.loc(self.file, span.start)
    }

    fn err(&mut self, span: Range<usize>, p: Problem) {
        let at = self.loc(span);
        self.errors.push(ConfigError::new(at, p));
    }

    fn value(&mut self, span: Range<usize>, field: &str, value: String, allowed: &str) {
        let p = Problem::Value {
            field: field.to_string(),
            value,
            allowed: allowed.to_string(),
        };
        self.err(span, p);
    }

    /// Both directions of `v`: one string is both, a table gives each
    /// (`required`: both must be there). `None` for a direction not
    /// given; `Err` when anything written was refused (reported).
    fn directions(
        &mut self,
        v: &RateToml,
        field: &str,
        required: bool,
    ) -> Result<[Option<u64>; 2], ()> {
        match v.get_ref() {
            RateField::One(text) => {
                let bits = self.tc_rate(text).map_err(|error| {
                    let field = field.to_string();
                    self.err(v.span(), Problem::Rate { field, error });
                })?;
                Ok([Some(bits); 2])
            }
            RateField::PerDirection { download, upload } => {
                let mut out = [None; 2];
                let mut ok = true;
                for (i, (d, name)) in [(download, "download"), (upload, "upload")]
                    .into_iter()
                    .enumerate()
                {
                    // The field's name is written out only for a problem.
                    let sub = || format!("{field}.{name}");
                    match d {
                        Some(s) => match self.tc_rate(s.get_ref()) {
                            Ok(bits) => out[i] = Some(bits),
                            Err(error) => {
                                let field = sub();
                                self.err(s.span(), Problem::Rate { field, error });
                                ok = false;
                            }
                        },
                        None if required => {
                            self.err(v.span(), Problem::Missing(sub()));
                            ok = false;
                        }
                        None => {}
                    }
                }
                if ok {
                    Ok(out)
                } else {
                    Err(())
                }
            }
        }
    }

    fn rates(&mut self, rate: &RateToml, reservation: &Option<RateToml>) -> Option<Rates> {
        let max = self.directions(rate, "rate", true);
        let min = match reservation {
            Some(r) => self.directions(r, "reservation", false),
            None => Ok([None; 2]),
        };
        let ([Some(dmax), Some(umax)], [dmin, umin]) = (max.ok()?, min.ok()?) else {
            return None;
        };
        Some(Rates {
            download: Bandwidth {
                min: dmin,
                max: dmax,
            },
            upload: Bandwidth {
                min: umin,
                max: umax,
            },
        })
    }

    fn name(&mut self, s: &S, field: &str) -> Option<String> {
        self.named(s, field).then(|| s.get_ref().clone())
    }

    /// [`Self::name`]'s check alone (the caller then moves the name).
    fn named(&mut self, s: &S, field: &str) -> bool {
        if s.get_ref().trim().is_empty() {
            self.err(s.span(), Problem::Missing(field.to_string()));
            return false;
        }
        true
    }

    fn weight(&mut self, w: &Option<Spanned<i64>>) -> Option<Option<u32>> {
        let Some(w) = w else { return Some(None) };
        match u32::try_from(*w.get_ref()) {
            Ok(v) if (1..=MAX_WEIGHT).contains(&v) => Some(Some(v)),
            _ => {
                let allowed = format!("an integer in 1..={MAX_WEIGHT}");
                self.value(w.span(), "weight", w.get_ref().to_string(), &allowed);
                None
            }
        }
    }

    fn mac(&mut self, m: &Option<S>) -> Option<Option<Mac>> {
        let Some(m) = m else { return Some(None) };
        match m.get_ref().parse::<Mac>() {
            Ok(mac) => Some(Some(mac)),
            Err(e) => {
                self.err(m.span(), Problem::Mac(e));
                None
            }
        }
    }
}

/// Reads `text`, the shaper file named `file`, into `plan`; the LibreQoS
/// files it names, if any. Every problem goes to `errors`.
///
/// A file whose tables `toml/fast.rs` builds is read by the `toml`
/// crate's own lexer and parser, its tables built straight from the
/// parser's events, a large one in two halves on two threads: a live
/// reload reads the whole file at every change, and the crate's serde
/// path (a document tree of values, then the deserializer with spans)
/// is most of a reload's cost at thousands of circuits. Anything else,
/// and any file with a problem, is read by the crate's serde path, so
/// that every message is the crate's and this reader's as before.
pub fn read(
    file: &Arc<str>,
    text: &str,
    plan: &mut Plan,
    errors: &mut Vec<ConfigError>,
) -> Option<LibreqosFiles> {
    read_with(file, text, plan, errors, SPLIT_FROM, fast::BLOCK)
}

/// A file this large or larger is read in two halves on two threads.
const SPLIT_FROM: usize = 256 * 1024;

/// [`read`], splitting files of `split_from` bytes or more, the fast
/// reader parsing blocks of `block` bytes or more, with the process's
/// cache of records ([`cache`]).
fn read_with(
    file: &Arc<str>,
    text: &str,
    plan: &mut Plan,
    errors: &mut Vec<ConfigError>,
    split_from: usize,
    block: usize,
) -> Option<LibreqosFiles> {
    let mut records = cache::take();
    let files = read_cached(file, text, plan, errors, (split_from, block), &mut records);
    cache::put(records);
    files
}

/// [`read_with`] with `records` the cache, replaced by this file's
/// records if the fast reader reads it (`cut`: `split_from`, `block`).
fn read_cached(
    file: &Arc<str>,
    text: &str,
    plan: &mut Plan,
    errors: &mut Vec<ConfigError>,
    cut: (usize, usize),
    records: &mut cache::Cache,
) -> Option<LibreqosFiles> {
    if let Some((files, fresh, seen)) = read_fast(file, text, cut, records) {
        records.end(seen);
        merge(plan, fresh);
        return files;
    }
    read_by_crate(file, text, plan, errors)
}

/// What the fast reader made of a part of the file, if it had no problem.
struct Part {
    files: Option<LibreqosFiles>,
    plan: Plan,
    /// It has `[interfaces]`, `[default_class]` (a second one, in the
    /// other part, is the crate's to refuse).
    singles: [bool; 2],
    /// Its records not in the cache, as built.
    seen: Vec<cache::Seen>,
}

/// The fast reader's plan of `text` and its records, or `None` where
/// the crate must read it: tables the fast reader does not build, or a
/// problem.
fn read_fast(
    file: &Arc<str>,
    text: &str,
    (split_from, block): (usize, usize),
    records: &cache::Cache,
) -> Option<(Option<LibreqosFiles>, Plan, Vec<cache::Seen>)> {
    let lines = LineIndex::new(text);
    let at = cache::Places {
        file,
        lines: &lines,
    };
    let part = |range: Range<usize>| {
        let (f, mut plan, seen) = records.parse(text, range, block, &at)?;
        let singles = [f.interfaces.is_some(), f.default_class.is_some()];
        let mut problems = Vec::new();
        // The tables between the records: the records' items are in
        // `plan` already, and `f` has none.
        let files = convert(file, &lines, f, &mut plan, &mut problems);
        problems.is_empty().then_some(Part {
            files,
            plan,
            singles,
            seen,
        })
    };
    let Some(cut) = fast::split(text, split_from) else {
        let p = part(0..text.len())?;
        return Some((p.files, p.plan, p.seen));
    };
    let (first, second) = std::thread::scope(|s| {
        let other = std::thread::Builder::new().spawn_scoped(s, || part(cut..text.len()));
        let first = part(0..cut);
        let second = match other {
            Ok(h) => h.join().ok().flatten(),
            Err(_) => part(cut..text.len()),
        };
        (first, second)
    });
    let (mut first, second) = (first?, second?);
    if first
        .singles
        .iter()
        .zip(&second.singles)
        .any(|(a, b)| *a && *b)
    {
        return None;
    }
    merge(&mut first.plan, second.plan);
    first.seen.extend(second.seen);
    Some((first.files, first.plan, first.seen))
}

/// [`read`] by the `toml` crate alone.
fn read_by_crate(
    file: &Arc<str>,
    text: &str,
    plan: &mut Plan,
    errors: &mut Vec<ConfigError>,
) -> Option<LibreqosFiles> {
    let f: FileToml = match ::toml::from_str(text) {
        Ok(f) => f,
        Err(e) => {
            let at = Loc::at_offset(file, text, e.span().unwrap_or(0..0).start);
            let msg = fairway_policy_file::place::one_line(e.message());
            errors.push(ConfigError::new(at, Problem::Syntax(msg)));
            return None;
        }
    };
    convert(file, &LineIndex::new(text), f, plan, errors)
}

/// Adds what `fresh` (a plan read from one shaper file alone) holds to
/// `plan`, as reading into `plan` directly would have.
fn merge(plan: &mut Plan, fresh: Plan) {
    let Plan {
        interfaces,
        nodes,
        circuits,
        devices,
        rules,
        default_class,
        virtual_nodes,
        flattened_parents,
        left_out,
    } = fresh;
    if interfaces.is_some() {
        plan.interfaces = interfaces;
    }
    if default_class.is_some() {
        plan.default_class = default_class;
    }
    append(&mut plan.nodes, nodes);
    append(&mut plan.circuits, circuits);
    append(&mut plan.devices, devices);
    append(&mut plan.rules, rules);
    plan.virtual_nodes.extend(virtual_nodes);
    plan.flattened_parents += flattened_parents;
    plan.left_out.extend(left_out);
}

/// `more` after what `v` holds: taken whole into an empty `v` (a plan
/// read afresh), rather than copied item by item.
fn append<T>(v: &mut Vec<T>, mut more: Vec<T>) {
    if v.is_empty() {
        *v = more;
    } else {
        v.append(&mut more);
    }
}

/// The parsed file's tables into `plan`, every refused value a problem.
fn convert(
    file: &Arc<str>,
    lines: &LineIndex<'_>,
    f: FileToml,
    plan: &mut Plan,
    errors: &mut Vec<ConfigError>,
) -> Option<LibreqosFiles> {
    let mut c = Conv {
        file,
        lines,
        errors,
        rates: Map::default(),
    };
    plan.nodes.reserve(f.node.len());
    plan.circuits.reserve(f.circuit.len());
    plan.devices.reserve(f.device.len());
    if let Some(i) = &f.interfaces {
        plan.interfaces = interfaces(&mut c, i);
    }
    if let Some(d) = &f.default_class {
        plan.default_class = default_class(&mut c, d);
    }
    for n in &f.node {
        match node(&mut c, n) {
            Some(n) => plan.nodes.push(n),
            None => plan.left_out.push(n.get_ref().name.get_ref().clone()),
        }
    }
    // Circuits and devices, thousands of them, are moved out of the
    // tables, their strings with them.
    for x in f.circuit {
        match circuit(&mut c, x) {
            Ok(x) => plan.circuits.push(x),
            Err(id) => plan.left_out.push(id),
        }
    }
    plan.devices
        .extend(f.device.into_iter().filter_map(|d| device(&mut c, d)));
    plan.rules
        .extend(f.rule.iter().filter_map(|r| rule(&mut c, r)));
    for x in &f.flow {
        let why = "a policy file's leaf; the shaper's leaf is [[circuit]] (id, parent, weight, rate, reservation), and inside a circuit flows are found per 5-tuple";
        let field = "[[flow]]".to_string();
        c.err(x.span(), Problem::Unsupported { field, why });
    }
    f.libreqos.map(|l| LibreqosFiles {
        shaped_devices: l.get_ref().shaped_devices.get_ref().clone(),
        network: l.get_ref().network.as_ref().map(|n| n.get_ref().clone()),
        at: c.loc(l.span()),
    })
}

fn interfaces(c: &mut Conv<'_>, i: &Spanned<InterfacesToml>) -> Option<Interfaces> {
    let r = i.get_ref();
    let mut ok = true;
    for (s, field) in [(&r.internet, "internet"), (&r.subscribers, "subscribers")] {
        let n = s.get_ref();
        let bad = n.is_empty()
            || n.len() > 15
            || n == "."
            || n == ".."
            || n.contains(|ch: char| ch == '/' || ch.is_whitespace());
        if bad {
            let allowed = "an interface name of 1 to 15 bytes without '/' or spaces";
            c.value(s.span(), field, format!("{n:?}"), allowed);
            ok = false;
        }
    }
    if r.internet.get_ref() == r.subscribers.get_ref() {
        let allowed = "a different interface than internet (the shaper sits between two)";
        c.value(
            r.subscribers.span(),
            "subscribers",
            format!("{:?}", r.subscribers.get_ref()),
            allowed,
        );
        ok = false;
    }
    let link = c.directions(&r.rate, "rate", true);
    let io = match &r.io {
        None => FrameIo::default(),
        Some(s) => match FrameIo::parse(s.get_ref()) {
            Some(io) if io.built() => io,
            parsed => {
                let allowed = match parsed {
                    Some(_) => FrameIo::XDP_NOT_BUILT,
                    None => FrameIo::ALLOWED,
                };
                c.value(s.span(), "io", format!("{:?}", s.get_ref()), allowed);
                ok = false;
                FrameIo::default()
            }
        },
    };
    ok.then_some(())?;
    let [Some(download), Some(upload)] = link.ok()? else {
        return None;
    };
    Some(Interfaces {
        internet: r.internet.get_ref().clone(),
        subscribers: r.subscribers.get_ref().clone(),
        download,
        upload,
        io,
        at: c.loc(i.span()),
    })
}

fn default_class(c: &mut Conv<'_>, d: &Spanned<ClassToml>) -> Option<DefaultClass> {
    let r = d.get_ref();
    Some(DefaultClass {
        parent: r.parent.as_ref().map(|p| p.get_ref().clone()),
        rates: c.rates(&r.rate, &r.reservation)?,
        at: c.loc(d.span()),
    })
}

fn node(c: &mut Conv<'_>, n: &Spanned<NodeToml>) -> Option<Node> {
    let r = n.get_ref();
    let name = c.name(&r.name, "name");
    let rates = c.rates(&r.rate, &r.reservation);
    let weight = c.weight(&r.weight);
    let scheduler = match &r.policy {
        None => Some(default_scheduler()),
        Some(p) => SchedSpec::parse(p.get_ref())
            .map_err(|e| c.err(p.span(), Problem::Spec(e)))
            .ok(),
    };
    Some(Node {
        name: name?,
        parent: r.parent.as_ref().map(|p| p.get_ref().clone()),
        rates: rates?,
        weight: weight?,
        scheduler: scheduler?,
        at: c.loc(r.name.span()),
    })
}

/// The circuit of `x`, or its id to leave out (its problems reported).
fn circuit(c: &mut Conv<'_>, x: Spanned<CircuitToml>) -> Result<Circuit, String> {
    let r = x.into_inner();
    let named = c.named(&r.id, "id");
    let rates = c.rates(&r.rate, &r.reservation);
    let weight = c.weight(&r.weight);
    let at = c.loc(r.id.span());
    let id = r.id.into_inner();
    let (true, Some(rates), Some(weight)) = (named, rates, weight) else {
        return Err(id);
    };
    Ok(Circuit {
        name: r.name.unwrap_or_else(|| id.clone()),
        id,
        parent: r.parent.map(Spanned::into_inner),
        rates,
        weight,
        at,
    })
}

fn device(c: &mut Conv<'_>, d: Spanned<DeviceToml>) -> Option<Device> {
    let span = d.span();
    let r = d.into_inner();
    let id = c.named(&r.id, "id");
    let circuit = c.named(&r.circuit, "circuit");
    let mac = c.mac(&r.mac);
    // Room for what is written, up to one past the limit checked below.
    let written = r.ipv4.len() + r.ipv6.len();
    let mut prefixes = Vec::with_capacity(written.min(crate::limits::MAX_PREFIXES_PER_DEVICE + 1));
    let mut ok = true;
    for (list, v4, family) in [(&r.ipv4, true, "IPv4"), (&r.ipv6, false, "IPv6")] {
        for s in list {
            match parse_prefix(s.get_ref().trim(), v4) {
                Some(net) => prefixes.push(Prefix {
                    net,
                    at: c.loc(s.span()),
                }),
                None => {
                    c.err(
                        s.span(),
                        Problem::Ip {
                            family,
                            text: s.get_ref().clone(),
                        },
                    );
                    ok = false;
                }
            }
        }
    }
    if prefixes.len() > crate::limits::MAX_PREFIXES_PER_DEVICE {
        let limit = crate::limits::MAX_PREFIXES_PER_DEVICE;
        c.err(
            span,
            Problem::TooMany {
                what: "prefixes in one device",
                limit,
            },
        );
        ok = false;
    }
    let (true, true, true, Some(mac)) = (ok, id, circuit, mac) else {
        return None;
    };
    let at = c.loc(r.id.span());
    let id = r.id.into_inner();
    Some(Device {
        name: r.name.unwrap_or_else(|| id.clone()),
        id,
        circuit: r.circuit.into_inner(),
        mac,
        prefixes,
        at,
    })
}

/// IP protocols by name; any number 0..=255 is taken too.
const PROTOCOLS: [(&str, u8); 8] = [
    ("icmp", 1),
    ("tcp", 6),
    ("udp", 17),
    ("gre", 47),
    ("esp", 50),
    ("ah", 51),
    ("icmpv6", 58),
    ("sctp", 132),
];

fn rule(c: &mut Conv<'_>, x: &Spanned<RuleToml>) -> Option<Rule> {
    let r = x.get_ref();
    let before = c.errors.len();
    let circuit = c.name(&r.circuit, "circuit");
    let mut m = Match {
        mac: c.mac(&r.mac).flatten(),
        ..Match::default()
    };
    if let Some(p) = &r.prefix {
        m.prefix = parse_prefix(p.get_ref().trim(), true)
            .or_else(|| parse_prefix(p.get_ref().trim(), false));
        if m.prefix.is_none() {
            c.err(
                p.span(),
                Problem::Ip {
                    family: "IP",
                    text: p.get_ref().clone(),
                },
            );
        }
    }
    let mut int = |v: &Option<Spanned<i64>>, field: &str, lo: i64, hi: i64| {
        let v = v.as_ref()?;
        if (lo..=hi).contains(v.get_ref()) {
            return Some(*v.get_ref());
        }
        c.value(
            v.span(),
            field,
            v.get_ref().to_string(),
            &format!("an integer in {lo}..={hi}"),
        );
        None
    };
    m.vlan = int(&r.vlan, "vlan", 1, 4094).map(|v| v as u16);
    m.dscp = int(&r.dscp, "dscp", 0, 63).map(|v| v as u8);
    if let Some(p) = &r.protocol {
        let t = p.get_ref().trim().to_ascii_lowercase();
        m.protocol = PROTOCOLS
            .iter()
            .find(|(n, _)| *n == t)
            .map(|&(_, v)| v)
            .or_else(|| t.parse().ok());
        if m.protocol.is_none() {
            let names: Vec<&str> = PROTOCOLS.iter().map(|(n, _)| *n).collect();
            let allowed = format!("{} or a number in 0..=255", names.join(", "));
            c.value(p.span(), "protocol", format!("{:?}", p.get_ref()), &allowed);
        }
    }
    for (s, field) in [(&r.src_ports, "src_ports"), (&r.dst_ports, "dst_ports")] {
        let Some(s) = s else { continue };
        let range = ports(s.get_ref());
        if range.is_none() {
            c.value(
                s.span(),
                field,
                format!("{:?}", s.get_ref()),
                "a port (0..=65535) or a range LO-HI with LO <= HI",
            );
        }
        if !matches!(m.protocol, Some(6 | 17 | 132)) && r.protocol.is_some() == m.protocol.is_some()
        {
            c.value(
                s.span(),
                field,
                format!("{:?}", s.get_ref()),
                "only with protocol = \"tcp\", \"udp\" or \"sctp\"",
            );
        }
        if field == "src_ports" {
            m.src_ports = range
        } else {
            m.dst_ports = range
        }
    }
    if m == Match::default() && c.errors.len() == before {
        c.err(
            x.span(),
            Problem::Missing(
                "a match (prefix, mac, vlan, protocol, src_ports, dst_ports or dscp)".into(),
            ),
        );
    }
    (c.errors.len() == before).then_some(())?;
    Some(Rule {
        matches: m,
        circuit: circuit?,
        at: c.loc(r.circuit.span()),
    })
}

/// `80` or `1000-2000`.
fn ports(text: &str) -> Option<PortRange> {
    let (lo, hi) = text.split_once('-').unwrap_or((text, text));
    let (lo, hi) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
    (lo <= hi).then_some(PortRange { lo, hi })
}

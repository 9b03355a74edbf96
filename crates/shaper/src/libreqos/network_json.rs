//! `network.json`: LibreQoS's tree of sites and access points. An object
//! maps node names to nodes; a node is an object with
//! `downloadBandwidthMbps` and `uploadBandwidthMbps` (its ceilings,
//! decimal Mbps, numbers or numeric strings as LibreQoS accepts), optional
//! `downloadBandwidthMbpsMin` / `uploadBandwidthMbpsMin` (its
//! guarantees) and optional `children` (an object of the same form).
//! `"virtual": true` or `"type": "virtual"` marks a logical node that
//! LibreQoS does not shape: its children move up to its nearest real
//! ancestor, and so does fairway. Other keys with plain values (`type`,
//! `id`, `latitude`, integrations' own keys) are ignored, as LibreQoS's
//! shaper ignores them; an object under any key but `children` is
//! refused, since LibreQoS's shaper ignores it but its daemon reads it as
//! a node. Node names are unique in the whole tree, as LibreQoS requires.
//! An empty file or `{}` is a flat network.
//!
//! Positions: `serde_json` reports them for syntax errors only, so the
//! reader counts the bytes the parser has consumed and places each node
//! at its name.

use crate::error::{ConfigError, Problem};
use crate::limits::MAX_NODES;
use crate::loc::{LineIndex, Loc};
use crate::plan::{default_scheduler, Bandwidth, Node, Plan, Rates};
use crate::rate::{parse_mbps, RateError};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::io;
use std::sync::Arc;

/// A node as read, before virtual nodes are taken out.
struct RawNode {
    name: String,
    parent: Option<usize>,
    down: [Option<u64>; 2],
    up: [Option<u64>; 2],
    virtual_node: bool,
    at: Loc,
}

/// What the reader shares with every level of the tree.
struct Ctx<'a> {
    file: &'a Arc<str>,
    text: &'a str,
    lines: LineIndex<'a>,
    consumed: &'a Cell<usize>,
    nodes: Vec<RawNode>,
    names: HashMap<String, Loc>,
    errors: Vec<ConfigError>,
    full: bool,
}

impl Ctx<'_> {
    /// Where the key the parser has just read starts.
    fn key_loc(&self) -> Loc {
        let mut end = self.consumed.get().min(self.text.len());
        // The parser may have looked one byte past the key.
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let close = self.text[..end].rfind('"').unwrap_or(0);
        let open = self.text[..close].rfind('"').unwrap_or(close);
        self.lines.loc(self.file, open)
    }

    fn err(&mut self, at: Loc, p: Problem) {
        self.errors.push(ConfigError::new(at, p));
    }
}

/// The bytes of the text, counting what the parser takes (it takes one
/// byte at a time from an `io::Read`).
struct Counting<'a> {
    rest: &'a [u8],
    consumed: &'a Cell<usize>,
}

impl io::Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.rest.read(buf)?;
        self.consumed.set(self.consumed.get() + n);
        Ok(n)
    }
}

/// Reads `text`, the network.json named `file`, into `plan`'s nodes (and
/// its virtual nodes). Every problem goes to `errors`.
pub fn read(file: &Arc<str>, text: &str, plan: &mut Plan, errors: &mut Vec<ConfigError>) {
    if text.trim().is_empty() {
        return;
    }
    let consumed = Cell::new(0);
    let mut ctx = Ctx {
        file,
        text,
        lines: LineIndex::new(text),
        consumed: &consumed,
        nodes: Vec::new(),
        names: HashMap::new(),
        errors: Vec::new(),
        full: false,
    };
    let mut de = serde_json::Deserializer::from_reader(Counting {
        rest: text.as_bytes(),
        consumed: &consumed,
    });
    let parsed = LevelSeed {
        ctx: &mut ctx,
        parent: None,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    if let Err(e) = parsed {
        let at = Loc {
            file: Arc::clone(file),
            line: u32::try_from(e.line()).ok().filter(|&l| l > 0),
            col: u32::try_from(e.column()).ok().filter(|&c| c > 0),
        };
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
        errors.push(ConfigError::new(at, Problem::Syntax(msg)));
        return;
    }
    errors.append(&mut ctx.errors);
    into_plan(ctx.nodes, plan);
}

/// Moves the nodes into the plan, children of virtual nodes moved up to
/// the nearest real ancestor.
fn into_plan(raw: Vec<RawNode>, plan: &mut Plan) {
    // Parents precede children (the reader pushes a node before its
    // children), so a parent's real ancestor is known before its child's.
    let mut real: Vec<Option<usize>> = Vec::with_capacity(raw.len());
    for n in &raw {
        let up = n.parent.and_then(|p| {
            if raw[p].virtual_node {
                real[p]
            } else {
                Some(p)
            }
        });
        real.push(up);
    }
    for (i, n) in raw.iter().enumerate() {
        let parent = real[i].map(|p| raw[p].name.clone());
        if n.virtual_node {
            plan.virtual_nodes.push((n.name.clone(), parent));
            continue;
        }
        // A node whose max is missing or bad was reported; left out, its
        // children and circuits are reported no further.
        let (Some(down), Some(up)) = (n.down[1], n.up[1]) else {
            plan.left_out.push(n.name.clone());
            continue;
        };
        let bw = |b: [Option<u64>; 2], max: u64| Bandwidth { min: b[0], max };
        plan.nodes.push(Node {
            name: n.name.clone(),
            parent,
            rates: Rates {
                download: bw(n.down, down),
                upload: bw(n.up, up),
            },
            weight: None,
            scheduler: default_scheduler(),
            at: n.at.clone(),
        });
    }
}

/// An object of nodes: the file's top, or a node's `children`.
struct LevelSeed<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    parent: Option<usize>,
}

impl<'de> DeserializeSeed<'de> for LevelSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for LevelSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "an object of nodes (name -> {downloadBandwidthMbps, uploadBandwidthMbps, children})",
        )
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key::<String>()? {
            let at = self.ctx.key_loc();
            map.next_value_seed(NodeSeed {
                ctx: &mut *self.ctx,
                parent: self.parent,
                name,
                at,
            })?;
        }
        Ok(())
    }
}

/// One node's object (or a plain value under a level, which LibreQoS
/// skips).
struct NodeSeed<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    parent: Option<usize>,
    name: String,
    at: Loc,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// A plain value where a node may be: skipped, as LibreQoS skips it.
macro_rules! skip_plain {
    ($($f:ident: $t:ty),*) => {
        $(fn $f<E: de::Error>(self, _: $t) -> Result<(), E> { Ok(()) })*
    };
}

impl<'de> Visitor<'de> for NodeSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a node object")
    }
    skip_plain!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let ctx = self.ctx;
        let index = ctx.nodes.len();
        if self.name == "children" {
            ctx.err(
                self.at.clone(),
                Problem::Value {
                    field: "node name".into(),
                    value: format!("{:?}", self.name),
                    allowed: "any name but \"children\" (a level may not hold a \"children\" key)"
                        .into(),
                },
            );
        }
        if let Some(first) = ctx.names.get(&self.name) {
            let first = first.clone();
            ctx.err(
                self.at.clone(),
                Problem::Duplicate {
                    what: "node",
                    name: self.name.clone(),
                    first,
                },
            );
        } else {
            ctx.names.insert(self.name.clone(), self.at.clone());
        }
        if index >= MAX_NODES && !ctx.full {
            ctx.full = true;
            ctx.err(
                self.at.clone(),
                Problem::TooMany {
                    what: "nodes",
                    limit: MAX_NODES,
                },
            );
        }
        let keep = !ctx.full;
        if keep {
            ctx.nodes.push(RawNode {
                name: self.name.clone(),
                parent: self.parent,
                down: [None; 2],
                up: [None; 2],
                virtual_node: false,
                at: self.at.clone(),
            });
        }
        let mut seen: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let at = ctx.key_loc();
            if seen.contains(&key) {
                ctx.err(
                    at.clone(),
                    Problem::Value {
                        field: format!("node {:?}", self.name),
                        value: format!("{key:?}"),
                        allowed: "each key once".into(),
                    },
                );
            }
            seen.push(key.clone());
            if key == "children" {
                let parent = keep.then_some(index);
                map.next_value_seed(LevelSeed {
                    ctx: &mut *ctx,
                    parent,
                })?;
                continue;
            }
            let value: Value = map.next_value()?;
            if keep {
                node_key(ctx, index, &key, &value, at);
            }
        }
        if keep {
            let missing: Vec<&str> = ["downloadBandwidthMbps", "uploadBandwidthMbps"]
                .into_iter()
                .filter(|k| !seen.iter().any(|s| s == k))
                .collect();
            for k in missing {
                let problem = Problem::Missing(format!("{k} of node {:?}", self.name));
                ctx.err(self.at.clone(), problem);
            }
        }
        Ok(())
    }
}

/// One key of node `index` other than `children`.
fn node_key(ctx: &mut Ctx<'_>, index: usize, key: &str, value: &Value, at: Loc) {
    let slot = match key {
        "downloadBandwidthMbpsMin" => Some((true, 0)),
        "downloadBandwidthMbps" => Some((true, 1)),
        "uploadBandwidthMbpsMin" => Some((false, 0)),
        "uploadBandwidthMbps" => Some((false, 1)),
        _ => None,
    };
    if let Some((down, i)) = slot {
        match json_mbps(value) {
            Ok(r) => {
                let n = &mut ctx.nodes[index];
                if down {
                    n.down[i] = Some(r)
                } else {
                    n.up[i] = Some(r)
                }
            }
            Err(error) => ctx.err(
                at,
                Problem::Rate {
                    field: key.to_string(),
                    error,
                },
            ),
        }
        return;
    }
    match (key, value) {
        ("virtual", Value::Bool(b)) => ctx.nodes[index].virtual_node |= *b,
        ("virtual", v) => ctx.err(at, Problem::Value {
            field: "virtual".into(),
            value: v.to_string(),
            allowed: "true or false".into(),
        }),
        ("type", Value::String(t)) if t.eq_ignore_ascii_case("virtual") => {
            ctx.nodes[index].virtual_node = true;
        }
        (_, Value::Object(_)) => ctx.err(at, Problem::Unsupported {
            field: format!("key {key:?}"),
            why: "an object under a key other than \"children\" is no node to LibreQoS's shaper but one to its daemon; put nodes under \"children\"",
        }),
        _ => {}
    }
}

/// A rate in Mbps: a JSON number or a numeric string, as LibreQoS takes.
fn json_mbps(v: &Value) -> Result<u64, RateError> {
    match v {
        Value::Number(n) => parse_mbps(&n.to_string()),
        Value::String(s) => parse_mbps(s),
        other => Err(RateError::Malformed(other.to_string())),
    }
}

//! `ShapedDevices.csv`: one row per device; rows sharing a Circuit ID are
//! the devices of one circuit and must agree on its name, parent and
//! rates. Columns are found by their header names, as LibreQoS finds them
//! (case, spaces and punctuation ignored: `Download Min Mbps`,
//! `download_min_mbps` and `downloadmin` are one column), so their order
//! is free and columns LibreQoS ignores (Comment, a RADIUS user name, any
//! unknown column) are ignored. Lines starting with `#` are comments.
//! IPv4 and IPv6 hold comma-separated lists of addresses or prefixes
//! (quoted, since they contain commas); rates are decimal Mbps.
//!
//! A circuit whose Parent Node is empty hangs under the root; one that
//! names a LibreQoS virtual node hangs under the virtual node's nearest
//! real ancestor, as LibreQoS places it.

use crate::error::{ConfigError, Problem};
use crate::limits::{MAX_CIRCUITS, MAX_DEVICES, MAX_PREFIXES_PER_DEVICE};
use crate::loc::Loc;
use crate::mac::Mac;
use crate::plan::{Bandwidth, Circuit, Device, Plan, Prefix, Rates};
use crate::rate::parse_mbps;
use ipnet::IpNet;
use std::collections::HashMap;
use std::sync::Arc;

/// The columns fairway reads, by their normalised header names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Col {
    CircuitId,
    CircuitName,
    DeviceId,
    DeviceName,
    ParentNode,
    Mac,
    Ipv4,
    Ipv6,
    DownMin,
    UpMin,
    DownMax,
    UpMax,
    ParentNodeId,
    AnchorNodeId,
    Sqm,
}

impl Col {
    /// Every required column and its name in LibreQoS's header.
    const REQUIRED: [(Col, &'static str); 12] = [
        (Col::CircuitId, "Circuit ID"),
        (Col::CircuitName, "Circuit Name"),
        (Col::DeviceId, "Device ID"),
        (Col::DeviceName, "Device Name"),
        (Col::ParentNode, "Parent Node"),
        (Col::Mac, "MAC"),
        (Col::Ipv4, "IPv4"),
        (Col::Ipv6, "IPv6"),
        (Col::DownMin, "Download Min Mbps"),
        (Col::UpMin, "Upload Min Mbps"),
        (Col::DownMax, "Download Max Mbps"),
        (Col::UpMax, "Upload Max Mbps"),
    ];

    /// The column a header names, as LibreQoS matches headers.
    fn from_header(header: &str) -> Option<Col> {
        let n: String = header
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        Some(match n.as_str() {
            "circuitid" => Col::CircuitId,
            "circuitname" => Col::CircuitName,
            "deviceid" => Col::DeviceId,
            "devicename" => Col::DeviceName,
            "parentnode" => Col::ParentNode,
            "mac" => Col::Mac,
            "ipv4" => Col::Ipv4,
            "ipv6" => Col::Ipv6,
            "downloadmin" | "downloadminmbps" => Col::DownMin,
            "uploadmin" | "uploadminmbps" => Col::UpMin,
            "downloadmax" | "downloadmaxmbps" => Col::DownMax,
            "uploadmax" | "uploadmaxmbps" => Col::UpMax,
            "parentnodeid" => Col::ParentNodeId,
            "anchornodeid" | "id" => Col::AnchorNodeId,
            "sqm" => Col::Sqm,
            _ => return None,
        })
    }
}

/// One row's fields by column.
struct Row<'r> {
    record: &'r csv::StringRecord,
    layout: &'r HashMap<Col, usize>,
}

impl Row<'_> {
    fn get(&self, c: Col) -> &str {
        self.layout
            .get(&c)
            .and_then(|&i| self.record.get(i))
            .unwrap_or("")
    }
}

/// Reads `text`, the ShapedDevices.csv named `file`, into `plan`: its
/// circuits and devices. Every problem goes to `errors`; a row whose ids
/// or rates are refused is left out of the plan (its circuit id noted in
/// [`Plan::left_out`]), one with a refused MAC or address stays without
/// it, so that the check still finds the row's other problems.
///
/// A file of [`PIPELINE_BYTES`] or more is read by two threads in a
/// pipeline: this one cuts the records (the csv crate) and hands them on
/// in batches of [`BATCH_ROWS`]; the other reads their fields (ids,
/// rates, addresses, MACs) meanwhile; then the rows join the plan in the
/// file's order, so the plan and the problems are those of one thread.
pub fn read(file: &Arc<str>, text: &str, plan: &mut Plan, errors: &mut Vec<ConfigError>) {
    read_with(file, text, plan, errors, PIPELINE_BYTES, BATCH_ROWS);
}

/// The file size from which records are cut and read on two threads:
/// below it, a second thread costs more than it saves.
pub const PIPELINE_BYTES: usize = 128 * 1024;
/// Records handed from the cutting thread to the reading one at a time.
pub const BATCH_ROWS: usize = 256;

/// A record, or the csv crate's problem, at its line.
type Record = Result<(Loc, csv::StringRecord), ConfigError>;
/// A record's fields as [`read_row`] read them, with the problems it
/// found and the circuit id to note when the row is left out; or the csv
/// crate's problem.
type ReadRow = Result<(Loc, Option<(Circuit, Device)>, Vec<ConfigError>, String), ConfigError>;

fn read_with(
    file: &Arc<str>,
    text: &str,
    plan: &mut Plan,
    errors: &mut Vec<ConfigError>,
    pipeline_bytes: usize,
    batch: usize,
) {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let layout = match header_layout(file, text, &mut reader) {
        Ok(l) => l,
        Err(e) => return errors.extend(e),
    };
    let aliases: HashMap<String, Option<String>> = plan.virtual_nodes.iter().cloned().collect();
    let read = |r: Record| -> ReadRow {
        let (at, record) = r?;
        let row = Row {
            record: &record,
            layout: &layout,
        };
        let mut found = Vec::new();
        let got = read_row(&row, &at, &aliases, &mut found);
        let id = match got {
            None => row.get(Col::CircuitId).to_string(),
            Some(_) => String::new(),
        };
        Ok((at, got, found, id))
    };
    let mut cut = Cutter {
        file,
        lines: Lines::new(text),
        reader,
    };
    let rows: Vec<ReadRow> = if text.len() >= pipeline_bytes {
        pipeline(&mut cut, batch.max(1), &read)
    } else {
        std::iter::from_fn(|| cut.next()).map(read).collect()
    };
    let mut circuits: HashMap<String, usize> = HashMap::new();
    for row in rows {
        let (at, got, found, id) = match row {
            Ok(r) => r,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        errors.extend(found);
        let Some((circuit, device)) = got else {
            plan.left_out.push(id);
            continue;
        };
        let limit = if !circuits.contains_key(&circuit.id) && circuits.len() >= MAX_CIRCUITS {
            Some(("circuits", MAX_CIRCUITS))
        } else if plan.devices.len() >= MAX_DEVICES {
            Some(("devices", MAX_DEVICES))
        } else {
            None
        };
        if let Some((what, limit)) = limit {
            errors.push(ConfigError::new(at, Problem::TooMany { what, limit }));
            break;
        }
        add_row(circuit, device, plan, &mut circuits, errors);
    }
}

/// Records cut here, in batches of `batch`, read by `read` on a second
/// thread (here too if none can start); the rows in the file's order.
fn pipeline(
    cut: &mut Cutter<'_>,
    batch: usize,
    read: &(impl Fn(Record) -> ReadRow + Sync),
) -> Vec<ReadRow> {
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<Record>>();
        let reader = std::thread::Builder::new().spawn_scoped(s, move || {
            // The records are dropped here too, off the cutting thread.
            rx.into_iter()
                .flat_map(|b| b.into_iter().map(read))
                .collect::<Vec<_>>()
        });
        let mut rows = Vec::new();
        loop {
            let records: Vec<Record> = std::iter::from_fn(|| cut.next()).take(batch).collect();
            let last = records.len() < batch;
            match &reader {
                Ok(_) => {
                    // It fails only if the reader panicked: told at the join.
                    let _ = tx.send(records);
                }
                Err(_) => rows.extend(records.into_iter().map(read)),
            }
            if last {
                break;
            }
        }
        drop(tx);
        match reader.map(|h| h.join()) {
            Ok(Ok(mut read_there)) => {
                read_there.extend(rows);
                read_there
            }
            // A panic there is one here, as on one thread.
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            // No second thread: every record was read here.
            Err(_) => rows,
        }
    })
}

/// Cuts the records after the header, in order, each at its line, or
/// the csv crate's problem at its line (none after an I/O error).
struct Cutter<'t> {
    file: &'t Arc<str>,
    lines: Lines<'t>,
    reader: csv::Reader<&'t [u8]>,
}

impl Cutter<'_> {
    fn next(&mut self) -> Option<Record> {
        let mut record = csv::StringRecord::new();
        match self.reader.read_record(&mut record) {
            Ok(false) => None,
            Ok(true) => {
                let line = record.position().map_or(0, |p| self.lines.at(p.byte()));
                Some(Ok((Loc::line(self.file, line), record)))
            }
            Err(e) => {
                let line = e.position().map_or(0, |p| self.lines.at(p.byte()));
                let problem =
                    ConfigError::new(Loc::line(self.file, line), Problem::Syntax(csv_message(&e)));
                if matches!(e.kind(), csv::ErrorKind::Io(_)) {
                    // Nothing follows an I/O error.
                    self.reader = csv::Reader::from_reader(&[][..]);
                }
                Some(Err(problem))
            }
        }
    }
}

/// The header's columns; an error for each required one it lacks.
fn header_layout(
    file: &Arc<str>,
    text: &str,
    reader: &mut csv::Reader<&[u8]>,
) -> Result<HashMap<Col, usize>, Vec<ConfigError>> {
    let headers = reader.headers().map_err(|e| {
        let line = e.position().map_or(1, |p| Lines::new(text).at(p.byte()));
        vec![ConfigError::new(
            Loc::line(file, line),
            Problem::Syntax(csv_message(&e)),
        )]
    })?;
    let at = Loc::line(
        file,
        headers
            .position()
            .map_or(1, |p| Lines::new(text).at(p.byte())),
    );
    let mut layout = HashMap::new();
    for (i, h) in headers.iter().enumerate() {
        if let Some(c) = Col::from_header(h) {
            layout.entry(c).or_insert(i);
        }
    }
    let missing: Vec<ConfigError> = Col::REQUIRED
        .iter()
        .filter(|(c, _)| !layout.contains_key(c))
        .map(|&(_, name)| ConfigError::new(at.clone(), Problem::MissingColumn(name)))
        .collect();
    if missing.is_empty() {
        Ok(layout)
    } else {
        Err(missing)
    }
}

/// File lines of byte offsets, for offsets that only grow. (The csv
/// crate's own line numbers leave out comment lines.)
struct Lines<'t> {
    text: &'t [u8],
    byte: usize,
    line: u64,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        Self {
            text: text.as_bytes(),
            byte: 0,
            line: 1,
        }
    }

    /// The 1-based line of the record that starts at byte `at` (at
    /// least the last one asked). The csv crate places a record at the
    /// start of the comment and blank lines it skipped before it.
    fn at(&mut self, at: u64) -> u64 {
        let mut at = usize::try_from(at)
            .unwrap_or(usize::MAX)
            .min(self.text.len());
        while let Some(rest) = self.text.get(at..) {
            let skipped =
                rest.starts_with(b"#") || rest.starts_with(b"\n") || rest.starts_with(b"\r\n");
            match rest.iter().position(|&b| b == b'\n') {
                Some(nl) if skipped => at += nl + 1,
                _ => break,
            }
        }
        if at > self.byte {
            self.line += self.text[self.byte..at]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64;
            self.byte = at;
        }
        self.line
    }
}

/// The csv crate's message without the position it repeats.
fn csv_message(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Utf8 { .. } => {
            "not UTF-8 (save the file as UTF-8; LibreQoS guesses the encoding, fairway does not)"
                .to_string()
        }
        _ => e.to_string(),
    }
}

/// A row's circuit and device, or `None` after pushing its problems.
fn read_row(
    row: &Row<'_>,
    at: &Loc,
    aliases: &HashMap<String, Option<String>>,
    errors: &mut Vec<ConfigError>,
) -> Option<(Circuit, Device)> {
    let before = errors.len();
    let mut err = |p: Problem| errors.push(ConfigError::new(at.clone(), p));
    let circuit_id = row.get(Col::CircuitId).to_string();
    let device_id = row.get(Col::DeviceId).to_string();
    if circuit_id.is_empty() {
        err(Problem::Missing("Circuit ID".into()));
    }
    if device_id.is_empty() {
        err(Problem::Missing("Device ID".into()));
    }
    for (col, name, why) in [
        (Col::ParentNodeId, "Parent Node ID", "not supported yet; leave it empty (fairway finds the parent by its Parent Node name, which network.json keeps unique)"),
        (Col::AnchorNodeId, "Anchor Node ID", "not supported yet; leave it empty"),
        (Col::Sqm, "sqm", "per-circuit SQM overrides are not supported; leave it empty"),
    ] {
        if !row.get(col).is_empty() {
            err(Problem::Unsupported { field: format!("{name} {:?}", row.get(col)), why });
        }
    }
    let mac = match row.get(Col::Mac) {
        "" => None,
        m => m.parse::<Mac>().map_err(|e| err(Problem::Mac(e))).ok(),
    };
    let mut prefixes = Vec::new();
    for (col, v4) in [(Col::Ipv4, true), (Col::Ipv6, false)] {
        for piece in row
            .get(col)
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            match parse_prefix(piece, v4) {
                Some(net) => prefixes.push(Prefix {
                    net,
                    at: at.clone(),
                }),
                None => err(Problem::Ip {
                    family: if v4 { "IPv4" } else { "IPv6" },
                    text: piece.to_string(),
                }),
            }
        }
    }
    if prefixes.len() > MAX_PREFIXES_PER_DEVICE {
        err(Problem::TooMany {
            what: "prefixes in one device",
            limit: MAX_PREFIXES_PER_DEVICE,
        });
    }
    let mut rate = |col: Col, name: &str| match parse_mbps(row.get(col)) {
        Ok(r) => r,
        Err(error) => {
            err(Problem::Rate {
                field: name.to_string(),
                error,
            });
            0
        }
    };
    let rates = Rates {
        download: Bandwidth {
            min: Some(rate(Col::DownMin, "Download Min Mbps")),
            max: rate(Col::DownMax, "Download Max Mbps"),
        },
        upload: Bandwidth {
            min: Some(rate(Col::UpMin, "Upload Min Mbps")),
            max: rate(Col::UpMax, "Upload Max Mbps"),
        },
    };
    // A row whose ids or rates did not parse is left out; one with a bad
    // MAC or address stays (without it), so that the check still finds
    // the row's other problems.
    if errors[before..]
        .iter()
        .any(|e| matches!(*e.problem, Problem::Missing(_) | Problem::Rate { .. }))
    {
        return None;
    }
    let parent = match row.get(Col::ParentNode) {
        "" => None,
        p => match aliases.get(p) {
            Some(real) => real.clone(),
            None => Some(p.to_string()),
        },
    };
    let circuit = Circuit {
        id: circuit_id.clone(),
        name: row.get(Col::CircuitName).to_string(),
        parent,
        rates,
        weight: None,
        at: at.clone(),
    };
    let device = Device {
        id: device_id,
        name: row.get(Col::DeviceName).to_string(),
        circuit: circuit_id,
        mac,
        prefixes,
        at: at.clone(),
    };
    Some((circuit, device))
}

/// An address or prefix of the family asked for, host bits clear.
pub(crate) fn parse_prefix(text: &str, v4: bool) -> Option<IpNet> {
    let net: IpNet = if text.contains('/') {
        text.parse().ok()?
    } else {
        IpNet::from(text.parse::<std::net::IpAddr>().ok()?)
    };
    let family_ok = matches!(net, IpNet::V4(_)) == v4;
    (family_ok && net.trunc() == net).then_some(net)
}

/// Adds a row: a new circuit, or a device of a circuit seen before (whose
/// first row it must agree with).
fn add_row(
    circuit: Circuit,
    device: Device,
    plan: &mut Plan,
    circuits: &mut HashMap<String, usize>,
    errors: &mut Vec<ConfigError>,
) {
    match circuits.get(&circuit.id) {
        None => {
            circuits.insert(circuit.id.clone(), plan.circuits.len());
            plan.circuits.push(circuit);
        }
        Some(&i) => {
            let first = &plan.circuits[i];
            let show = |r: &Rates| {
                let b = |b: Bandwidth| {
                    format!(
                        "{}..{}",
                        crate::rate::show(b.min.unwrap_or(0)),
                        crate::rate::show(b.max)
                    )
                };
                format!(
                    "download {}, upload {} (min..max)",
                    b(r.download),
                    b(r.upload)
                )
            };
            let fields: [(&'static str, String, String); 3] = [
                ("Circuit Name", circuit.name.clone(), first.name.clone()),
                (
                    "Parent Node",
                    circuit.parent.clone().unwrap_or_default(),
                    first.parent.clone().unwrap_or_default(),
                ),
                ("rates", show(&circuit.rates), show(&first.rates)),
            ];
            for (field, here, first_value) in fields {
                if here != first_value {
                    errors.push(ConfigError::new(
                        circuit.at.clone(),
                        Problem::CircuitConflict {
                            id: circuit.id.clone(),
                            field,
                            here,
                            first_value,
                            first: first.at.clone(),
                        },
                    ));
                }
            }
        }
    }
    plan.devices.push(device);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HEADER: &str = "Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment\n";

    /// A row, valid or with one of the problems a reader reports.
    fn row(k: u32, kind: u8) -> String {
        let (c, d) = (k / 2, k);
        let ip = format!(
            "\"100.64.{}.{}, 100.65.{}.{}/32\"",
            k / 250,
            k % 250,
            k / 250,
            k % 250
        );
        match kind {
            0 => format!(
                "c{c},Home {c},d{d},dev,,02:00:00:00:{:02x}:{:02x},{ip},,1,1,10,5,x\n",
                k / 256,
                k % 256
            ),
            1 => format!("c{c},Home {c},d{d},dev,,,{ip},,1,1,10qbit,5,\n"),
            2 => format!("c{c},Home {c},d{d},dev,,zz:00,{ip},,1,1,10,5,\n"),
            3 => format!("c{c},Other {c},d{d},dev,,,{ip},,2,1,10,5,\n"),
            4 => "# a comment with a \"quote\n\n".to_string(),
            5 => format!(",Home {c},d{d},dev,,,,,1,1,10,5,\n"),
            6 => format!("c{c},\"Home, \"\"quoted\"\" {c}\",d{d},dev,,,,,1,1,10,5,\"a\nb\"\n"),
            _ => format!(
                "c{c},Home {c},d{d},dev,,,\"10.0.0.{}/33\",,1,1,10,5,\n",
                k % 250
            ),
        }
    }

    /// Read by one thread (`None`) or in a pipeline of batches of `batch`.
    fn read_split(text: &str, batch: Option<usize>) -> (Plan, Vec<String>) {
        let file: Arc<str> = Arc::from("ShapedDevices.csv");
        let (mut plan, mut errors) = (Plan::default(), Vec::new());
        let from = if batch.is_some() { 0 } else { usize::MAX };
        read_with(
            &file,
            text,
            &mut plan,
            &mut errors,
            from,
            batch.unwrap_or(1),
        );
        (plan, errors.iter().map(ToString::to_string).collect())
    }

    proptest! {
        #[test]
        fn a_pipeline_reads_as_one_thread(kinds in proptest::collection::vec(0u8..8, 0..120)) {
            let text: String = std::iter::once(HEADER.to_string())
                .chain(kinds.iter().enumerate().map(|(k, &kind)| row(k as u32, kind)))
                .collect();
            let one = read_split(&text, None);
            for batch in [1, 3, 64] {
                prop_assert_eq!(&one, &read_split(&text, Some(batch)));
            }
            if kinds.iter().any(|&k| matches!(k, 1 | 2 | 5 | 7)) {
                prop_assert!(!one.1.is_empty(), "the problems are read, not skipped");
            }
        }
    }

    #[test]
    fn the_example_reads_alike_in_a_pipeline() {
        let text = include_str!("../../../../examples/shaper/ShapedDevices.csv");
        let one = read_split(text, None);
        assert!(one.1.is_empty(), "{:?}", one.1);
        assert!(one.0.circuits.len() > 2);
        assert_eq!(one, read_split(text, Some(2)));
    }
}

//! Packet captures for [`super::trace::replay`]: arrivals from a classic
//! libpcap file (not pcapng), each packet's flow chosen by a header field
//! through a map given on the command line (`--classify dst-port --map
//! 5001=a,5002=b`).
//!
//! Read: microsecond and nanosecond captures of either byte order, link
//! type Ethernet (1), IPv4 or IPv6 (optionally behind one 802.1Q tag) with
//! TCP or UDP. A packet's time is its timestamp minus the first packet's
//! (ns); its length is its length on the wire (`orig_len`). Packets no
//! map entry matches (ARP, other ports, other protocols) are counted and
//! skipped, never offered. The file is streamed; a record's captured
//! bytes are at most [`MAX_RECORD`].

use super::trace::{Arrival, TraceSummary};
use super::trace_csv::{file_error, replay_into, TraceFileError};
use fairway_policy_file::PolicyFile;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// Largest captured record, bytes: the reader keeps one record's bytes;
/// Ethernet jumbo frames with offloads stay well below it.
pub const MAX_RECORD: u32 = 1 << 18;

/// The header field that picks a packet's flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classify {
    /// TCP/UDP destination port.
    DstPort,
    /// TCP/UDP source port.
    SrcPort,
}

/// What a pcap replay did: the replay's summary and the packets skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapSummary {
    /// The replay.
    pub replay: TraceSummary,
    /// Records no map entry matched.
    pub unclassified: u64,
}

/// Replays the capture `pcap` through `policy`: a packet whose `classify`
/// field is `map[i].0` goes to policy flow `map[i].1`.
pub fn replay_pcap(
    policy: &PolicyFile,
    link: u64,
    pcap: &Path,
    classify: Classify,
    map: &[(u16, u32)],
    departures: Option<&Path>,
) -> Result<PcapSummary, TraceFileError> {
    let name = pcap.display().to_string();
    let file = File::open(pcap).map_err(|e| file_error(&name, e))?;
    let mut r = Pcap {
        input: BufReader::new(file),
        big: false,
        nanos: false,
        first: None,
        previous: 0,
        record: 0,
        buf: Vec::new(),
        error: None,
        unclassified: 0,
        classify,
        map,
        max_len: policy.spec.max_packet_len,
    };
    r.header().map_err(|e| TraceFileError {
        path: name.clone(),
        line: 0,
        reason: e,
    })?;
    let result = replay_into(
        policy,
        link,
        &name,
        std::iter::from_fn(|| r.next()),
        departures,
    );
    if let Some(e) = r.error {
        return Err(TraceFileError {
            path: name,
            line: 0,
            reason: format!("record {}: {e}", r.record),
        });
    }
    Ok(PcapSummary {
        replay: result?,
        unclassified: r.unclassified,
    })
}

struct Pcap<'a, R> {
    input: BufReader<R>,
    big: bool,
    nanos: bool,
    first: Option<u64>,
    previous: u64,
    /// Records read, 1-based index of the current one.
    record: u64,
    buf: Vec<u8>,
    error: Option<String>,
    unclassified: u64,
    classify: Classify,
    map: &'a [(u16, u32)],
    max_len: u32,
}

impl<R: Read> Pcap<'_, R> {
    fn u32(&self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        if self.big {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }

    /// The 24-byte global header: magic, version, snaplen, link type.
    fn header(&mut self) -> Result<(), String> {
        let mut h = [0u8; 24];
        self.input
            .read_exact(&mut h)
            .map_err(|e| format!("no pcap header: {e}"))?;
        (self.big, self.nanos) = match h[..4] {
            [0xd4, 0xc3, 0xb2, 0xa1] => (false, false),
            [0xa1, 0xb2, 0xc3, 0xd4] => (true, false),
            [0x4d, 0x3c, 0xb2, 0xa1] => (false, true),
            [0xa1, 0xb2, 0x3c, 0x4d] => (true, true),
            _ => return Err("not a classic pcap file (pcapng is not read)".into()),
        };
        let link = self.u32(&h[20..]) & 0x0fff_ffff;
        if link != 1 {
            return Err(format!("link type {link}: only Ethernet (1) is read"));
        }
        Ok(())
    }

    fn next(&mut self) -> Option<Arrival> {
        match self.next_arrival() {
            Ok(a) => a,
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    fn next_arrival(&mut self) -> Result<Option<Arrival>, String> {
        loop {
            let mut h = [0u8; 16];
            match self.input.read_exact(&mut h) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
                Err(e) => return Err(e.to_string()),
            }
            self.record += 1;
            let (sec, frac) = (u64::from(self.u32(&h)), u64::from(self.u32(&h[4..])));
            let (incl, orig) = (self.u32(&h[8..]), self.u32(&h[12..]));
            if incl > MAX_RECORD {
                return Err(format!(
                    "captured length {incl} above {MAX_RECORD} bytes (the reader keeps one record)"
                ));
            }
            self.buf.resize(incl as usize, 0);
            self.input
                .read_exact(&mut self.buf)
                .map_err(|e| format!("truncated: {e}"))?;
            let t = sec * 1_000_000_000 + if self.nanos { frac } else { frac * 1000 };
            let first = *self.first.get_or_insert(t);
            let time_ns = t
                .checked_sub(first)
                .filter(|&t| t >= self.previous)
                .ok_or_else(|| {
                    "timestamp before the previous record's (arrivals must be in time order)"
                        .to_string()
                })?;
            let Some(port) = port(&self.buf, self.classify) else {
                self.unclassified += 1;
                continue;
            };
            let Some(&(_, flow)) = self.map.iter().find(|m| m.0 == port) else {
                self.unclassified += 1;
                continue;
            };
            if orig == 0 || orig > self.max_len {
                return Err(format!(
                    "wire length {orig} outside 1..={} (the policy's max_packet_len: the tree refuses longer packets)",
                    self.max_len
                ));
            }
            self.previous = time_ns;
            return Ok(Some(Arrival {
                time_ns,
                flow,
                len: orig,
            }));
        }
    }
}

/// The TCP/UDP port `c` of an Ethernet frame, if it carries one.
fn port(f: &[u8], c: Classify) -> Option<u16> {
    let mut off = 12;
    let mut ty = u16::from_be_bytes([*f.get(off)?, *f.get(off + 1)?]);
    if ty == 0x8100 {
        off += 4;
        ty = u16::from_be_bytes([*f.get(off)?, *f.get(off + 1)?]);
    }
    let ip = off + 2;
    let (proto, l4) = match ty {
        // A fragment after the first carries no ports.
        0x0800 if u16::from_be_bytes([*f.get(ip + 6)?, *f.get(ip + 7)?]) & 0x1fff != 0 => {
            return None
        }
        0x0800 => (*f.get(ip + 9)?, ip + usize::from(f.get(ip)? & 0x0f) * 4),
        0x86dd => (*f.get(ip + 6)?, ip + 40),
        _ => return None,
    };
    if proto != 6 && proto != 17 {
        return None;
    }
    let at = l4 + if c == Classify::DstPort { 2 } else { 0 };
    Some(u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]))
}

//! Timing model of a rotating disk (the BFQ thesis App. C, GemDisk's
//! timing-only mode C.3.1), parameters from a TOML file or the built-in preset
//! of the thesis' drive, an IBM Deskstar 75GXP DTLA-307030.
//!
//! GemDisk delegated timing to DiskSim; the thesis gives no formulas. This
//! model is the classic one of Ruemmler & Wilkes ("An introduction to disk
//! drive modeling", IEEE Computer 27(3), 1994), with the three-point seek
//! curve of Lee & Katz ("An analytic performance model of disk arrays",
//! SIGMETRICS 1993):
//!
//! * **Service time** = command overhead + seek + rotational latency +
//!   media transfer, or a read-ahead buffer hit.
//! * **Seek** over d ≥ 1 cylinders: `t(d) = a·√(d−1) + b·(d−1) + c`, with
//!   `c` the track-to-track time, and `a`, `b` fitted so that `t(C)` is the
//!   full-stroke time and the mean over uniformly random start and end
//!   cylinders (distance density 2(C−d)/C², E\[√d\] = 8/15·√C, E\[d\] = C/3)
//!   is the data sheet's average seek: with F = full − c, A = avg − c,
//!   `a·√C = 5A − 5F/3` and `b·C = F − a·√C`.
//! * **Rotational latency**: the platter turns at `rpm` from angle 0 at
//!   time 0; sector k of a track of `spt` sectors sits at angle k/spt. After
//!   the seek the head waits for the target angle to come under it.
//!   Deterministic: latency depends on the absolute time, as on a real disk.
//! * **Transfer**: `spt` sectors per revolution in the request's zone, plus a
//!   head switch for every track boundary crossed (zoned recording: outer
//!   zones hold more sectors per track, hence are faster).
//! * **Read-ahead buffer** (optional, `readahead_sectors > 0`): after a read
//!   ending at sector e completes at time t_c the drive keeps reading from e
//!   at the sustained media rate into its buffer, up to `readahead_sectors`.
//!   A read starting inside the buffered range is served without seek or
//!   rotation, at bus speed, but not before the media has reached its last
//!   sector. Writes invalidate the buffer.
//!
//! Units: times in ns, positions in 512-byte sectors, cylinders counted
//! from the outer edge (LBA 0).

use crate::request::{check_range, Direction, DiskConfigError, Nanos, Request};
use serde::{Deserialize, Serialize};

mod file;
pub use file::{ModelFileError, ModelFileErrorKind};

/// The built-in preset's TOML text (IBM-DTLA-307030).
pub const DTLA_307030_TOML: &str = include_str!("../presets/ibm-dtla-307030.toml");

/// A recording zone: `cylinders` cylinders of `sectors_per_track` sectors
/// per track (and `heads` tracks per cylinder).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Zone {
    /// Cylinders in the zone, `1..`.
    pub cylinders: u32,
    /// Sectors per track, `1..=10000`.
    pub sectors_per_track: u32,
}

/// Disk parameters (the TOML file's fields).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskParams {
    /// Model name.
    pub name: String,
    /// Spindle speed, revolutions per minute, `1000..=20000`.
    pub rpm: u32,
    /// Tracks per cylinder (recording surfaces), `1..=64`.
    pub heads: u32,
    /// Seek time over one cylinder, ms.
    pub track_to_track_ms: f64,
    /// Mean seek time over random cylinder pairs, ms.
    pub average_seek_ms: f64,
    /// Seek time over all cylinders, ms.
    pub full_stroke_ms: f64,
    /// Time to switch to the next track while transferring, ms.
    pub head_switch_ms: f64,
    /// Fixed per-command cost, ms.
    pub command_overhead_ms: f64,
    /// Interface transfer rate for buffer hits, MB/s (10^6 bytes).
    pub bus_mb_per_s: f64,
    /// Read-ahead buffer size, sectors (0 = no read-ahead).
    pub readahead_sectors: u32,
    /// Zones from the outer edge inwards.
    pub zones: Vec<Zone>,
}

impl DiskParams {
    /// The built-in IBM-DTLA-307030 preset.
    pub fn dtla_307030() -> Self {
        Self::from_toml(DTLA_307030_TOML).expect("the built-in preset parses")
    }

    /// Parses TOML (fields as in [`DiskParams`]) and checks every value as
    /// [`DiskModel::new`] does; a refusal carries the line and column of
    /// the offending value.
    pub fn from_toml(text: &str) -> Result<Self, ModelFileError> {
        file::parse(text).map(|m| m.params)
    }
}

#[derive(Clone, Copy, Debug)]
struct ZoneGeom {
    first_sector: u64,
    first_cyl: u32,
    cylinders: u32,
    spt: u32,
}

/// A field of [`DiskParams`], to say which one a refusal is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Rpm,
    Heads,
    TrackToTrack,
    AverageSeek,
    FullStroke,
    HeadSwitch,
    CommandOverhead,
    Bus,
    Readahead,
    /// The list of zones as a whole.
    Zones,
    /// `cylinders` of the zone at this index.
    ZoneCylinders(usize),
    /// `sectors_per_track` of the zone at this index.
    ZoneSectorsPerTrack(usize),
}

/// Where a sector is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Cylinder.
    pub cylinder: u32,
    /// Index of the sector within its track.
    pub index: u32,
    /// Sectors per track in its zone.
    pub spt: u32,
}

/// One request's service time and its parts, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ServiceTime {
    /// Command overhead.
    pub overhead: Nanos,
    /// Seek.
    pub seek: Nanos,
    /// Rotational latency.
    pub rotation: Nanos,
    /// Transfer (media, or bus and waiting for the media on a buffer hit).
    pub transfer: Nanos,
    /// Served from the read-ahead buffer.
    pub buffer_hit: bool,
}

impl ServiceTime {
    /// Total service time.
    pub fn total(&self) -> Nanos {
        self.overhead + self.seek + self.rotation + self.transfer
    }
}

#[derive(Clone, Copy, Debug)]
struct ReadAhead {
    /// First sector not yet read when the prefetch (re)started.
    from: u64,
    /// When the media was at `from`.
    at: Nanos,
}

/// A disk: validated parameters plus the head state.
#[derive(Clone, Debug)]
pub struct DiskModel {
    params: DiskParams,
    zones: Vec<ZoneGeom>,
    capacity: u64,
    cylinders: u32,
    rotation: Nanos,
    /// Seek curve a, b (ns), c (ns).
    seek_a: f64,
    seek_b: f64,
    seek_c: f64,
    head_cyl: u32,
    readahead: Option<ReadAhead>,
}

fn ms(x: f64) -> f64 {
    x * 1e6
}

impl DiskModel {
    /// A disk with validated parameters, head at cylinder 0.
    pub fn new(params: DiskParams) -> Result<Self, DiskConfigError> {
        Self::checked(params).map_err(|(_, e)| e)
    }

    /// [`DiskModel::new`], naming the field a refusal is about, so that a
    /// parameter file can point at its line.
    pub(crate) fn checked(params: DiskParams) -> Result<Self, (Field, DiskConfigError)> {
        let at = |field: Field| move |e: DiskConfigError| (field, e);
        check_range("rpm", params.rpm, 1000, 20000, "1000..=20000").map_err(at(Field::Rpm))?;
        check_range("heads", params.heads, 1, 64, "1..=64").map_err(at(Field::Heads))?;
        for (field, name, v) in [
            (
                Field::TrackToTrack,
                "track_to_track_ms",
                params.track_to_track_ms,
            ),
            (
                Field::AverageSeek,
                "average_seek_ms",
                params.average_seek_ms,
            ),
            (Field::FullStroke, "full_stroke_ms", params.full_stroke_ms),
        ] {
            check_range(name, v, 0.001, 1000.0, "0.001..=1000 ms").map_err(at(field))?;
        }
        check_range(
            "head_switch_ms",
            params.head_switch_ms,
            0.0,
            100.0,
            "0..=100 ms",
        )
        .map_err(at(Field::HeadSwitch))?;
        check_range(
            "command_overhead_ms",
            params.command_overhead_ms,
            0.0,
            100.0,
            "0..=100 ms",
        )
        .map_err(at(Field::CommandOverhead))?;
        check_range(
            "bus_mb_per_s",
            params.bus_mb_per_s,
            0.1,
            1e5,
            "0.1..=1e5 MB/s",
        )
        .map_err(at(Field::Bus))?;
        check_range(
            "readahead_sectors",
            params.readahead_sectors,
            0,
            1 << 24,
            "0..=2^24",
        )
        .map_err(at(Field::Readahead))?;
        let (zones, capacity, cyl) = Self::zones(&params)?;
        let (t1, avg, full) = (
            ms(params.track_to_track_ms),
            ms(params.average_seek_ms),
            ms(params.full_stroke_ms),
        );
        if !(t1 < avg && avg < full) {
            return Err((
                Field::AverageSeek,
                DiskConfigError::Inconsistent {
                    rule: "track_to_track_ms < average_seek_ms < full_stroke_ms",
                },
            ));
        }
        let c_total = f64::from(cyl);
        let (f, a_) = (full - t1, avg - t1);
        let x = 5.0 * a_ - 5.0 * f / 3.0;
        let y = f - x;
        let (a, b) = (x / c_total.sqrt(), y / c_total);
        // The curve must rise everywhere: t'(d) = a/(2√d) + b > 0 up to C
        // (and a ≥ 0, or it would fall near d = 1).
        if a < 0.0 || a / (2.0 * c_total.sqrt()) + b <= 0.0 {
            return Err((
                Field::AverageSeek,
                DiskConfigError::Inconsistent {
                    rule: "average_seek_ms must lie between about (track + 2 full)/3 and (8 full + 7 track)/15 for a rising seek curve",
                },
            ));
        }
        Ok(Self {
            rotation: (60e9 / f64::from(params.rpm)).round() as Nanos,
            params,
            zones,
            capacity,
            cylinders: cyl,
            seek_a: a,
            seek_b: b,
            seek_c: t1,
            head_cyl: 0,
            readahead: None,
        })
    }

    /// The zones' geometry, the capacity in sectors and the cylinders in
    /// all, each zone checked.
    fn zones(params: &DiskParams) -> Result<(Vec<ZoneGeom>, u64, u32), (Field, DiskConfigError)> {
        if params.zones.is_empty() {
            return Err((
                Field::Zones,
                DiskConfigError::Inconsistent {
                    rule: "at least one zone",
                },
            ));
        }
        let mut zones = Vec::with_capacity(params.zones.len());
        let (mut sector, mut cyl) = (0u64, 0u32);
        for (i, z) in params.zones.iter().enumerate() {
            check_range("zones.cylinders", z.cylinders, 1, 1 << 24, "1..=2^24")
                .map_err(|e| (Field::ZoneCylinders(i), e))?;
            check_range(
                "zones.sectors_per_track",
                z.sectors_per_track,
                1,
                10000,
                "1..=10000",
            )
            .map_err(|e| (Field::ZoneSectorsPerTrack(i), e))?;
            zones.push(ZoneGeom {
                first_sector: sector,
                first_cyl: cyl,
                cylinders: z.cylinders,
                spt: z.sectors_per_track,
            });
            // A cylinder holds at most 64 × 10^4 < 2^20 sectors and there
            // are fewer than 2^32 cylinders (checked next), so the sum stays
            // below 2^53.
            sector +=
                u64::from(z.cylinders) * u64::from(params.heads) * u64::from(z.sectors_per_track);
            cyl = cyl.checked_add(z.cylinders).ok_or((
                Field::ZoneCylinders(i),
                DiskConfigError::Inconsistent {
                    rule: "total cylinders below 2^32",
                },
            ))?;
        }
        // A seek curve runs from one cylinder to another.
        if cyl < 2 {
            return Err((
                Field::ZoneCylinders(0),
                DiskConfigError::Inconsistent {
                    rule: "at least 2 cylinders in all (the seek curve spans two)",
                },
            ));
        }
        Ok((zones, sector, cyl))
    }

    /// The disk a TOML parameter file describes ([`DiskParams::from_toml`]).
    pub fn from_toml(text: &str) -> Result<Self, ModelFileError> {
        file::parse(text)
    }

    /// The built-in IBM-DTLA-307030 disk.
    pub fn dtla_307030() -> Self {
        Self::new(DiskParams::dtla_307030()).expect("the built-in preset is valid")
    }

    /// The parameters.
    pub fn params(&self) -> &DiskParams {
        &self.params
    }

    /// Capacity in sectors.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Cylinders.
    pub fn cylinders(&self) -> u32 {
        self.cylinders
    }

    /// Time of one revolution, ns.
    pub fn rotation(&self) -> Nanos {
        self.rotation
    }

    /// Seek time over `d` cylinders, ns.
    pub fn seek_time(&self, d: u32) -> Nanos {
        if d == 0 {
            return 0;
        }
        let x = f64::from(d - 1);
        (self.seek_a * x.sqrt() + self.seek_b * x + self.seek_c).round() as Nanos
    }

    fn zone_of(&self, sector: u64) -> &ZoneGeom {
        let i = self
            .zones
            .partition_point(|z| z.first_sector <= sector)
            .saturating_sub(1);
        &self.zones[i]
    }

    /// Location of `sector` (sectors past the end map to the last track).
    pub fn locate(&self, sector: u64) -> Location {
        let z = self.zone_of(sector.min(self.capacity.saturating_sub(1)));
        let off = sector.min(self.capacity.saturating_sub(1)) - z.first_sector;
        let per_cyl = u64::from(z.spt) * u64::from(self.params.heads);
        let cyl = (off / per_cyl).min(u64::from(z.cylinders - 1)) as u32;
        Location {
            cylinder: z.first_cyl + cyl,
            index: (off % u64::from(z.spt)) as u32,
            spt: z.spt,
        }
    }

    /// Sustained media rate at `sector`, sectors per second (one track per
    /// revolution plus a head switch).
    pub fn sustained_rate(&self, sector: u64) -> f64 {
        let z = self.zone_of(sector.min(self.capacity.saturating_sub(1)));
        f64::from(z.spt) * 1e9 / (self.rotation as f64 + ms(self.params.head_switch_ms))
    }

    /// Media time to stream `n` sectors from `sector` at the sustained rate, ns.
    fn stream_time(&self, sector: u64, n: u64) -> Nanos {
        (n as f64 * 1e9 / self.sustained_rate(sector)).round() as Nanos
    }

    /// Media transfer time of `len` sectors from `sector` (zone of the first
    /// sector, one head switch per track boundary crossed), ns.
    pub fn transfer_time(&self, sector: u64, len: u32) -> Nanos {
        let loc = self.locate(sector);
        let spt = u64::from(loc.spt);
        let crossings = (u64::from(loc.index) + u64::from(len) - 1) / spt;
        (u64::from(len) * self.rotation) / spt
            + crossings * ms(self.params.head_switch_ms).round() as Nanos
    }

    /// Rotational latency for sector at index `index` of a track of `spt`
    /// sectors, for a head arriving at absolute time `t`, ns.
    pub fn rotational_latency(&self, t: Nanos, index: u32, spt: u32) -> Nanos {
        let target = u64::from(index) * self.rotation / u64::from(spt);
        let now = t % self.rotation;
        (target + self.rotation - now) % self.rotation
    }

    /// Cylinder the head is on.
    pub fn head_cylinder(&self) -> u32 {
        self.head_cyl
    }

    /// Serves `req` starting at `now`: returns its service time and moves
    /// the head (and the read-ahead buffer) as the request leaves them.
    pub fn serve(&mut self, now: Nanos, req: &Request) -> ServiceTime {
        let overhead = ms(self.params.command_overhead_ms).round() as Nanos;
        let len = u64::from(req.len.max(1));
        if req.dir == Direction::Read {
            if let Some(st) = self.buffer_hit(now, overhead, req.sector, len) {
                return st;
            }
        }
        let loc = self.locate(req.sector);
        let seek = self.seek_time(loc.cylinder.abs_diff(self.head_cyl));
        let rotation = self.rotational_latency(now + overhead + seek, loc.index, loc.spt);
        let transfer = self.transfer_time(req.sector, req.len.max(1));
        let st = ServiceTime {
            overhead,
            seek,
            rotation,
            transfer,
            buffer_hit: false,
        };
        let end = req.sector + len;
        self.head_cyl = self.locate(end - 1).cylinder;
        self.readahead = (req.dir == Direction::Read && self.params.readahead_sectors > 0)
            .then_some(ReadAhead {
                from: end,
                at: now + st.total(),
            });
        st
    }

    fn buffer_hit(
        &mut self,
        now: Nanos,
        overhead: Nanos,
        sector: u64,
        len: u64,
    ) -> Option<ServiceTime> {
        let ra = self.readahead?;
        let cap = u64::from(self.params.readahead_sectors);
        if sector < ra.from {
            return None;
        }
        let elapsed = now.saturating_sub(ra.at);
        let buffered = ((elapsed as f64 * self.sustained_rate(ra.from) / 1e9) as u64).min(cap);
        if sector > ra.from + buffered || sector + len > ra.from + cap {
            return None;
        }
        let end = sector + len;
        // The media reaches `end` at ra.at + stream_time(end - from); the bus
        // moves the data at bus speed; the slower of the two decides.
        let media_done = ra.at + self.stream_time(ra.from, end - ra.from);
        let bus = (len as f64 * 512.0 / (self.params.bus_mb_per_s * 1e6) * 1e9).round() as Nanos;
        let done = (now + overhead + bus).max(media_done);
        self.head_cyl = self.locate(end - 1).cylinder;
        // The prefetch goes on from `end` at the time the media passed it.
        self.readahead = Some(ReadAhead {
            from: end,
            at: media_done,
        });
        Some(ServiceTime {
            overhead,
            seek: 0,
            rotation: 0,
            transfer: done - now - overhead,
            buffer_hit: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::AppId;

    #[test]
    fn preset_matches_the_data_sheet_and_the_thesis() {
        let d = DiskModel::dtla_307030();
        assert!((59_000_000..61_000_000).contains(&d.capacity()));
        assert_eq!(d.seek_time(1), 1_200_000);
        let full = d.seek_time(d.cylinders() - 1) as f64 / 1e6;
        assert!((full - 14.7).abs() < 0.01, "full stroke {full}");
        let outer = d.sustained_rate(0) * 512.0 / 1e6;
        let inner = d.sustained_rate(d.capacity() - 1) * 512.0 / 1e6;
        assert!((outer - 36.0).abs() < 0.1, "outer {outer}");
        assert!((inner / outer - 0.65).abs() < 0.01, "inner {inner}");
        // Mean seek over random cylinder pairs ~ 8.5 ms (exact in the
        // continuous limit; the sum over a grid).
        let n = 400u32;
        let c = d.cylinders();
        let mut sum = 0.0;
        for i in 0..n {
            for j in 0..n {
                let (a, b) = (i * (c / n), j * (c / n));
                sum += d.seek_time(a.abs_diff(b)) as f64;
            }
        }
        let avg = sum / f64::from(n * n) / 1e6;
        assert!((avg - 8.5).abs() < 0.1, "average seek {avg}");
    }

    #[test]
    fn bad_parameters_are_named() {
        let mut p = DiskParams::dtla_307030();
        p.average_seek_ms = 20.0;
        assert!(matches!(
            DiskModel::new(p),
            Err(DiskConfigError::Inconsistent { .. })
        ));
        let mut p = DiskParams::dtla_307030();
        p.rpm = 0;
        assert!(matches!(
            DiskModel::new(p),
            Err(DiskConfigError::OutOfRange { name: "rpm", .. })
        ));
        assert!(DiskParams::from_toml("rpm = 7200\nbogus = 1").is_err());
    }

    #[test]
    fn sequential_reads_stream_from_the_buffer() {
        let mut d = DiskModel::dtla_307030();
        let mut t = 0;
        let mut first = None;
        for k in 0..100u64 {
            let r = Request::read(AppId(0), k * 256, 256);
            let st = d.serve(t, &r);
            first.get_or_insert(st);
            t += st.total() + 20_000; // 20 µs think time
        }
        let rate = 100.0 * 256.0 * 512.0 / (t as f64 / 1e9) / 1e6;
        assert!((34.0..36.1).contains(&rate), "sequential rate {rate} MB/s");
    }
}

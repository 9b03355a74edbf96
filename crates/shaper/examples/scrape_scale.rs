//! A Prometheus scrape of a shaper with 10,000 circuits, timed part by
//! part: the loop's copy of the numbers ([`Engine::raw_stats`]), the
//! names put to them ([`assemble`]), the exposition's encoding
//! ([`metrics::render`]), and whole scrapes over HTTP from the metrics
//! endpoint (request to the last byte read).
//!
//! `cargo run --release -p fairway-shaper --example scrape_scale`
//!
//! Every circuit has sent frames both ways, half of them in the last
//! delay window (so the other half have no delay quantiles to show).
//! Times are of this machine and run, not asserted.

mod common;

use common::{addr, cpu_ns, frame, plan, CIRCUITS};
use fairway_shaper::control::Shaper;
use fairway_shaper::datapath::engine::Engine;
use fairway_shaper::datapath::reload::show_ns;
use fairway_shaper::datapath::reload_request::ReloadAnswer;
use fairway_shaper::datapath::snapshot::{assemble, Snapshot};
use fairway_shaper::datapath::watch::DELAY_WINDOW_NS;
use fairway_shaper::metrics::{self, MetricsServer};
use fairway_shaper::plan::Dir;
use fairway_shaper::validate::check;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The engine behind a lock, snapshots taken as the loop would.
struct Held(Mutex<Engine>, u64);

impl Shaper for Held {
    fn snapshot(&self, _: Duration) -> Option<Arc<Snapshot>> {
        let e = self.0.lock().ok()?;
        let (layout, raw) = (Arc::clone(e.layout()), e.raw_stats(self.1));
        drop(e);
        Some(Arc::new(assemble(&layout, &raw)))
    }
    fn reload(&self, _: Duration) -> Option<ReloadAnswer> {
        None
    }
}

/// Offers circuit `k` two frames in each direction at `now`, sends them.
fn traffic(e: &mut Engine, k: u32, now: u64) {
    for dir in Dir::BOTH {
        for s in 0..2 {
            let mut f = frame(addr(k), s);
            if dir == Dir::Upload {
                // The subscriber is the source.
                let dst: [u8; 4] = f[30..34].try_into().expect("4 bytes");
                f[26..30].copy_from_slice(&dst);
                f[30..34].copy_from_slice(&[8, 8, 8, 8]);
            }
            e.receive(dir, now, |b| {
                b[..f.len()].copy_from_slice(&f);
                Some(f.len())
            });
        }
    }
    while let Some(out) = e.next(now) {
        e.sent(out, true);
    }
}

fn main() {
    let running = check(plan()).unwrap_or_else(|e| panic!("{}", e[0]));
    let mut e = Engine::new(&running, 0).expect("the engine");
    // Every circuit in the first delay window, every other one in the
    // second too; the snapshot is taken in the third.
    for k in 0..CIRCUITS {
        traffic(&mut e, k, 1_000);
    }
    for k in (0..CIRCUITS).step_by(2) {
        traffic(&mut e, k, DELAY_WINDOW_NS + 1_000);
    }
    let now = 2 * DELAY_WINDOW_NS + 1_000;
    // The loop's sweep rolls every class's window in a running shaper.
    for t in 0..200 {
        e.sweep_stats(now + t * 1_000_000);
    }
    let (t, c) = (Instant::now(), cpu_ns());
    let raw = e.raw_stats(now);
    let (raw_ns, raw_cpu) = (t.elapsed().as_nanos() as u64, cpu_ns() - c);
    let layout = Arc::clone(e.layout());
    let t = Instant::now();
    let snap = Arc::new(assemble(&layout, &raw));
    let assemble_ns = t.elapsed().as_nanos() as u64;
    let (t, c) = (Instant::now(), cpu_ns());
    let text = metrics::render(Arc::clone(&snap));
    let (render_ns, render_cpu) = (t.elapsed().as_nanos() as u64, cpu_ns() - c);
    println!(
        "{CIRCUITS} circuits: {} rows, {} lines, {:.1} MB of text",
        snap.classes.len(),
        text.lines().count(),
        text.len() as f64 / 1e6
    );
    println!(
        "loop's copy {} ({} of CPU), assemble {}, encode {} ({} of CPU)",
        show_ns(raw_ns),
        show_ns(raw_cpu),
        show_ns(assemble_ns),
        show_ns(render_ns),
        show_ns(render_cpu)
    );
    let server = MetricsServer::start(
        "127.0.0.1:0".parse().expect("an address"),
        Arc::new(Held(Mutex::new(e), now)),
    )
    .expect("the metrics endpoint");
    for _ in 0..3 {
        let t = Instant::now();
        let mut s = TcpStream::connect(server.addr()).expect("connected");
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("sent");
        let mut body = Vec::new();
        s.read_to_end(&mut body).expect("read");
        println!(
            "scrape over HTTP: {} ({:.1} MB)",
            show_ns(t.elapsed().as_nanos() as u64),
            body.len() as f64 / 1e6
        );
    }
}

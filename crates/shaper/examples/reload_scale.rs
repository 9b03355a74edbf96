//! A reload at 10,000 circuits, timed: the change of the shaper's
//! benchmark (1000 rate changes, 500 circuits added, 500 removed, 100
//! moved to another node) applied to an engine with 1000 busy circuits
//! and frames queued, and the cost of picking the next frame among them.
//!
//! `cargo run --release -p fairway-shaper --example reload_scale`
//!
//! Prints the check, the preparation (off the loop in the shaper), the
//! pause (the swap, during which the loop does not serve) and the time
//! per frame sent; then what the pause does to the nodes' schedulers
//! (how many take a new one, how many places change in the kept ones),
//! the time of one direction's edit list ([`TreeEdit::new`], part of the
//! preparation), and the pause of the change undone a second later,
//! when the busy circuits' buckets have refilled and every one of them
//! is eligible. Times are of this machine and run, not asserted.
//!
//! `… --example reload_scale -- --from-file` starts from the files
//! instead, as a shaper's reload does: the plans written as the shape
//! bench's shaper file and, in a second run, as LibreQoS's
//! ShapedDevices.csv and network.json; each stage from reading the
//! files to the end of the pause timed, then the shaper's own path as
//! its loop runs it: `load_and_prepare` on a thread of its own that
//! wakes the loop when done, the pause and the reload's line, with the
//! hand-offs between the threads timed.
//!
//! `… --example reload_scale -- --repeat N` runs the shaper file's
//! `load_and_prepare` N times, back and forth between the two files
//! (each time against the other's plan, the record cache holding the
//! other file's records, as at a reload), for a profiler: `perf record
//! -g` sees the reload's work and little else. Prints the mean wall
//! and CPU (all threads) per reload.

mod common;

use common::{addr, changed, cpu_ns, files, frame, plan, CIRCUITS};
use fairway_shaper::datapath::engine::Engine;
use fairway_shaper::datapath::pool::FrameRef;
use fairway_shaper::datapath::reload::{load_and_prepare, prepare, show_ns};
use fairway_shaper::datapath::slots::arrange;
use fairway_shaper::datapath::tree::TreeEdit;
use fairway_shaper::datapath::wake::Wake;
use fairway_shaper::datapath::warm_up::warm_up;
use fairway_shaper::libreqos::{network_json, shaped_devices};
use fairway_shaper::load::{read_text, Source};
use fairway_shaper::plan::{Dir, Plan};
use fairway_shaper::validate::{check, Checked};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    // As the shaper does (`datapath/run.rs`).
    fairway_shaper::datapath::memory::keep_freed_memory();
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--repeat") {
        let n = args.get(i + 1).and_then(|n| n.parse().ok());
        repeat(n.expect("--repeat N: a count of reloads"));
        return;
    }
    if std::env::args().any(|a| a == "--from-file") {
        from_file(Format::Toml);
        from_file(Format::Libreqos);
        return;
    }
    let p = plan();
    let running = check(p.clone()).unwrap_or_else(|e| panic!("{}", e[0]));
    let mut e = Engine::new(&running, 0).expect("the engine");
    // A tenth of the circuits busy, 16 frames each: 13 go at once (the
    // max bucket's burst, 10 ms at 10 Mbit/s, and a debt), 3 stay queued.
    let busy: Vec<u32> = (0..CIRCUITS).step_by(10).collect();
    for &k in &busy {
        for s in 0..16 {
            let f = frame(addr(k), s);
            e.receive(Dir::Download, 0, |b| {
                b[..f.len()].copy_from_slice(&f);
                Some(f.len())
            });
        }
    }
    // Each pick is among all busy circuits.
    let (t, c) = (Instant::now(), cpu_ns());
    let mut sent = 0u32;
    while let Some(out) = e.next(0) {
        e.sent(out, true);
        sent += 1;
    }
    let per_frame = t.elapsed().as_nanos() / u128::from(sent.max(1));
    let cpu_per_frame = (cpu_ns() - c) / u64::from(sent.max(1));
    println!(
        "{} busy circuits: {sent} frames picked at {per_frame} ns each ({cpu_per_frame} ns of CPU)",
        busy.len()
    );
    let queued = e.report().total().1.packets;

    let (t0, c0) = (Instant::now(), cpu_ns());
    let next = check(changed(&p)).unwrap_or_else(|e| panic!("{}", e[0]));
    let checked_ns = t0.elapsed().as_nanos() as u64;
    let t1 = Instant::now();
    let prepared = prepare(e.plan(), next, 1).expect("prepared");
    let prepared_ns = t1.elapsed().as_nanos() as u64;
    let (t2, c2) = (Instant::now(), cpu_ns());
    let applied = e.apply(prepared, 1).expect("applied");
    let pause_ns = t2.elapsed().as_nanos() as u64;
    let pause_cpu_ns = cpu_ns() - c2;
    let total_ns = t0.elapsed().as_nanos() as u64;
    let total_cpu_ns = cpu_ns() - c0;
    println!(
        "{CIRCUITS} circuits, {queued} frames queued: {}",
        applied.diff
    );
    println!(
        "check {}, prepare {}, pause {} ({} of CPU); applied in {} ({} of CPU); {} queued frames of removed circuits dropped",
        show_ns(checked_ns),
        show_ns(prepared_ns),
        show_ns(pause_ns),
        show_ns(pause_cpu_ns),
        show_ns(total_ns),
        show_ns(total_cpu_ns),
        applied.dropped.packets
    );
    let t3 = Instant::now();
    drop(applied.retired);
    println!(
        "old state freed in {}",
        show_ns(t3.elapsed().as_nanos() as u64)
    );
    println!(
        "of the preparation, one direction's tree edit (TreeEdit::new): {}",
        show_ns(tree_edit_ns(&running, &p))
    );
    back_with_eligible(&mut e, &p);
}

/// The change undone, a second after the first reload: the busy
/// circuits' buckets have refilled, so each one left with frames is
/// eligible and holds a token in its node's scheduler when the pause
/// begins (after the first reload most were in debt).
fn back_with_eligible(e: &mut Engine, p: &Plan) {
    let now = 1_000_000_000;
    // One pick opens the buckets whose time has come.
    if let Some(out) = e.next(now) {
        e.sent(out, true);
    }
    let queued = e.report().total().1.packets;
    let back = check(p.clone()).unwrap_or_else(|e| panic!("{}", e[0]));
    let prepared = prepare(e.plan(), back, now).expect("prepared");
    let (t, c) = (Instant::now(), cpu_ns());
    let applied = e.apply(prepared, now).expect("applied");
    let (pause_ns, pause_cpu_ns) = (t.elapsed().as_nanos() as u64, cpu_ns() - c);
    println!(
        "the change undone, {queued} frames queued in eligible circuits: pause {} ({} of CPU)",
        show_ns(pause_ns),
        show_ns(pause_cpu_ns)
    );
    drop(applied);
}

/// The time of one direction's [`TreeEdit::new`] for the change from
/// `running` (the plan `p` checked): part of the preparation, off the
/// loop (new schedulers and queues are built there).
fn tree_edit_ns(running: &Checked, p: &Plan) -> u64 {
    let next = check(changed(p)).unwrap_or_else(|e| panic!("{}", e[0]));
    let mut d = fairway_shaper::diff::diff(running, &next);
    let next = arrange(next, &mut d);
    let from = |v: &[Option<usize>]| -> Vec<Option<u32>> {
        v.iter().map(|o| o.map(|i| i as u32)).collect()
    };
    let (nodes, leaves) = (from(&d.node_from), from(&d.circuit_from));
    let t = Instant::now();
    let edit = TreeEdit::<FrameRef>::new(running, &next, &nodes, &leaves, Dir::Download);
    let ns = t.elapsed().as_nanos() as u64;
    let edit = edit.expect("the edit");
    let (ops, shifts) = edit.kept_work();
    println!(
        "parents that take a new scheduler (the others keep theirs): {}; \
         in the kept ones {ops} flows added, removed or reweighted and {shifts} slots \
         that change child",
        edit.regrouped()
    );
    ns
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Toml,
    Libreqos,
}

/// Writes `p` in `format` into `dir`; where to read it from.
fn write(p: &Plan, format: Format, dir: &Path) -> Source {
    match format {
        Format::Toml => {
            let path = dir.join("shaper.toml");
            std::fs::write(&path, files::shaper_toml(p)).expect("write");
            Source::ShaperFile(path)
        }
        Format::Libreqos => {
            let (csv, json) = (dir.join("ShapedDevices.csv"), dir.join("network.json"));
            std::fs::write(&csv, files::shaped_devices_csv(p)).expect("write");
            std::fs::write(&json, files::network_json(p)).expect("write");
            Source::Libreqos {
                shaped_devices: csv,
                network: Some(json),
            }
        }
    }
}

/// A stage's wall clock and this thread's CPU time.
struct Lap {
    wall: Instant,
    cpu: u64,
}

impl Lap {
    fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: cpu_ns(),
        }
    }

    /// `wall (cpu of CPU)` since the last lap, and restarts.
    fn lap(&mut self) -> String {
        let s = format!(
            "{} ({})",
            show_ns(self.wall.elapsed().as_nanos() as u64),
            show_ns(cpu_ns() - self.cpu)
        );
        *self = Self::start();
        s
    }
}

/// A reload from the files, stage by stage, then the shaper's path.
fn from_file(format: Format) {
    let dir = std::env::temp_dir().join(format!("reload_scale.{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let mut p = plan();
    if format == Format::Libreqos {
        // LibreQoS's files give no link.
        p.interfaces = None;
    }
    let src = write(&p, format, &dir);
    let running = Arc::new(fairway_shaper::load(&src).unwrap_or_else(|e| panic!("{}", e[0])));
    let mut e = Engine::new(&running, 0).expect("the engine");
    write(&changed(&p), format, &dir);
    let running = Arc::clone(e.plan());

    let mut t = Lap::start();
    let t0 = Instant::now();
    let paths: Vec<&PathBuf> = match &src {
        Source::ShaperFile(path) => vec![path],
        Source::Libreqos {
            shaped_devices,
            network,
        } => vec![network.as_ref().expect("json"), shaped_devices],
    };
    let names: Vec<Arc<str>> = paths
        .iter()
        .map(|p| Arc::from(p.display().to_string()))
        .collect();
    let texts: Vec<String> = paths.iter().zip(&names).map(|(p, n)| text(p, n)).collect();
    let read_ns = t.lap();
    let mut next = Plan::default();
    let mut errors = Vec::new();
    match format {
        Format::Toml => {
            fairway_shaper::toml::read(&names[0], &texts[0], &mut next, &mut errors);
        }
        Format::Libreqos => {
            network_json::read(&names[0], &texts[0], &mut next, &mut errors);
            shaped_devices::read(&names[1], &texts[1], &mut next, &mut errors);
        }
    }
    assert!(errors.is_empty(), "{}", errors[0]);
    let parse_ns = t.lap();
    let next = check(next).unwrap_or_else(|e| panic!("{}", e[0]));
    let check_ns = t.lap();
    let d = fairway_shaper::diff::diff(&running, &next);
    let diff_ns = t.lap();
    let prepared = prepare(&running, next, 1).expect("prepared");
    let prepare_ns = t.lap();
    let applied = e.apply(prepared, 1).expect("applied");
    let pause_ns = t.lap();
    let total_ns = t0.elapsed().as_nanos() as u64;
    let what = match format {
        Format::Toml => "shaper file",
        Format::Libreqos => "LibreQoS files",
    };
    let bytes: usize = texts.iter().map(String::len).sum();
    println!("from the {what} ({bytes} bytes): {}", d);
    println!(
        "  wall (CPU of this thread): read {read_ns}, parse {parse_ns}, check {check_ns}, diff {diff_ns}, \
         prepare {prepare_ns} (the diff again included; on two threads), pause {pause_ns}; applied in {}",
        show_ns(total_ns)
    );
    drop(applied);

    // The shaper's path, on a fresh engine: back to the old files, then
    // the new ones, through load_and_prepare.
    let src = write(&p, format, &dir);
    let running = Arc::new(fairway_shaper::load(&src).unwrap_or_else(|e| panic!("{}", e[0])));
    let mut e = Engine::new(&running, 0).expect("the engine");
    shaper_path(&src, &mut e, || {
        write(&changed(&p), format, &dir);
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reload as the shaper's loop runs it (`datapath/run.rs`,
/// `datapath/reload_worker.rs`): a thread started beforehand and parked
/// on a channel is handed the reload and runs `load_and_prepare`, then
/// wakes the waiting loop through an eventfd; the pause; the reload's
/// line. Prints the hand-offs (the thread woken, the way back to the
/// loop) beside the work. The thread first warms up on the running
/// files, as the shaper's does; `change` then writes the new ones.
fn shaper_path(src: &Source, e: &mut Engine, change: impl FnOnce()) {
    let wake = Arc::new(Wake::new().expect("an eventfd"));
    let (ask, asked) = std::sync::mpsc::channel::<(Source, Arc<_>, Instant)>();
    let (warmed, warm_done) = std::sync::mpsc::channel::<()>();
    let woken = Arc::clone(&wake);
    let (warm_src, warm_old) = (src.clone(), Arc::clone(e.plan()));
    let worker = std::thread::spawn(move || {
        drop(warm_up(&warm_src, &warm_old, 0));
        warmed.send(()).expect("the example waits");
        let (src, old, t) = asked.recv().expect("asked");
        let started = t.elapsed();
        let prepared = load_and_prepare(&src, &old, 1).expect("prepared");
        let done = t.elapsed();
        woken.wake();
        (prepared, started, done)
    });
    warm_done.recv().expect("the warm-up");
    change();
    // Parked before the signal, as in the shaper.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let (t, cpu, faults0) = (Instant::now(), process_cpu_ns(), faults());
    ask.send((src.clone(), Arc::clone(e.plan()), t))
        .expect("the reload's thread waits");
    wait_readable(wake.raw_fd());
    let noticed = t.elapsed();
    let (prepared, started, done) = worker.join().expect("the reload's thread");
    let t_pause = Instant::now();
    let applied = e.apply(prepared, 1).expect("applied");
    let pause_ns = t_pause.elapsed().as_nanos() as u64;
    let t_line = Instant::now();
    let line = applied.answer(pause_ns, t.elapsed().as_nanos() as u64).text;
    let line_ns = t_line.elapsed().as_nanos() as u64;
    let total_ns = t.elapsed().as_nanos() as u64;
    let ns = |d: std::time::Duration| show_ns(d.as_nanos() as u64);
    println!(
        "  the shaper's path: thread woken in {}, load_and_prepare {}, back to the loop in {}, \
         pause {}, line {} ({} bytes); applied in {} ({} of CPU, all threads, {} page faults)",
        ns(started),
        ns(done - started),
        ns(noticed - done),
        show_ns(pause_ns),
        show_ns(line_ns),
        line.len(),
        show_ns(total_ns),
        show_ns(process_cpu_ns() - cpu),
        faults() - faults0
    );
    drop(applied);
}

/// `n` reloads of the shaper file through `load_and_prepare`, from one
/// file to the other and back; the least and median wall and CPU.
fn repeat(n: u32) {
    let dir = std::env::temp_dir().join(format!("reload_scale.{}", std::process::id()));
    let (a, b) = (dir.join("a"), dir.join("b"));
    let p = plan();
    for (d, plan) in [(&a, p.clone()), (&b, changed(&p))] {
        std::fs::create_dir_all(d).expect("scratch folder");
        write(&plan, Format::Toml, d);
    }
    let src = |d: &Path| Source::ShaperFile(d.join("shaper.toml"));
    let (src_a, src_b) = (src(&a), src(&b));
    let load =
        |s: &Source| Arc::new(fairway_shaper::load(s).unwrap_or_else(|e| panic!("{}", e[0])));
    // b first: the cache then holds a's records for the first reload, to b.
    let plan_b = load(&src_b);
    let plan_a = load(&src_a);
    let (mut walls, mut works, mut freed) = (Vec::new(), Vec::new(), 0u64);
    for i in 0..n {
        let (to, old) = if i % 2 == 0 {
            (&src_b, &plan_a)
        } else {
            (&src_a, &plan_b)
        };
        let (t, c) = (Instant::now(), process_cpu_ns());
        let prepared = load_and_prepare(to, old, 1).expect("prepared");
        let c2 = process_cpu_ns();
        walls.push(t.elapsed().as_nanos() as u64);
        works.push(c2 - c);
        drop(prepared);
        freed += process_cpu_ns() - c2;
    }
    // The least and the median: other work on the machine only adds.
    let spread = |v: &mut Vec<u64>| {
        v.sort_unstable();
        let at = |i: usize| v.get(i).copied().map_or_else(String::new, show_ns);
        format!("least {}, median {}", at(0), at(v.len() / 2))
    };
    println!(
        "{n} reloads of the shaper file, load_and_prepare each: wall {}; CPU of all threads {}; \
         {} of CPU to drop what it prepared",
        spread(&mut walls),
        spread(&mut works),
        show_ns(freed / u64::from(n.max(1)))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Blocks until `fd` is readable, as the loop's `ppoll` does.
fn wait_readable(fd: i32) {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one live pollfd; no timeout.
    while unsafe { libc::poll(&mut p, 1, -1) } < 1 {}
}

fn text(path: &Path, name: &Arc<str>) -> String {
    // The largest limit of the three files.
    read_text(path, name, fairway_shaper::limits::MAX_CSV_BYTES).unwrap_or_else(|e| panic!("{e}"))
}

/// This process's CPU time, ns (all its threads).
/// The process's minor page faults so far (the pages it took fresh from
/// the kernel).
fn faults() -> i64 {
    // SAFETY: all-zero is a valid rusage; getrusage writes it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid target and a live rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    u.ru_minflt
}

fn process_cpu_ns() -> u64 {
    // SAFETY: all-zero is a valid timespec; clock_gettime writes it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

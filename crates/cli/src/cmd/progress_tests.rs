//! The progress displays' rules, and that a visible display keeps
//! moving inside a long step: its frames recorded on a stand-in terminal.

use super::*;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

/// A terminal that records every frame drawn on it (a frame ends
/// with a flush), standing in for stderr in this thread's tests.
#[derive(Clone, Debug, Default)]
pub(super) struct Recorder {
    frames: Arc<Mutex<Vec<String>>>,
    line: Arc<Mutex<String>>,
}

thread_local! {
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

/// Whether this thread's displays draw on a [`Recorder`].
pub(super) fn recording() -> bool {
    RECORDER.with(|r| r.borrow().is_some())
}

/// This thread's recorder, if any.
pub(super) fn recorder() -> Option<Recorder> {
    RECORDER.with(|r| r.borrow().clone())
}

impl Recorder {
    /// Draws this thread's displays on a new recorder.
    fn install() -> Self {
        let r = Recorder::default();
        RECORDER.with(|c| *c.borrow_mut() = Some(r.clone()));
        r
    }

    /// The frames drawn so far.
    fn frames(&self) -> Vec<String> {
        self.frames.lock().map(|f| f.clone()).unwrap_or_default()
    }

    /// Waits (at most `limit`, polling) until `n` different frames
    /// were drawn; how many there were.
    fn wait_for_distinct(&self, n: usize, limit: Duration) -> usize {
        let started = Instant::now();
        loop {
            let mut f = self.frames();
            f.dedup();
            if f.len() >= n || started.elapsed() >= limit {
                return f.len();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn add(&self, s: &str) {
        if let Ok(mut l) = self.line.lock() {
            l.push_str(s);
        }
    }
}

impl indicatif::TermLike for Recorder {
    fn width(&self) -> u16 {
        100
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.add(s);
        self.add("\n");
        Ok(())
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.add(s);
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        let frame = self.line.lock().map(|mut l| std::mem::take(&mut *l));
        if let (Ok(frame), Ok(mut frames)) = (frame, self.frames.lock()) {
            if !frame.is_empty() {
                frames.push(frame);
            }
        }
        Ok(())
    }
}

#[test]
fn drawn_only_on_two_terminals_without_json() {
    assert!(visible(false, true, true, None));
    assert!(!visible(true, true, true, None), "--json");
    assert!(!visible(false, false, true, None), "stdout piped");
    assert!(!visible(false, true, false, None), "stderr piped");
    assert!(!visible(false, true, true, Some("never")));
    assert!(visible(false, false, false, Some("always")));
    assert!(!visible(true, false, false, Some("always")), "--json wins");
}

/// Frames a display that nobody updates draws in `wait` (at least
/// 3 × [`STEADY_TICK`]): more than one only if something ticks it.
const WAIT: Duration = Duration::from_millis(3 * STEADY_TICK.as_millis() as u64);

/// The long steps (`disk validate`, `disk kernel`, `reproduce`'s
/// experiments, through [`bar`]) set a position only between steps:
/// inside one, only the steady tick moves the display. A visible bar
/// left alone must keep drawing new frames (the spinner turns, the
/// clock counts). The wait is generous for a loaded machine; on an
/// idle one it ends after about three ticks.
#[test]
fn a_visible_bar_keeps_ticking_inside_a_long_step() {
    let rec = Recorder::install();
    let b = bar(Some(4), COUNTED, false);
    b.set_position(1);
    let frames = rec.wait_for_distinct(3, Duration::from_secs(20));
    b.finish_and_clear();
    assert!(
        frames >= 3,
        "a bar left alone drew {frames} frame(s): it is frozen"
    );
    // Hidden with --json: no frame at all.
    let rec = Recorder::install();
    let b = bar(Some(4), COUNTED, true);
    b.set_position(1);
    std::thread::sleep(WAIT);
    assert!(rec.frames().is_empty(), "{:?}", rec.frames());
}

/// The same for the counted displays that draw at once (`ticking`)
/// and the spinner of work without a count.
#[test]
fn ticking_displays_and_spinners_keep_moving() {
    let rec = Recorder::install();
    let mut p = Progress::counted(3, "runs", false).ticking();
    p.set(1, "step 1");
    let frames = rec.wait_for_distinct(3, Duration::from_secs(20));
    p.finish();
    assert!(frames >= 3, "ticking() drew {frames} frame(s)");
    let rec = Recorder::install();
    let s = Progress::spinner("simulating", false);
    let frames = rec.wait_for_distinct(3, Duration::from_secs(20));
    s.finish();
    assert!(frames >= 3, "spinner drew {frames} frame(s)");
}

/// The check above can fail: a visible bar without a steady tick,
/// on the same recorder, draws once and stands still.
#[test]
fn a_bar_without_a_steady_tick_is_seen_frozen() {
    let rec = Recorder::install();
    let b = ProgressBar::with_draw_target(Some(4), stderr_target());
    b.set_style(ProgressStyle::with_template(COUNTED).unwrap());
    b.set_position(1);
    std::thread::sleep(WAIT);
    let mut f = rec.frames();
    f.dedup();
    b.finish_and_clear();
    assert_eq!(f.len(), 1, "{f:?}");
}

/// Every display of the CLI is made here, where [`bar`], `ticking`
/// and `spinner` set the steady tick the tests above check: a bar
/// built elsewhere could stand still inside a long step unseen.
#[test]
fn every_display_is_made_in_this_module() {
    fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs")
                && !path.ends_with("cmd/progress.rs")
                && !path.ends_with("cmd/progress_tests.rs")
            {
                let text = std::fs::read_to_string(&path).unwrap();
                for what in ["ProgressBar::", "ProgressDrawTarget", "MultiProgress"] {
                    if text.contains(what) {
                        out.push(format!("{}: {what}", path.display()));
                    }
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")),
        &mut found,
    );
    assert!(
        found.is_empty(),
        "displays made outside progress.rs: {found:?}"
    );
}

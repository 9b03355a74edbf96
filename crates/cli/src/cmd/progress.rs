//! The progress display of every measuring command.
//!
//! One rule for all: a bar (or, where the work has no count, a spinner)
//! is drawn on stderr only when both stdout and stderr are terminals and
//! `--json` is not given. Piped, redirected or `--json` runs print nothing
//! extra: no bar, no carriage returns, no escape codes. A counted bar
//! appears only once the work has taken [`SHOW_AFTER`], so quick runs do
//! not flash one.
//!
//! `FAIRWAY_PROGRESS=never` hides it on a terminal too; `always` draws it
//! even on a pipe (for logs that want it, and for the tests, which show
//! with it that their "no progress artefacts" checks can fail).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A counted bar stays hidden until the work has run this long.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Whether a display may be drawn: `(json, stdout is a tty, stderr is a
/// tty, FAIRWAY_PROGRESS)`.
pub fn visible(json: bool, stdout_tty: bool, stderr_tty: bool, env: Option<&str>) -> bool {
    match env {
        Some("never") => false,
        Some("always") => !json,
        _ => !json && stdout_tty && stderr_tty,
    }
}

fn forced() -> bool {
    std::env::var("FAIRWAY_PROGRESS").as_deref() == Ok("always")
}

fn visible_here(json: bool) -> bool {
    #[cfg(test)]
    if tests::recording() {
        return !json;
    }
    let env = std::env::var("FAIRWAY_PROGRESS").ok();
    visible(
        json,
        std::io::stdout().is_terminal(),
        std::io::stderr().is_terminal(),
        env.as_deref(),
    )
}

fn stderr_target() -> ProgressDrawTarget {
    #[cfg(test)]
    if let Some(term) = tests::recorder() {
        return ProgressDrawTarget::term_like_with_hz(Box::new(term), 20);
    }
    if forced() {
        // indicatif hides itself on a non-terminal; a TermLike target
        // draws regardless.
        ProgressDrawTarget::term_like_with_hz(Box::new(console::Term::stderr()), 20)
    } else {
        ProgressDrawTarget::stderr()
    }
}

/// How often a visible plain [`bar`] redraws itself between updates.
pub const STEADY_TICK: Duration = Duration::from_millis(200);

/// A plain indicatif bar (`total` steps, or a spinner if `None`) with this
/// `template`, drawn at once under the rule above; for commands that drive
/// indicatif directly. Their steps can each take many seconds (a real-time
/// disk replay, a kernel run, a paper's experiment), so a visible bar ticks
/// from a background thread ([`STEADY_TICK`]): the spinner turns and the
/// clock counts while a step runs, instead of the display standing still.
pub fn bar(total: Option<u64>, template: &str, json: bool) -> ProgressBar {
    let visible = visible_here(json);
    let target = if visible {
        stderr_target()
    } else {
        ProgressDrawTarget::hidden()
    };
    let b = ProgressBar::with_draw_target(total, target);
    b.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| match total {
            Some(_) => ProgressStyle::default_bar(),
            None => ProgressStyle::default_spinner(),
        }),
    );
    if visible {
        b.enable_steady_tick(STEADY_TICK);
    }
    b
}

/// The template of a counted bar: spinner, elapsed, bar, `pos/len`, message.
pub const COUNTED: &str = "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}";

/// A progress display; every method is a no-op when it is not visible.
pub struct Progress {
    bar: ProgressBar,
    visible: bool,
    shown: bool,
    started: Instant,
}

impl Progress {
    /// A bar of `total` steps of `unit` (e.g. "runs"), drawn once the
    /// work has taken [`SHOW_AFTER`].
    pub fn counted(total: u64, unit: &str, json: bool) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let template =
            format!("{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {unit} {{msg}}");
        bar.set_style(
            ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Self {
            bar,
            visible: visible_here(json),
            shown: false,
            started: Instant::now(),
        }
    }

    /// A bar of a fraction done (0..=1 as `percent`), drawn once the work
    /// has taken [`SHOW_AFTER`].
    pub fn percent(json: bool) -> Self {
        let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {percent}% {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Self {
            bar,
            visible: visible_here(json),
            shown: false,
            started: Instant::now(),
        }
    }

    /// Sets the fraction done (0..=1) and the message.
    pub fn set_fraction(&mut self, done: f64, msg: &str) {
        self.set((done.clamp(0.0, 1.0) * 1000.0) as u64, msg);
    }

    /// A spinner with elapsed time and a message, for work that has no
    /// count (one long simulation, a timed run); drawn at once and ticked
    /// from a background thread.
    pub fn spinner(message: &str, json: bool) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message.to_string());
        let mut p = Self {
            bar,
            visible: visible_here(json),
            shown: false,
            started: Instant::now(),
        };
        p.show();
        p.bar.enable_steady_tick(Duration::from_millis(200));
        p
    }

    /// Draws at once (not after [`SHOW_AFTER`]) and keeps the spinner and
    /// clock moving from a background thread: for steps that each may take
    /// long, so the display does not sit still between them.
    pub fn ticking(mut self) -> Self {
        self.show();
        self.bar.enable_steady_tick(Duration::from_millis(200));
        self
    }

    fn show(&mut self) {
        if self.visible && !self.shown {
            self.bar.set_draw_target(stderr_target());
            self.shown = true;
        }
    }

    fn maybe_show(&mut self) {
        if !self.shown && self.started.elapsed() >= SHOW_AFTER {
            self.show();
        }
    }

    /// Sets the position and the message.
    pub fn set(&mut self, pos: u64, msg: &str) {
        self.maybe_show();
        self.bar.set_message(msg.to_string());
        self.bar.set_position(pos);
    }

    /// Runs `f` with the display lifted (to print a line between draws).
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Removes the display.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
#[path = "progress_tests.rs"]
mod tests;

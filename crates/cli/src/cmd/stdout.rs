//! Standard output that fails with an error instead of a panic.
//!
//! `println!` panics when standard output is a closed pipe
//! (`fairway policy check FILE | head -0`) or a full disk (`> /dev/full`).
//! Every report line goes through [`outln!`](crate::outln) instead, which
//! returns [`StdoutError`] through `?`, so the command stops at the first
//! failed write and `main` prints one line and exits non-zero.

use std::fmt;
use std::io::{self, Write};

/// Standard output could not be written.
#[derive(Debug)]
pub struct StdoutError(pub io::Error);

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write standard output: {}", self.0)
    }
}

impl std::error::Error for StdoutError {}

/// Writes `args` to standard output.
pub fn write(args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    io::stdout().lock().write_fmt(args).map_err(StdoutError)
}

/// Flushes standard output, so that a failure of the last, buffered line is
/// reported like any other.
pub fn flush() -> Result<(), StdoutError> {
    io::stdout().lock().flush().map_err(StdoutError)
}

/// `println!` that returns early with a [`StdoutError`] (converted by `?`
/// into the caller's error type) instead of panicking.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::cmd::stdout::write(format_args!("\n"))?
    };
    ($($arg:tt)*) => {
        $crate::cmd::stdout::write(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// `print!` that returns early with a [`StdoutError`] instead of panicking.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cmd::stdout::write(format_args!($($arg)*))?
    };
}

/// `eprintln!` that never panics: a note that cannot be written to standard
/// error (`2> /dev/full`) is dropped, since there is nowhere left to say so.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

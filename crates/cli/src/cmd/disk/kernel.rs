//! `fairway disk kernel`: Linux's BFQ and fairway's side by side on a loop
//! device, run by `fairway_lab::disk::kernel_bfq`.

use super::common::{bar, json_line};
use super::error::{DiskCmdError, FlagError};
use crate::cmd::common::Table;
use clap::Args;
use fairway_disk::uring_device::MAX_IN_FLIGHT;
use fairway_lab::disk::kernel_bfq::{compare, Backend, Skip};

/// Arguments of `fairway disk kernel`.
#[derive(Args)]
pub struct KernelArgs {
    /// Seconds per side (kernel, then fairway), 1..=600.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// How fairway's side does the transfers: `pread` (one blocking read at
    /// a time) or `io-uring` (asynchronous, io_uring). Example: --backend io-uring
    #[arg(long, default_value = "pread", value_parser = ["pread", "io-uring"])]
    backend: String,
    /// With --backend io-uring: transfers in the ring at once, 1..=256
    /// (default 1, BFQ's one request in service). Example: --in-flight 4
    #[arg(long)]
    in_flight: Option<u32>,
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// The back-end the flags choose.
fn backend(a: &KernelArgs) -> Result<Backend, FlagError> {
    match (a.backend.as_str(), a.in_flight) {
        ("pread", None) => Ok(Backend::Pread),
        ("pread", Some(_)) => Err(FlagError::Needs {
            flag: "--in-flight",
            needs: "--backend io-uring",
        }),
        (_, n) => {
            let in_flight = n.unwrap_or(1);
            if !(1..=MAX_IN_FLIGHT).contains(&in_flight) {
                return Err(FlagError::OutOfRange {
                    flag: "--in-flight",
                    range: format!("1..={MAX_IN_FLIGHT}"),
                    why: None,
                });
            }
            Ok(Backend::IoUring { in_flight })
        }
    }
}

/// Runs `fairway disk kernel`.
pub fn run(a: KernelArgs) -> Result<(), DiskCmdError> {
    if !(1..=600).contains(&a.seconds) {
        return Err(FlagError::OutOfRange {
            flag: "--seconds",
            range: "1..=600".into(),
            why: None,
        }
        .into());
    }
    let backend = backend(&a)?;
    let pb = bar(1, a.json);
    pb.set_message("kernel BFQ (fio), then fairway BFQ, on a loop device");
    let r = compare(a.seconds, backend);
    pb.finish_and_clear();
    let c = match r {
        Ok(c) => c,
        Err(Skip::Failed(e)) => return Err(DiskCmdError::Kernel(e)),
        // The measurement asked for did not happen: a distinct exit status
        // (3), so that a script does not take the silence for a result.
        Err(skip) => return Err(DiskCmdError::CannotRun(skip.to_string())),
    };
    if a.json {
        return json_line(&c);
    }
    crate::outln!(
        "Two synchronous sequential readers (128 KiB O_DIRECT reads), weights {:?}, {} s each side, same loop device:",
        c.weights, a.seconds
    );
    let mut t = Table::new(&[
        "scheduler",
        "MB/s per reader",
        "shares",
        "ideal",
        "worst share error",
    ]);
    for side in [&c.kernel, &c.fairway] {
        let err = side
            .share
            .iter()
            .zip(&c.ideal)
            .map(|(s, i)| s / i - 1.0)
            .fold(0.0f64, |m, e| if e.abs() > m.abs() { e } else { m });
        let list =
            |v: &[f64], f: fn(f64) -> String| v.iter().map(|x| f(*x)).collect::<Vec<_>>().join(" ");
        t.row(vec![
            side.scheduler.clone(),
            list(&side.mb_s, |x| format!("{x:.1}")),
            list(&side.share, |x| format!("{x:.3}")),
            list(&c.ideal, |x| format!("{x:.3}")),
            format!("{:+.1} %", err * 100.0),
        ]);
    }
    t.print()?;
    Ok(())
}

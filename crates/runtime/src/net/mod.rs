//! Real packets (Linux only): the I/O that puts the runtime's granted
//! packets on a wire. §5.4–§5.5 of the PSPAT paper measure the arbiter with UDP
//! senders through the kernel; this module is that I/O, kept apart so the
//! rest of the runtime stays portable. The testbed the wire lives in (two
//! network namespaces joined by a veth pair, the HTB of the `tc`
//! comparison, the kernel's drop counters, the early drop at the receiver's
//! ingress) is an experiment's, not the runtime's: it is in `fairway-lab`
//! (`fairway_lab::testbed`).
//!
//! * [`datagram`]: the 60-byte test frame (the PSPAT paper §5.2) and its payload:
//!   flow, sequence number and the `CLOCK_MONOTONIC` time of *submission*,
//!   from which the receiver computes the one-way delay (§5.5).
//! * [`udp`]: [`UdpSender`], one connected UDP socket per client, batching
//!   with `sendmmsg`; a [`Backend`](crate::Backend) for `drain()`.
//! * [`receiver`]: one socket per flow; a thread reading the watched flows
//!   with non-blocking I/O while the others are counted after the run;
//!   per-flow counts, delay histograms and the kernel's socket drop counter.
//! * [`af_packet`]: [`PacketSender`], whole Ethernet frames through a raw
//!   `AF_PACKET` socket, `sendmmsg`-batched: the analogue of the PSPAT paper's
//!   netmap path (Fig. 7).
//! * [`tx_ring`]: [`RingSender`], the same frames through a `TPACKET_V2`
//!   transmit ring shared with the kernel (`PACKET_TX_RING`, `mmap`).
//! * [`send_delays`]: [`SendDelays`], submit → send-call delays that every
//!   sender records alike for the Eq. (1) check.
//!
//! Every send loop using these types is bounded by its caller in packets and
//! time; [`interrupted`] lets loops stop early on Ctrl-C or SIGTERM (see
//! [`install_interrupt_handler`]) so the testbed is still removed.

pub mod af_packet;
pub mod datagram;
pub mod idle_spin;
pub mod receiver;
pub mod send_delays;
pub mod tx_ring;
pub mod udp;

pub use af_packet::{FrameAddrs, PacketSender};
pub use datagram::{monotonic_ns, Datagram, FRAME_LEN, HEADER_LEN, PAYLOAD_LEN};
pub use idle_spin::IdleSpinners;
pub use receiver::{FlowCount, Receiver, ReceiverReport, ReceiverSockets};
pub use send_delays::SendDelays;
pub use tx_ring::RingSender;
pub use udp::{SendCounters, UdpSender};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The number of the first SIGINT or SIGTERM received, 0 before.
static SIGNAL: AtomicUsize = AtomicUsize::new(0);
/// Whether the handlers are installed, or why they could not be.
static INSTALLED: OnceLock<Result<(), std::io::ErrorKind>> = OnceLock::new();

/// Makes SIGINT (Ctrl-C) and SIGTERM (`kill`, a service manager stopping
/// the run) set the flag [`interrupted`] reads instead of killing the
/// process, so a measurement loop stops early and the testbed's `Drop`
/// removes the namespaces and links. The handler only stores the signal's
/// number (async-signal-safe); every loop of a run reads it. Installing
/// twice installs once.
pub fn install_interrupt_handler() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let installed = INSTALLED.get_or_init(|| {
        for signal in [SIGINT, SIGTERM] {
            // Both fit a usize: signal numbers are small and positive.
            let value = usize::try_from(signal).map_err(|_| std::io::ErrorKind::InvalidInput)?;
            signal_hook::flag::register_usize(signal, &SIGNAL, value).map_err(|e| e.kind())?;
        }
        Ok(())
    });
    installed.map_err(std::io::Error::from)
}

/// True once SIGINT or SIGTERM arrived (after [`install_interrupt_handler`]).
pub fn interrupted() -> bool {
    SIGNAL.load(Ordering::Relaxed) != 0
}

/// The name of the signal that interrupted the run (`SIGINT`, `SIGTERM`),
/// `None` while none did.
pub fn interrupting_signal() -> Option<&'static str> {
    match i32::try_from(SIGNAL.load(Ordering::Relaxed)) {
        Ok(signal_hook::consts::SIGINT) => Some("SIGINT"),
        Ok(signal_hook::consts::SIGTERM) => Some("SIGTERM"),
        _ => None,
    }
}

/// Runs the calling thread under `SCHED_RR` at `priority` (1..=99): like
/// `SCHED_FIFO` ([`crate::set_realtime_priority`]), ordinary processes
/// cannot preempt it, but threads of equal priority on one CPU share it in
/// time slices (and `yield` hands it to the next), which several
/// flat-out senders on one core need. Needs `CAP_SYS_NICE`.
pub fn set_round_robin_priority(priority: u8) -> std::io::Result<()> {
    if priority == 0 || priority > crate::MAX_RT_PRIORITY {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "real-time priority must be 1..=99",
        ));
    }
    let param = libc::sched_param {
        sched_priority: i32::from(priority),
    };
    // SAFETY: `param` is a valid, initialised sched_param; pid 0 is the
    // calling thread. (nix has no sched_setscheduler.)
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_RR, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

//! AF_XDP sockets: frames reach user space through memory shared with the
//! kernel (the UMEM) and four rings, without a system call per frame.
//!
//! The fill ring gives the kernel empty frames to receive into; the RX
//! ring hands back the received ones; the TX ring takes frames to send;
//! the completion ring returns them once sent. A socket is bound to one
//! receive queue of one interface, and receives only what an XDP program
//! redirects to it ([`crate::xdp::XdpRedirect`]). It runs in copy mode
//! (`XDP_COPY`), which every driver supports, veth included.
//!
//! For a frame-I/O back-end: [`XskSocket::receive`] hands a batch of
//! received frames to a closure as slices, and recycles them to the fill
//! ring when it returns; [`XskSocket::receive_one`] hands one frame at a
//! time and recycles them a batch at a time; [`XskSocket::send`] copies a frame into a free
//! TX frame and queues it, [`XskSocket::flush`] publishes the queue and
//! wakes the kernel. Every frame is counted: received, sent, or dropped
//! with a reason ([`XskCounters`], and the kernel's own
//! [`XskSocket::kernel_counters`]).

mod config;
mod queues;
mod ring;
mod socket;
mod umem;

pub use config::{XskConfig, MAX_FRAMES, RX_HEADROOM};
pub use queues::rx_queues;
pub use socket::{KernelCounters, XskCounters, XskSocket, RX_BATCH};

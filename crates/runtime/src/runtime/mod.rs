//! Putting it together (the PSPAT paper §3, Fig. 2): a builder that creates
//! one [`Client`] per client queue, then starts the arbiter thread; the
//! [`Client`] API (`submit` + `kick_arbiter`, `drain` at most every Δ_C);
//! and the handle that stops the arbiter.
//!
//! One file per part, each using only the ones listed before it (and the
//! crate's lower modules):
//! * `config`: [`RuntimeConfig`], [`ClientConfig`], [`ArbiterMode`] and
//!   the limits they are checked against;
//! * `error`: [`RuntimeError`] and [`SubmitError`];
//! * `client`: [`Client`] and its two halves;
//! * `clocked`: the arbiter with its clock, as the sleep/kick protocol of
//!   [`crate::wakeup`] drives it;
//! * `handle`: the running arbiter thread ([`ArbiterHandle`],
//!   [`DispatchingHandle`]);
//! * `start`: starting the arbiter thread, for a new runtime or a paused
//!   one;
//! * `restart`: [`ArbiterHandle::pause`] and [`PausedRuntime`];
//! * `builder`: [`RuntimeBuilder`].

mod builder;
mod client;
mod clocked;
mod config;
mod error;
mod handle;
mod restart;
mod start;

pub use builder::RuntimeBuilder;
pub use client::{Client, ClientDrainer, ClientStats, ClientSubmitter};
pub use config::{ArbiterMode, ClientConfig, RuntimeConfig, MAX_DURATION_NS, MAX_TOTAL_QUEUE_LEN};
pub use error::{RuntimeError, SubmitError, SubmitErrorKind};
pub use handle::{ArbiterHandle, DispatchingHandle};
pub use restart::{PausedRuntime, RestartError};

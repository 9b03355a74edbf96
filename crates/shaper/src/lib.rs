//! # The shaper
//!
//! `fairway shape` is a bump-in-the-wire shaper: frames classified into
//! circuits (a subscriber's queues), queued in a tree of nodes, sent at
//! the configured rates. This crate is its configuration (the in-memory
//! [`Plan`], its readers and the check behind `fairway shape --check`)
//! and its data path:
//!
//! - [`datapath`]: frames in and out of the two interfaces, classified,
//!   shaped (each circuit's guarantee and ceiling, FQ-CoDel inside) and
//!   accounted for;
//! - [`toml`]: fairway's shaper file (the policy file's tables extended);
//! - [`libreqos`]: LibreQoS's `ShapedDevices.csv` and `network.json`, as
//!   LibreQoS writes them;
//! - `control` and `metrics` (Unix): the control socket (statistics
//!   and reloads of a running shaper) and the Prometheus exposition;
//! - [`validate`]: every rule a plan must meet, each violation one line
//!   `file:line[:col]: message`, all of them collected;
//! - [`diff`]: what changed between two checked plans (a live reload);
//! - [`mod@load`]: files to a checked plan, each file's size checked first
//!   ([`limits`]).
//!
//! ```
//! use fairway_shaper::{load::Source, summary::Summary};
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/shaper");
//! let src = Source::Libreqos {
//!     shaped_devices: format!("{dir}/ShapedDevices.csv").into(),
//!     network: Some(format!("{dir}/network.json").into()),
//! };
//! let checked = fairway_shaper::load::load(&src).unwrap();
//! assert_eq!(checked.plan.circuits.len(), 8);
//! assert!(Summary::of(&checked).lines[0].starts_with("6 nodes, 8 circuits, 12 devices"));
//! ```

#[cfg(unix)]
pub mod control;
pub mod datapath;
pub mod diff;
pub mod error;
pub mod fast_hash;
pub mod libreqos;
pub mod limits;
pub mod load;
pub mod loc;
pub mod mac;
#[cfg(unix)]
pub mod metrics;
mod on_two;
pub mod plan;
pub mod share;
pub mod summary;
pub mod toml;
pub mod validate;

pub use error::{ConfigError, Problem};
/// Rates: the one parser of every fairway file, policy files and the
/// shaper's alike (tc's `100mbit`, `10 Mbit/s`, LibreQoS's Mbps).
pub use fairway_policy_file::rate;
pub use load::{load, Source};
pub use plan::Plan;

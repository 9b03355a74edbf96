//! Test support shared by the integration tests of `fairway-core`.
#![allow(dead_code)] // not every test module uses every item

use fairway_core::Packet;

/// A packet that remembers who it is, so tests can check it comes back intact.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct Pkt {
    pub id: u32,
    pub len: u32,
}

impl Packet for Pkt {
    fn len(&self) -> u32 {
        self.len
    }
}

/// The debug-only invariant checkers (compiled with `debug_assertions`);
/// release builds of the tests skip them.
pub trait Invariants {
    fn invariants(&self) -> Result<(), &'static str>;
}

impl<P: Packet> Invariants for fairway_core::qfq::Qfq<P> {
    fn invariants(&self) -> Result<(), &'static str> {
        #[cfg(debug_assertions)]
        return self.check_invariants();
        #[cfg(not(debug_assertions))]
        Ok(())
    }
}

impl<P: Packet, A: fairway_core::AggregateScheduler> Invariants for fairway_core::SchedPlus<P, A> {
    fn invariants(&self) -> Result<(), &'static str> {
        #[cfg(debug_assertions)]
        return self.check_invariants();
        #[cfg(not(debug_assertions))]
        Ok(())
    }
}

//! The state the application threads and the device thread share: the
//! registries of clients and targets, per-client statistics, the count of
//! outstanding requests (bounded by `max_queued`), the completion queue
//! behind [`super::Engine::poll`] / [`super::Engine::wait`], and the
//! channel to the device thread. One mutex guards it all; commands are
//! sent to the device thread while it is held, so the device sees them in
//! the order the registry changed (a submission accepted before a client's
//! removal reaches the device before the removal).

use super::client::{ClientId, ClientStats};
use super::future::FutureSlot;
use super::request::{Completion, IoRequest};
use super::ring::Doorbell;
use super::target::{Target, TargetId};
use crate::request::DiskConfigError;
use crate::scheduler::AppSpec;
use std::collections::VecDeque;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Where a completion goes.
pub(crate) enum Route {
    /// The completion queue (or the engine's callback).
    Queue,
    /// A future's slot.
    Future(Arc<FutureSlot>),
}

/// An accepted request, owned by the device thread until it completes.
pub(crate) struct Pending {
    pub(crate) id: u64,
    pub(crate) req: IoRequest,
    pub(crate) target: Arc<Target>,
    pub(crate) route: Route,
    pub(crate) submitted: Instant,
    /// When the scheduler first dispatched it (`None`: not yet).
    pub(crate) dispatched: Option<Instant>,
}

/// A change of the scheduler's configuration, run on the device thread.
pub(crate) type Configure = dyn FnOnce(&mut dyn crate::scheduler::DiskScheduler) + Send;

/// A command for the device thread.
pub(crate) enum Cmd {
    /// Not boxed: the channel stores commands in blocks of its own, so a
    /// box would be one more allocation per request.
    Submit(Pending),
    AddClient {
        slot: u32,
        spec: AppSpec,
        reply: Sender<Result<(), DiskConfigError>>,
    },
    RemoveClient {
        slot: u32,
        reply: Sender<()>,
    },
    /// Every open target is on non-rotational storage, or not.
    NonRotational(bool),
    /// Runs on the scheduler (groups), answering through its own channel.
    Configure(Box<Configure>),
    Shutdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotState {
    /// Its registration failed: reusable.
    Free,
    /// Being added to the scheduler.
    Registering,
    Active,
    /// Removed; requests of it may still be in flight. Its statistics stay
    /// readable until the slot is reused, which happens once nothing of it
    /// is outstanding and no never-used slot is left.
    Removed,
}

pub(crate) struct ClientSlot {
    pub(crate) generation: u32,
    pub(crate) state: SlotState,
    pub(crate) stats: ClientStats,
}

pub(crate) struct TargetSlot {
    pub(crate) generation: u32,
    pub(crate) target: Option<Arc<Target>>,
}

pub(crate) struct State {
    pub(crate) clients: Vec<ClientSlot>,
    pub(crate) targets: Vec<TargetSlot>,
    /// Accepted requests not finished (bounded by `max_queued`).
    pub(crate) outstanding: u32,
    /// Accepted requests routed to the queue, not yet delivered to it.
    pub(crate) queue_pending: u64,
    pub(crate) queue: VecDeque<Completion>,
    pub(crate) next_id: u64,
    /// `None` once the engine stops: nothing more is accepted.
    pub(crate) tx: Option<Sender<Cmd>>,
    /// Wakes the device thread when it sleeps on its ring.
    pub(crate) doorbell: Option<Arc<Doorbell>>,
    /// What the scheduler was last told: every open target non-rotational.
    pub(crate) nonrot: bool,
    /// Threads asleep in an inline engine's [`super::Engine::wait`] (on
    /// the ring and on [`Shared::waiters`]).
    pub(crate) waiters: u32,
}

impl State {
    /// The slot of a client id of the current generation.
    pub(crate) fn client(&mut self, id: ClientId) -> Option<&mut ClientSlot> {
        self.clients.get_mut(id.slot as usize).filter(|s| {
            s.generation == id.generation
                && matches!(s.state, SlotState::Active | SlotState::Removed)
        })
    }

    /// Sends the device thread `cmd` (and wakes it); the command back if
    /// the engine has stopped. (The command is as large as a request: a
    /// box would cost an allocation per request, see [`Cmd::Submit`].)
    #[allow(clippy::result_large_err)]
    pub(crate) fn send(&self, cmd: Cmd) -> Result<(), Cmd> {
        let Some(tx) = &self.tx else {
            return Err(cmd);
        };
        tx.send(cmd).map_err(|e| e.0)?;
        if let Some(bell) = &self.doorbell {
            bell.ring();
        }
        Ok(())
    }

    /// Tells the scheduler whether every open target is on non-rotational
    /// storage (none open: rotational, the default), when that changed.
    pub(crate) fn update_nonrot(&mut self) {
        let mut open = self
            .targets
            .iter()
            .filter_map(|t| t.target.as_ref())
            .peekable();
        let nonrot = open.peek().is_some() && open.all(|t| t.nonrot);
        if nonrot != self.nonrot && self.send(Cmd::NonRotational(nonrot)).is_ok() {
            self.nonrot = nonrot;
        }
    }

    /// The open target of this id.
    pub(crate) fn target(&self, id: TargetId) -> Option<&Arc<Target>> {
        self.targets
            .get(id.slot as usize)
            .filter(|s| s.generation == id.generation)
            .and_then(|s| s.target.as_ref())
    }
}

pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    /// Signalled when a completion is queued or the engine stops.
    pub(crate) cv: Condvar,
    /// An inline engine's: rung when a completion reaches the queue while
    /// a thread sleeps in [`super::Engine::wait`] (which polls it beside
    /// the ring, so it cannot wait on `cv`).
    pub(crate) waiters: Option<Doorbell>,
}

impl Shared {
    pub(crate) fn new(
        tx: Sender<Cmd>,
        doorbell: Option<Arc<Doorbell>>,
        waiters: Option<Doorbell>,
    ) -> Self {
        Self {
            state: Mutex::new(State {
                clients: Vec::new(),
                targets: Vec::new(),
                outstanding: 0,
                queue_pending: 0,
                queue: VecDeque::new(),
                next_id: 0,
                tx: Some(tx),
                doorbell,
                nonrot: false,
                waiters: 0,
            }),
            cv: Condvar::new(),
            waiters,
        }
    }

    /// The state; a panic elsewhere while it was held leaves counters that
    /// are still consistent enough to drain, so poisoning is ignored.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

//! [`RuntimeBuilder`]: validates the configuration, creates one [`Client`]
//! per client queue, then starts the arbiter thread (the PSPAT paper §3,
//! Fig. 2).

use super::client::{Client, Kicker};
use super::config::{nanos, ClientConfig, RuntimeConfig, MAX_DURATION_NS, MAX_TOTAL_QUEUE_LEN};
use super::error::RuntimeError;
use super::handle::{ArbiterHandle, DispatchingHandle};
use super::start::Start;
use crate::accounts::ClientLedger;
use crate::affinity::MAX_RT_PRIORITY;
use crate::arbiter::ArbiterParts;
use crate::clock::MonotonicClock;
use crate::dispatch::Dispatch;
use crate::link::EmulatedLink;
use crate::mailbox::{client_queue, ClientQueue, QueueReader, MAX_QUEUE_LEN};
use crate::wakeup::Wakeup;
use fairway_core::{Capacity, FlowConfig, Limits, Packet, Scheduler};
use std::sync::Arc;

/// Builds a runtime: add clients, then start the arbiter.
/// # Examples
///
/// ```
/// use fairway_core::Qfq;
/// use fairway_runtime::{ClientConfig, CountingBackend, RuntimeBuilder, RuntimeConfig};
///
/// let mut b = RuntimeBuilder::new(RuntimeConfig::default()).unwrap();
/// // One client (flow) of weight 4 and one of weight 1.
/// let heavy = ClientConfig { weight: 4, ..ClientConfig::default() };
/// let mut c0 = b.add_client::<u32>(heavy).unwrap();
/// let mut c1 = b.add_client::<u32>(ClientConfig::default()).unwrap();
/// // The scheduler is built for the capacity the clients need.
/// let arbiter = b.spawn_send(|cap, lim| Box::new(Qfq::<u32>::with_limits(cap, lim))).unwrap();
/// c0.submit(1000).unwrap();
/// c1.submit(500).unwrap();
/// let (mut tx0, mut tx1) = (CountingBackend::default(), CountingBackend::default());
/// while tx0.packets + tx1.packets < 2 {
///     c0.drain_now(&mut tx0);
///     c1.drain_now(&mut tx1);
/// }
/// assert_eq!((tx0.bytes, tx1.bytes), (1000, 500));
/// let stats = arbiter.stop().unwrap();
/// assert_eq!(stats.decisions, 2);
/// ```
pub struct RuntimeBuilder {
    cfg: RuntimeConfig,
    link: EmulatedLink,
    wake: Arc<Wakeup>,
    clock: MonotonicClock,
    readers: Vec<QueueReader>,
    flows: Vec<FlowConfig>,
    ledgers: Vec<Arc<ClientLedger>>,
    max_packets: u64,
}

impl RuntimeBuilder {
    /// Validates the configuration.
    pub fn new(cfg: RuntimeConfig) -> Result<Self, RuntimeError> {
        if let Some(p) = cfg.realtime_priority {
            if p == 0 || p > MAX_RT_PRIORITY {
                return Err(RuntimeError::BadPriority(p));
            }
        }
        for (parameter, d) in [
            ("delta_a", cfg.delta_a),
            ("delta_c", cfg.delta_c),
            ("min_awake", cfg.min_awake),
        ] {
            if d.as_nanos() > u128::from(MAX_DURATION_NS) {
                return Err(RuntimeError::DurationTooLong {
                    parameter,
                    nanos: d.as_nanos(),
                });
            }
        }
        let link = EmulatedLink::new(cfg.rate_bps).ok_or(RuntimeError::RateTooLow(cfg.rate_bps))?;
        Ok(Self {
            link,
            wake: Arc::new(Wakeup::new()),
            clock: MonotonicClock::new(),
            readers: Vec::new(),
            flows: Vec::new(),
            ledgers: Vec::new(),
            max_packets: 0,
            cfg,
        })
    }

    /// Adds a client: flow `FlowId(i)` for the i-th call.
    pub fn add_client<P: Packet>(&mut self, c: ClientConfig) -> Result<Client<P>, RuntimeError> {
        if c.queue_len == 0 || c.queue_len >= MAX_QUEUE_LEN {
            return Err(RuntimeError::BadQueueLen(c.queue_len));
        }
        let index = self.readers.len();
        if index >= u32::MAX as usize - 1 {
            return Err(RuntimeError::TooManyClients);
        }
        let (queue, reader) = client_queue(c.queue_len);
        let total = self.max_packets + reader_capacity(&queue);
        if total > MAX_TOTAL_QUEUE_LEN {
            return Err(RuntimeError::TotalQueueLenTooLarge { total });
        }
        self.max_packets = total;
        self.readers.push(reader);
        self.flows.push(FlowConfig::new(c.weight, c.max_len));
        let ledger = Arc::new(ClientLedger::default());
        self.ledgers.push(ledger.clone());
        let kicker = Kicker::new(&self.cfg, &self.wake);
        Ok(Client::new(
            queue,
            kicker,
            &self.clock,
            c.max_len,
            nanos(self.cfg.delta_c),
            index,
            ledger,
        ))
    }

    /// The scheduler capacity the arbiter needs: one flow per client, and
    /// room for every client queue at once (so the scheduler never refuses).
    /// Exact: [`Self::add_client`] refuses a client that would take the
    /// total past [`MAX_TOTAL_QUEUE_LEN`], and the client count stays below
    /// `u32::MAX - 1`.
    pub fn capacity(&self) -> Capacity {
        Capacity::new(self.readers.len() as u32, self.max_packets as u32)
    }

    /// The clock clients and arbiter share.
    pub fn clock(&self) -> &MonotonicClock {
        &self.clock
    }

    /// Starts the arbiter thread; `make_scheduler` runs on that thread, so
    /// the scheduler need not be `Send` (e.g. `SchedSpec::build`). Not
    /// available with `KickMode::ClientScan` in `Sleep` mode.
    pub fn spawn<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, RuntimeError>
    where
        S: Scheduler<u32> + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S> + Send + 'static,
    {
        self.into_start().spawn(make_scheduler).map_err(|(e, _)| e)
    }

    /// Starts the arbiter thread, as [`RuntimeBuilder::spawn`], and makes
    /// it the dispatcher too: it calls `dispatch` after every scan
    /// (the PSPAT paper §3; see [`crate::dispatch`]). `dispatch` usually owns the
    /// clients' [`ClientDrainer`](crate::ClientDrainer)s; [`DispatchingHandle::stop`] hands it
    /// back.
    pub fn spawn_dispatching<S, F, D>(
        self,
        make_scheduler: F,
        dispatch: D,
    ) -> Result<DispatchingHandle<D>, RuntimeError>
    where
        S: Scheduler<u32> + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S> + Send + 'static,
        D: Dispatch + 'static,
    {
        let (tx, back) = std::sync::mpsc::channel();
        let arbiter = self
            .into_start()
            .spawn_with(make_scheduler, dispatch, Some(tx))
            .map_err(|(e, _)| e)?;
        Ok(DispatchingHandle { arbiter, back })
    }

    /// Starts the arbiter thread with a `Send` scheduler built here; every
    /// mode and kick variant is available.
    pub fn spawn_send<S, F>(self, make_scheduler: F) -> Result<ArbiterHandle, RuntimeError>
    where
        S: Scheduler<u32> + Send + ?Sized + 'static,
        F: FnOnce(Capacity, Limits) -> Box<S>,
    {
        self.into_start()
            .spawn_send(make_scheduler)
            .map_err(|(e, _)| e)
    }

    fn into_start(self) -> Start {
        let cap = self.capacity();
        Start {
            cfg: self.cfg,
            wake: self.wake,
            clock: self.clock,
            flows: self.flows,
            cap,
            parts: ArbiterParts::fresh(self.readers, self.link, self.ledgers),
        }
    }
}

fn reader_capacity<P>(q: &ClientQueue<P>) -> u64 {
    q.capacity() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_queue_len_at_the_limit_is_exact_one_past_is_refused() {
        let mut b = RuntimeBuilder::new(RuntimeConfig::default()).unwrap();
        let one = ClientConfig::default();
        let _first = b.add_client::<u32>(one).unwrap();
        let per_client = b.max_packets;
        // Pretend earlier clients already hold all but one client's worth.
        b.max_packets = MAX_TOTAL_QUEUE_LEN - per_client;
        let _second = b.add_client::<u32>(one).unwrap();
        assert_eq!(
            b.capacity().max_packets,
            u32::MAX,
            "at the limit: used as is"
        );
        let r = b.add_client::<u32>(one);
        let want = MAX_TOTAL_QUEUE_LEN + per_client;
        assert!(matches!(r, Err(RuntimeError::TotalQueueLenTooLarge { total }) if total == want));
        // The refused client changed nothing.
        assert_eq!(b.capacity(), Capacity::new(2, u32::MAX));
    }
}

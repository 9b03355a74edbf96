//! Handing finished requests to the application: statistics, the
//! outstanding count, then the completion to the queue, the callback or
//! the request's future.
//!
//! The scheduler's side ([`super::device::Core`]) only collects what
//! finished; its holder delivers after letting the core go, so a callback
//! or a woken waiter that submits again never finds the core locked by its
//! own thread. With inline submission several threads deliver, while the
//! callback is one `FnMut`: completions bound for it join a queue, and
//! whichever thread finds the callback free runs it on the queue until the
//! queue is empty (a thread that finds it taken leaves its completions to
//! the one running it), so the callback runs on one thread at a time, in
//! delivery order, and a callback that submits (and so delivers) from
//! inside itself only queues.

use super::client::ClientStats;
use super::error::IoError;
use super::request::{Completion, RequestId};
use super::shared::{Pending, Route, Shared};
use super::Callback;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The callback and the completions waiting for it.
struct Callbacks {
    queue: VecDeque<Completion>,
    /// `None` while a thread runs it (or when there is none).
    callback: Option<Callback>,
}

/// Delivers finished requests (see the module doc).
pub(crate) struct Deliverer {
    shared: Arc<Shared>,
    /// Whether the engine has a callback (fixed at its start).
    has_callback: bool,
    callbacks: Mutex<Callbacks>,
}

/// A finished request and its outcome.
pub(crate) type Finished = (Pending, Result<(), IoError>);

impl Deliverer {
    pub(crate) fn new(shared: Arc<Shared>, callback: Option<Callback>) -> Self {
        Self {
            shared,
            has_callback: callback.is_some(),
            callbacks: Mutex::new(Callbacks {
                queue: VecDeque::new(),
                callback,
            }),
        }
    }

    /// Delivers everything in `done` (emptied, its memory kept), in order.
    pub(crate) fn deliver_all(&self, done: &mut Vec<Finished>) {
        if done.is_empty() {
            return;
        }
        let mut queued = false;
        for (p, result) in done.drain(..) {
            queued |= self.deliver(p, result);
        }
        if queued {
            if self.has_callback {
                self.run_callbacks();
            } else {
                self.shared.cv.notify_all();
            }
        }
    }

    /// Counts `p` finished and routes its completion; whether it went to
    /// the queue or the callback's queue.
    fn deliver(&self, p: Pending, result: Result<(), IoError>) -> bool {
        let latency = p.submitted.elapsed();
        let Pending { id, req, route, .. } = p;
        let c = Completion {
            id: RequestId(id),
            user_data: req.user_data,
            client: req.client,
            target: req.target,
            offset: req.offset,
            len: req.len,
            dir: req.dir,
            sync: req.sync,
            result,
            buf: req.buf,
            latency,
        };
        let mut st = self.shared.lock();
        st.outstanding -= 1;
        if let Some(slot) = st.clients.get_mut(c.client.slot as usize) {
            if slot.generation == c.client.generation {
                count(&mut slot.stats, &c);
            }
        }
        match route {
            Route::Future(f) => {
                drop(st);
                f.complete(c);
                false
            }
            Route::Queue => {
                st.queue_pending -= 1;
                if self.has_callback {
                    drop(st);
                    self.lock().queue.push_back(c);
                } else {
                    st.queue.push_back(c);
                }
                true
            }
        }
    }

    /// Wakes every thread waiting for the queue (the engine stopped).
    pub(crate) fn shutdown_notify(&self) {
        self.shared.cv.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Callbacks> {
        self.callbacks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs the callback on the queued completions, unless another thread
    /// is running it (that one takes them).
    fn run_callbacks(&self) {
        let mut held: Option<Callback> = None;
        loop {
            let c = {
                let mut s = self.lock();
                // Put back and look at the queue in one critical section: a
                // completion queued meanwhile was left to this thread.
                if let Some(f) = held.take() {
                    s.callback = Some(f);
                }
                if s.queue.is_empty() {
                    return;
                }
                let Some(f) = s.callback.take() else { return };
                held = Some(f);
                s.queue.pop_front()
            };
            if let (Some(c), Some(f)) = (c, held.as_mut()) {
                f(c);
            }
        }
    }
}

/// Adds a completion to its client's statistics.
fn count(s: &mut ClientStats, c: &Completion) {
    match &c.result {
        Ok(()) => {
            s.completed += 1;
            s.bytes += u64::from(c.len);
            let ns = c.latency.as_nanos().min(u128::from(u64::MAX)) as u64;
            s.latency_sum_ns = s.latency_sum_ns.saturating_add(ns);
            s.latency_max_ns = s.latency_max_ns.max(ns);
        }
        Err(IoError::Cancelled | IoError::ShutDown) => s.cancelled += 1,
        Err(_) => s.failed += 1,
    }
}

//! Handing finished requests to the application: statistics, the
//! outstanding count, then the completion to the queue, the callback or
//! the request's future.
//!
//! The scheduler's side ([`super::device::Core`]) collects what finished;
//! its holder posts that to the outbox before letting the core go (so the
//! outbox holds completions in the order the core finished them), and
//! delivers after letting it go, so a callback or a woken waiter that
//! submits again never finds the core locked by its own thread. With
//! inline submission several threads post; one at a time delivers: a
//! thread that finds another delivering leaves its completions to it. So
//! completions are delivered — and the callback, one `FnMut`, runs — on
//! one thread at a time, in the order they finished (with one transfer in
//! flight, the order they were dispatched), and a callback that submits
//! (and so posts) from inside itself only adds to the outbox.

use super::client::ClientStats;
use super::error::IoError;
use super::request::{Completion, RequestId};
use super::shared::{Pending, Route, Shared};
use super::Callback;
use std::collections::VecDeque;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard};

/// A finished request and its outcome.
pub(crate) type Finished = (Pending, Result<(), IoError>);

/// What waits in the outbox.
pub(crate) enum Out {
    Finished(Finished),
    /// An answer sent once what was posted before it is delivered (a
    /// removal returns after its cancelled requests are delivered).
    Reply(Sender<()>),
}

struct Outbox {
    queue: VecDeque<Out>,
    /// A thread is delivering.
    busy: bool,
}

/// Delivers finished requests (see the module doc).
pub(crate) struct Deliverer {
    shared: Arc<Shared>,
    outbox: Mutex<Outbox>,
    /// Used only by the thread delivering.
    callback: Mutex<Option<Callback>>,
}

impl Deliverer {
    pub(crate) fn new(shared: Arc<Shared>, callback: Option<Callback>) -> Self {
        Self {
            shared,
            outbox: Mutex::new(Outbox {
                queue: VecDeque::new(),
                busy: false,
            }),
            callback: Mutex::new(callback),
        }
    }

    /// The state the completions are delivered to.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    fn outbox(&self) -> MutexGuard<'_, Outbox> {
        self.outbox.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Posts `done` (emptied, its memory kept), then `replies`; call with
    /// the core held, so posts keep the core's order.
    pub(crate) fn post(&self, done: &mut Vec<Finished>, replies: &mut Vec<Sender<()>>) {
        if done.is_empty() && replies.is_empty() {
            return;
        }
        let mut ob = self.outbox();
        ob.queue.extend(done.drain(..).map(Out::Finished));
        ob.queue.extend(replies.drain(..).map(Out::Reply));
    }

    /// Delivers what was posted, unless another thread is delivering (it
    /// then delivers this too). Call without the core held.
    pub(crate) fn flush(&self) {
        let mut batch = {
            let mut ob = self.outbox();
            if ob.busy || ob.queue.is_empty() {
                return;
            }
            ob.busy = true;
            std::mem::take(&mut ob.queue)
        };
        loop {
            let mut queued = false;
            for out in batch.drain(..) {
                match out {
                    Out::Finished((p, result)) => queued |= self.deliver(p, result),
                    Out::Reply(reply) => {
                        let _ = reply.send(());
                    }
                }
            }
            if queued {
                self.shared.cv.notify_all();
            }
            let mut ob = self.outbox();
            if ob.queue.is_empty() {
                // Keep the batch's memory for the next posts.
                ob.queue = batch;
                ob.busy = false;
                return;
            }
            std::mem::swap(&mut ob.queue, &mut batch);
        }
    }

    /// Wakes every thread waiting for the queue (the engine stopped).
    pub(crate) fn shutdown_notify(&self) {
        self.shared.cv.notify_all();
    }

    /// Counts `p` finished and routes its completion; whether it went to
    /// the queue (waiters to wake).
    fn deliver(&self, p: Pending, result: Result<(), IoError>) -> bool {
        let latency = p.submitted.elapsed();
        let queued = p
            .dispatched
            .map_or(latency, |d| d.saturating_duration_since(p.submitted));
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
            queued,
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
                let mut cb = self.callback.lock().unwrap_or_else(|e| e.into_inner());
                match cb.as_mut() {
                    Some(f) => {
                        drop(st);
                        f(c);
                        false
                    }
                    None => {
                        st.queue.push_back(c);
                        if st.waiters > 0 {
                            if let Some(bell) = &self.shared.waiters {
                                bell.wake();
                            }
                        }
                        true
                    }
                }
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

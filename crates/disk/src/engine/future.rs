//! [`IoFuture`]: a request's completion as a `Future`, for async code. It
//! is built on `std::task::Waker` only: the device thread stores the
//! completion and wakes the task, so it works under any executor and needs
//! no runtime.

use super::request::Completion;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct State {
    done: Option<Completion>,
    waker: Option<Waker>,
    taken: bool,
}

/// Where the device thread leaves one request's completion.
#[derive(Default)]
pub(crate) struct FutureSlot(Mutex<State>);

impl FutureSlot {
    /// Stores the completion and wakes the task waiting for it.
    pub(crate) fn complete(&self, c: Completion) {
        let waker = {
            let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
            s.done = Some(c);
            s.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The completion of one request, returned by
/// [`super::Engine::submit_future`]. Resolves exactly once; polling it
/// again afterwards stays pending. Dropping it does not cancel the request
/// (the completion is then dropped, and counted in the client's
/// statistics as usual).
pub struct IoFuture {
    pub(crate) slot: Arc<FutureSlot>,
}

impl Future for IoFuture {
    type Output = Completion;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Completion> {
        let mut s = self.slot.0.lock().unwrap_or_else(|e| e.into_inner());
        match s.done.take() {
            Some(c) => {
                s.taken = true;
                Poll::Ready(c)
            }
            None => {
                if !s.taken {
                    s.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

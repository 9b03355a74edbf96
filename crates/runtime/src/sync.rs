//! Synchronisation primitives, swapped for `loom`'s model-checked versions
//! under `--cfg loom` so that the same protocol code is verified and shipped.

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{fence, AtomicBool, AtomicU32, AtomicUsize, Ordering},
    Arc, Condvar, Mutex,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{fence, AtomicBool, AtomicU32, AtomicUsize, Ordering},
    Arc, Condvar, Mutex,
};

/// One iteration of a spin-wait. Under loom this yields, so that the model
/// checker can schedule the thread we are waiting for.
#[inline]
pub(crate) fn spin_wait() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}

/// `UnsafeCell` with loom's closure API, so accesses are race-checked under
/// loom.
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) fn new(v: T) -> Self {
        Self(core::cell::UnsafeCell::new(v))
    }

    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }

    pub(crate) fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

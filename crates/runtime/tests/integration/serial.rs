//! One real-thread test at a time, across the files of this binary: the
//! machine has 2 cores and busy-polling arbiters, so that timing
//! assertions measure the runtime, not the contention.

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

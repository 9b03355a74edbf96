//! Two independent parts of one step run at once, on this thread and a
//! second one (the check of a configuration, the comparison of two): on
//! a machine with a spare core the step takes about its longer part.

/// `here()` on this thread and `there()` on a second one (here too if
/// none can start, or again here if it panicked), at once. Both only
/// read what they share; each returns its own results (problems
/// included) for the caller to put in order.
pub(crate) fn on_two<A, B: Send>(here: impl FnOnce() -> A, there: impl Fn() -> B + Sync) -> (A, B) {
    std::thread::scope(|s| {
        let helper = std::thread::Builder::new().spawn_scoped(s, &there);
        let a = here();
        let b = match helper {
            Ok(h) => h.join().unwrap_or_else(|_| there()),
            Err(_) => there(),
        };
        (a, b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_parts_run_and_come_back_in_place() {
        let data: Vec<u64> = (1..=1000).collect();
        let (a, b) = on_two(
            || data.iter().sum::<u64>(),
            || (std::thread::current().id(), data.len()),
        );
        assert_eq!(a, 500_500);
        assert_eq!(b.1, 1000);
        assert_ne!(b.0, std::thread::current().id(), "on a second thread");
    }
}

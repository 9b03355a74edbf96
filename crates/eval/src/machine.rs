//! The machine a measurement ran on, for table headers and chart titles:
//! figures are only comparable on the same CPU model and core count.

/// `MODEL, N cores`, the CPU model from `/proc/cpuinfo` (the architecture
/// name where that is not readable).
pub fn describe() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {cores} cores")
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_the_core_count() {
        assert!(super::describe().ends_with(" cores"));
    }
}

//! fairway-bpf's integration tests: one binary, one module per file.

#[cfg(target_os = "linux")]
mod xsk;

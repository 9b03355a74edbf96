//! What a reproduction runs: reduced experiments or full ones, with or
//! without the real-packet runs.

/// What [`run`](super::run) runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// The reduced versions of every experiment (what CI runs).
    pub quick: bool,
    /// Skip the experiments that need root and network namespaces (the
    /// PSPAT paper's real-packet runs), listing their claims as skipped.
    pub no_net: bool,
}

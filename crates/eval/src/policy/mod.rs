//! Eiffel's programmable policies (seed 002 §3.2, §5.1) end to end: policy
//! files ([`config`]), driving a tree with the flow-set workloads and
//! reporting what each node got ([`run`]), and the §5.1 benchmarks
//! ([`mod@bench`]).

pub mod bench;
pub mod config;
pub mod run;

//! Eiffel's programmable policies (the Eiffel paper §3.2, §5.1) end to
//! end: driving a tree read from a policy file (`fairway_policy_file`)
//! with the flow-set workloads and reporting what each node got ([`run`]),
//! and the §5.1 benchmarks ([`mod@bench`]); replaying a given trace of
//! arrivals ([`trace`]).

pub mod bench;
pub mod bench_check;
pub mod run;
pub mod run_check;
pub mod trace;
pub mod trace_csv;
pub mod trace_pcap;

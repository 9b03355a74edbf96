//! The integration tests of the `fairway` binary, one module per file,
//! built as one test binary (a binary per file would link each on its own).
//! `cargo test -p fairway-cli --test integration newcomer::` runs one
//! file's tests.

mod bad_sizes;
mod cli;
mod closed_output;
mod disk;
mod disk_errors;
mod flow_lists;
mod grammar;
mod netsim;
mod newcomer;
mod one_build;
mod policy_file_errors;
mod policy_files;
mod policy_run_errors;
mod policy_trace;
mod prerequisites;
mod quiet_output;
mod reproduce;
mod results_dir;
mod s_bench;
mod shape_check;
mod shape_datapath;
mod shape_frame_io;
mod shape_netns;
mod shape_real;
mod shape_watch;
mod shape_watch_live;
mod shape_xdp_io;
mod udp_bench_cli;

//! The integration tests of `fairway-shaper`, one module per file, built
//! as one test binary: readers on real files, every validation rule with
//! the line it reports, the shipped examples, a 10,000-circuit file.

mod examples;
mod frame_io_config;
mod libreqos_csv;
mod libreqos_json;
mod mutations;
mod scale;
mod shaper_toml;
mod support;
mod tree_alloc;
mod validation;
mod watching;

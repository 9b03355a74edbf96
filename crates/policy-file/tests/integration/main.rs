//! The integration tests of policy files, one module per file, built as
//! one test binary.

mod errors;
mod policy_files;

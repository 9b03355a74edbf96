//! What a measuring command needs of the machine beyond fairway itself
//! (root, a tool on `PATH`), checked before it starts, so that a command
//! that cannot measure here says what it lacks, all of it in one line, and
//! exits with [`super::error::EXIT_CANNOT_RUN`].

use super::error::CliError;

/// A tool a command runs, and the package that has it.
pub struct Tool {
    /// The executable's name.
    pub name: &'static str,
    /// Where to get it.
    pub package: &'static str,
}

/// `ip` and `tc`, which the namespace testbed runs.
pub const IPROUTE2: [Tool; 2] = [
    Tool {
        name: "ip",
        package: "iproute2",
    },
    Tool {
        name: "tc",
        package: "iproute2",
    },
];

/// Whether an executable file named `name` is in a directory of `PATH`.
pub fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(name))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// `Err(CannotRun)` naming everything missing: root (with `root_why`, if
/// given) and each tool not on `PATH`.
pub fn check(
    command: &'static str,
    root_why: Option<&str>,
    tools: &[Tool],
) -> Result<(), CliError> {
    check_with_ebpf(command, root_why, tools, None)
}

/// As [`check`], and the eBPF programs too when `ebpf_why` says what
/// needs them: a build without the `ebpf` feature lacks them.
pub fn check_with_ebpf(
    command: &'static str,
    root_why: Option<&str>,
    tools: &[Tool],
    ebpf_why: Option<&str>,
) -> Result<(), CliError> {
    let mut lacks: Vec<String> = Vec::new();
    if let Some(why) = root_why {
        if !fairway_lab::testbed::is_root() {
            lacks.push(format!("root ({why})"));
        }
    }
    lacks.extend(
        tools
            .iter()
            .filter(|t| !on_path(t.name))
            .map(|t| format!("`{}` (package {})", t.name, t.package)),
    );
    if let Some(why) = ebpf_why {
        if !fairway_bpf::AVAILABLE {
            lacks.push(format!(
                "eBPF programs, for {why} ({})",
                fairway_bpf::NOT_BUILT
            ));
        }
    }
    if lacks.is_empty() {
        return Ok(());
    }
    Err(CliError::CannotRun {
        command,
        why: format!("needs {}", lacks.join(" and ")),
    })
}

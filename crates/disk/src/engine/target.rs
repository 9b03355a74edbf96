//! Targets: the files or block devices an engine issues requests to. A
//! target is opened with `O_DIRECT` by default, so requests bypass the page
//! cache and the device sees the order the scheduler chose; buffered I/O
//! is allowed (the page cache then absorbs and reorders some of it).
//!
//! Requests on different targets are scheduled together (one engine per
//! physical device is the intended use): each target gets its own range
//! of scheduler sectors, so C-LOOK ordering inside a client's queue sorts
//! by target, then by offset.

use std::fmt;
use std::fs::File;

/// `O_DIRECT` for `open(2)`; its value differs between architectures.
#[cfg(any(target_arch = "aarch64", target_arch = "arm"))]
pub(crate) const O_DIRECT: i32 = 0o200_000;
/// `O_DIRECT` for `open(2)`; its value differs between architectures.
#[cfg(any(target_arch = "powerpc", target_arch = "powerpc64"))]
pub(crate) const O_DIRECT: i32 = 0o400_000;
/// `O_DIRECT` for `open(2)`; its value differs between architectures.
#[cfg(not(any(
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "powerpc",
    target_arch = "powerpc64"
)))]
pub(crate) const O_DIRECT: i32 = 0o40_000;

/// An open target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetId {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

impl fmt::Display for TargetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "target {}.{}", self.slot, self.generation)
    }
}

/// How a target is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetOptions {
    /// Open with `O_DIRECT` (default `true`). Requests' offsets and lengths
    /// must then be multiples of `align`.
    pub direct: bool,
    /// Open for writing too (default `false`: writes are refused).
    pub write: bool,
    /// Logical block size the device requires for `O_DIRECT`, bytes: a
    /// power of two in `512..=4096` (default 4096, which every device
    /// accepts; 512 for devices with 512-byte logical blocks when smaller
    /// requests are wanted). Not checked for buffered targets.
    pub align: u32,
}

impl Default for TargetOptions {
    fn default() -> Self {
        Self {
            direct: true,
            write: false,
            align: 4096,
        }
    }
}

impl TargetOptions {
    /// Buffered (no `O_DIRECT`), read-only.
    pub fn buffered() -> Self {
        Self {
            direct: false,
            ..Self::default()
        }
    }

    /// The same options, opened for writing too.
    pub fn writable(self) -> Self {
        Self {
            write: true,
            ..self
        }
    }

    pub(crate) fn validate(&self) -> Result<(), super::EngineError> {
        if (512..=4096).contains(&self.align) && self.align.is_power_of_two() {
            Ok(())
        } else {
            Err(super::EngineError::OutOfRange {
                name: "align",
                value: u64::from(self.align),
                allowed: "512, 1024, 2048 or 4096 bytes",
            })
        }
    }
}

/// An open target as the device thread sees it; shared (`Arc`) by the
/// registry and every request on it, so the file descriptor stays open
/// until the last transfer on it has completed, even after `close`.
pub(crate) struct Target {
    pub(crate) id: TargetId,
    pub(crate) file: File,
    pub(crate) options: TargetOptions,
    /// Its storage is non-rotational ([`nonrotational`]).
    pub(crate) nonrot: bool,
}

/// Whether the storage under `file` is non-rotational (flash, memory):
/// `queue/rotational` in sysfs of its block device, or of the device
/// holding its file system (a partition's is its disk's). `false` where
/// sysfs does not say (a file system without a block device, such as
/// tmpfs, or no sysfs): the scheduler then keeps its rotating-disk rules.
pub(crate) fn nonrotational(file: &File) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(m) = file.metadata() else {
        return false;
    };
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    let base = format!("/sys/dev/block/{}:{}", libc::major(dev), libc::minor(dev));
    ["queue/rotational", "../queue/rotational"]
        .iter()
        .find_map(|p| std::fs::read_to_string(format!("{base}/{p}")).ok())
        .is_some_and(|s| s.trim() == "0")
}

/// Opens `path` as `options` say.
pub(crate) fn open(path: &std::path::Path, options: &TargetOptions) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(options.write);
    if options.direct {
        o.custom_flags(O_DIRECT);
    }
    o.open(path)
}

//! The storage under test: an image file of real blocks in `/var/tmp`,
//! attached as a loop device with direct I/O to the file, and the
//! device's kernel scheduler. Both are undone on drop, on every exit
//! path (errors and Ctrl-C included).

use super::SBenchError;
use std::io::Write;
use std::process::Command;

/// The image file; removed on drop.
pub struct Image {
    /// Its path.
    pub path: String,
}

impl Image {
    /// Writes `bytes` (a multiple of 1 MiB) of non-zero data: holes or
    /// unwritten extents would be read without any I/O.
    pub fn create(bytes: u64) -> Result<Self, SBenchError> {
        let path = format!("/var/tmp/fairway-s-bench-{}.img", std::process::id());
        let io = |e| SBenchError::Io {
            what: path.clone(),
            source: e,
        };
        let image = Self { path: path.clone() };
        let mut f = std::fs::File::create(&path).map_err(io)?;
        let block: Vec<u8> = (0..1u32 << 20)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 1)
            .collect();
        for _ in 0..bytes >> 20 {
            if super::interrupted() {
                return Err(SBenchError::Interrupted);
            }
            f.write_all(&block).map_err(io)?;
        }
        f.sync_all().map_err(io)?;
        Ok(image)
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The loop device; detached on drop.
pub struct LoopDev {
    /// `/dev/loopN`.
    pub dev: String,
}

fn sh(cmd: &str, args: &[&str]) -> Result<String, SBenchError> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| SBenchError::Io {
            what: cmd.to_string(),
            source: e,
        })?;
    if !out.status.success() {
        return Err(SBenchError::Command(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl LoopDev {
    /// Attaches `image` with direct I/O to the file.
    pub fn attach(image: &Image) -> Result<Self, SBenchError> {
        let dev = sh("losetup", &["-f", "--show", "--direct-io=on", &image.path])?;
        Ok(Self {
            dev: dev.trim().to_string(),
        })
    }

    fn sysfs(&self, what: &str) -> String {
        let name = self.dev.trim_start_matches("/dev/");
        format!("/sys/block/{name}/queue/{what}")
    }

    /// The schedulers the kernel offers for the device.
    pub fn schedulers(&self) -> Vec<String> {
        std::fs::read_to_string(self.sysfs("scheduler"))
            .unwrap_or_default()
            .split_whitespace()
            .map(|s| s.trim_matches(|c| c == '[' || c == ']').to_string())
            .collect()
    }

    /// Switches the device's scheduler to `name` (its defaults).
    pub fn set_scheduler(&self, name: &str) -> Result<(), SBenchError> {
        std::fs::write(self.sysfs("scheduler"), name).map_err(|e| SBenchError::Io {
            what: format!("{} = {name}", self.sysfs("scheduler")),
            source: e,
        })
    }
}

impl LoopDev {
    /// Drops the device's page cache (what S's buffered readers read
    /// before), so that no case starts with another's pages cached.
    pub fn drop_cache(&self) -> Result<(), SBenchError> {
        let f = std::fs::File::open(&self.dev).map_err(|e| SBenchError::Io {
            what: self.dev.clone(),
            source: e,
        })?;
        super::kernel::drop_cache(&f, 0, 0)
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).output();
    }
}

/// Whether the process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether `tool` is on the PATH.
pub fn has(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

//! The kernel's side: every thread opens the loop device `O_DIRECT` and
//! issues `pread`/`pwrite` itself (read-ahead through native AIO, as S's
//! replayer does), so the kernel's scheduler on the loop device (`none`,
//! `mq-deadline`, `kyber`, `bfq`) sees each thread's own I/O. S's
//! sequential readers read through the page cache instead, on a second
//! descriptor without `O_DIRECT`.

use super::aio::{Aio, AIO_DEPTH};
use super::buffers::Buffers;
use super::port::{Op, Port, Ports};
use super::SBenchError;
use fairway_disk::engine::{AlignedBuf, MAX_BUF_LEN};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};

/// Ports on the loop device `dev`.
pub struct KernelPorts {
    /// The device path.
    pub dev: String,
    /// Where the direct-I/O buffers live.
    pub buffers: Buffers,
}

/// One thread's file descriptor, buffer and AIO context.
pub struct KernelPort {
    // Dropped first: destroying the context waits for the reads still
    // using the buffers below.
    aio: Aio,
    file: File,
    cached: Option<File>,
    dev: String,
    plain: Vec<u8>,
    buf: AlignedBuf,
    pending: Vec<AlignedBuf>,
    spare: Vec<AlignedBuf>,
    buffers: Buffers,
}

fn io_err(what: &str, source: std::io::Error) -> SBenchError {
    SBenchError::Io {
        what: what.to_string(),
        source,
    }
}

impl Ports for KernelPorts {
    type P = KernelPort;
    fn port(&self) -> Result<KernelPort, SBenchError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&self.dev)
            .map_err(|e| io_err(&self.dev, e))?;
        let mut spare = Vec::new();
        Ok(KernelPort {
            aio: Aio::new().map_err(|e| io_err("io_setup", e))?,
            file,
            cached: None,
            dev: self.dev.clone(),
            plain: Vec::new(),
            buf: self.buffers.take(&mut spare, MAX_BUF_LEN)?,
            pending: Vec::new(),
            spare,
            buffers: self.buffers,
        })
    }
}

/// Drops the page cache's copy of `len` bytes at `offset` of `file`'s
/// device (`len` 0: to the end).
pub fn drop_cache(file: &File, offset: u64, len: u64) -> Result<(), SBenchError> {
    // SAFETY: posix_fadvise only reads its arguments.
    let r = unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io_err(
            "posix_fadvise(DONTNEED)",
            std::io::Error::from_raw_os_error(r),
        ))
    }
}

impl KernelPort {
    fn cached(&mut self, dev: &str) -> Result<&File, SBenchError> {
        if self.cached.is_none() {
            self.cached = Some(File::open(dev).map_err(|e| io_err(dev, e))?);
        }
        Ok(self.cached.as_ref().expect("just opened"))
    }
}

impl Port for KernelPort {
    fn read_buffered(&mut self, offset: u64, len: u32) -> Result<(), SBenchError> {
        let dev = self.dev.clone();
        let len = len as usize;
        let mut buf = std::mem::take(&mut self.plain);
        buf.resize(len, 0);
        let done = self
            .cached(&dev)?
            .read_at(&mut buf, offset)
            .map_err(|e| io_err("buffered read", e))?;
        self.plain = buf;
        if done != len {
            return Err(io_err(
                "buffered read",
                std::io::Error::other("short transfer"),
            ));
        }
        Ok(())
    }

    fn drop_cache(&mut self, offset: u64, len: u64) -> Result<(), SBenchError> {
        let dev = self.dev.clone();
        drop_cache(self.cached(&dev)?, offset, len)
    }

    fn sync(&mut self, op: Op, offset: u64, len: u32) -> Result<(), SBenchError> {
        let len = len as usize;
        let done = match op {
            Op::Read => self
                .file
                .read_at(&mut self.buf.as_mut_slice()[..len], offset),
            Op::Write => self.file.write_at(&self.buf.as_slice()[..len], offset),
        }
        .map_err(|e| io_err("O_DIRECT transfer", e))?;
        if done != len {
            return Err(io_err(
                "O_DIRECT transfer",
                std::io::Error::other("short transfer"),
            ));
        }
        Ok(())
    }

    fn read_async(&mut self, offset: u64, len: u32) -> Result<(), SBenchError> {
        if self.pending.len() == AIO_DEPTH {
            self.drain()?;
        }
        let mut buf = self.buffers.take(&mut self.spare, MAX_BUF_LEN)?;
        let ptr = buf.as_mut_slice().as_mut_ptr();
        // SAFETY: the buffer moves into `pending` (its heap block does not
        // move) and stays there until `drain` has collected the read, or
        // until the context is destroyed (first, on drop).
        unsafe {
            self.aio
                .read(self.file.as_raw_fd(), ptr, len as usize, offset)
        }
        .map_err(|e| io_err("io_submit", e))?;
        self.pending.push(buf);
        Ok(())
    }

    fn drain(&mut self) -> Result<(), SBenchError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.aio
            .wait(self.pending.len())
            .map_err(|e| io_err("io_getevents", e))?;
        self.spare.append(&mut self.pending);
        Ok(())
    }
}

//! Linux native AIO (`io_setup`, `io_submit`, `io_getevents`), the way
//! S's start-up replayer issues read-ahead under the kernel's schedulers:
//! an `O_DIRECT` read submitted from the replaying thread itself, so the
//! kernel's scheduler sees it as that thread's I/O, and waited for later.

use std::io;
use std::os::fd::RawFd;

/// `struct iocb` of the Linux ABI (little-endian 64-bit layout).
#[repr(C)]
#[derive(Default)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: i32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const IOCB_CMD_PREAD: u16 = 0;

/// Requests an [`Aio`] context holds at once.
pub const AIO_DEPTH: usize = 256;

/// One AIO context; destroyed (waiting for what it still holds) on drop.
pub struct Aio {
    ctx: u64,
}

impl Aio {
    /// A context for up to [`AIO_DEPTH`] requests.
    pub fn new() -> io::Result<Self> {
        let mut ctx: u64 = 0;
        // SAFETY: io_setup writes the context id to `ctx`, a valid u64.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, AIO_DEPTH as libc::c_long, &mut ctx) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { ctx })
    }

    /// Submits a read of `len` bytes at `offset` of `fd` into `buf`.
    ///
    /// # Safety
    /// `buf` must stay valid and untouched for `len` bytes until a
    /// [`Aio::wait`] has collected this read (or the context is dropped).
    pub unsafe fn read(&self, fd: RawFd, buf: *mut u8, len: usize, offset: u64) -> io::Result<()> {
        let mut cb = Iocb {
            data: len as u64,
            opcode: IOCB_CMD_PREAD,
            fildes: fd as u32,
            buf: buf as u64,
            nbytes: len as u64,
            offset: offset as i64,
            ..Iocb::default()
        };
        let mut list = [&mut cb as *mut Iocb];
        // SAFETY: the kernel copies the iocb during the call; the buffer's
        // validity is the caller's promise.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_submit,
                self.ctx,
                1 as libc::c_long,
                list.as_mut_ptr(),
            )
        };
        match r {
            1 => Ok(()),
            r if r < 0 => Err(io::Error::last_os_error()),
            _ => Err(io::Error::other("io_submit accepted no request")),
        }
    }

    /// Waits for `n` submitted reads; an error if one failed or was short.
    pub fn wait(&self, n: usize) -> io::Result<()> {
        let mut events = vec![IoEvent::default(); n];
        let mut got = 0;
        while got < n {
            // SAFETY: `events[got..]` has room for `n - got` events.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    (n - got) as libc::c_long,
                    (n - got) as libc::c_long,
                    events[got..].as_mut_ptr(),
                    std::ptr::null::<libc::timespec>(),
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            got += r as usize;
        }
        for e in &events {
            if e.res < 0 {
                return Err(io::Error::from_raw_os_error(-e.res as i32));
            }
            if e.res as u64 != e.data {
                return Err(io::Error::other("short asynchronous read"));
            }
        }
        Ok(())
    }
}

impl Drop for Aio {
    fn drop(&mut self) {
        // SAFETY: the context is ours; io_destroy waits for its requests.
        unsafe {
            libc::syscall(libc::SYS_io_destroy, self.ctx);
        }
    }
}

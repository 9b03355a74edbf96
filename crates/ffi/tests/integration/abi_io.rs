//! The I/O scheduler's C ABI (`fairway_io_*`), called from Rust as a C
//! program would: reads and writes of a temporary file complete exactly
//! once with their `user_data` and their own buffer back; every refusal
//! returns its status and message and leaves the buffer with the caller;
//! shutting down with requests outstanding loses none of them; and the C
//! example `examples/c/io_two_clients.c` builds and runs.
//!
//! Files live in /var/tmp (tmpfs refuses `O_DIRECT`; where the file system
//! refuses it too, the target is opened buffered and the test says so).
//! Where the kernel refuses io_uring every test says so and returns.

use crate::c_build::{asan_flags, build_c_program, repo_root, NO_COMPILER};
use fairway_ffi::*;
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::ptr::{null, null_mut};

const BLOCK: usize = 4096;

fn pattern(offset: u64) -> u8 {
    (offset / 512 * 7 % 253) as u8
}

/// A file of known content in /var/tmp, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: u64) -> Self {
        let dir = std::path::Path::new("/var/tmp");
        let dir = if dir.is_dir() {
            dir.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let path = dir.join(format!("fairway-ffi-io-{name}-{}.bin", std::process::id()));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for s in 0..bytes / 512 {
            f.write_all(&[pattern(s * 512); 512]).unwrap();
        }
        f.into_inner().unwrap().sync_all().unwrap();
        Self(path)
    }

    fn c_path(&self) -> CString {
        CString::new(self.0.to_str().unwrap()).unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn create(
    spec: &str,
    in_flight: u32,
    clients: u32,
    queued: u32,
) -> Result<*mut FairwayIoEngine, (FairwayStatus, String)> {
    create_ex(spec, in_flight, clients, queued, 0)
}

/// `fairway_io_create_ex` with `flags`.
fn create_ex(
    spec: &str,
    in_flight: u32,
    clients: u32,
    queued: u32,
    flags: u32,
) -> Result<*mut FairwayIoEngine, (FairwayStatus, String)> {
    let spec = CString::new(spec).unwrap();
    let mut e = null_mut();
    let mut err = [0 as c_char; 256];
    let st = unsafe {
        fairway_io_create_ex(
            spec.as_ptr(),
            in_flight,
            clients,
            queued,
            flags,
            &mut e,
            err.as_mut_ptr(),
            err.len(),
        )
    };
    if st == FairwayStatus::FairwayOk {
        Ok(e)
    } else {
        let msg = unsafe { CStr::from_ptr(err.as_ptr()) };
        Err((st, msg.to_str().unwrap().to_string()))
    }
}

/// An engine, or `None` (said on stderr) where io_uring is refused.
fn engine(spec: &str, in_flight: u32, queued: u32) -> Option<*mut FairwayIoEngine> {
    engine_ex(spec, in_flight, queued, 0)
}

/// [`engine`] created with `flags`.
fn engine_ex(spec: &str, in_flight: u32, queued: u32, flags: u32) -> Option<*mut FairwayIoEngine> {
    match create_ex(spec, in_flight, 16, queued, flags) {
        Ok(e) => Some(e),
        Err((FairwayStatus::FairwayErrUnavailable, msg)) => {
            eprintln!("io_uring unavailable ({msg}): test skipped");
            None
        }
        Err((st, msg)) => panic!("{}: {msg}", st.name()),
    }
}

fn last_error(e: *mut FairwayIoEngine) -> String {
    unsafe { CStr::from_ptr(fairway_io_last_error(e)) }
        .to_str()
        .unwrap()
        .to_string()
}

/// Asserts status `st` and that the engine's message contains `text`.
fn refused(e: *mut FairwayIoEngine, st: FairwayStatus, want: FairwayStatus, text: &str) {
    let msg = last_error(e);
    assert_eq!(st, want, "{msg}");
    assert!(msg.contains(text), "message '{msg}' lacks '{text}'");
}

/// Opens `file` with O_DIRECT (plus `flags`), or buffered where refused.
fn open(e: *mut FairwayIoEngine, file: &TempFile, flags: u32) -> (u64, bool) {
    let path = file.c_path();
    let mut t = 0;
    let st = unsafe {
        fairway_io_open(
            e,
            path.as_ptr(),
            FAIRWAY_IO_OPEN_DIRECT | flags,
            4096,
            &mut t,
        )
    };
    if st == FairwayStatus::FairwayErrOs {
        eprintln!("O_DIRECT refused ({}): buffered", last_error(e));
        let st = unsafe { fairway_io_open(e, path.as_ptr(), flags, 4096, &mut t) };
        assert_eq!(st, FairwayStatus::FairwayOk, "{}", last_error(e));
        return (t, false);
    }
    assert_eq!(st, FairwayStatus::FairwayOk, "{}", last_error(e));
    (t, true)
}

fn add_client(e: *mut FairwayIoEngine, weight: u32) -> u64 {
    let mut c = 0;
    let st = unsafe { fairway_io_add_client(e, weight, &mut c) };
    assert_eq!(st, FairwayStatus::FairwayOk, "{}", last_error(e));
    c
}

fn buf(len: usize) -> *mut FairwayIoBuf {
    let mut b = null_mut();
    let st = unsafe { fairway_io_buf_alloc(len, &mut b, null_mut(), 0) };
    assert_eq!(st, FairwayStatus::FairwayOk);
    b
}

fn bytes<'a>(b: *mut FairwayIoBuf) -> &'a mut [u8] {
    let p = unsafe { fairway_io_buf_data(b) };
    assert!(!p.is_null(), "buffer not held by the caller");
    assert_eq!(p as usize % FAIRWAY_IO_BUF_ALIGN, 0);
    unsafe { std::slice::from_raw_parts_mut(p, fairway_io_buf_len(b)) }
}

#[allow(clippy::too_many_arguments)]
fn submit(
    e: *mut FairwayIoEngine,
    target: u64,
    client: u64,
    op: u32,
    offset: u64,
    b: *mut FairwayIoBuf,
    len: usize,
    user_data: u64,
) -> Result<u64, FairwayStatus> {
    let mut id = u64::MAX;
    let st = unsafe {
        fairway_io_submit(
            e, target, client, op, offset, b, len, true, user_data, &mut id,
        )
    };
    if st == FairwayStatus::FairwayOk {
        Ok(id)
    } else {
        assert_eq!(id, u64::MAX, "a refusal wrote the request id");
        Err(st)
    }
}

/// Waits for every outstanding request; the completions, in `cap`-sized
/// batches.
fn collect_all(e: *mut FairwayIoEngine, cap: usize) -> Vec<FairwayIoCompletion> {
    let mut all = Vec::new();
    let mut out = vec![zero_completion(); cap];
    loop {
        let mut n = usize::MAX;
        let st = unsafe { fairway_io_wait(e, out.as_mut_ptr(), cap, 5_000_000_000, &mut n) };
        match st {
            FairwayStatus::FairwayOk => all.extend_from_slice(&out[..n]),
            FairwayStatus::FairwayEmpty => {
                assert_eq!(n, 0);
                return all;
            }
            st => panic!("wait: {} ({})", st.name(), last_error(e)),
        }
    }
}

fn zero_completion() -> FairwayIoCompletion {
    FairwayIoCompletion {
        request_id: 0,
        user_data: 0,
        client: 0,
        target: 0,
        offset: 0,
        result: 0,
        buf: null_mut(),
        len: 0,
        op: 0,
        latency_ns: 0,
        queued_ns: 0,
    }
}

fn destroy(e: *mut FairwayIoEngine) {
    assert_eq!(unsafe { fairway_io_destroy(e) }, FairwayStatus::FairwayOk);
}

fn free(b: *mut FairwayIoBuf) {
    assert_eq!(unsafe { fairway_io_buf_free(b) }, FairwayStatus::FairwayOk);
}

fn stats(e: *mut FairwayIoEngine, c: u64) -> FairwayIoClientStats {
    let mut s = FairwayIoClientStats::default();
    let st = unsafe { fairway_io_client_stats(e, c, &mut s) };
    assert_eq!(st, FairwayStatus::FairwayOk, "{}", last_error(e));
    s
}

#[test]
#[cfg_attr(miri, ignore = "io_uring and a device thread")]
fn reads_and_writes_complete_once_with_their_user_data_and_buffer() {
    reads_and_writes(0);
}

#[test]
#[cfg_attr(miri, ignore = "io_uring and a device thread")]
fn inline_reads_and_writes_complete_once_with_their_user_data_and_buffer() {
    reads_and_writes(FAIRWAY_IO_INLINE);
}

fn reads_and_writes(flags: u32) {
    let file = TempFile::new(if flags == 0 { "rw" } else { "rw-inline" }, 1 << 20);
    let Some(e) = engine_ex("bfq", 4, 256, flags) else {
        return;
    };
    let (t, _) = open(e, &file, FAIRWAY_IO_OPEN_WRITE);
    let clients = [add_client(e, 2), add_client(e, 1)];
    // 64 reads of distinct blocks, alternating clients, in 10-sized polls.
    let mut sent = HashMap::new();
    for i in 0..64u64 {
        let b = buf(BLOCK);
        let client = clients[i as usize % 2];
        let id = submit(
            e,
            t,
            client,
            FAIRWAY_IO_OP_READ,
            i * 8192,
            b,
            BLOCK,
            1000 + i,
        )
        .unwrap();
        assert!(sent.insert(1000 + i, (id, b, client)).is_none());
    }
    let mut n = 0;
    assert_eq!(
        unsafe { fairway_io_outstanding(e, &mut n) },
        FairwayStatus::FairwayOk
    );
    assert_eq!(n, 64);
    let done = collect_all(e, 10);
    assert_eq!(done.len(), 64);
    for c in &done {
        let (id, b, client) = sent.remove(&c.user_data).expect("a completion seen twice");
        assert_eq!(
            (c.request_id, c.buf, c.client, c.target),
            (id, b, client, t)
        );
        assert_eq!(
            (c.result, c.len, c.op),
            (BLOCK as i64, BLOCK as u32, FAIRWAY_IO_OP_READ)
        );
        assert_eq!(c.offset, (c.user_data - 1000) * 8192);
        assert!(c.queued_ns <= c.latency_ns && c.latency_ns > 0);
        assert!(bytes(b)
            .iter()
            .enumerate()
            .all(|(k, &x)| x == pattern(c.offset + k as u64)));
    }
    assert!(sent.is_empty());
    // Write a block through the same buffers, then read it back.
    let w = done[0].buf;
    bytes(w).fill(0xa5);
    submit(e, t, clients[1], FAIRWAY_IO_OP_WRITE, 4096, w, BLOCK, 1).unwrap();
    let c = collect_all(e, 1);
    assert_eq!(
        (c.len(), c[0].result, c[0].op),
        (1, BLOCK as i64, FAIRWAY_IO_OP_WRITE)
    );
    let r = done[1].buf;
    submit(e, t, clients[0], FAIRWAY_IO_OP_READ, 4096, r, BLOCK, 2).unwrap();
    let c = collect_all(e, 4);
    assert_eq!((c.len(), c[0].result, c[0].user_data), (1, BLOCK as i64, 2));
    assert!(bytes(r).iter().all(|&x| x == 0xa5));
    let s = [stats(e, clients[0]), stats(e, clients[1])];
    assert_eq!(
        (s[0].submitted, s[0].completed, s[0].bytes),
        (33, 33, 33 * 4096)
    );
    assert_eq!((s[1].submitted, s[1].completed, s[1].refused), (33, 33, 0));
    for c in &done {
        free(c.buf);
    }
    destroy(e);
}

/// Calls with a bad argument: each returns its status, names the
/// parameter, queues nothing and leaves the buffer with the caller,
/// unchanged.
#[test]
#[cfg_attr(miri, ignore = "io_uring and a device thread")]
fn refusals_name_the_parameter_and_leave_the_buffer_with_the_caller() {
    let file = TempFile::new("refuse", 1 << 20);
    let Some(e) = engine("bfq", 1, 64) else {
        return;
    };
    let (t, direct) = open(e, &file, 0);
    let c = add_client(e, 1);
    let b = buf(BLOCK);
    bytes(b).fill(0x5a);
    let read = FAIRWAY_IO_OP_READ;
    let st = |r: Result<u64, FairwayStatus>| r.unwrap_err();
    use FairwayStatus as S;
    refused(
        e,
        st(submit(e, t, c, read, 0, null_mut(), BLOCK, 0)),
        S::FairwayErrNullPointer,
        "submit: buf is null",
    );
    refused(
        e,
        st(submit(e, t, c, read, 0, b, 0, 0)),
        S::FairwayErrOutOfRange,
        "len 0 out of range 1..=4096 (the buffer's length)",
    );
    refused(
        e,
        st(submit(e, t, c, read, 0, b, BLOCK + 1, 0)),
        S::FairwayErrOutOfRange,
        "len 4097 out of range 1..=4096",
    );
    refused(
        e,
        st(submit(e, t, c, read, 0, b, usize::MAX, 0)),
        S::FairwayErrOutOfRange,
        "out of range 1..=4096",
    );
    refused(
        e,
        st(submit(e, t, c, 2, 0, b, BLOCK, 0)),
        S::FairwayErrOutOfRange,
        "op 2 out of range",
    );
    refused(
        e,
        st(submit(e, t, c + 100, read, 0, b, BLOCK, 0)),
        S::FairwayErrUnknownClient,
        "client",
    );
    refused(
        e,
        st(submit(e, t + 100, c, read, 0, b, BLOCK, 0)),
        S::FairwayErrUnknownTarget,
        "target",
    );
    refused(
        e,
        st(submit(e, t, c, FAIRWAY_IO_OP_WRITE, 0, b, BLOCK, 0)),
        S::FairwayErrReadOnly,
        "FAIRWAY_IO_OPEN_WRITE",
    );
    refused(
        e,
        st(submit(e, t, c, read, 1 << 53, b, BLOCK, 0)),
        S::FairwayErrOutOfRange,
        "beyond the largest offset",
    );
    if direct {
        refused(
            e,
            st(submit(e, t, c, read, 512, b, BLOCK, 0)),
            S::FairwayErrOutOfRange,
            "offset 512 is not a multiple",
        );
    }
    let mut id = 0;
    let r = unsafe { fairway_io_submit(e, t, c, read, 0, b, BLOCK, true, 0, null_mut()) };
    refused(e, r, S::FairwayErrNullPointer, "request_id is null");
    let r = unsafe { fairway_io_submit(null_mut(), t, c, read, 0, b, BLOCK, true, 0, &mut id) };
    assert_eq!(r, S::FairwayErrInvalidHandle);
    // Not a buffer: an engine handle passed as one.
    let r = unsafe { fairway_io_submit(e, t, c, read, 0, e.cast(), BLOCK, true, 0, &mut id) };
    refused(e, r, S::FairwayErrInvalidHandle, "buf is not a buffer");
    // Nothing was queued, the buffer is the caller's, unchanged; the
    // client's refusals by the engine were counted.
    let mut n = 1;
    assert_eq!(unsafe { fairway_io_outstanding(e, &mut n) }, S::FairwayOk);
    assert_eq!(n, 0);
    assert!(bytes(b).iter().all(|&x| x == 0x5a));
    let s = stats(e, c);
    assert_eq!((s.submitted, s.refused), (0, 4 + u64::from(direct)));

    // Open, clients, waits.
    let mut n = 0usize;
    let path = file.c_path();
    let mut t2 = 0;
    let r = unsafe { fairway_io_open(e, path.as_ptr(), 4, 4096, &mut t2) };
    refused(e, r, S::FairwayErrInvalidArgument, "flags 0x4");
    let r = unsafe { fairway_io_open(e, path.as_ptr(), 0, 1000, &mut t2) };
    refused(
        e,
        r,
        S::FairwayErrOutOfRange,
        "align = 1000 is out of range",
    );
    let r = unsafe { fairway_io_open(e, null(), 0, 4096, &mut t2) };
    refused(e, r, S::FairwayErrNullPointer, "path is null");
    let missing = CString::new("/nonexistent/fairway-ffi-io").unwrap();
    let r = unsafe { fairway_io_open(e, missing.as_ptr(), 0, 4096, &mut t2) };
    refused(e, r, S::FairwayErrOs, "/nonexistent/fairway-ffi-io");
    let r = unsafe { fairway_io_open(e, path.as_ptr(), 0, 4096, null_mut()) };
    refused(e, r, S::FairwayErrNullPointer, "open: target is null");
    let mut c2 = 0;
    let r = unsafe { fairway_io_add_client(e, 0, &mut c2) };
    refused(
        e,
        r,
        S::FairwayErrOutOfRange,
        "weight = 0 is out of range (allowed: 1..=65536)",
    );
    let r = unsafe { fairway_io_add_client(e, 65537, &mut c2) };
    refused(e, r, S::FairwayErrOutOfRange, "weight = 65537");
    let mut out = [zero_completion(); 1];
    let r = unsafe { fairway_io_poll(e, out.as_mut_ptr(), 0, &mut n) };
    refused(e, r, S::FairwayErrOutOfRange, "cap 0 out of range");
    let r = unsafe { fairway_io_poll(e, null_mut(), 1, &mut n) };
    refused(e, r, S::FairwayErrNullPointer, "poll: out is null");
    let r = unsafe { fairway_io_wait(e, out.as_mut_ptr(), 1, 0, null_mut()) };
    refused(e, r, S::FairwayErrNullPointer, "wait: n_out is null");
    assert_eq!(
        unsafe { fairway_io_poll(e, out.as_mut_ptr(), 1, &mut n) },
        S::FairwayEmpty
    );
    assert_eq!(
        unsafe { fairway_io_wait(e, out.as_mut_ptr(), 1, 0, &mut n) },
        S::FairwayEmpty
    );

    // A buffer in flight (accepted, completion not collected) is refused
    // by every call that takes it, and comes back with its completion.
    let id = submit(e, t, c, read, 0, b, BLOCK, 7).unwrap();
    assert!(unsafe { fairway_io_buf_data(b) }.is_null());
    assert_eq!(unsafe { fairway_io_buf_len(b) }, BLOCK);
    assert_eq!(
        unsafe { fairway_io_buf_free(b) },
        S::FairwayErrBufferInFlight
    );
    refused(
        e,
        st(submit(e, t, c, read, 0, b, BLOCK, 8)),
        S::FairwayErrBufferInFlight,
        "belongs to the engine",
    );
    let done = collect_all(e, 1);
    assert_eq!((done.len(), done[0].request_id, done[0].buf), (1, id, b));

    // Removed clients and closed targets stay unknown.
    let mut s = FairwayIoClientStats::default();
    assert_eq!(
        unsafe { fairway_io_remove_client(e, c, &mut s) },
        S::FairwayOk
    );
    assert_eq!(s.completed, 1);
    refused(
        e,
        st(submit(e, t, c, read, 0, b, BLOCK, 0)),
        S::FairwayErrUnknownClient,
        "not registered",
    );
    refused(
        e,
        unsafe { fairway_io_remove_client(e, c, null_mut()) },
        S::FairwayErrUnknownClient,
        "remove_client: client",
    );
    refused(
        e,
        unsafe { fairway_io_client_stats(e, c, &mut s) },
        S::FairwayErrUnknownClient,
        "client_stats: client",
    );
    let c = add_client(e, 1);
    assert_eq!(unsafe { fairway_io_close(e, t) }, S::FairwayOk);
    refused(
        e,
        st(submit(e, t, c, read, 0, b, BLOCK, 0)),
        S::FairwayErrUnknownTarget,
        "not open",
    );
    refused(
        e,
        unsafe { fairway_io_close(e, t) },
        S::FairwayErrUnknownTarget,
        "close: target",
    );
    assert!(bytes(b).len() == BLOCK);
    free(b);
    destroy(e);
    // A destroyed handle, a null one, and a freed buffer's checks.
    assert_eq!(
        unsafe { fairway_io_shutdown(e) },
        S::FairwayErrInvalidHandle
    );
    assert_eq!(unsafe { fairway_io_destroy(e) }, S::FairwayErrInvalidHandle);
    assert_eq!(
        unsafe { fairway_io_destroy(null_mut()) },
        S::FairwayErrInvalidHandle
    );
    assert_eq!(
        unsafe { fairway_io_buf_free(null_mut()) },
        S::FairwayErrNullPointer
    );
    assert!(unsafe { fairway_io_buf_data(null_mut()) }.is_null());
    assert_eq!(unsafe { fairway_io_buf_len(null_mut()) }, 0);
}

/// Creation parameters: the extreme values are taken as given, the first
/// value outside is refused naming the parameter and its range.
#[test]
#[cfg_attr(miri, ignore = "io_uring and a device thread")]
fn creation_parameters_are_checked_and_named() {
    use FairwayStatus as S;
    let reject = |r: Result<*mut FairwayIoEngine, (S, String)>, want: S, text: &str| match r {
        Ok(e) => {
            destroy(e);
            panic!("accepted, expected '{text}'");
        }
        Err((st, msg)) => {
            assert_eq!(st, want, "{msg}");
            assert!(msg.contains(text), "message '{msg}' lacks '{text}'");
        }
    };
    reject(
        create("bfq", 0, 1, 1),
        S::FairwayErrOutOfRange,
        "max_in_flight = 0 is out of range (allowed: 1..=256)",
    );
    reject(
        create("bfq", FAIRWAY_IO_MAX_IN_FLIGHT + 1, 1, 1),
        S::FairwayErrOutOfRange,
        "max_in_flight = 257",
    );
    reject(
        create("bfq", 1, 0, 1),
        S::FairwayErrOutOfRange,
        "max_clients = 0 is out of range (allowed: 1..=65536)",
    );
    reject(
        create("bfq", 1, FAIRWAY_IO_MAX_CLIENTS + 1, 1),
        S::FairwayErrOutOfRange,
        "max_clients = 65537",
    );
    reject(
        create("bfq", 1, 1, 0),
        S::FairwayErrOutOfRange,
        "max_queued = 0 is out of range (allowed: 1..=1048576)",
    );
    reject(
        create("bfq", 1, 1, FAIRWAY_IO_MAX_QUEUED + 1),
        S::FairwayErrOutOfRange,
        "max_queued = 1048577",
    );
    reject(
        create_ex("bfq", 1, 1, 1, 0x6),
        S::FairwayErrInvalidArgument,
        "flags: unknown bits 0x6 (allowed: FAIRWAY_IO_INLINE = 0x1)",
    );
    reject(
        create("wfq", 1, 1, 1),
        S::FairwayErrInvalidArgument,
        "spec 'wfq'",
    );
    reject(
        create("bfq:b_max=0", 1, 1, 1),
        S::FairwayErrOutOfRange,
        "spec 'bfq:b_max=0'",
    );
    let mut e = null_mut();
    let mut err = [0 as c_char; 64];
    let r = unsafe { fairway_io_create(null(), 1, 1, 1, &mut e, err.as_mut_ptr(), err.len()) };
    assert_eq!(r, S::FairwayErrNullPointer);
    assert!(unsafe { CStr::from_ptr(err.as_ptr()) }
        .to_str()
        .unwrap()
        .contains("spec is null"));
    let spec = CString::new("bfq").unwrap();
    let r = unsafe { fairway_io_create(spec.as_ptr(), 1, 1, 1, null_mut(), null_mut(), 0) };
    assert_eq!(r, S::FairwayErrNullPointer);
    // Buffers.
    let mut b = null_mut();
    for len in [0, FAIRWAY_IO_MAX_BUF_LEN + 1] {
        let r = unsafe { fairway_io_buf_alloc(len, &mut b, err.as_mut_ptr(), err.len()) };
        assert_eq!(r, S::FairwayErrOutOfRange);
        let msg = unsafe { CStr::from_ptr(err.as_ptr()) }.to_str().unwrap();
        assert!(
            msg.starts_with(&format!("len {len} out of range 1..=131072")),
            "{msg}"
        );
        assert!(b.is_null());
    }
    free(buf(1));
    free(buf(FAIRWAY_IO_MAX_BUF_LEN));
    // The extremes are taken as given.
    for (f, c, q) in [
        (FAIRWAY_IO_MAX_IN_FLIGHT, 1, 1),
        (1, FAIRWAY_IO_MAX_CLIENTS, FAIRWAY_IO_MAX_QUEUED),
    ] {
        match create("c-look", f, c, q) {
            Ok(e) => destroy(e),
            Err((S::FairwayErrUnavailable, msg)) => {
                return eprintln!("io_uring unavailable ({msg}): skipped")
            }
            Err((st, msg)) => panic!("{}: {msg}", st.name()),
        }
    }
}

/// A FIFO (made with `mkfifo`), removed on drop: a read of it stays in
/// flight until something is written to it.
struct Fifo(PathBuf);

impl Fifo {
    fn new(name: &str) -> Option<Self> {
        let path =
            std::env::temp_dir().join(format!("fairway-ffi-io-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let made = Command::new("mkfifo").arg(&path).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("mkfifo unavailable: test skipped");
            return None;
        }
        Some(Self(path))
    }

    /// Opens it read+write (so opening does not block) as a target.
    fn open(&self, e: *mut FairwayIoEngine) -> u64 {
        let path = CString::new(self.0.to_str().unwrap()).unwrap();
        let mut t = 0;
        let st = unsafe { fairway_io_open(e, path.as_ptr(), FAIRWAY_IO_OPEN_WRITE, 4096, &mut t) };
        assert_eq!(st, FairwayStatus::FairwayOk, "{}", last_error(e));
        t
    }

    /// Writes `bytes` to it after 50 ms, on another thread.
    fn feed_later(&self, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
        let path = self.0.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let mut w = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            w.write_all(&bytes).unwrap();
        })
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Submits a 512-byte read of the FIFO `pipe` and waits until the engine
/// has it in flight.
fn read_in_flight(
    e: *mut FairwayIoEngine,
    pipe: u64,
    c: u64,
    b: *mut FairwayIoBuf,
    user_data: u64,
) {
    submit(e, pipe, c, FAIRWAY_IO_OP_READ, 0, b, 512, user_data).unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while stats(e, c).dispatched < 1 {
        assert!(
            std::time::Instant::now() < until,
            "the FIFO read was never dispatched"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Shutting down with a transfer in flight and requests queued: every
/// accepted request still completes exactly once (the transfer with its
/// data, the others with `-ESHUTDOWN`), each buffer comes back, and the
/// engine refuses new work.
#[test]
#[cfg_attr(miri, ignore = "io_uring and a device thread")]
fn shutdown_with_requests_outstanding_loses_none() {
    let file = TempFile::new("shutdown", 1 << 20);
    let Some(fifo) = Fifo::new("shutdown") else {
        return;
    };
    let Some(e) = engine("bfq", 1, 1024) else {
        return;
    };
    let (t, _) = open(e, &file, 0);
    let pipe = fifo.open(e);
    let clients = [add_client(e, 1), add_client(e, 3)];
    const N: u64 = 200;
    let mut bufs = HashMap::new();
    // The FIFO read holds the only slot in flight: the others queue.
    let b = buf(BLOCK);
    read_in_flight(e, pipe, clients[0], b, N);
    bufs.insert(N, b);
    for i in 0..N {
        let b = buf(BLOCK);
        let off = (i % 256) * BLOCK as u64;
        submit(
            e,
            t,
            clients[i as usize % 2],
            FAIRWAY_IO_OP_READ,
            off,
            b,
            BLOCK,
            i,
        )
        .unwrap();
        bufs.insert(i, b);
    }
    let feeder = fifo.feed_later(vec![0x3c; 512]);
    assert_eq!(unsafe { fairway_io_shutdown(e) }, FairwayStatus::FairwayOk);
    feeder.join().unwrap();
    assert_eq!(unsafe { fairway_io_shutdown(e) }, FairwayStatus::FairwayOk);
    let done = collect_all(e, 7);
    assert_eq!(done.len() as u64, N + 1);
    for c in &done {
        assert_eq!(
            bufs.remove(&c.user_data),
            Some(c.buf),
            "completed twice or wrong buffer"
        );
        if c.user_data == N {
            assert_eq!((c.result, c.target), (512, pipe));
            assert!(bytes(c.buf)[..512].iter().all(|&x| x == 0x3c));
        } else {
            assert_eq!(c.result, -i64::from(libc::ESHUTDOWN));
            // Never dispatched: its whole wait was in the queue.
            assert_eq!(c.queued_ns, c.latency_ns);
        }
    }
    assert!(bufs.is_empty());
    let mut n = 1;
    assert_eq!(
        unsafe { fairway_io_outstanding(e, &mut n) },
        FairwayStatus::FairwayOk
    );
    assert_eq!(n, 0);
    let b = done[0].buf;
    let r = submit(e, t, clients[0], FAIRWAY_IO_OP_READ, 0, b, BLOCK, 0).unwrap_err();
    refused(e, r, FairwayStatus::FairwayErrStopped, "shut down");
    let mut c = 0;
    let r = unsafe { fairway_io_add_client(e, 1, &mut c) };
    refused(e, r, FairwayStatus::FairwayErrStopped, "shut down");
    for c in &done {
        free(c.buf);
    }
    destroy(e);
}

/// Destroying an engine with a transfer in flight and requests queued
/// waits for the transfer and frees every buffer the engine held (a leak
/// checker or Miri would see them lost otherwise); it does not hang or
/// fail.
#[test]
#[cfg_attr(miri, ignore = "io_uring and a device thread")]
fn destroy_with_requests_outstanding_frees_their_buffers() {
    let file = TempFile::new("destroy", 1 << 20);
    let Some(fifo) = Fifo::new("destroy") else {
        return;
    };
    let Some(e) = engine("bfq", 1, 64) else {
        return;
    };
    let (t, _) = open(e, &file, 0);
    let pipe = fifo.open(e);
    let c = add_client(e, 1);
    read_in_flight(e, pipe, c, buf(BLOCK), 99);
    for i in 0..32u64 {
        submit(
            e,
            t,
            c,
            FAIRWAY_IO_OP_READ,
            i * BLOCK as u64,
            buf(BLOCK),
            BLOCK,
            i,
        )
        .unwrap();
    }
    let feeder = fifo.feed_later(vec![0; 512]);
    destroy(e);
    feeder.join().unwrap();
}

/// Removing a client cancels its queued requests: each of them still
/// completes once, as `-ECANCELED` or transferred.
#[test]
#[cfg_attr(miri, ignore = "io_uring and a device thread")]
fn a_removed_client_s_requests_complete_once() {
    let file = TempFile::new("remove", 1 << 20);
    let Some(e) = engine("bfq", 1, 256) else {
        return;
    };
    let (t, _) = open(e, &file, 0);
    let c = add_client(e, 1);
    for i in 0..64u64 {
        submit(
            e,
            t,
            c,
            FAIRWAY_IO_OP_READ,
            i * BLOCK as u64,
            buf(BLOCK),
            BLOCK,
            i,
        )
        .unwrap();
    }
    let mut s = FairwayIoClientStats::default();
    assert_eq!(
        unsafe { fairway_io_remove_client(e, c, &mut s) },
        FairwayStatus::FairwayOk
    );
    assert_eq!(s.submitted, 64);
    let done = collect_all(e, 64);
    let mut seen = [false; 64];
    for d in &done {
        assert!(!std::mem::replace(&mut seen[d.user_data as usize], true));
        assert!(
            d.result == BLOCK as i64 || d.result == -i64::from(libc::ECANCELED),
            "{}",
            d.result
        );
        assert_eq!(d.client, c);
        free(d.buf);
    }
    assert!(seen.iter().all(|&s| s));
    destroy(e);
}

/// Builds `examples/c/io_two_clients.c` and runs it briefly: every read
/// succeeds and completes once, and the shares are printed. (The shares
/// themselves are checked in the slow tier: they need seconds of I/O.)
#[test]
#[cfg_attr(miri, ignore = "runs the C compiler and a child process")]
fn io_two_clients_c_example_runs() {
    let Some(out) = run_c_example("0.3", "bfq:t_max_ms=0") else {
        return;
    };
    assert!(out.contains("client 0 (weight 2) got"), "{out}");
    assert!(out.contains("client 1: "), "{out}");
}

/// The C example's shares under BFQ follow the weights (2:1), and under
/// C-LOOK, which ignores weights, they do not.
#[test]
#[ignore = "slow tier: two greedy readers, 5 s of real I/O"]
fn io_two_clients_c_example_gets_its_shares() {
    let share = |spec: &str| -> Option<f64> {
        let out = run_c_example("3", spec)?;
        let at = out.find("got ").expect("share printed") + 4;
        Some(out[at..at + 6].parse().unwrap())
    };
    let Some(bfq) = share("bfq:b_max=1024,t_max_ms=0") else {
        return;
    };
    assert!((bfq - 2.0 / 3.0).abs() < 0.05, "BFQ: share {bfq}");
    let Some(clook) = share("c-look") else {
        return;
    };
    assert!((clook - 2.0 / 3.0).abs() > 0.1, "C-LOOK: share {clook}");
}

/// Builds and runs the C example on a 16 MiB file; its stdout, or `None`
/// (said on stderr) without a C compiler or io_uring.
fn run_c_example(seconds: &str, spec: &str) -> Option<String> {
    // Under AddressSanitizer where the toolchain has it, so a buffer lost
    // or freed twice by the library or the example fails the run.
    let mut flags = vec!["-O1", "-g"];
    match asan_flags() {
        Ok(a) => flags.extend(a),
        Err(why) => eprintln!("io_two_clients.c: AddressSanitizer skipped: {why}"),
    }
    let exe = match build_c_program(
        &repo_root().join("examples/c/io_two_clients.c"),
        "io_two_clients",
        &flags,
    ) {
        Ok(exe) => exe,
        Err(e) if e.starts_with(NO_COMPILER) => {
            eprintln!("io_two_clients.c: skipped, {e}");
            return None;
        }
        Err(e) => panic!("{e}"),
    };
    let file = TempFile::new("example", 16 << 20);
    let out = Command::new(&exe)
        .arg(&file.0)
        .arg(seconds)
        .arg(spec)
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        .output()
        .expect("run io_two_clients");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        eprintln!("io_two_clients.c: {stdout}");
        return None;
    }
    assert!(
        out.status.success(),
        "{spec}: io_two_clients failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    eprintln!("{stdout}");
    Some(stdout)
}

/// The weight sum: clients up to 2^24 in total are taken, one more weight
/// unit is refused naming the limit.
#[test]
#[cfg_attr(miri, ignore = "io_uring and a device thread")]
fn the_weight_sum_is_bounded() {
    let e = match create("bfq", 1, 512, 16) {
        Ok(e) => e,
        Err((FairwayStatus::FairwayErrUnavailable, msg)) => {
            return eprintln!("io_uring unavailable ({msg}): skipped")
        }
        Err((st, msg)) => panic!("{}: {msg}", st.name()),
    };
    for _ in 0..256 {
        add_client(e, 65536);
    }
    let mut c = 0;
    let r = unsafe { fairway_io_add_client(e, 1, &mut c) };
    refused(e, r, FairwayStatus::FairwayErrOutOfRange, "16777216");
    destroy(e);
}

/// `max_queued` requests outstanding: one more is `FAIRWAY_ERR_FULL`,
/// counted as refused, its buffer kept by the caller.
#[test]
#[cfg_attr(miri, ignore = "io_uring and a device thread")]
fn a_full_queue_refuses_and_the_buffer_stays() {
    let file = TempFile::new("full", 1 << 20);
    let Some(fifo) = Fifo::new("full") else {
        return;
    };
    let Some(e) = engine("bfq", 1, 2) else {
        return;
    };
    let (t, _) = open(e, &file, 0);
    let pipe = fifo.open(e);
    let c = add_client(e, 1);
    // The FIFO read holds the only slot in flight; the second waits.
    read_in_flight(e, pipe, c, buf(BLOCK), 0);
    submit(e, t, c, FAIRWAY_IO_OP_READ, 0, buf(BLOCK), BLOCK, 1).unwrap();
    let b = buf(BLOCK);
    let r = submit(e, t, c, FAIRWAY_IO_OP_READ, 0, b, BLOCK, 2).unwrap_err();
    refused(e, r, FairwayStatus::FairwayErrFull, "max_queued = 2");
    assert_eq!(bytes(b).len(), BLOCK);
    assert_eq!(stats(e, c).refused, 1);
    let feeder = fifo.feed_later(vec![0; 512]);
    let done = collect_all(e, 2);
    feeder.join().unwrap();
    assert_eq!(done.len(), 2);
    for d in &done {
        free(d.buf);
    }
    free(b);
    destroy(e);
}

/// Buffers alone (no engine, so this also runs under Miri): aligned,
/// zeroed, of the length asked; null and foreign pointers refused.
#[test]
fn buffers_are_aligned_zeroed_and_checked() {
    for len in [1, 511, BLOCK, BLOCK + 1, FAIRWAY_IO_MAX_BUF_LEN] {
        let b = buf(len);
        assert_eq!(unsafe { fairway_io_buf_len(b) }, len);
        let data = bytes(b);
        assert!(data.iter().all(|&x| x == 0));
        data[len - 1] = 1;
        free(b);
    }
    // Not a buffer: aligned words holding something else.
    let mut word = [0u64; 8];
    let foreign = word.as_mut_ptr().cast::<FairwayIoBuf>();
    assert_eq!(
        unsafe { fairway_io_buf_free(foreign) },
        FairwayStatus::FairwayErrInvalidHandle
    );
    assert!(unsafe { fairway_io_buf_data(foreign) }.is_null());
    assert_eq!(unsafe { fairway_io_buf_len(foreign) }, 0);
    let mut b = null_mut();
    let r = unsafe { fairway_io_buf_alloc(BLOCK, null_mut(), null_mut(), 0) };
    assert_eq!(r, FairwayStatus::FairwayErrNullPointer);
    let r = unsafe { fairway_io_buf_alloc(0, &mut b, null_mut(), 0) };
    assert_eq!(r, FairwayStatus::FairwayErrOutOfRange);
    assert!(b.is_null());
}

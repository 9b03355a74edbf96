//! A counted early drop at the receiving end of the link: a `clsact`
//! qdisc on the receiver's device with a 15-instruction eBPF classifier in
//! direct-action mode that drops every IPv4 UDP datagram except those to
//! one kept port (the watched flow's), before the IP and UDP receive path.
//!
//! Why: a veth delivers each frame with `netif_rx` on the *sending* CPU,
//! so without it that CPU also runs the receiver's IP routing lookup, UDP
//! socket lookup and the full socket's drop for every packet — about as
//! much work as sending it. The PSPAT paper's receivers (§5.2) "do not read, to
//! minimize the receive side processing costs and focus the measurements
//! on the transmit side"; dropping at ingress goes one step further in the
//! same direction, for every configuration alike.
//!
//! Nothing is lost uncounted: the `clsact` qdisc counts every packet its
//! classifier drops (`tc -s qdisc show`: `dropped`), which
//! [`super::Testbed::kernel_drops`] reads as [`super::KernelDrops::ingress`].
//! Frames that are not IPv4 UDP (IPv6 neighbour discovery, say) pass.
//!
//! The program is loaded with the `bpf(2)` system call and attached with
//! one rtnetlink `RTM_NEWTFILTER` message (neither nix nor rustix wraps
//! them; iproute2's `tc` can only attach programs from an ELF file or a
//! BPF file system, which this machine need not have).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The classifier's return value that lets a packet pass.
const TC_ACT_OK: i32 = 0;
/// The classifier's return value that drops a packet (counted).
const TC_ACT_SHOT: i32 = 2;

/// One eBPF instruction (`struct bpf_insn`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Insn {
    code: u8,
    /// dst_reg (low nibble) | src_reg (high nibble).
    regs: u8,
    off: i16,
    imm: i32,
}

const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: (src << 4) | (dst & 0xf),
        off,
        imm,
    }
}

// Opcodes (linux/bpf_common.h, linux/bpf.h).
const MOV64_X: u8 = 0x07 | 0xb0 | 0x08; // BPF_ALU64 | BPF_MOV | BPF_X
const MOV64_K: u8 = 0x07 | 0xb0; // BPF_ALU64 | BPF_MOV | BPF_K
const AND64_K: u8 = 0x07 | 0x50; // BPF_ALU64 | BPF_AND | BPF_K
const LSH64_K: u8 = 0x07 | 0x60; // BPF_ALU64 | BPF_LSH | BPF_K
const LD_ABS_B: u8 = 0x20 | 0x10; // BPF_ABS | BPF_B | BPF_LD (0)
const LD_ABS_H: u8 = 0x20 | 0x08; // BPF_ABS | BPF_H | BPF_LD (0)
const LD_IND_H: u8 = 0x40 | 0x08; // BPF_IND | BPF_H | BPF_LD (0)
const JNE_K: u8 = 0x05 | 0x50; // BPF_JMP | BPF_JNE | BPF_K
const JEQ_K: u8 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const EXIT: u8 = 0x05 | 0x90; // BPF_JMP | BPF_EXIT

/// The classifier: drop IPv4 UDP unless its destination port is `keep`
/// (0: drop all IPv4 UDP). Offsets count from the Ethernet header (at
/// ingress `cls_bpf` pushes the MAC header back before running it); an
/// offset past the packet's end makes `LD_ABS`/`LD_IND` end the program
/// with 0 = pass.
fn program(keep: u16) -> [Insn; 15] {
    [
        insn(MOV64_X, 6, 1, 0, 0),             // r6 = skb (LD_ABS needs it)
        insn(LD_ABS_H, 0, 0, 0, 12),           // r0 = ethertype
        insn(JNE_K, 0, 0, 10, 0x0800),         // not IPv4: pass
        insn(LD_ABS_B, 0, 0, 0, 14 + 9),       // r0 = IP protocol
        insn(JNE_K, 0, 0, 8, 17),              // not UDP: pass
        insn(LD_ABS_B, 0, 0, 0, 14),           // r0 = version | IHL
        insn(AND64_K, 0, 0, 0, 0x0f),          // r0 = IHL (32-bit words)
        insn(LSH64_K, 0, 0, 0, 2),             // r0 = IP header bytes
        insn(MOV64_X, 7, 0, 0, 0),             // r7 = r0
        insn(LD_IND_H, 0, 7, 0, 14 + 2),       // r0 = UDP destination port
        insn(JEQ_K, 0, 0, 2, i32::from(keep)), // the kept port: pass
        insn(MOV64_K, 0, 0, 0, TC_ACT_SHOT),   // drop (counted by clsact)
        insn(EXIT, 0, 0, 0, 0),
        insn(MOV64_K, 0, 0, 0, TC_ACT_OK), // pass
        insn(EXIT, 0, 0, 0, 0),
    ]
}

/// `union bpf_attr` for `BPF_PROG_LOAD`, up to the fields used (the kernel
/// accepts a shorter attribute and zero-fills the rest).
#[repr(C)]
#[derive(Default)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;

/// Loads the classifier; returns its file descriptor.
fn load(keep: u16) -> io::Result<OwnedFd> {
    let prog = program(keep);
    let license = b"GPL\0";
    let mut log = vec![0u8; 4096];
    let mut attr = ProgLoadAttr {
        prog_type: BPF_PROG_TYPE_SCHED_CLS,
        insn_cnt: prog.len() as u32,
        insns: prog.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: 1,
        log_size: log.len() as u32,
        log_buf: log.as_mut_ptr() as u64,
        ..ProgLoadAttr::default()
    };
    attr.prog_name[..6].copy_from_slice(b"fwy_rx");
    // SAFETY: `attr` is a valid BPF_PROG_LOAD attribute of the size passed;
    // the pointers in it (program, license, log buffer) outlive the call
    // and the log buffer's length is the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_PROG_LOAD,
            &mut attr as *mut ProgLoadAttr,
            std::mem::size_of::<ProgLoadAttr>() as u32,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        let text = String::from_utf8_lossy(&log);
        let text = text.trim_end_matches('\0').trim();
        return Err(io::Error::new(
            e.kind(),
            format!("loading the ingress classifier: {e}; verifier: {text}"),
        ));
    }
    // SAFETY: the kernel returned a new file descriptor that nothing else
    // owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

// rtnetlink constants (linux/rtnetlink.h, linux/pkt_sched.h, linux/pkt_cls.h).
const RTM_NEWTFILTER: u16 = 44;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
const NLMSG_ERROR: u16 = 2;
const TCA_KIND: u16 = 1;
const TCA_OPTIONS: u16 = 2;
const NLA_F_NESTED: u16 = 1 << 15;
const TCA_BPF_FD: u16 = 6;
const TCA_BPF_NAME: u16 = 7;
const TCA_BPF_FLAGS: u16 = 8;
const TCA_BPF_FLAG_ACT_DIRECT: u32 = 1;
/// `TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)`.
const CLSACT_INGRESS: u32 = 0xffff_fff2;
const ETH_P_ALL: u16 = 0x0003;

fn push_attr(buf: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    let len = 4 + payload.len();
    buf.extend_from_slice(&(len as u16).to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(payload);
    while !buf.len().is_multiple_of(4) {
        buf.push(0);
    }
}

/// The `RTM_NEWTFILTER` request attaching program `prog_fd` to the
/// `clsact` ingress hook of device `ifindex`, direct-action, priority 1.
fn filter_request(ifindex: u32, prog_fd: i32) -> Vec<u8> {
    let mut opts = Vec::new();
    push_attr(&mut opts, TCA_BPF_FD, &(prog_fd as u32).to_ne_bytes());
    push_attr(&mut opts, TCA_BPF_NAME, b"fwy_rx\0");
    push_attr(
        &mut opts,
        TCA_BPF_FLAGS,
        &TCA_BPF_FLAG_ACT_DIRECT.to_ne_bytes(),
    );
    let mut body = Vec::new();
    // struct tcmsg: family, 3 pad bytes, ifindex, handle, parent, info.
    body.extend_from_slice(&[libc::AF_UNSPEC as u8, 0, 0, 0]);
    body.extend_from_slice(&(ifindex as i32).to_ne_bytes());
    body.extend_from_slice(&0u32.to_ne_bytes());
    body.extend_from_slice(&CLSACT_INGRESS.to_ne_bytes());
    let info = (1u32 << 16) | u32::from(ETH_P_ALL.to_be());
    body.extend_from_slice(&info.to_ne_bytes());
    push_attr(&mut body, TCA_KIND, b"bpf\0");
    push_attr(&mut body, TCA_OPTIONS | NLA_F_NESTED, &opts);
    let mut msg = Vec::with_capacity(16 + body.len());
    msg.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
    msg.extend_from_slice(&RTM_NEWTFILTER.to_ne_bytes());
    let flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
    msg.extend_from_slice(&flags.to_ne_bytes());
    msg.extend_from_slice(&1u32.to_ne_bytes()); // sequence number
    msg.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel's
    msg.extend_from_slice(&body);
    msg
}

/// Attaches the classifier dropping every IPv4 UDP datagram except those to
/// port `keep` (`None`: drop them all) to the `clsact` qdisc of device
/// `ifindex`, which must already exist. Call in the device's namespace
/// ([`super::Testbed::in_receiver_ns`]).
pub fn attach_drop_filter(ifindex: u32, keep: Option<u16>) -> io::Result<()> {
    use nix::sys::socket::{
        recv, send, socket, AddressFamily, MsgFlags, SockFlag, SockProtocol, SockType,
    };
    let prog = load(keep.unwrap_or(0))?;
    let sock = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )
    .map_err(io::Error::from)?;
    let msg = filter_request(ifindex, prog.as_raw_fd());
    send(sock.as_raw_fd(), &msg, MsgFlags::empty()).map_err(io::Error::from)?;
    let mut reply = [0u8; 4096];
    let n = recv(sock.as_raw_fd(), &mut reply, MsgFlags::empty()).map_err(io::Error::from)?;
    // An acknowledgement: nlmsghdr (16 bytes) + nlmsgerr { error: i32, .. }.
    if n < 20 || u16::from_ne_bytes([reply[4], reply[5]]) != NLMSG_ERROR {
        return Err(io::Error::other(
            "attaching the ingress classifier: no netlink acknowledgement",
        ));
    }
    let err = i32::from_ne_bytes([reply[16], reply[17], reply[18], reply[19]]);
    if err != 0 {
        let e = io::Error::from_raw_os_error(-err);
        return Err(io::Error::new(
            e.kind(),
            format!("attaching the ingress classifier: {e}"),
        ));
    }
    // The filter holds its own reference to the program; `prog` closes.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_land_on_the_pass_and_drop_exits() {
        let p = program(40_000);
        // Every conditional jump to "pass" lands on `r0 = TC_ACT_OK`.
        for (i, x) in p.iter().enumerate() {
            if x.code == JNE_K || x.code == JEQ_K {
                let to = i as i64 + 1 + i64::from(x.off);
                assert_eq!(
                    p[to as usize],
                    insn(MOV64_K, 0, 0, 0, TC_ACT_OK),
                    "insn {i}"
                );
            }
        }
        assert_eq!(p[10].imm, 40_000);
        assert_eq!(p[11], insn(MOV64_K, 0, 0, 0, TC_ACT_SHOT));
        assert_eq!(p[12].code, EXIT);
        assert_eq!(std::mem::size_of::<Insn>(), 8);
    }

    #[test]
    fn the_filter_request_is_well_formed() {
        let m = filter_request(7, 3);
        assert_eq!(
            u32::from_ne_bytes(m[0..4].try_into().unwrap()) as usize,
            m.len()
        );
        assert_eq!(u16::from_ne_bytes([m[4], m[5]]), RTM_NEWTFILTER);
        assert_eq!(m.len() % 4, 0);
        // tcmsg: ifindex 7, parent = clsact ingress.
        assert_eq!(i32::from_ne_bytes(m[20..24].try_into().unwrap()), 7);
        assert_eq!(
            u32::from_ne_bytes(m[28..32].try_into().unwrap()),
            CLSACT_INGRESS
        );
    }
}

//! The headers a frame is classified by: Ethernet with at most one
//! 802.1Q/802.1ad tag, then IPv4 or IPv6 (fixed header only: an IPv6
//! extension header is not walked, its frame has no ports), then the
//! TCP/UDP/SCTP/UDP-Lite ports. Parsing reads the frame in place and
//! allocates nothing; a truncated header is "not IP".

/// What classification needs of a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Headers {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// The VLAN id of the tag, if the frame has one.
    pub vlan: Option<u16>,
    /// IPv4 (as IPv4-mapped IPv6, `::ffff:a.b.c.d`) or IPv6 addresses.
    pub src: u128,
    /// Destination address, as `src`.
    pub dst: u128,
    /// True for IPv4.
    pub v4: bool,
    /// IP protocol (IPv6: the next header).
    pub protocol: u8,
    /// DSCP.
    pub dscp: u8,
    /// Source port (0 without ports).
    pub src_port: u16,
    /// Destination port (0 without ports).
    pub dst_port: u16,
}

const ETH_P_IP: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86dd;
const ETH_P_8021Q: u16 = 0x8100;
const ETH_P_8021AD: u16 = 0x88a8;

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn has_ports(protocol: u8) -> bool {
    // TCP, UDP, SCTP, UDP-Lite.
    matches!(protocol, 6 | 17 | 132 | 136)
}

/// The headers of an IP frame; `None` for any other frame (ARP, LLDP, a
/// truncated header).
pub fn parse(frame: &[u8]) -> Option<Headers> {
    let mut h = Headers::default();
    h.dst_mac.copy_from_slice(frame.get(0..6)?);
    h.src_mac.copy_from_slice(frame.get(6..12)?);
    let mut ethertype = be16(frame, 12)?;
    let mut l3 = 14;
    if ethertype == ETH_P_8021Q || ethertype == ETH_P_8021AD {
        h.vlan = Some(be16(frame, 14)? & 0x0fff);
        ethertype = be16(frame, 16)?;
        l3 = 18;
    }
    let ip = frame.get(l3..)?;
    let l4 = match ethertype {
        ETH_P_IP => {
            let b = ip.get(0..20)?;
            if b[0] >> 4 != 4 {
                return None;
            }
            let ihl = usize::from(b[0] & 0x0f) * 4;
            h.v4 = true;
            h.dscp = b[1] >> 2;
            h.protocol = b[9];
            h.src = mapped(&b[12..16]);
            h.dst = mapped(&b[16..20]);
            // A fragment other than the first has no transport header.
            let offset = be16(b, 6)? & 0x1fff;
            if offset != 0 || ihl < 20 {
                return Some(h);
            }
            ip.get(ihl..)
        }
        ETH_P_IPV6 => {
            let b = ip.get(0..40)?;
            if b[0] >> 4 != 6 {
                return None;
            }
            h.dscp = ((b[0] & 0x0f) << 2) | (b[1] >> 6);
            h.protocol = b[6];
            h.src = u128::from_be_bytes(b[8..24].try_into().ok()?);
            h.dst = u128::from_be_bytes(b[24..40].try_into().ok()?);
            ip.get(40..)
        }
        _ => return None,
    };
    if has_ports(h.protocol) {
        if let Some(t) = l4 {
            h.src_port = be16(t, 0).unwrap_or(0);
            h.dst_port = be16(t, 2).unwrap_or(0);
        }
    }
    Some(h)
}

/// An IPv4 address as IPv4-mapped IPv6.
pub fn mapped(v4: &[u8]) -> u128 {
    let mut a = [0u8; 16];
    a[10] = 0xff;
    a[11] = 0xff;
    a[12..16].copy_from_slice(&v4[..4]);
    u128::from_be_bytes(a)
}

impl Headers {
    /// The 5-tuple's hash, for FQ-CoDel's buckets: the same for both
    /// directions of a flow is not needed (each direction has its own
    /// queues). A multiply–xorshift mix, no allocation, no key.
    pub fn flow_hash(&self) -> u32 {
        let ports = (u64::from(self.src_port) << 16) | u64::from(self.dst_port);
        let mut x = mix(self.src as u64 ^ (self.src >> 64) as u64);
        x = mix(x ^ self.dst as u64 ^ ((self.dst >> 64) as u64).rotate_left(17));
        x = mix(x ^ (ports << 8) ^ u64::from(self.protocol));
        (x >> 32) as u32
    }
}

fn mix(mut x: u64) -> u64 {
    // splitmix64's finaliser.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An Ethernet frame (tag `vlan` if given) with an IPv4 UDP header.
    pub fn udp4(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, vlan: Option<u16>) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        if let Some(v) = vlan {
            f.extend_from_slice(&[0x81, 0x00]);
            f.extend_from_slice(&v.to_be_bytes());
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[1] = 46 << 2;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        f.extend_from_slice(&ip);
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&[0; 4]);
        f
    }

    /// An Ethernet frame with an IPv6 TCP header.
    pub fn tcp6(src: u128, dst: u128, sport: u16, dport: u16) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd];
        let mut ip = [0u8; 40];
        ip[0] = 0x60 | (10 >> 2); // DSCP 10: 0b001010
        ip[1] = (10 & 3) << 6;
        ip[6] = 6;
        ip[8..24].copy_from_slice(&src.to_be_bytes());
        ip[24..40].copy_from_slice(&dst.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f
    }

    #[test]
    fn ipv4_with_and_without_a_tag() {
        for vlan in [None, Some(42)] {
            let h = parse(&udp4([10, 0, 0, 1], [10, 0, 0, 2], 5, 7, vlan)).unwrap();
            assert_eq!(h.vlan, vlan);
            assert!(h.v4);
            assert_eq!((h.protocol, h.dscp, h.src_port, h.dst_port), (17, 46, 5, 7));
            assert_eq!(h.dst, mapped(&[10, 0, 0, 2]));
        }
    }

    #[test]
    fn ipv6_fields() {
        let h = parse(&tcp6(1, 0x2001_0db8 << 96, 80, 443)).unwrap();
        assert!(!h.v4);
        assert_eq!(
            (h.protocol, h.dscp, h.src_port, h.dst_port),
            (6, 10, 80, 443)
        );
        assert_eq!(h.dst, 0x2001_0db8 << 96);
    }

    #[test]
    fn arp_and_truncated_frames_are_not_ip() {
        let mut arp = vec![0xff; 12];
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.extend_from_slice(&[0; 28]);
        assert_eq!(parse(&arp), None);
        let f = udp4([10, 0, 0, 1], [10, 0, 0, 2], 5, 7, None);
        assert_eq!(parse(&f[..30]), None);
    }

    #[test]
    fn the_hash_depends_on_every_field_of_the_tuple() {
        let h = parse(&udp4([10, 0, 0, 1], [10, 0, 0, 2], 5, 7, None)).unwrap();
        let base = h.flow_hash();
        for change in [
            Headers { src_port: 6, ..h },
            Headers { dst_port: 8, ..h },
            Headers { protocol: 6, ..h },
            Headers {
                src: h.src + 1,
                ..h
            },
            Headers {
                dst: h.dst + 1,
                ..h
            },
        ] {
            assert_ne!(change.flow_hash(), base);
        }
    }
}

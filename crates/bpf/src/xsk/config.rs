//! An AF_XDP socket's sizes, each checked against its limit before
//! anything is allocated.

use crate::BpfError;

/// The sizes of a socket's UMEM and rings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XskConfig {
    /// Bytes per frame: 2048 or 4096 (the kernel's aligned chunk mode
    /// takes a power of two from 2048 to the page size). The longest
    /// frame received or sent is this less the kernel's 256-byte headroom
    /// for received ones.
    pub frame_size: u32,
    /// Entries of each ring: a power of two, 64 to 16384.
    pub ring_size: u32,
    /// Frames in the UMEM: a power of two, at least twice `ring_size`
    /// (`ring_size` of them keep the fill ring full, the rest wait to be
    /// sent), and at most 2^18, since the kernel pins them in memory.
    pub frames: u32,
}

impl Default for XskConfig {
    fn default() -> Self {
        XskConfig {
            frame_size: 2048,
            ring_size: 2048,
            frames: 8192,
        }
    }
}

/// Bytes the kernel keeps free before each received frame in a UMEM
/// frame (`XDP_PACKET_HEADROOM`), for XDP programs that grow headers.
pub const RX_HEADROOM: u32 = 256;

/// The most frames a UMEM may have: 2^18 of 4096 bytes is 1 GiB of
/// memory the kernel pins.
pub const MAX_FRAMES: u32 = 1 << 18;

impl XskConfig {
    /// `Ok` if every size is within its limit.
    pub fn check(&self) -> Result<(), BpfError> {
        let refuse = |name, value: u32, allowed| {
            Err(BpfError::Parameter {
                name,
                value: u64::from(value),
                allowed,
            })
        };
        if !matches!(self.frame_size, 2048 | 4096) {
            return refuse(
                "AF_XDP frame size",
                self.frame_size,
                "2048 or 4096 bytes (the kernel's aligned chunks)",
            );
        }
        if !self.ring_size.is_power_of_two() || !(64..=16384).contains(&self.ring_size) {
            return refuse(
                "AF_XDP ring size",
                self.ring_size,
                "a power of two from 64 to 16384 entries",
            );
        }
        if !self.frames.is_power_of_two()
            || self.frames < 2 * self.ring_size
            || self.frames > MAX_FRAMES
        {
            return refuse(
                "AF_XDP UMEM frames",
                self.frames,
                "a power of two from twice the ring size to 262144 (memory the kernel pins)",
            );
        }
        Ok(())
    }

    /// The longest frame a socket of this configuration receives, bytes:
    /// a UMEM frame less the kernel's headroom. Longer frames are dropped
    /// by the kernel (counted in its `rx_dropped`); one UMEM frame holds
    /// one received frame, since the sockets do not use multi-buffer.
    pub fn max_rx_frame(&self) -> u32 {
        self.frame_size.saturating_sub(RX_HEADROOM)
    }

    /// The UMEM's length in bytes.
    pub fn umem_len(&self) -> usize {
        self.frames as usize * self.frame_size as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_outside_their_limits_are_refused_by_name() {
        assert!(XskConfig::default().check().is_ok());
        let bad = [
            XskConfig {
                frame_size: 3000,
                ..XskConfig::default()
            },
            XskConfig {
                ring_size: 100,
                ..XskConfig::default()
            },
            XskConfig {
                ring_size: 32,
                frames: 64,
                ..XskConfig::default()
            },
            XskConfig {
                frames: 2048,
                ..XskConfig::default()
            },
            XskConfig {
                frames: MAX_FRAMES * 2,
                ..XskConfig::default()
            },
        ];
        let names = [
            "AF_XDP frame size 3000",
            "AF_XDP ring size 100",
            "AF_XDP ring size 32",
            "AF_XDP UMEM frames 2048",
            "AF_XDP UMEM frames 524288",
        ];
        for (c, name) in bad.iter().zip(names) {
            let e = c.check().unwrap_err().to_string();
            assert!(e.starts_with(name), "{e}");
        }
    }
}

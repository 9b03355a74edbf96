//! Ethernet MAC addresses as operators write them: six hex octets joined
//! by `:` or `-` (`aa:bb:cc:dd:ee:ff`, `AA-BB-CC-DD-EE-FF`), or Cisco's
//! three dotted groups (`aabb.ccdd.eeff`).

use std::fmt;
use std::str::FromStr;

/// A MAC address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mac(pub [u8; 6]);

/// The forms [`Mac::from_str`] takes.
pub const MAC_FORMS: &str = "aa:bb:cc:dd:ee:ff, aa-bb-cc-dd-ee-ff or aabb.ccdd.eeff";

/// A MAC address that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacError(pub String);

impl fmt::Display for MacError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MAC {:?} does not parse (allowed: {MAC_FORMS})", self.0)
    }
}

impl std::error::Error for MacError {}

impl FromStr for Mac {
    type Err = MacError;

    fn from_str(text: &str) -> Result<Self, MacError> {
        let t = text.trim();
        let bad = || MacError(text.to_string());
        let hex: String = if t.contains('.') {
            let groups: Vec<&str> = t.split('.').collect();
            if groups.len() != 3 || groups.iter().any(|g| g.len() != 4) {
                return Err(bad());
            }
            groups.concat()
        } else {
            let sep = if t.contains('-') { '-' } else { ':' };
            let octets: Vec<&str> = t.split(sep).collect();
            if octets.len() != 6 || octets.iter().any(|o| o.len() != 2) {
                return Err(bad());
            }
            octets.concat()
        };
        let mut out = [0u8; 6];
        for (i, o) in out.iter_mut().enumerate() {
            let pair = hex.get(2 * i..2 * i + 2).ok_or_else(bad)?;
            *o = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        Ok(Mac(out))
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02x}:{b:02x}:{c:02x}:{d:02x}:{e:02x}:{g:02x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_parse_and_others_do_not() {
        let m = Mac([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x0f]);
        assert_eq!("aa:bb:cc:dd:ee:0f".parse(), Ok(m));
        assert_eq!("AA-BB-CC-DD-EE-0F".parse(), Ok(m));
        assert_eq!("aabb.ccdd.ee0f".parse(), Ok(m));
        assert_eq!(m.to_string(), "aa:bb:cc:dd:ee:0f");
        for bad in [
            "",
            "aa:bb:cc:dd:ee",
            "aa:bb:cc:dd:ee:gg",
            "aa:bb:cc:dd:ee:f",
            "aabbccddeeff",
            "aa:bb-cc:dd:ee:ff",
            "é€:bb:cc:dd:ee:ff",
        ] {
            assert_eq!(bad.parse::<Mac>(), Err(MacError(bad.to_string())), "{bad}");
        }
    }
}

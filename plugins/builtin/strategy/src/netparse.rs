//! IP addresses and CIDRs as k8s.io/utils/net's `ParseIPSloppy` and
//! `ParseCIDRSloppy` read them: Go's `net.ParseIP`/`net.ParseCIDR`, with
//! leading zeros allowed in IPv4 octets.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `ParseIPSloppy`.
pub fn parse_ip(text: &str) -> Option<IpAddr> {
    if text.contains(':') {
        return text.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let octets: Vec<&str> = text.split('.').collect();
    if octets.len() != 4 {
        return None;
    }
    let mut bytes = [0u8; 4];
    for (byte, octet) in bytes.iter_mut().zip(&octets) {
        if octet.is_empty() || octet.len() > 3 || !octet.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *byte = octet.parse().ok()?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(bytes)))
}

/// A parsed CIDR: the network address (host bits cleared) and its length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cidr {
    network: u128,
    prefix: u32,
    v4: bool,
}

impl Cidr {
    fn bits(&self) -> u32 {
        if self.v4 {
            32
        } else {
            128
        }
    }

    /// Whether `other`'s network address lies in this network.
    pub fn contains_network_of(&self, other: &Cidr) -> bool {
        self.v4 == other.v4 && mask(other.network, self.prefix, self.bits()) == self.network
    }

    pub fn prefix(&self) -> u32 {
        self.prefix
    }

    pub fn is_ipv4(&self) -> bool {
        self.v4
    }
}

fn mask(address: u128, prefix: u32, bits: u32) -> u128 {
    if prefix == 0 {
        return 0;
    }
    let width_mask = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    let host_bits = bits - prefix;
    address & (width_mask >> host_bits << host_bits)
}

/// `ParseCIDRSloppy`.
pub fn parse_cidr(text: &str) -> Option<Cidr> {
    let (address, prefix) = text.split_once('/')?;
    let ip = parse_ip(address)?;
    let (value, bits, v4) = match ip {
        IpAddr::V4(v4) => (u32::from(v4) as u128, 32, true),
        IpAddr::V6(v6) => (u128::from(v6), 128, false),
    };
    let digits_ok = !prefix.is_empty() && prefix.chars().all(|c| c.is_ascii_digit());
    let prefix: u32 = prefix.parse().ok().filter(|_| digits_ok)?;
    if prefix > bits {
        return None;
    }
    Some(Cidr {
        network: mask(value, prefix, bits),
        prefix,
        v4,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sloppy_parsing() {
        assert!(parse_ip("010.001.0.1").is_some());
        assert!(parse_ip("999.1.1.1").is_none());
        assert!(parse_cidr("10.0.0.0/33").is_none());
        assert!(parse_cidr("fd00::/129").is_none());
        assert!(parse_cidr("10.0.0.0/8x").is_none());
        let outer = parse_cidr("10.0.0.1/8").unwrap_or_else(|| panic!("valid"));
        let inner = parse_cidr("10.1.0.0/16").unwrap_or_else(|| panic!("valid"));
        assert!(outer.contains_network_of(&inner));
        let other = parse_cidr("11.0.0.0/16").unwrap_or_else(|| panic!("valid"));
        assert!(!outer.contains_network_of(&other));
    }
}

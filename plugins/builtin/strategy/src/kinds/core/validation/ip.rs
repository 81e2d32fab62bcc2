//! The messages of apimachinery's `IsValidIP`/`IsValidCIDR` and core's
//! `ValidateNonSpecialIP` (parsing is `netparse`'s, Go's sloppy one).

use std::net::IpAddr;

use capstan_plugin_sdk::Cause;

use crate::common;

/// `IsValidIP`'s message.
pub const NOT_AN_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
/// `IsValidCIDR`'s message.
pub const NOT_A_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

pub use crate::netparse::{parse_cidr, parse_ip as parse};

/// `IsValidIP`.
pub fn check_ip(field: &str, value: &str, causes: &mut Vec<Cause>) {
    if parse(value).is_none() {
        causes.push(common::invalid_str(field, value, NOT_AN_IP));
    }
}

/// `IsValidCIDR`.
pub fn check_cidr(field: &str, value: &str, causes: &mut Vec<Cause>) {
    if parse_cidr(value).is_none() {
        causes.push(common::invalid_str(field, value, NOT_A_CIDR));
    }
}

/// `ValidateNonSpecialIP`: unspecified, loopback and link-local addresses
/// are refused.
pub fn check_non_special(field: &str, value: &str, causes: &mut Vec<Cause>) {
    let Some(ip) = parse(value) else {
        causes.push(common::invalid_str(
            field,
            value,
            "must be a valid IP address",
        ));
        return;
    };
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    };
    let mut refuse = |detail: &str| causes.push(common::invalid_str(field, value, detail));
    if ip.is_unspecified() {
        refuse(&format!("may not be unspecified ({value})"));
    }
    if ip.is_loopback() {
        refuse("may not be in the loopback range (127.0.0.0/8, ::1/128)");
    }
    let (link_local_unicast, link_local_multicast) = match ip {
        IpAddr::V4(v4) => (v4.is_link_local(), v4.octets()[..3] == [224, 0, 0]),
        IpAddr::V6(v6) => (
            v6.segments()[0] & 0xffc0 == 0xfe80,
            v6.segments()[0] & 0xff0f == 0xff02,
        ),
    };
    if link_local_unicast {
        refuse("may not be in the link-local range (169.254.0.0/16, fe80::/10)");
    }
    if link_local_multicast {
        refuse("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_cidrs_are_read_sloppily() {
        let mut causes = Vec::new();
        check_ip("ip", "010.001.1.1", &mut causes);
        check_cidr("cidr", "2001:db8::/64", &mut causes);
        assert!(causes.is_empty());
        check_ip("ip", "999.1.1.1", &mut causes);
        check_cidr("cidr", "10.0.0.0/33", &mut causes);
        assert_eq!(causes.len(), 2);
    }

    #[test]
    fn special_addresses_are_refused_with_kubes_words() {
        let mut causes = Vec::new();
        check_non_special("ip", "127.0.0.1", &mut causes);
        check_non_special("ip", "169.254.1.1", &mut causes);
        check_non_special("ip", "0.0.0.0", &mut causes);
        check_non_special("ip", "10.1.2.3", &mut causes);
        let messages: Vec<&str> = causes.iter().map(|c| c.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "Invalid value: \"169.254.1.1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)",
            ]
        );
    }
}

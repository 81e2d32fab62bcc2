//! kube's ip and cidr libraries (k8s.io/apiserver/pkg/cel/library/ip.go,
//! cidr.go) on `std::net`: `ip`, `isIP`, `ip.isCanonical`, `cidr`, `isCIDR`
//! and their member functions. IPv4-mapped IPv6 addresses are refused, as
//! kube does.

use kube_rules::gofmt::quote;
use std::net::IpAddr;
use std::sync::Arc;

use cel::common::types::Type;
use cel::common::value::{CowVal, Val};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

use crate::call::{error, opaque, string, Answer};

/// An address, `net.IP`.
#[derive(Debug, PartialEq, Eq)]
pub struct Ip(pub IpAddr);

/// A prefix, `net.CIDR`: the address as written and the length.
#[derive(Debug, PartialEq, Eq)]
pub struct Cidr {
    pub ip: IpAddr,
    pub len: u8,
}

impl Opaque for Ip {
    fn runtime_type_name(&self) -> &str {
        "net.IP"
    }
}

impl Opaque for Cidr {
    fn runtime_type_name(&self) -> &str {
        "net.CIDR"
    }
}

/// `string(ip)` and `string(cidr)`: overloads of the standard `string`.
pub(crate) fn overloads(env: &mut Env) -> Result<(), DeclarationError> {
    let ip = Type::new_opaque_type("net.IP");
    let cidr = Type::new_opaque_type("net.CIDR");
    env.add_overload("string", "ip_to_string", vec![ip], to_string)?;
    env.add_overload("string", "cidr_to_string", vec![cidr], to_string)
}

fn to_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let value = match args.first() {
        Some(arg) => Value::try_from(arg.as_ref())?,
        None => return Err(error("string", "no such overload")),
    };
    let text = if let Some(ip) = opaque::<Ip>(&value) {
        ip.0.to_string()
    } else if let Some(cidr) = opaque::<Cidr>(&value) {
        format!("{}/{}", cidr.ip, cidr.len)
    } else {
        return Err(error("string", "no such overload"));
    };
    let boxed: Box<dyn Val> = Value::String(Arc::new(text)).try_into()?;
    Ok(CowVal::Owned(boxed))
}

pub(crate) fn call(name: &str, this: Option<&Value>, args: &[Value]) -> Answer {
    match (this, args) {
        (None, [text]) => global(name, string(text)?),
        (Some(v), args) => match (opaque::<Ip>(v), opaque::<Cidr>(v)) {
            (Some(ip), _) if args.is_empty() => ip_member(name, ip.0),
            (_, Some(cidr)) => cidr_member(name, cidr, args),
            _ => None,
        },
        _ => None,
    }
}

fn global(name: &str, text: &str) -> Answer {
    Some(match name {
        "ip" => parse_ip(text).map(ip_value).map_err(|e| error(name, e)),
        "isIP" => Ok(Value::Bool(parse_ip(text).is_ok())),
        // Go's `Addr.String` is the canonical form, as Rust's `Display` is.
        "ip.isCanonical" => parse_ip(text)
            .map(|ip| Value::Bool(ip.to_string() == text))
            .map_err(|e| error(name, e)),
        "cidr" => parse_cidr(text)
            .map(cidr_value)
            .map_err(|e| error(name, cidr_error(e))),
        "isCIDR" => Ok(Value::Bool(parse_cidr(text).is_ok())),
        _ => return None,
    })
}

/// kube's `stringToCIDR` wraps `parseCIDR`'s (already wrapped) error again.
fn cidr_error(e: String) -> String {
    format!("network address parse error during conversion from string: {e}")
}

fn ip_value(ip: IpAddr) -> Value {
    Value::Opaque(Arc::new(Ip(ip)))
}

fn cidr_value(cidr: Cidr) -> Value {
    Value::Opaque(Arc::new(cidr))
}

/// kube's `parseIPAddr`: no zone, no IPv4-mapped IPv6 address.
pub(crate) fn parse_ip(text: &str) -> Result<IpAddr, String> {
    let (address, zone) = text.split_once('%').unwrap_or((text, ""));
    let ip: IpAddr = address.parse().map_err(|_| {
        let text = quote(text);
        format!(
            "IP Address {text} parse error during conversion from string: \
             ParseAddr({text}): unable to parse IP"
        )
    })?;
    if !zone.is_empty() {
        return Err(format!(
            "IP address {} with zone value is not allowed",
            quote(text)
        ));
    }
    if matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some()) {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            quote(text)
        ));
    }
    Ok(ip)
}

/// kube's `parseCIDR` on `netip.ParsePrefix`'s rules.
pub(crate) fn parse_cidr(text: &str) -> Result<Cidr, String> {
    let wrap = |why: String| {
        format!(
            "network address parse error during conversion from string: netip.ParsePrefix({}): {why}",
            quote(text)
        )
    };
    let (address, bits) = text
        .split_once('/')
        .ok_or_else(|| wrap("no '/'".to_string()))?;
    if address.contains('%') {
        return Err(wrap("IPv6 zones cannot be present in a prefix".to_string()));
    }
    let ip: IpAddr = address
        .parse()
        .map_err(|_| wrap(format!("ParseAddr({}): unable to parse IP", quote(address))))?;
    let canonical = bits.len() == 1 || !bits.starts_with('0');
    let len = bits
        .parse::<u8>()
        .ok()
        .filter(|_| canonical && bits.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| wrap(format!("bad bits after slash: {}", quote(bits))))?;
    if len > max_len(ip) {
        return Err(wrap("prefix length out of range".to_string()));
    }
    if matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some()) {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            quote(text)
        ));
    }
    Ok(Cidr { ip, len })
}

fn max_len(ip: IpAddr) -> u8 {
    if ip.is_ipv4() {
        32
    } else {
        128
    }
}

fn bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn ip_member(name: &str, ip: IpAddr) -> Answer {
    let yes = |b: bool| Some(Ok(Value::Bool(b)));
    match name {
        "family" => Some(Ok(Value::Int(if ip.is_ipv4() { 4 } else { 6 }))),
        "isUnspecified" => yes(ip.is_unspecified()),
        "isLoopback" => yes(ip.is_loopback()),
        "isLinkLocalMulticast" => yes(link_local_multicast(ip)),
        "isLinkLocalUnicast" => yes(link_local_unicast(ip)),
        "isGlobalUnicast" => yes(global_unicast(ip)),
        _ => None,
    }
}

fn link_local_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

fn link_local_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// Go's `IsGlobalUnicast`.
fn global_unicast(ip: IpAddr) -> bool {
    let broadcast = matches!(ip, IpAddr::V4(v4) if v4.is_broadcast());
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || link_local_unicast(ip)
        || broadcast)
}

fn cidr_member(name: &str, cidr: &Cidr, args: &[Value]) -> Answer {
    Some(Ok(match (name, args) {
        ("ip", []) => ip_value(cidr.ip),
        ("masked", []) => cidr_value(Cidr {
            ip: masked(cidr.ip, cidr.len),
            len: cidr.len,
        }),
        ("prefixLength", []) => Value::Int(i64::from(cidr.len)),
        ("containsIP", [other]) => {
            let ip = match other {
                Value::String(s) => match parse_ip(s) {
                    Ok(ip) => ip,
                    Err(e) => return Some(Err(error(name, e))),
                },
                other => opaque::<Ip>(other)?.0,
            };
            Value::Bool(contains(cidr, ip, max_len(ip)))
        }
        ("containsCIDR", [other]) => {
            let inner = match other {
                Value::String(s) => match parse_cidr(s) {
                    Ok(c) => c,
                    Err(e) => return Some(Err(error(name, cidr_error(e)))),
                },
                other => {
                    let c = opaque::<Cidr>(other)?;
                    Cidr {
                        ip: c.ip,
                        len: c.len,
                    }
                }
            };
            Value::Bool(contains(cidr, inner.ip, inner.len))
        }
        _ => return None,
    }))
}

/// Whether `prefix` holds the prefix `ip/len` (an address: `len` full).
fn contains(prefix: &Cidr, ip: IpAddr, len: u8) -> bool {
    prefix.ip.is_ipv4() == ip.is_ipv4()
        && len >= prefix.len
        && masked(ip, prefix.len) == masked(prefix.ip, prefix.len)
}

fn masked(ip: IpAddr, len: u8) -> IpAddr {
    let width = u32::from(max_len(ip));
    let host_bits = width - u32::from(len);
    let mask = if host_bits >= 128 {
        0
    } else {
        u128::MAX << host_bits
    };
    let kept = bits(ip) & mask;
    match ip {
        IpAddr::V4(_) => IpAddr::V4(std::net::Ipv4Addr::from(kept as u32)),
        IpAddr::V6(_) => IpAddr::V6(std::net::Ipv6Addr::from(kept)),
    }
}

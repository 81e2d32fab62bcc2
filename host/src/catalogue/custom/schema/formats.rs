//! The string formats kube validates in CRD schemas (kube-openapi's strfmt
//! registry, restricted to apiextensions' supported list; any other format,
//! `int32` and `int64` included, is stripped and checks nothing).

use regex::Regex;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    BsonObjectId,
    Uri,
    Email,
    Hostname,
    Ipv4,
    Ipv6,
    Cidr,
    Mac,
    Uuid,
    Uuid3,
    Uuid4,
    Uuid5,
    Isbn,
    Isbn10,
    Isbn13,
    CreditCard,
    Ssn,
    HexColor,
    RgbColor,
    Byte,
    Password,
    Date,
    Duration,
    DateTime,
}

/// A format kube validates, with its name as the schema spells it.
#[derive(Clone, Debug)]
pub(super) struct Format {
    pub name: String,
    kind: Kind,
}

impl Format {
    /// The format when kube validates it (names compare without `-`).
    pub fn supported(name: &str) -> Option<Format> {
        let kind = match name.replace('-', "").as_str() {
            "bsonobjectid" => Kind::BsonObjectId,
            "uri" => Kind::Uri,
            "email" => Kind::Email,
            "hostname" => Kind::Hostname,
            "ipv4" => Kind::Ipv4,
            "ipv6" => Kind::Ipv6,
            "cidr" => Kind::Cidr,
            "mac" => Kind::Mac,
            "uuid" => Kind::Uuid,
            "uuid3" => Kind::Uuid3,
            "uuid4" => Kind::Uuid4,
            "uuid5" => Kind::Uuid5,
            "isbn" => Kind::Isbn,
            "isbn10" => Kind::Isbn10,
            "isbn13" => Kind::Isbn13,
            "creditcard" => Kind::CreditCard,
            "ssn" => Kind::Ssn,
            "hexcolor" => Kind::HexColor,
            "rgbcolor" => Kind::RgbColor,
            "byte" => Kind::Byte,
            "password" => Kind::Password,
            "date" => Kind::Date,
            "duration" => Kind::Duration,
            "datetime" => Kind::DateTime,
            _ => return None,
        };
        Some(Format {
            name: name.to_string(),
            kind,
        })
    }

    pub fn accepts(&self, s: &str) -> bool {
        match self.kind {
            Kind::BsonObjectId => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
            Kind::Uri => is_request_uri(s),
            Kind::Email => is_email(s),
            Kind::Hostname => is_hostname(s),
            Kind::Ipv4 => go_ip(s).is_some() && s.contains('.'),
            Kind::Ipv6 => go_ip(s).is_some() && s.contains(':'),
            Kind::Cidr => is_cidr(s),
            Kind::Mac => is_mac(s),
            Kind::Uuid => re(|r| &r.uuid, s),
            Kind::Uuid3 => re(|r| &r.uuid3, s),
            Kind::Uuid4 => re(|r| &r.uuid4, s),
            Kind::Uuid5 => re(|r| &r.uuid5, s),
            Kind::Isbn => is_isbn10(s) || is_isbn13(s),
            Kind::Isbn10 => is_isbn10(s),
            Kind::Isbn13 => is_isbn13(s),
            Kind::CreditCard => is_credit_card(s),
            Kind::Ssn => s.len() == 11 && re(|r| &r.ssn, s),
            Kind::HexColor => re(|r| &r.hex_color, s),
            Kind::RgbColor => re(|r| &r.rgb_color, s),
            Kind::Byte => re(|r| &r.base64, s),
            Kind::Password => true,
            Kind::Date => is_date(s),
            Kind::Duration => is_duration(s),
            Kind::DateTime => is_date_time(s),
        }
    }
}

/// Every regex the formats use, compiled once for the process.
struct Regexes {
    hostname: Regex,
    uuid: Regex,
    uuid3: Regex,
    uuid4: Regex,
    uuid5: Regex,
    ssn: Regex,
    hex_color: Regex,
    rgb_color: Regex,
    base64: Regex,
    credit_card: Regex,
    time_of_day: Regex,
    duration_part: Regex,
}

static REGEXES: LazyLock<Option<Regexes>> = LazyLock::new(|| {
    Some(Regexes {
        hostname: Regex::new(r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$").ok()?,
        uuid: Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$").ok()?,
        uuid3: Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$").ok()?,
        uuid4: Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").ok()?,
        uuid5: Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").ok()?,
        ssn: Regex::new(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$").ok()?,
        hex_color: Regex::new(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").ok()?,
        rgb_color: Regex::new(r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$").ok()?,
        base64: Regex::new(r"^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$").ok()?,
        credit_card: Regex::new(r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$").ok()?,
        time_of_day: Regex::new(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$").ok()?,
        duration_part: Regex::new(r"((\d+)\s*([A-Za-zµ]+))").ok()?,
    })
});

fn re(pick: fn(&Regexes) -> &Regex, s: &str) -> bool {
    REGEXES.as_ref().is_some_and(|r| pick(r).is_match(s))
}

/// strfmt's IsHostname: the RFC 1034 pattern, 255 octets, labels of 63.
fn is_hostname(s: &str) -> bool {
    re(|r| &r.hostname, s) && s.len() <= 255 && s.split('.').all(|l| l.len() <= 63)
}

/// Go's net.ParseIP: dotted IPv4 without leading zeros, or IPv6 (with an
/// embedded IPv4 tail); no zones.
pub(super) fn go_ip(s: &str) -> Option<IpAddr> {
    if s.contains(':') {
        return s.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let parts: Vec<&str> = s.split('.').collect();
    let canonical = parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && (p.len() == 1 || !p.starts_with('0')));
    if !canonical {
        return None;
    }
    s.parse::<Ipv4Addr>().ok().map(IpAddr::V4)
}

/// Go's net.ParseCIDR: an address, `/`, a decimal prefix length in range.
fn is_cidr(s: &str) -> bool {
    let Some((addr, bits)) = s.split_once('/') else {
        return false;
    };
    let Some(ip) = go_ip(addr) else {
        return false;
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let digits = !bits.is_empty() && bits.bytes().all(|b| b.is_ascii_digit());
    let canonical = bits.len() == 1 || !bits.starts_with('0');
    digits && canonical && bits.parse::<u32>().is_ok_and(|n| n <= max)
}

/// Go's net.ParseMAC: 6, 8 or 20 octets, `:`/`-` separated pairs or
/// `.` separated quads.
fn is_mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    let octets = if s.len() > 2 && (s.as_bytes()[2] == b':' || s.as_bytes()[2] == b'-') {
        let sep = s.as_bytes()[2] as char;
        let parts: Vec<&str> = s.split(sep).collect();
        parts.iter().all(|p| hex(p, 2)).then_some(parts.len())
    } else if s.len() > 4 && s.as_bytes()[4] == b'.' {
        let parts: Vec<&str> = s.split('.').collect();
        parts.iter().all(|p| hex(p, 4)).then_some(parts.len() * 2)
    } else {
        None
    };
    matches!(octets, Some(6 | 8 | 20))
}

/// Go's url.ParseRequestURI: an absolute URI or an absolute path.
fn is_request_uri(s: &str) -> bool {
    if s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s.starts_with('/') {
        return true;
    }
    url::Url::parse(s).is_ok()
}

/// net/mail's ParseAddress, for the usual shapes: `local@domain` or
/// `Name <local@domain>`.
fn is_email(s: &str) -> bool {
    let addr = match (s.rfind('<'), s.strip_suffix('>')) {
        (Some(open), Some(inner)) => &inner[open + 1..],
        _ => s.trim(),
    };
    let Some((local, domain)) = addr.rsplit_once('@') else {
        return false;
    };
    let atom = |p: &str| {
        !p.is_empty()
            && p.split('.').all(|a| {
                !a.is_empty()
                    && a.chars().all(|c| {
                        c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || !c.is_ascii()
                    })
            })
    };
    let quoted = local.len() >= 2 && local.starts_with('"') && local.ends_with('"');
    (atom(local) || quoted) && (atom(domain) || (domain.starts_with('[') && domain.ends_with(']')))
}

/// govalidator's ISBN checks run on the string without spaces and `-`.
fn isbn_digits(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect()
}

fn is_isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    let b = d.as_bytes();
    if b.len() != 10 || !b[..9].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let last = match b[9] {
        b'X' => 10,
        c if c.is_ascii_digit() => u32::from(c - b'0'),
        _ => return false,
    };
    let sum: u32 = b[..9]
        .iter()
        .enumerate()
        .map(|(i, c)| (i as u32 + 1) * u32::from(c - b'0'))
        .sum::<u32>()
        + 10 * last;
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    let b = d.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = b[..12]
        .iter()
        .enumerate()
        .map(|(i, c)| u32::from(c - b'0') * if i % 2 == 0 { 1 } else { 3 })
        .sum();
    (10 - sum % 10) % 10 == u32::from(b[12] - b'0')
}

/// govalidator's IsCreditCard: the digits match a card pattern and pass Luhn.
fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !re(|r| &r.credit_card, &digits) {
        return false;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, c)| {
            let d = u32::from(c - b'0');
            match (i % 2 == 1, d * 2) {
                (true, x) if x > 9 => x - 9,
                (true, x) => x,
                (false, _) => d,
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Go's `time.Parse("2006-01-02", s)`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| {
        b[r.clone()]
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| s[r].parse::<u32>().ok())
            .flatten()
    };
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt's IsDateTime: a date, `t`, then `hh:mm:ss[.frac](z|±hh:mm)`,
/// case-insensitive.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Some(caps) = REGEXES
        .as_ref()
        .and_then(|r| r.time_of_day.captures(parts[1]))
    else {
        return false;
    };
    let part = |i: usize| caps.get(i).map_or("", |m| m.as_str());
    part(1) <= "23" && part(2) <= "59" && part(3) <= "59"
}

/// strfmt's IsDuration: Go's time.ParseDuration, or any `<n> <unit>` part
/// with a unit strfmt knows.
fn is_duration(s: &str) -> bool {
    if is_go_duration(s) {
        return true;
    }
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let Some(r) = REGEXES.as_ref() else {
        return false;
    };
    r.duration_part.captures_iter(s).any(|c| {
        let unit = c.get(3).map_or("", |m| m.as_str()).trim().to_lowercase();
        let factor_ok = c.get(2).is_some_and(|m| m.as_str().parse::<i64>().is_ok());
        factor_ok
            && UNITS.iter().any(|variants| {
                let last = variants.len() - 1;
                variants.iter().enumerate().any(|(i, v)| {
                    (i == last && unit.starts_with(v)) || v.eq_ignore_ascii_case(&unit)
                })
            })
    })
}

/// Go's time.ParseDuration syntax: `[-+]` then `<decimal><unit>` parts, or `0`.
fn is_go_duration(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let num = &rest[..num_len];
        if num.is_empty() || num == "." || num.matches('.').count() > 1 {
            return false;
        }
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        if !["ns", "us", "µs", "μs", "ms", "s", "m", "h"].contains(&&rest[..unit_len]) {
            return false;
        }
        rest = &rest[unit_len..];
    }
    true
}

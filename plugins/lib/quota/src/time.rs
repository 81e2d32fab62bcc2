//! RFC 3339 timestamps (`metav1.Time`) to Unix seconds, and the clock.

/// The current time in Unix seconds (WASI's wall clock in a plugin); None
/// when the clock is unavailable or before 1970.
pub(crate) fn now_unix() -> Option<i64> {
    let elapsed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    i64::try_from(elapsed.as_secs()).ok()
}

/// Parses `2024-05-01T12:00:00Z`, with optional fractional seconds and a
/// `±hh:mm` offset instead of `Z`; fractions are dropped.
pub(crate) fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(text, 0, 4)?;
    let (month, day) = (digits(text, 5, 2)?, digits(text, 8, 2)?);
    let (hour, minute, second) = (
        digits(text, 11, 2)?,
        digits(text, 14, 2)?,
        digits(text, 17, 2)?,
    );
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let offset = zone_offset(skip_fraction(&text[19..])?)?;
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second - offset)
}

/// The fixed-width decimal number at `start..start + len`.
fn digits(text: &str, start: usize, len: usize) -> Option<i64> {
    let part = text.get(start..start + len)?;
    if !part.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    part.parse().ok()
}

/// Drops ".123456" from the front of the zone part.
fn skip_fraction(rest: &str) -> Option<&str> {
    let Some(fraction) = rest.strip_prefix('.') else {
        return Some(rest);
    };
    let end = fraction
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(fraction.len());
    (end > 0).then(|| &fraction[end..])
}

/// "Z" → 0, "+02:00" → 7200, "-05:30" → -19800.
fn zone_offset(zone: &str) -> Option<i64> {
    if zone == "Z" || zone == "z" {
        return Some(0);
    }
    let sign = match zone.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    if zone.len() != 6 || zone.as_bytes()[3] != b':' {
        return None;
    }
    Some(sign * (digits(zone, 1, 2)? * 3_600 + digits(zone, 4, 2)? * 60))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_utc_offsets_and_fractions() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2024-05-01T12:00:00Z"), Some(1_714_564_800));
        assert_eq!(
            parse_rfc3339("2024-05-01T12:00:00.123456Z"),
            Some(1_714_564_800)
        );
        assert_eq!(
            parse_rfc3339("2024-05-01T14:00:00+02:00"),
            Some(1_714_564_800)
        );
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400));
        for bad in [
            "",
            "2024-05-01",
            "2024-13-01T00:00:00Z",
            "2024-05-01T00:00:00",
            "2024-05-01T00:00:00.Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert!(now_unix().is_some_and(|t| t > 1_700_000_000));
    }
}

//! Time for Capstan's plugins and host: RFC 3339 timestamps as Go's
//! `time.Parse(time.RFC3339, ...)` reads them (metav1.Time, bootstrap token
//! expirations), as Unix seconds; ages as kube's `HumanDuration` prints them
//! (AGE columns); and the clock (`SystemTime`, which is the
//! WASI wall clock in a `wasm32-wasip2` build).

mod duration;

pub use duration::human_duration;
#[cfg(feature = "chrono")]
pub use duration::human_duration_of;

use std::time::{SystemTime, UNIX_EPOCH};

/// The current time in Unix seconds (0 if the clock is before 1970).
pub fn now_unix() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` into Unix seconds
/// (the fraction is dropped, rounding toward the past). `None` when the text
/// is not of that form or names an impossible date or time.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(&b[0..4])?;
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    let (hour, minute, second) = (
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
    );
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let offset = parse_zone(skip_fraction(&b[19..])?)?;
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second - offset)
}

/// The rest after an optional `.ddd…` fraction (at least one digit).
fn skip_fraction(rest: &[u8]) -> Option<&[u8]> {
    match rest.first() {
        Some(b'.') => {
            let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            (n > 0).then_some(&rest[1 + n..])
        }
        _ => Some(rest),
    }
}

/// `Z` → 0, `±HH:MM` → the offset east of UTC in seconds.
fn parse_zone(zone: &[u8]) -> Option<i64> {
    match zone {
        b"Z" => Some(0),
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (hours, minutes) = (digits(&[*h1, *h2])?, digits(&[*m1, *m2])?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = hours * 3_600 + minutes * 60;
            Some(if *sign == b'-' { -offset } else { offset })
        }
        _ => None,
    }
}

fn digits(text: &[u8]) -> Option<i64> {
    text.iter().try_fold(0i64, |acc, c| {
        c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
    })
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
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
        assert_eq!(parse_rfc3339("2024-02-29T12:34:56Z"), Some(1_709_210_096));
        assert_eq!(
            parse_rfc3339("2024-02-29T12:34:56.999Z"),
            Some(1_709_210_096)
        );
        assert_eq!(
            parse_rfc3339("2024-02-29T14:34:56+02:00"),
            Some(1_709_210_096)
        );
        assert_eq!(
            parse_rfc3339("2024-02-29T10:04:56-02:30"),
            Some(1_709_210_096)
        );
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59Z"), Some(-1));
    }

    #[test]
    fn rejects_malformed_and_impossible_times() {
        for bad in [
            "",
            "2024-02-29",
            "2024-02-29 12:34:56Z",
            "2023-02-29T12:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00+0200",
            "2024-01-01T00:00:00Zjunk",
            "２０２４-01-01T00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn clock_is_after_2020() {
        assert!(now_unix() > 1_577_836_800);
    }
}

//! Go's `time.ParseDuration` errors (cron's `@every` descriptor quotes them).

use kube_rules::gofmt::quote;

const UNITS: [&str; 8] = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"];

/// The error `time.ParseDuration(text)` returns, if any.
pub fn parse_error(text: &str) -> Option<String> {
    let invalid = || Some(format!("time: invalid duration {}", quote(text)));
    let mut rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    if rest == "0" {
        return None;
    }
    if rest.is_empty() {
        return invalid();
    }
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..number_len];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return invalid();
        }
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        if unit.is_empty() {
            return Some(format!("time: missing unit in duration {}", quote(text)));
        }
        if !UNITS.contains(&unit) {
            return Some(format!(
                "time: unknown unit {} in duration {}",
                quote(unit),
                quote(text)
            ));
        }
        rest = &rest[unit_len..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_duration_errors() {
        assert_eq!(parse_error("1h30m"), None);
        assert_eq!(parse_error("1.5s"), None);
        assert_eq!(
            parse_error("5").as_deref(),
            Some("time: missing unit in duration \"5\"")
        );
        assert_eq!(
            parse_error("x").as_deref(),
            Some("time: invalid duration \"x\"")
        );
    }
}

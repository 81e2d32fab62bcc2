//! CronJob schedules as robfig/cron v3's `ParseStandard` reads them (five
//! fields or a descriptor), with its error messages, which kube quotes in
//! `spec.schedule` causes. Only the errors matter here: nothing is scheduled.

use super::go_duration;

/// A field's bounds and the names it accepts (`jan`, `mon`, ...).
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [&'static str],
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const FIELDS: [Bounds; 5] = [
    Bounds {
        min: 0,
        max: 59,
        names: &[],
    },
    Bounds {
        min: 0,
        max: 23,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 31,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 12,
        names: &MONTHS,
    },
    Bounds {
        min: 0,
        max: 6,
        names: &DAYS,
    },
];

/// `cron.ParseStandard(schedule)`'s error, if any.
pub fn parse_error(schedule: &str) -> Option<String> {
    if schedule.is_empty() {
        return Some("empty spec string".into());
    }
    let mut spec = schedule;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        // The location is only known to Go's time zone database; the
        // fields after it are still checked.
        spec = spec.split_once(' ').map_or("", |(_, rest)| rest.trim());
    }
    if spec.starts_with('@') {
        return descriptor_error(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    fields
        .iter()
        .zip(FIELDS.iter())
        .find_map(|(field, bounds)| field_error(field, bounds))
}

fn descriptor_error(spec: &str) -> Option<String> {
    const KNOWN: [&str; 7] = [
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
    ];
    if KNOWN.contains(&spec) {
        return None;
    }
    match spec.strip_prefix("@every ") {
        Some(duration) => go_duration::parse_error(duration)
            .map(|err| format!("failed to parse duration {spec}: {err}")),
        None => Some(format!("unrecognized descriptor: {spec}")),
    }
}

/// A comma-separated list of ranges.
fn field_error(field: &str, bounds: &Bounds) -> Option<String> {
    field
        .split(',')
        .filter(|r| !r.is_empty())
        .find_map(|expr| range_error(expr, bounds).err())
}

/// `number | number "-" number [ "/" number ]`, or `*` / `?`.
fn range_error(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = int_or_name(low_and_high[0], bounds.names)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, int_or_name(low_and_high[1], bounds.names)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = int(range_and_step[1])?;
            if low_and_high.len() == 1 {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        let min = bounds.min;
        return Err(format!(
            "beginning of range ({start}) below minimum ({min}): {expr}"
        ));
    }
    if end > bounds.max {
        let max = bounds.max;
        return Err(format!(
            "end of range ({end}) above maximum ({max}): {expr}"
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn int_or_name(expr: &str, names: &[&str]) -> Result<u64, String> {
    let lower = expr.to_lowercase();
    match names.iter().position(|n| *n == lower) {
        // Months count from 1, days of the week from 0.
        Some(i) if names.len() == 12 => Ok(i as u64 + 1),
        Some(i) => Ok(i as u64),
        None => int(expr),
    }
}

/// `mustParseInt`: Go's `strconv.Atoi` and its errors, then the sign.
fn int(expr: &str) -> Result<u64, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: invalid syntax",
            kube_rules::gofmt::quote(expr)
        ));
    }
    match expr.parse::<i64>() {
        Ok(n) if n < 0 => Err(format!("negative number ({n}) not allowed: {expr}")),
        Ok(n) => Ok(n.unsigned_abs()),
        Err(_) => Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: value out of range",
            kube_rules::gofmt::quote(expr)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robfig_errors() {
        assert_eq!(parse_error("* * * * *"), None);
        assert_eq!(parse_error("*/5 1-3 ? jan-mar mon,fri"), None);
        assert_eq!(parse_error("@hourly"), None);
        assert_eq!(parse_error("@every 1h30m"), None);
        let cases = [
            (
                "not a schedule",
                "expected exactly 5 fields, found 3: [not a schedule]",
            ),
            ("61 * * * *", "end of range (61) above maximum (59): 61"),
            (
                "*/0 25 0 13 8",
                "step of range should be a positive number: */0",
            ),
            ("@bogus", "unrecognized descriptor: @bogus"),
            ("1-2-3 x 5/2/1 ? mon-fri", "too many hyphens: 1-2-3"),
            (
                "5-1 * * jan-foo *",
                "beginning of range (5) beyond end of range (1): 5-1",
            ),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "x * * * *",
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            (
                "@every 1x",
                "failed to parse duration @every 1x: time: unknown unit \"x\" in duration \"1x\"",
            ),
        ];
        for (schedule, error) in cases {
            assert_eq!(parse_error(schedule).as_deref(), Some(error), "{schedule}");
        }
    }
}

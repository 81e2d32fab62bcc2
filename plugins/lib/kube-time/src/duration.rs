//! kube's `duration.HumanDuration` (k8s.io/apimachinery/pkg/util/duration):
//! the ~2-3 significant figure ages shown in AGE / LAST SEEN columns.

const NANOS_PER_SEC: i64 = 1_000_000_000;
const MINUTE: i64 = 60 * NANOS_PER_SEC;
const HOUR: i64 = 60 * MINUTE;

fn with_remainder(big: i64, big_unit: &str, small: i64, small_unit: &str) -> String {
    if small == 0 {
        format!("{big}{big_unit}")
    } else {
        format!("{big}{big_unit}{small}{small_unit}")
    }
}

/// Up to 8 hours: "119s", "3m10s", "70m", "3h1m".
fn short_span(d: i64) -> String {
    let seconds = d / NANOS_PER_SEC;
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = d / MINUTE;
    if minutes < 10 {
        return with_remainder(minutes, "m", seconds % 60, "s");
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    with_remainder(d / HOUR, "h", minutes % 60, "m")
}

/// From 8 hours on: "47h", "2d1h", "367d", "2y1d", "8y".
fn long_span(hours: i64) -> String {
    let days = hours / 24;
    if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        with_remainder(days, "d", hours % 24, "h")
    } else if hours < 24 * 365 * 2 {
        format!("{days}d")
    } else if hours < 24 * 365 * 8 {
        with_remainder(days / 365, "y", days % 365, "d")
    } else {
        format!("{}y", days / 365)
    }
}

/// Formats a duration given in nanoseconds (negative: in the future)
/// exactly like kube's `HumanDuration`.
pub fn human_duration(n: i64) -> String {
    let seconds = n / NANOS_PER_SEC;
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 || n < 0 {
        return "0s".to_string();
    }
    let hours = n / HOUR;
    if hours < 8 {
        short_span(n)
    } else {
        long_span(hours)
    }
}

/// [`human_duration`] of a `chrono` span (saturating beyond ±292 years).
#[cfg(feature = "chrono")]
pub fn human_duration_of(d: chrono::Duration) -> String {
    let nanos = d
        .num_nanoseconds()
        .unwrap_or(if d < chrono::Duration::zero() {
            i64::MIN
        } else {
            i64::MAX
        });
    human_duration(nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: i64) -> i64 {
        s * NANOS_PER_SEC
    }

    /// The units of the upstream test table, in nanoseconds.
    struct Duration;
    impl Duration {
        fn nanoseconds(n: i64) -> i64 {
            n
        }
        fn milliseconds(n: i64) -> i64 {
            n * 1_000_000
        }
        fn minutes(n: i64) -> i64 {
            n * MINUTE
        }
        fn hours(n: i64) -> i64 {
            n * HOUR
        }
    }

    #[test]
    fn upstream_samples() {
        let h = |n: i64| Duration::hours(n);
        let cases = [
            (secs(1), "1s"),
            (secs(70), "70s"),
            (secs(190), "3m10s"),
            (Duration::minutes(70), "70m"),
            (h(47), "47h"),
            (h(49), "2d1h"),
            (h(8 * 24 + 2), "8d"),
            (h(367 * 24), "367d"),
            (h(365 * 2 * 24 + 25), "2y1d"),
            (h(365 * 8 * 24 + 2), "8y"),
        ];
        for (d, want) in cases {
            assert_eq!(human_duration(d), want, "{d:?}");
        }
    }

    #[test]
    fn upstream_boundaries() {
        let ms = Duration::milliseconds(1);
        let cases = [
            (secs(-2), "<invalid>"),
            (secs(-2) + Duration::nanoseconds(1), "0s"),
            (secs(0), "0s"),
            (secs(1) - ms, "0s"),
            (Duration::minutes(2) - ms, "119s"),
            (Duration::minutes(2), "2m"),
            (Duration::minutes(2) + secs(1), "2m1s"),
            (Duration::minutes(10) - ms, "9m59s"),
            (Duration::minutes(10) + secs(1), "10m"),
            (Duration::hours(3) - ms, "179m"),
            (Duration::hours(3) + Duration::minutes(1), "3h1m"),
            (Duration::hours(8) - ms, "7h59m"),
            (Duration::hours(8) + Duration::minutes(59), "8h"),
            (Duration::hours(48) - ms, "47h"),
            (Duration::hours(48), "2d"),
            (Duration::hours(8 * 24) - ms, "7d23h"),
            (Duration::hours(2 * 365 * 24) - ms, "729d"),
            (Duration::hours(2 * 365 * 24 + 24), "2y1d"),
            (Duration::hours(8 * 365 * 24) - ms, "7y364d"),
            (Duration::hours(9 * 365 * 24), "9y"),
        ];
        for (d, want) in cases {
            assert_eq!(human_duration(d), want, "{d:?}");
        }
    }
}

//! `GET /metrics`: the Prometheus text exposition format (version 0.0.4),
//! as kube-apiserver serves it to whoever may `get` the `/metrics`
//! non-resource URL (the bootstrap `system:monitoring` role). Parts of the
//! server register a [`MetricSource`]; each renders its families into an
//! [`Exposition`] at scrape time, so nothing is kept twice.

use axum::response::{IntoResponse, Response};
use std::fmt::Write;
use std::sync::Arc;

/// Something that has metrics to show.
pub trait MetricSource: Send + Sync {
    fn render(&self, out: &mut Exposition);
}

/// A histogram's state: one count per bucket of `bounds`, then the
/// overflow, and the sum of what was observed.
#[derive(Clone, Debug)]
pub struct Histogram {
    bounds: &'static [f64],
    counts: Vec<u64>,
    sum: f64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: vec![0; bounds.len() + 1],
            sum: 0.0,
        }
    }

    pub fn observe(&mut self, value: f64) {
        let bucket = self
            .bounds
            .iter()
            .position(|b| value <= *b)
            .unwrap_or(self.bounds.len());
        self.counts[bucket] += 1;
        self.sum += value;
    }

    /// Its samples, named `name`, with `labels`.
    pub fn render(&self, out: &mut Exposition, name: &str, labels: Labels<'_>) {
        out.histogram(name, labels, self.bounds, &self.counts, self.sum);
    }
}

/// The sources a server exposes.
pub type Sources = Vec<Arc<dyn MetricSource>>;

/// The text being written: families, each with its HELP and TYPE lines.
#[derive(Default)]
pub struct Exposition {
    text: String,
}

/// A sample's labels, in order.
pub type Labels<'a> = &'a [(&'a str, &'a str)];

impl Exposition {
    /// Starts a family (`kind`: counter, gauge or histogram).
    pub fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.text, "# TYPE {name} {kind}");
    }

    /// One sample of the current family.
    pub fn sample(&mut self, name: &str, labels: Labels<'_>, value: f64) {
        self.text.push_str(name);
        write_labels(&mut self.text, labels);
        let _ = writeln!(self.text, " {}", number(value));
    }

    /// A histogram's samples: cumulative `_bucket`s (upper bounds `bounds`,
    /// then `+Inf`), `_sum` and `_count`. `counts[i]` is the number of
    /// observations in bucket `i` alone; its last item is the overflow.
    pub fn histogram(
        &mut self,
        name: &str,
        labels: Labels<'_>,
        bounds: &[f64],
        counts: &[u64],
        sum: f64,
    ) {
        let mut total = 0;
        let bucket = format!("{name}_bucket");
        for (i, n) in counts.iter().enumerate() {
            total += n;
            let le = bounds.get(i).map_or("+Inf".to_string(), |b| number(*b));
            let mut with_le = labels.to_vec();
            with_le.push(("le", &le));
            self.sample(&bucket, &with_le, total as f64);
        }
        self.sample(&format!("{name}_sum"), labels, sum);
        self.sample(&format!("{name}_count"), labels, total as f64);
    }

    pub fn into_text(self) -> String {
        self.text
    }
}

fn write_labels(out: &mut String, labels: Labels<'_>) {
    if labels.is_empty() {
        return;
    }
    out.push('{');
    for (i, (k, v)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{k}=\"{}\"", escape_value(v));
    }
    out.push('}');
}

fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn escape_value(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Every source's families, as the response to `GET /metrics`.
pub fn serve(sources: &Sources) -> Response {
    let mut out = Exposition::default();
    for source in sources {
        source.render(&mut out);
    }
    let mut resp = out.into_text().into_response();
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    resp
}

/// The `process_*` families every Go server exposes (client_golang's
/// process collector), read from `/proc/self` at scrape time (Linux).
pub struct ProcessMetrics {
    start_time: f64,
}

impl ProcessMetrics {
    pub fn new() -> ProcessMetrics {
        ProcessMetrics {
            start_time: process_start_time().unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs_f64())
                    .unwrap_or_default()
            }),
        }
    }
}

impl Default for ProcessMetrics {
    fn default() -> Self {
        ProcessMetrics::new()
    }
}

/// Clock ticks a second (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
const TICKS: f64 = 100.0;
const PAGE: f64 = 4096.0;

/// The fields of `/proc/self/stat` after the command's parentheses.
fn stat_fields() -> Option<Vec<String>> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    Some(rest.split_whitespace().map(String::from).collect())
}

fn process_start_time() -> Option<f64> {
    let fields = stat_fields()?;
    let started_ticks: f64 = fields.get(19)?.parse().ok()?;
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let boot: f64 = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(boot + started_ticks / TICKS)
}

fn max_fds() -> Option<f64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

impl MetricSource for ProcessMetrics {
    fn render(&self, out: &mut Exposition) {
        let fields = stat_fields().unwrap_or_default();
        let field = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
        let gauges = [
            (
                "process_cpu_seconds_total",
                "counter",
                "Total user and system CPU time spent in seconds.",
                field(11).zip(field(12)).map(|(u, s)| (u + s) / TICKS),
            ),
            (
                "process_open_fds",
                "gauge",
                "Number of open file descriptors.",
                std::fs::read_dir("/proc/self/fd")
                    .ok()
                    .map(|d| d.count() as f64),
            ),
            (
                "process_max_fds",
                "gauge",
                "Maximum number of open file descriptors.",
                max_fds(),
            ),
            (
                "process_resident_memory_bytes",
                "gauge",
                "Resident memory size in bytes.",
                field(21).map(|pages| pages * PAGE),
            ),
            (
                "process_start_time_seconds",
                "gauge",
                "Start time of the process since unix epoch in seconds.",
                Some(self.start_time),
            ),
            (
                "process_virtual_memory_bytes",
                "gauge",
                "Virtual memory size in bytes.",
                field(20),
            ),
        ];
        for (name, kind, help, value) in gauges {
            if let Some(v) = value {
                out.family(name, kind, help);
                out.sample(name, &[], v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_samples_and_histograms_in_the_text_format() {
        let mut out = Exposition::default();
        out.family("x_total", "counter", "Things.\nCounted.");
        out.sample("x_total", &[("a", "q\"uo\\te\n")], 3.0);
        out.family("d_seconds", "histogram", "How long.");
        out.histogram("d_seconds", &[("p", "a/b")], &[0.5, 1.0], &[2, 0, 1], 2.25);
        assert_eq!(
            out.into_text(),
            "# HELP x_total Things.\\nCounted.\n# TYPE x_total counter\n\
             x_total{a=\"q\\\"uo\\\\te\\n\"} 3\n\
             # HELP d_seconds How long.\n# TYPE d_seconds histogram\n\
             d_seconds_bucket{p=\"a/b\",le=\"0.5\"} 2\n\
             d_seconds_bucket{p=\"a/b\",le=\"1\"} 2\n\
             d_seconds_bucket{p=\"a/b\",le=\"+Inf\"} 3\n\
             d_seconds_sum{p=\"a/b\"} 2.25\nd_seconds_count{p=\"a/b\"} 3\n"
        );
    }
}

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

//! The server's logs as kube-apiserver's flags shape them: `-v N` (klog
//! verbosity: up to 3 info, 4–5 debug, 6 and more trace), `--vmodule
//! module=N,...` (per module of Capstan, e.g. `admission=5`) and
//! `--logging-format json` (one JSON object a line: `ts` in seconds, `v`,
//! `msg`, the target as `logger`, and the event's fields). `RUST_LOG`, when
//! set, wins over both verbosity flags.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The tracing level of a klog verbosity.
fn level(v: u8) -> &'static str {
    match v {
        0..=3 => "info",
        4..=5 => "debug",
        _ => "trace",
    }
}

/// The filter `-v` and `--vmodule` make: Capstan's modules at the
/// verbosity, `module=N` entries at theirs, everything else at warn.
pub fn filter(v: u8, vmodule: &[String]) -> Result<String, String> {
    let mut directives = vec!["warn".to_string(), format!("capstan={}", level(v))];
    for entry in vmodule.iter().filter(|e| !e.is_empty()) {
        let (module, n) = entry
            .split_once('=')
            .ok_or_else(|| format!("--vmodule {entry:?}: want module=N"))?;
        let n: u8 = n
            .parse()
            .map_err(|_| format!("--vmodule {entry:?}: {n:?} is not a verbosity"))?;
        let module = module.trim_end_matches(".rs").replace(['/', '.'], "::");
        if module.is_empty()
            || !module
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        {
            return Err(format!("--vmodule {entry:?}: not a module name"));
        }
        directives.push(format!("capstan::{module}={}", level(n)));
    }
    Ok(directives.join(","))
}

/// Installs the subscriber (`json`: kube's JSON lines; else text).
pub fn init(v: u8, vmodule: &[String], format: &str) -> anyhow::Result<()> {
    let directives = filter(v, vmodule).map_err(anyhow::Error::msg)?;
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| directives.into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = match format {
        "text" => builder.try_init(),
        "json" => builder.event_format(JsonLines).try_init(),
        other => anyhow::bail!("--logging-format {other:?}: text or json"),
    };
    installed.map_err(|e| anyhow::anyhow!("installing the logger: {e}"))
}

/// kube's JSON log lines.
struct JsonLines;

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut line = Map::new();
        line.insert("ts".into(), json!(ts));
        line.insert("logger".into(), json!(meta.target()));
        if *meta.level() <= Level::WARN {
            line.insert("level".into(), json!(meta.level().as_str().to_lowercase()));
        } else {
            line.insert("v".into(), json!(verbosity_of(*meta.level())));
        }
        line.insert("msg".into(), json!(fields.message));
        line.extend(fields.values);
        writeln!(writer, "{}", Value::Object(line))
    }
}

/// The klog verbosity an event's level stands for.
fn verbosity_of(level: Level) -> u8 {
    match level {
        Level::INFO => 0,
        Level::DEBUG => 4,
        _ => 6,
    }
}

#[derive(Default)]
struct Fields {
    message: String,
    values: Map<String, Value>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let mut text = String::new();
        let _ = write!(text, "{value:?}");
        match field.name() {
            "message" => self.message = text,
            name => {
                self.values.insert(name.to_string(), json!(text));
            }
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = value.to_string(),
            name => {
                self.values.insert(name.to_string(), json!(value));
            }
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.values.insert(field.name().to_string(), json!(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.values.insert(field.name().to_string(), json!(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.values.insert(field.name().to_string(), json!(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_and_modules_make_the_filter() {
        assert_eq!(filter(0, &[]).unwrap(), "warn,capstan=info");
        assert_eq!(filter(5, &[]).unwrap(), "warn,capstan=debug");
        assert_eq!(
            filter(2, &["admission=6".into(), "storage/sqlite.rs=4".into()]).unwrap(),
            "warn,capstan=info,capstan::admission=trace,capstan::storage::sqlite=debug"
        );
        assert!(filter(0, &["admission".into()]).is_err());
        assert!(filter(0, &["a b=1".into()]).is_err());
    }
}

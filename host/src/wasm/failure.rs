//! Why a plugin call failed, and how a wasmtime error is classified into one
//! of those reasons.

use std::time::Duration;

use wasmtime::Trap;

/// A failed plugin call. The caller applies the plugin's failurePolicy to
/// every variant alike; the texts are meant for the user who configured it.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum PluginFailure {
    #[error("plugin timed out after {}ms", .0.as_millis())]
    Timeout(Duration),
    /// The instance tried to grow its memory past the call's limit.
    #[error("plugin exceeded its memory limit of {}", mib(*.0))]
    OutOfMemory(usize),
    #[error("plugin ran out of fuel (its instruction budget)")]
    OutOfFuel,
    #[error("plugin trapped: {0}")]
    Trap(String),
    /// The plugin's own `err(...)` answer.
    #[error("plugin returned an error: {0}")]
    Returned(String),
    #[error("plugin runtime error: {0}")]
    Internal(String),
}

impl PluginFailure {
    /// A short name of the failure's kind, for metrics and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            PluginFailure::Timeout(_) => "timeout",
            PluginFailure::OutOfMemory(_) => "out_of_memory",
            PluginFailure::OutOfFuel => "out_of_fuel",
            PluginFailure::Trap(_) => "trap",
            PluginFailure::Returned(_) => "returned_error",
            PluginFailure::Internal(_) => "internal",
        }
    }

    /// The kind of a failure known only by its message (admission
    /// transports carry text): the kind whose message it starts with.
    pub fn kind_of_message(message: &str) -> &'static str {
        const PREFIXES: [(&str, &str); 6] = [
            ("plugin timed out", "timeout"),
            ("plugin exceeded its memory limit", "out_of_memory"),
            ("plugin ran out of fuel", "out_of_fuel"),
            ("plugin trapped", "trap"),
            ("plugin returned an error", "returned_error"),
            ("plugin runtime error", "internal"),
        ];
        PREFIXES
            .iter()
            .find(|(prefix, _)| message.starts_with(prefix))
            .map_or("other", |(_, kind)| kind)
    }
}

fn mib(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// What the store observed during the failed call, used to tell the causes
/// of a trap apart.
pub(crate) struct Observed<'a> {
    pub timeout: Duration,
    /// Set when the memory limiter refused a growth (the limit in bytes).
    pub memory_refused: Option<usize>,
    /// What the guest wrote to stderr (e.g. its panic message).
    pub stderr: &'a str,
}

/// Classifies an error raised while instantiating or calling a plugin.
pub(crate) fn classify(error: &wasmtime::Error, seen: Observed<'_>) -> PluginFailure {
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => PluginFailure::Timeout(seen.timeout),
        Some(Trap::OutOfFuel) => PluginFailure::OutOfFuel,
        Some(_) if seen.memory_refused.is_some() => {
            PluginFailure::OutOfMemory(seen.memory_refused.unwrap_or_default())
        }
        Some(trap) => PluginFailure::Trap(trap_text(&trap.to_string(), seen.stderr)),
        None if seen.memory_refused.is_some() => {
            PluginFailure::OutOfMemory(seen.memory_refused.unwrap_or_default())
        }
        None => PluginFailure::Internal(format!("{error:#}")),
    }
}

/// The trap's text, preceded by what the guest said last on stderr (a panic
/// message says far more than "wasm `unreachable` instruction executed").
fn trap_text(trap: &str, stderr: &str) -> String {
    match guest_message(stderr) {
        Some(message) => format!("{message} ({trap})"),
        None => trap.to_string(),
    }
}

/// A Rust panic's message (the lines after "panicked at ...:", without the
/// backtrace hint), or else the last meaningful stderr line.
fn guest_message(stderr: &str) -> Option<String> {
    let meaningful = |line: &&str| !line.trim().is_empty() && !line.starts_with("note: run with");
    let lines: Vec<&str> = stderr.lines().filter(meaningful).collect();
    let panic_at = lines.iter().rposition(|line| line.contains("panicked at"));
    match panic_at {
        Some(at) if at + 1 < lines.len() => Some(lines[at + 1..].join(" ").trim().to_string()),
        _ => lines.last().map(|line| line.trim().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(memory_refused: Option<usize>, stderr: &str) -> Observed<'_> {
        Observed {
            timeout: Duration::from_millis(300),
            memory_refused,
            stderr,
        }
    }

    #[test]
    fn messages_name_the_limit() {
        let t = PluginFailure::Timeout(Duration::from_millis(300));
        assert_eq!(t.to_string(), "plugin timed out after 300ms");
        let m = PluginFailure::OutOfMemory(64 << 20);
        assert_eq!(m.to_string(), "plugin exceeded its memory limit of 64 MiB");
    }

    #[test]
    fn every_kind_is_known_again_from_its_message() {
        let all = [
            PluginFailure::Timeout(Duration::from_millis(5)),
            PluginFailure::OutOfMemory(1 << 20),
            PluginFailure::OutOfFuel,
            PluginFailure::Trap("boom".into()),
            PluginFailure::Returned("no".into()),
            PluginFailure::Internal("x".into()),
        ];
        for failure in all {
            let message = failure.to_string();
            assert_eq!(PluginFailure::kind_of_message(&message), failure.kind());
        }
        assert_eq!(
            PluginFailure::kind_of_message("connection refused"),
            "other"
        );
    }

    #[test]
    fn interrupt_is_a_timeout() {
        let e = wasmtime::Error::from(Trap::Interrupt);
        assert_eq!(
            classify(&e, seen(None, "")),
            PluginFailure::Timeout(Duration::from_millis(300))
        );
    }

    #[test]
    fn a_trap_after_a_refused_growth_is_out_of_memory() {
        let e = wasmtime::Error::from(Trap::UnreachableCodeReached);
        assert_eq!(
            classify(&e, seen(Some(1 << 20), "memory allocation failed")),
            PluginFailure::OutOfMemory(1 << 20)
        );
    }

    #[test]
    fn a_trap_carries_the_panic_message() {
        let e = wasmtime::Error::from(Trap::UnreachableCodeReached);
        let stderr = "\nthread '<unnamed>' panicked at src/lib.rs:3:9:\nboom\n\
            note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        match classify(&e, seen(None, stderr)) {
            PluginFailure::Trap(text) => {
                assert!(text.starts_with("boom ("), "{text}");
                assert!(text.contains("unreachable"), "{text}");
            }
            other => panic!("expected a trap, got {other:?}"),
        }
    }
}

//! Language toolchains that some end-to-end tests need (node and npm for the
//! JavaScript SDK, Python and pip for componentize-py, Go, clang with
//! wasi-libc, …). A machine without them still gets a green `cargo test`:
//! such a test says on the terminal that it was skipped, naming itself and
//! what is missing, and passes. CI sets `CAPSTAN_REQUIRE_TOOLCHAINS=1`
//! (`.ci/run` installs every toolchain), and there a missing tool fails the
//! test instead of skipping it.

use std::io::Write;
use std::process::{Command, Stdio};

/// The commands of `commands` that cannot be run here (`<cmd> --version` fails).
pub fn missing_commands(commands: &[&str]) -> Vec<String> {
    commands
        .iter()
        .filter(|cmd| {
            !Command::new(cmd)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(|cmd| cmd.to_string())
        .collect()
}

/// Whether `test` can run, given what is `missing` (empty: yes). When
/// something is missing it reports `test` as skipped (written to the
/// terminal directly, past libtest's output capture) and answers false,
/// unless CAPSTAN_REQUIRE_TOOLCHAINS is set, where it fails the test.
pub fn available(test: &str, missing: &[String]) -> bool {
    if missing.is_empty() {
        return true;
    }
    let what = missing.join(", ");
    assert!(
        std::env::var_os("CAPSTAN_REQUIRE_TOOLCHAINS").is_none(),
        "{test} needs {what}, which this machine lacks (CAPSTAN_REQUIRE_TOOLCHAINS is set)"
    );
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: needs {what} (install it to run this test)"
    );
    false
}

/// `available(test, &missing_commands(commands))`.
pub fn commands_available(test: &str, commands: &[&str]) -> bool {
    available(test, &missing_commands(commands))
}

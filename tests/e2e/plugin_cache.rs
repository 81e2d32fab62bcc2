//! The compiled-plugin cache: without `--plugin-cache-dir`, servers keep
//! compiled plugins in the user's cache directory, so a server started on a
//! fresh data directory after another one compiles nothing.

use crate::support::{eventually, Server, SHARED_PLUGIN_CACHE};
use std::path::Path;
use std::time::Duration;

/// Copies what the tests' servers compiled into their shared cache (a
/// server started here fills it if need be), so the first server here
/// compiles little: the second is what the test is about.
fn seed(cache: &Path) {
    drop(Server::start());
    std::fs::create_dir_all(cache).expect("cache dir");
    for entry in std::fs::read_dir(SHARED_PLUGIN_CACHE)
        .into_iter()
        .flatten()
        .flatten()
    {
        if entry.path().extension().is_some_and(|e| e == "cwasm") {
            let _ = std::fs::copy(entry.path(), cache.join(entry.file_name()));
        }
    }
}

#[test]
fn a_fresh_data_directory_finds_the_plugins_another_server_compiled() {
    let home = tempfile::tempdir().expect("temp dir");
    let cache = home.path().join("capstan").join("plugins");
    seed(&cache);
    let first = Server::start_with_cache_home(home.path());
    let summary = format!("cache={}", cache.display());
    assert!(first.log().contains(&summary), "{}", first.log());
    let second = Server::start_with_cache_home(home.path());
    let log = second.log();
    assert!(log.contains(&summary), "{log}");
    assert!(
        log.contains(" compiled=0 "),
        "the second server compiled: {log}"
    );
    assert!(!log.contains("source=Compiled"), "{log}");
    assert!(!second.dir.path().join("plugin-cache").exists());
    second.ok(&["get", "namespaces", "default"]);
}

/// A machine's first start: the compilers run in child processes (the
/// server maps the code they leave in the cache), the server serves, and
/// the optimized code the optimizer's children compile is swapped in.
#[test]
fn a_first_start_compiles_in_child_processes_and_serves_their_code() {
    let home = tempfile::tempdir().expect("temp dir");
    let first = Server::start_with_cache_home(home.path());
    let log = first.log();
    assert!(log.contains("compiled in a child process"), "{log}");
    assert!(!log.contains("compiling in the server"), "{log}");
    let cache = home.path().join("capstan").join("plugins");
    let entries = std::fs::read_dir(&cache).expect("the cache").count();
    let modules: usize = log
        .split(" modules=")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the start's summary");
    assert!(
        entries >= modules,
        "{entries} entries for {modules} modules"
    );
    first.ok(&["create", "namespace", "first-start"]);
    assert!(
        eventually(Duration::from_secs(120), || first
            .log()
            .contains("plugin optimized")),
        "{}",
        first.log()
    );
    first.ok(&[
        "create",
        "configmap",
        "after-optimizing",
        "-n",
        "first-start",
    ]);
}

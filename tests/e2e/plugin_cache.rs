//! The compiled-plugin cache: without `--plugin-cache-dir`, servers keep
//! compiled plugins in the user's cache directory, so a server started on a
//! fresh data directory after another one compiles nothing.

use crate::support::{Server, SHARED_PLUGIN_CACHE};
use std::path::Path;

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

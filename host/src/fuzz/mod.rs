//! The fuzz harness: proptest over hostile inputs for everything that reads
//! what a client sends — request bodies (JSON, YAML, protobuf), the three
//! patch types and server-side apply, label and field selectors, CRD
//! validation rules (generated CEL over generated objects). Ordinary
//! `#[test]`s, bounded to [`CASES`] cases per property (`PROPTEST_CASES`
//! overrides it for a longer run), so CI runs them in seconds. The property
//! is always: no panic, and a refusal of the class kube answers with (400 for
//! bodies, never a 500 where kube has none; for CEL, an evaluation that ends
//! within its budget). A failure shrinks to a small
//! input; each one found is kept as a test in `regressions.rs`.

mod cel;
mod decoding;
mod generators;
mod patches;
mod regressions;
mod selectors;

use proptest::test_runner::Config;

/// Cases per property in an ordinary test run.
const CASES: u32 = 256;

/// The harness's proptest configuration: [`CASES`] cases unless
/// `PROPTEST_CASES` says otherwise; nothing written to the source tree.
pub(crate) fn config() -> Config {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = CASES;
    }
    config.failure_persistence = None;
    config
}

/// The built-in catalogue's OpenAPI schemas, built once for every property.
pub(crate) fn schemas() -> &'static crate::catalogue::Schemas {
    static CATALOGUE: std::sync::LazyLock<crate::catalogue::Catalogue> =
        std::sync::LazyLock::new(crate::catalogue::Catalogue::builtin);
    CATALOGUE.schemas()
}

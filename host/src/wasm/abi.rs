//! The plugin ABI a component was built against, read from its imports and
//! exports before it is linked: the version of `capstan:plugin` it imports
//! and the world it implements (the function it exports).
//!
//! Compatibility rule (semver, as the component model's linker matches
//! versioned imports): a plugin built against `capstan:plugin@X.Y.Z` loads
//! in a host speaking `A.B.C` when X == A and, while the ABI is 0.x, Y == B;
//! patch versions never matter. A plugin that imports nothing of
//! `capstan:plugin` (it only uses WASI) loads in any host.

use wasmtime::component::Component;
use wasmtime::Engine;

use super::PluginKind;

/// The ABI version this host speaks: the WIT package's
/// (`package capstan:plugin@0.1.0;` in plugin-sdk/wit/capstan.wit).
pub const ABI_VERSION: &str = "0.1.0";

const PACKAGE: &str = "capstan:plugin/";

/// Every world a component could be loaded as, by the function it exports.
const KINDS: [PluginKind; 5] = [
    PluginKind::Admission,
    PluginKind::Authenticator,
    PluginKind::Authorizer,
    PluginKind::Strategy,
    PluginKind::Converter,
];

/// The versions of `capstan:plugin` a component imports (e.g. "0.1.0").
fn imported_versions(engine: &Engine, component: &Component) -> Vec<String> {
    let ty = component.component_type();
    let mut versions: Vec<String> = ty
        .imports(engine)
        .filter_map(|(name, _)| name.strip_prefix(PACKAGE)?.split_once('@'))
        .map(|(_, version)| version.to_string())
        .collect();
    versions.sort();
    versions.dedup();
    versions
}

/// The major and, for 0.x, minor part that must match.
fn compatibility_key(version: &str) -> Option<(u64, Option<u64>)> {
    let mut parts = version.split(['.', '-', '+']);
    let major: u64 = parts.next()?.parse().ok()?;
    let minor: u64 = parts.next()?.parse().ok()?;
    Some((major, (major == 0).then_some(minor)))
}

/// Refuses a component built against an ABI this host does not speak.
pub fn check_version(name: &str, engine: &Engine, component: &Component) -> anyhow::Result<()> {
    let ours = compatibility_key(ABI_VERSION);
    for version in imported_versions(engine, component) {
        if compatibility_key(&version) != ours {
            anyhow::bail!(
                "plugin {name:?} was built against capstan:plugin@{version}, but this server speaks capstan:plugin@{ABI_VERSION}: rebuild it with an SDK of ABI {} (same major version; while 0.x, the same minor)",
                compatible_range()
            );
        }
    }
    Ok(())
}

/// "0.1.x" for 0.1.0, "1.x" for 1.2.0.
fn compatible_range() -> String {
    match compatibility_key(ABI_VERSION) {
        Some((major, Some(minor))) => format!("{major}.{minor}.x"),
        Some((major, None)) => format!("{major}.x"),
        None => ABI_VERSION.to_string(),
    }
}

/// The worlds whose function the component exports (normally one).
pub fn worlds(engine: &Engine, component: &Component) -> Vec<PluginKind> {
    let ty = component.component_type();
    let exports: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    KINDS
        .into_iter()
        .filter(|k| exports.iter().any(|e| e == k.export()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::{
        Component as Encoder, ComponentImportSection, ComponentTypeRef, ComponentTypeSection,
        InstanceType,
    };

    /// A component that imports an (empty) instance named `name`.
    fn importing(name: &str) -> Vec<u8> {
        let mut types = ComponentTypeSection::new();
        types.instance(&InstanceType::new());
        let mut imports = ComponentImportSection::new();
        imports.import(name, ComponentTypeRef::Instance(0));
        let mut component = Encoder::new();
        component.section(&types).section(&imports);
        component.finish()
    }

    fn check(import: &str) -> anyhow::Result<()> {
        let engine = super::super::engine::build_engine(false)?;
        let component = Component::new(&engine, importing(import))?;
        check_version("p", &engine, &component)
    }

    #[test]
    fn the_wit_package_is_the_version_the_host_speaks() {
        let wit = include_str!("../../../plugin-sdk/wit/capstan.wit");
        assert!(wit.contains(&format!("package capstan:plugin@{ABI_VERSION};")));
    }

    #[test]
    fn only_the_same_minor_of_a_0_x_abi_loads() {
        assert!(check("capstan:plugin/host@0.1.0").is_ok());
        assert!(check("capstan:plugin/host@0.1.7").is_ok());
        assert!(check("wasi:cli/environment@0.2.6").is_ok());
        let err = check("capstan:plugin/host@0.2.0").unwrap_err().to_string();
        assert!(err.contains("capstan:plugin@0.2.0"), "{err}");
        assert!(err.contains("capstan:plugin@0.1.0"), "{err}");
        assert!(err.contains("0.1.x"), "{err}");
        assert!(check("capstan:plugin/host@1.0.0").is_err());
    }

    #[test]
    fn compatibility_keys() {
        assert_eq!(compatibility_key("0.1.0"), Some((0, Some(1))));
        assert_eq!(compatibility_key("1.2.3"), Some((1, None)));
        assert_eq!(compatibility_key("1.0.0-rc1"), Some((1, None)));
        assert_eq!(compatibility_key("x"), None);
    }
}

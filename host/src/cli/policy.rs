//! `capstan policy`: policy bundles outside a server (`policy::bundles`). `build`
//! makes a bundle from a folder, `inspect` prints what one holds (verifying
//! every blob and each component's world), `test` runs its policies against
//! AdmissionReview fixtures and fails when a case does.

use crate::cli::policy_registry as reg;
use crate::policy::bundles::{self, components, fixtures};
use crate::wasm::PluginRuntime;
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum PolicyCommand {
    /// Build a bundle (OCI image layout, or a tarball of one) from a folder
    /// holding bundle.yaml (or bundle.json) and the components it names.
    Build(BuildArgs),
    /// Verify a bundle and print its digest, policies, worlds, rules and phases.
    Inspect(InspectArgs),
    /// Run a bundle's policies against a folder of AdmissionReview fixtures
    /// (`<case>.json` + `<case>.expect.yaml`); exits non-zero when a case fails.
    Test(TestArgs),
    /// Push a bundle (and the signatures its layout keeps) to an OCI registry.
    Push(crate::cli::policy_registry::PushArgs),
    /// Pull a bundle and its signatures from an OCI registry into a layout or tarball.
    Pull(crate::cli::policy_registry::PullArgs),
    /// Sign a bundle as cosign does (key-based): in the registry at
    /// `sha256-<hex>.sig`, or in the layout on disk.
    Sign(crate::cli::policy_registry::SignArgs),
    /// Verify a bundle's cosign signature with a public key.
    Verify(crate::cli::policy_registry::VerifyArgs),
    /// Write a cosign key pair (`cosign.key` encrypted with COSIGN_PASSWORD, `cosign.pub`).
    GenerateKeyPair(crate::cli::policy_registry::GenerateKeyPairArgs),
}

#[derive(Args, Debug, Clone)]
pub struct BuildArgs {
    /// The folder with bundle.yaml (or bundle.json).
    pub folder: PathBuf,
    /// Where to write it: a directory (OCI image layout) or a `.tar` file.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Where the `.wasm` files the manifest names are (default: the folder).
    #[arg(long = "modules-dir")]
    pub modules_dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct InspectArgs {
    /// A bundle: an OCI image layout directory, a tarball of one, or a
    /// registry reference (`host[:port]/repository:tag`, pulled first).
    pub bundle: String,
    #[command(flatten)]
    pub registry: reg::RegistryArgs,
    /// Print the bundle manifest (the config blob) as JSON, with the digest.
    #[arg(long)]
    pub json: bool,
    /// Where compiled components are cached (default: the user's cache, as for `capstan serve`).
    #[arg(long = "plugin-cache-dir")]
    pub plugin_cache_dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct TestArgs {
    /// A bundle: an OCI image layout directory, a tarball of one, or a
    /// registry reference (pulled first); or a `.yaml` file of
    /// ValidatingAdmissionPolicies (with bindings and params).
    pub bundle: String,
    #[command(flatten)]
    pub registry: reg::RegistryArgs,
    /// The fixtures: `<case>.json` AdmissionReviews, each with `<case>.expect.yaml`.
    pub fixtures: PathBuf,
    /// Where compiled components are cached (default: the user's cache, as for `capstan serve`).
    #[arg(long = "plugin-cache-dir")]
    pub plugin_cache_dir: Option<PathBuf>,
}

/// Runs a `capstan policy` command, printing to `out`.
pub async fn run(command: PolicyCommand, out: &mut dyn Write) -> anyhow::Result<()> {
    match command {
        PolicyCommand::Build(args) => build(args, out),
        PolicyCommand::Inspect(args) => inspect(args, out).await,
        PolicyCommand::Test(args) => test(args, out).await,
        PolicyCommand::Push(args) => reg::push(args, out).await,
        PolicyCommand::Pull(args) => reg::pull(args, out).await,
        PolicyCommand::Sign(args) => reg::sign(args, out).await,
        PolicyCommand::Verify(args) => reg::verify(args, out).await,
        PolicyCommand::GenerateKeyPair(args) => reg::generate_key_pair(args, out),
    }
}

fn build(args: BuildArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let built = bundles::build(&args.folder, args.modules_dir.as_deref(), &args.output)?;
    let m = &built.manifest;
    writeln!(
        out,
        "built bundle {} {} ({} policies) into {}\ndigest: {}",
        m.name,
        m.version,
        m.policies.len(),
        args.output.display(),
        built.manifest_digest
    )?;
    Ok(())
}

fn runtime(cache: Option<&std::path::Path>) -> anyhow::Result<std::sync::Arc<PluginRuntime>> {
    PluginRuntime::new(crate::wasm::cache_dir::shared(cache))
}

async fn inspect(args: InspectArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let local = reg::local(&args.bundle, &args.registry).await?;
    let mut bundle = bundles::load(&local.path)?;
    bundle.source = args.bundle.clone();
    let runtime = runtime(args.plugin_cache_dir.as_deref())?;
    components::load_all(&runtime, &bundle)?;
    if args.json {
        let doc =
            serde_json::json!({"digest": bundle.manifest_digest, "manifest": bundle.manifest});
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    write!(out, "{}", describe(&bundle))?;
    Ok(())
}

/// The human-readable summary `inspect` prints.
fn describe(bundle: &bundles::Bundle) -> String {
    let m = &bundle.manifest;
    let mut text = format!(
        "bundle: {} {}\nsource: {}\ndigest: {}\n",
        m.name, m.version, bundle.source, bundle.manifest_digest
    );
    if let Some(d) = &m.description {
        text += &format!("description: {d}\n");
    }
    text += "policies:\n";
    for p in &m.policies {
        if p.kind == bundles::manifest::PolicyKind::AdmissionPolicy {
            text += &describe_admission_policy(bundle, p);
            continue;
        }
        let pm = &p.manifest;
        let phases: Vec<String> = pm
            .phases
            .iter()
            .map(|ph| format!("{ph:?}").to_lowercase())
            .collect();
        let size = bundle.component(&p.module).len();
        text += &format!(
            "  {}:\n    world: {} (capstan:plugin@{})\n    phases: {}\n    failurePolicy: {:?}\n    component: {} ({} KiB)\n",
            pm.name,
            pm.world.world(),
            crate::wasm::abi::ABI_VERSION,
            phases.join(", "),
            pm.failure_policy.unwrap_or_default(),
            p.module,
            size.div_ceil(1024),
        );
        text += &format!("    rules: {}\n", rules_line(pm.rules.as_deref()));
        for (field, value) in [
            ("settings", &pm.settings),
            ("settingsSchema", &pm.settings_schema),
        ] {
            if let Some(v) = value {
                text += &format!("    {field}: {v}\n");
            }
        }
    }
    text
}

/// A bundled ValidatingAdmissionPolicy's lines of `inspect`.
fn describe_admission_policy(
    bundle: &bundles::Bundle,
    p: &bundles::manifest::BundlePolicy,
) -> String {
    let layer = bundle.component(&p.module);
    let mut text = format!("  {}:\n", p.manifest.name);
    match bundles::admission_policies::parse_layer(layer) {
        Ok(b) => {
            let bindings: Vec<&str> = b.bindings.iter().map(|b| b.name.as_str()).collect();
            text += &format!(
                "    admissionPolicy: ValidatingAdmissionPolicy {} (bindings: {})\n    layer: {} ({} KiB)\n    rules: {}\n",
                b.policy.name,
                bindings.join(", "),
                p.module,
                layer.len().div_ceil(1024),
                rules_line(Some(&b.rules)),
            );
        }
        Err(e) => text += &format!("    admissionPolicy: unreadable: {e}\n"),
    }
    text
}

/// `CREATE,UPDATE pods,deployments.apps` per rule, `; `-separated.
fn rules_line(rules: Option<&[crate::admission::matcher::Rule]>) -> String {
    let Some(rules) = rules else {
        return "every request".into();
    };
    let rule = |r: &crate::admission::matcher::Rule| {
        let resources: Vec<String> = r
            .api_groups
            .iter()
            .flat_map(|g| {
                r.resources.iter().map(move |res| match g.as_str() {
                    "" => res.clone(),
                    g => format!("{res}.{g}"),
                })
            })
            .collect();
        format!("{} {}", r.operations.join(","), resources.join(","))
    };
    rules.iter().map(rule).collect::<Vec<_>>().join("; ")
}

async fn test(args: TestArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if bundles::cel_fixtures::is_policy_yaml(&args.bundle) {
        return test_policy_yaml(&args, out).await;
    }
    let local = reg::local(&args.bundle, &args.registry).await?;
    let bundle = bundles::load(&local.path)?;
    let runtime = runtime(args.plugin_cache_dir.as_deref())?;
    let policies = components::load_all(&runtime, &bundle)?;
    let cases = fixtures::read_cases(&args.fixtures)?;
    if cases.is_empty() {
        anyhow::bail!(
            "{}: no fixtures (<case>.json with <case>.expect.yaml)",
            args.fixtures.display()
        );
    }
    let outcomes = fixtures::run(&policies, &cases).await;
    let what = format!(
        "bundle {} {}",
        bundle.manifest.name, bundle.manifest.version
    );
    report(&outcomes, &what, out)
}

/// `capstan policy test POLICIES.yaml FIXTURES`: admission policies as
/// YAML, offline (`bundles::cel_fixtures`).
async fn test_policy_yaml(args: &TestArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let path = std::path::Path::new(&args.bundle);
    let policies = bundles::cel_fixtures::CelPolicies::read(path)?;
    let cases = fixtures::read_cases(&args.fixtures)?;
    if cases.is_empty() {
        anyhow::bail!(
            "{}: no fixtures (<case>.json with <case>.expect.yaml)",
            args.fixtures.display()
        );
    }
    let outcomes = policies.run(&cases).await?;
    let what = format!("{} ({} admission policies)", path.display(), policies.len());
    report(&outcomes, &what, out)
}

/// Prints each outcome and the summary; an error when a case failed.
fn report(outcomes: &[fixtures::Outcome], what: &str, out: &mut dyn Write) -> anyhow::Result<()> {
    for o in outcomes {
        writeln!(out, "{o}")?;
    }
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    writeln!(
        out,
        "{what}: {} cases, {} passed, {failed} failed",
        outcomes.len(),
        outcomes.len() - failed
    )?;
    match failed {
        0 => Ok(()),
        n => anyhow::bail!("{n} of {} cases failed", outcomes.len()),
    }
}

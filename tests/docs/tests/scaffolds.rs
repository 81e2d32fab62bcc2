//! `capstan plugin new` copies a language's require-labels example with
//! its name replaced (host/src/cli/plugin_new.rs): what it copies must then
//! name only the new policy, nothing else of the example.

use capstan_doc_checks::{leftovers, repo_root, str_const, templates};

/// What the tests call the new policy.
const NEW: &str = "new-policy";

#[test]
fn scaffolds_keep_nothing_of_the_example() {
    let root = repo_root();
    let source = std::fs::read_to_string(root.join("host/src/cli/plugin_new.rs"))
        .expect("host/src/cli/plugin_new.rs");
    let example = str_const(&source, "EXAMPLE_NAME").expect("EXAMPLE_NAME in plugin_new.rs");
    let templates = templates(&source);
    assert!(
        templates.len() >= 5,
        "plugin_new.rs lists {} templates, expected one per language: {templates:?}",
        templates.len()
    );
    // The other examples' names: any folder under examples/<language>/.
    let mut others: Vec<String> = Vec::new();
    for lang in std::fs::read_dir(root.join("examples")).unwrap().flatten() {
        if let Ok(dirs) = std::fs::read_dir(lang.path()) {
            for dir in dirs.flatten().filter(|d| d.path().is_dir()) {
                let name = dir.file_name().to_string_lossy().into_owned();
                if name != example && !others.contains(&name) {
                    others.push(name);
                }
            }
        }
    }
    let fill = |text: &str| {
        text.replace("../../../plugin-sdk", "/opt/capstan/plugin-sdk")
            .replace(&example, NEW)
            .replace(&example.replace('-', "_"), &NEW.replace('-', "_"))
    };
    let mut found = Vec::new();
    for template in &templates {
        for file in &template.files {
            let path = root.join("examples").join(&template.dir).join(file);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let scaffolded = fill(file);
            for (line_no, line) in fill(&text).lines().enumerate() {
                for why in leftovers(line, &example, &others) {
                    found.push(format!(
                        "examples/{}/{file}:{} (the scaffold's {scaffolded}): {why}: {}",
                        template.dir,
                        line_no + 1,
                        line.trim()
                    ));
                }
            }
            for why in leftovers(&scaffolded, &example, &others) {
                found.push(format!("the file name {scaffolded}: {why}"));
            }
        }
    }
    for line in &found {
        println!("{line}");
    }
    assert!(
        found.is_empty(),
        "scaffolds keep the example's leftovers:\n{}",
        found.join("\n")
    );
}

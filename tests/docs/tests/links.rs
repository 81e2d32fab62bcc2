//! Every relative link of every Markdown file of the repository points to
//! a file or folder that exists, and an anchor to a heading of its target.

use capstan_doc_checks::{broken_links, markdown_files, repo_root};

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let root = repo_root();
    let files = markdown_files(&root);
    assert!(
        files.iter().any(|f| f.ends_with("README.md")),
        "no Markdown found under {}",
        root.display()
    );
    let broken = broken_links(&root);
    for line in &broken {
        println!("{line}");
    }
    assert!(
        broken.is_empty(),
        "{} broken link(s) in {} Markdown files:\n{}",
        broken.len(),
        files.len(),
        broken.join("\n")
    );
}

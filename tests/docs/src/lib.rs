//! Checks that the repository's documentation stays true (`cargo test -p
//! capstan-doc-checks`, part of `cargo test --workspace`):
//!
//! - `tests/links.rs`: every relative link of every Markdown file points to
//!   a file or folder that exists, and a `#anchor` to a heading of its
//!   target (GitHub's slugs);
//! - `tests/scaffolds.rs`: the files `capstan plugin new` copies from the
//!   examples (`host/src/cli/plugin_new.rs`) keep nothing of the example once
//!   its name is replaced: no other policy named, no `Example` wording, no
//!   README the scaffold does not create.
//!
//! No dependencies: the Markdown reading here is the part of CommonMark
//! links and headings need (fenced code and code spans are not Markdown,
//! ATX and setext headings, inline links and images, reference
//! definitions).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The repository's root (this crate is `tests/docs`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// Folders never searched for Markdown: build output, installed packages,
/// git's own; any other hidden folder too.
const SKIPPED_DIRS: &[&str] = &["target", "node_modules", ".git"];

/// Third-party files kept as published (their links are theirs), relative
/// to the root.
const VENDORED_DIRS: &[&str] = &["tests/e2e/data/kube-prometheus"];

/// Every `*.md` file under `root`, sorted, outside [`SKIPPED_DIRS`],
/// hidden folders and [`VENDORED_DIRS`].
pub fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.expect("a directory entry");
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type().expect("a file type");
            if kind.is_dir() {
                let relative = path.strip_prefix(root).unwrap_or(&path);
                let vendored = VENDORED_DIRS.iter().any(|v| relative == Path::new(v));
                if !(name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_str()) || vendored) {
                    pending.push(path);
                }
            } else if name.ends_with(".md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// A fence's opening: its character, length and indentation.
fn fence_open(line: &str) -> Option<(u8, usize)> {
    let trimmed = line.trim_start();
    let first = *trimmed.as_bytes().first()?;
    if first != b'`' && first != b'~' {
        return None;
    }
    let len = trimmed.bytes().take_while(|&b| b == first).count();
    // A backtick fence's info string holds no backtick.
    let info_ok = first == b'~' || !trimmed[len..].contains('`');
    (len >= 3 && info_ok).then_some((first, len))
}

/// For each line, whether it is part of a fenced code block (its fences
/// included). Fences are recognised at any indentation, so code in list
/// items counts; an unclosed fence runs to the end, as in CommonMark.
pub fn fenced_lines(lines: &[&str]) -> Vec<bool> {
    let mut fenced = vec![false; lines.len()];
    let mut open: Option<(u8, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        match open {
            None => {
                if let Some(fence) = fence_open(line) {
                    open = Some(fence);
                    fenced[i] = true;
                }
            }
            Some((ch, len)) => {
                fenced[i] = true;
                let trimmed = line.trim();
                let closes = trimmed.len() >= len && trimmed.bytes().all(|b| b == ch);
                if closes {
                    open = None;
                }
            }
        }
    }
    fenced
}

/// The text with fenced code blocks and code spans turned into spaces
/// (newlines kept, so byte offsets still give line numbers): what remains
/// is Markdown whose links count.
pub fn without_code(text: &str) -> Vec<u8> {
    let lines: Vec<&str> = text.split('\n').collect();
    let fenced = fenced_lines(&lines);
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        if fenced[i] {
            out.extend(std::iter::repeat_n(b' ', line.len()));
        } else {
            out.extend_from_slice(line.as_bytes());
        }
    }
    blank_code_spans(&mut out);
    out
}

/// Whether `bytes[at..]` starts a blank line's newline (a paragraph's end).
fn blank_line_at(bytes: &[u8], at: usize) -> bool {
    bytes[at] == b'\n'
        && bytes[at + 1..]
            .iter()
            .take_while(|&&b| b != b'\n')
            .all(|b| b.is_ascii_whitespace())
        && bytes[at + 1..].contains(&b'\n')
}

/// Blanks each code span: a run of n backticks up to the next run of
/// exactly n, within one paragraph. An unmatched run stays literal.
fn blank_code_spans(bytes: &mut [u8]) {
    let run_at = |bytes: &[u8], i: usize| bytes[i..].iter().take_while(|&&b| b == b'`').count();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' || (i > 0 && bytes[i - 1] == b'\\') {
            i += 1;
            continue;
        }
        let n = run_at(bytes, i);
        let mut j = i + n;
        let mut close = None;
        while j < bytes.len() {
            if blank_line_at(bytes, j) {
                break;
            }
            if bytes[j] == b'`' {
                let m = run_at(bytes, j);
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                for b in &mut bytes[i..j + n] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = j + n;
            }
            None => i += n,
        }
    }
}

/// A link of a Markdown file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// 1-based line of its destination.
    pub line: usize,
    /// Its text.
    pub text: String,
    /// Where it points, as written.
    pub dest: String,
}

/// The inline links and images (`[text](dest "title")`,
/// `![alt](dest)`) and reference definitions (`[label]: dest`) of a
/// Markdown text, outside code.
pub fn links(text: &str) -> Vec<Link> {
    let bytes = without_code(text);
    let original = text.as_bytes();
    let line_of = |at: usize| 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
    let mut found = Vec::new();
    for close in 0..bytes.len().saturating_sub(1) {
        if bytes[close] != b']' || bytes[close + 1] != b'(' {
            continue;
        }
        let Some(open) = matching_open(&bytes, close) else {
            continue;
        };
        let Some((start, dest)) = destination(&bytes, close + 2) else {
            continue;
        };
        found.push(Link {
            line: line_of(start),
            text: collapse(&original[open + 1..close]),
            dest,
        });
    }
    let mut offset = 0;
    for line in bytes.split(|&b| b == b'\n') {
        if let Some((label, dest)) = reference_definition(line) {
            found.push(Link {
                line: line_of(offset),
                text: label,
                dest,
            });
        }
        offset += line.len() + 1;
    }
    found.sort_by_key(|l| l.line);
    found
}

/// The `[` that `]` at `close` ends, within the paragraph (nested
/// brackets balanced, escaped ones skipped).
fn matching_open(bytes: &[u8], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = close;
    while i > 0 {
        i -= 1;
        let escaped = i > 0 && bytes[i - 1] == b'\\';
        match bytes[i] {
            b'\n' if blank_line_at(bytes, i) => return None,
            b']' if !escaped => depth += 1,
            b'[' if !escaped => {
                if depth == 0 {
                    return Some(i);
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    None
}

/// The destination of an inline link whose `(` ends before `from`: its
/// offset and text (`<...>` or up to whitespace or the unbalanced `)`).
fn destination(bytes: &[u8], from: usize) -> Option<(usize, String)> {
    let mut i = from;
    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t' || bytes[i] == b'\n') {
        i += 1;
    }
    let start = i;
    if bytes.get(i) == Some(&b'<') {
        let end = i
            + 1
            + bytes[i + 1..]
                .iter()
                .position(|&b| b == b'>' || b == b'\n')?;
        (bytes[end] == b'>').then(|| (start, text_of(&bytes[i + 1..end])))
    } else {
        let mut depth = 0usize;
        while i < bytes.len() {
            match bytes[i] {
                b'(' => depth += 1,
                b')' if depth == 0 => break,
                b')' => depth -= 1,
                b if b.is_ascii_whitespace() => break,
                _ => {}
            }
            i += 1;
        }
        (i > start).then(|| (start, text_of(&bytes[start..i])))
    }
}

/// `[label]: dest` at the start of a line (up to 3 spaces in).
fn reference_definition(line: &[u8]) -> Option<(String, String)> {
    let indent = line.iter().take_while(|&&b| b == b' ').count();
    if indent > 3 || line.get(indent) != Some(&b'[') {
        return None;
    }
    let rest = &line[indent + 1..];
    let close = rest.iter().position(|&b| b == b']')?;
    if rest.get(close + 1) != Some(&b':') || close == 0 || rest[0] == b'^' {
        return None;
    }
    let after = text_of(&rest[close + 2..]);
    let dest = after.split_whitespace().next()?;
    let dest = dest.trim_start_matches('<').trim_end_matches('>');
    Some((text_of(&rest[..close]), dest.to_string()))
}

fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Text with its runs of whitespace as one space.
fn collapse(bytes: &[u8]) -> String {
    text_of(bytes)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// GitHub's anchor for a heading's text (github-slugger): the rendered
/// text lowercased, everything but letters, digits, `-`, `_` and spaces
/// dropped, spaces turned into `-`.
pub fn slug(heading: &str) -> String {
    rendered(heading)
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A heading's Markdown as the text GitHub shows: code spans' backticks,
/// emphasis stars and HTML tags dropped, links and images as their text.
fn rendered(heading: &str) -> String {
    let mut out = String::new();
    let mut rest = heading;
    while let Some(c) = rest.chars().next() {
        if c == '!' && rest[1..].starts_with('[') {
            rest = &rest[1..];
            continue;
        }
        if c == '[' {
            if let Some(end) = rest.find("](") {
                if let Some(close) = rest[end..].find(')') {
                    out.push_str(&rest[1..end]);
                    rest = &rest[end + close + 1..];
                    continue;
                }
            }
        }
        if c == '<' {
            if let Some(close) = rest.find('>') {
                rest = &rest[close + 1..];
                continue;
            }
        }
        if c != '`' && c != '*' {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out.trim().to_string()
}

/// An ATX heading's text (`## Text ##`), if the line is one.
fn atx_heading(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let line = &line[indent..];
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    if indent > 3 || !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let text = rest.trim();
    // A closing sequence of #s, after a space, is not part of the text.
    let without = text.trim_end_matches('#');
    if without.is_empty() || without.ends_with(' ') {
        Some(without.trim_end())
    } else {
        Some(text)
    }
}

/// Whether a line is a setext underline (`===` or `---`, nothing else).
fn setext_underline(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let t = line.trim();
    indent <= 3 && !t.is_empty() && (t.bytes().all(|b| b == b'=') || t.bytes().all(|b| b == b'-'))
}

/// Whether a line starts a list item (then a `---` under it is a rule).
fn list_item(line: &str) -> bool {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with("+ ")
        || (digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") ")))
}

/// The anchors of a Markdown text: its headings' slugs (a repeated slug
/// numbered `-1`, `-2`..., as GitHub does) and the `id`/`name` of its HTML
/// anchors.
pub fn anchors(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let fenced = fenced_lines(&lines);
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut found = Vec::new();
    let mut add = |base: String, found: &mut Vec<String>| {
        let count = seen.entry(base.clone()).or_insert(0);
        found.push(match *count {
            0 => base,
            n => format!("{base}-{n}"),
        });
        *count += 1;
    };
    for (i, line) in lines.iter().enumerate() {
        if fenced[i] {
            continue;
        }
        if let Some(text) = atx_heading(line) {
            add(slug(text), &mut found);
        } else if i + 1 < lines.len()
            && !fenced[i + 1]
            && setext_underline(lines[i + 1])
            && !line.trim().is_empty()
            && !setext_underline(line)
            && !list_item(line)
            && !line.contains('|')
        {
            add(slug(line.trim()), &mut found);
        }
        for attr in ["id=\"", "name=\""] {
            for (at, _) in line.match_indices(attr) {
                let value = &line[at + attr.len()..];
                if let Some(end) = value.find('"') {
                    found.push(value[..end].to_string());
                }
            }
        }
    }
    found
}

/// `%XX` escapes decoded (a link to `a%20b.md` is to `a b.md`).
pub fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a destination leaves the repository: a URL with a scheme
/// (`https:`, `mailto:`...) or a protocol-relative one (`//host`).
pub fn is_external(dest: &str) -> bool {
    if dest.starts_with("//") {
        return true;
    }
    match dest.find(':') {
        Some(colon) => {
            let scheme = &dest[..colon];
            !scheme.is_empty()
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// What is wrong with each relative link of the Markdown files under
/// `root`: `path:line: [text](dest): why`, paths relative to `root`.
pub fn broken_links(root: &Path) -> Vec<String> {
    let mut anchors_of: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    let mut anchors_in = |file: &Path| -> Vec<String> {
        anchors_of
            .entry(file.to_path_buf())
            .or_insert_with(|| {
                let text = std::fs::read_to_string(file).unwrap_or_default();
                anchors(&text)
            })
            .clone()
    };
    let mut broken = Vec::new();
    for file in markdown_files(root) {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for link in links(&text) {
            if let Some(why) = problem(root, &file, &link.dest, &mut anchors_in) {
                broken.push(format!(
                    "{shown}:{}: [{}]({}): {why}",
                    link.line, link.text, link.dest
                ));
            }
        }
    }
    broken
}

/// Why `dest`, a link of `file`, is broken; None when it is fine or not
/// the repository's.
fn problem(
    root: &Path,
    file: &Path,
    dest: &str,
    anchors_in: &mut dyn FnMut(&Path) -> Vec<String>,
) -> Option<String> {
    if is_external(dest) {
        return None;
    }
    let (path, anchor) = match dest.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (dest, None),
    };
    let path = percent_decoded(path.split('?').next().unwrap_or_default());
    let target = if path.is_empty() {
        file.to_path_buf()
    } else if let Some(from_root) = path.strip_prefix('/') {
        root.join(from_root)
    } else {
        file.parent().unwrap_or(root).join(&path)
    };
    let Ok(resolved) = target.canonicalize() else {
        return Some(format!("{} does not exist", shown(root, &target)));
    };
    if !resolved.starts_with(root) {
        return Some(format!("{} is outside the repository", target.display()));
    }
    let anchor = percent_decoded(anchor?);
    if anchor.is_empty() {
        return None;
    }
    let page = if resolved.is_dir() {
        resolved.join("README.md")
    } else {
        resolved.clone()
    };
    if page.extension().is_none_or(|e| e != "md") || !page.is_file() {
        // A line anchor of a source file (`#L10`) or a folder without a README.
        return None;
    }
    let known = anchors_in(&page);
    if known
        .iter()
        .any(|a| a == &anchor.to_lowercase() || a == &anchor)
    {
        None
    } else {
        Some(format!(
            "{} has no heading or anchor #{anchor}",
            shown(root, &page)
        ))
    }
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// One language's scaffold, as `host/src/cli/plugin_new.rs` lists it: the
/// example folder under `examples/` and the files it copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub dir: String,
    pub files: Vec<String>,
}

/// The string literals of `text`, in order (no escapes in them here).
fn string_literals(text: &str) -> Vec<String> {
    text.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The templates of `plugin_new.rs`: each `example!("dir", ["file", ...])`.
pub fn templates(plugin_new_rs: &str) -> Vec<Template> {
    let mut found = Vec::new();
    for (at, _) in plugin_new_rs.match_indices("example!(") {
        let args = &plugin_new_rs[at + "example!(".len()..];
        let mut depth = 1usize;
        let end = args
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .map(|(i, _)| i)
            .unwrap_or(args.len());
        let mut literals = string_literals(&args[..end]).into_iter();
        // The macro's own definition (`$dir:literal`) has no literals.
        if let Some(dir) = literals.next() {
            found.push(Template {
                dir,
                files: literals.collect(),
            });
        }
    }
    found
}

/// The value of `const <name>: &str = "...";` in Rust source.
pub fn str_const(source: &str, name: &str) -> Option<String> {
    let at = source.find(&format!("const {name}: &str = \""))?;
    string_literals(&source[at..]).into_iter().next()
}

/// What a scaffold's text keeps of the example it was made from, beyond
/// what `capstan plugin new` replaces: `example` names the example's
/// policy (e.g. `require-labels`), `others` the other examples' names.
/// The text is the scaffold's (the example's name already replaced).
pub fn leftovers(text: &str, example: &str, others: &[String]) -> Vec<String> {
    let squashed = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let mut found = Vec::new();
    let text_squashed = squashed(text);
    for name in std::iter::once(example).chain(others.iter().map(String::as_str)) {
        if text_squashed.contains(&squashed(name)) {
            found.push(format!(
                "names the policy {name} (in some spelling: {})",
                squashed(name)
            ));
        }
    }
    // The Go module path capstan.dev/examples/<name> is the scaffold's own.
    let lower = text.to_lowercase().replace("capstan.dev/examples/", "");
    if lower.contains("example") {
        found.push("says \"example\"".to_string());
    }
    for (at, _) in text.match_indices("README") {
        if at == 0 || text.as_bytes()[at - 1] != b'/' {
            found.push("points at a README the scaffold does not create".to_string());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_githubs() {
        assert_eq!(
            slug("Writing an admission plugin in JavaScript (or TypeScript)"),
            "writing-an-admission-plugin-in-javascript-or-typescript"
        );
        assert_eq!(
            slug("`capstan plugin run`: one call"),
            "capstan-plugin-run-one-call"
        );
        assert_eq!(slug("Issue 12's targets"), "issue-12s-targets");
        assert_eq!(slug("A [link](x.md) and **bold**"), "a-link-and-bold");
        assert_eq!(slug("Two  spaces – dash"), "two--spaces--dash");
        assert_eq!(slug("snake_case ≤ 300"), "snake_case--300");
    }

    #[test]
    fn anchors_number_repeats_and_skip_code() {
        let text = "# A\n\n```sh\n# not a heading\n```\n## A ##\nSetext\n---\n<a id=\"x\"></a>\n- item\n---\n";
        assert_eq!(anchors(text), ["a", "a-1", "setext", "x"]);
    }

    #[test]
    fn links_outside_code_with_their_lines() {
        let text = "See [one](a.md) and `[not](b.md)`.\n\n```\n[no](c.md)\n```\n\
            [`code` text](d/e.md#f \"title\") ![img](<g h.png>)\n[ref]: i.md\n\
            [wrapped\ntext](j.md) [[nested]](k.md) \\[esc](l.md)\n";
        let got: Vec<(usize, String)> = links(text).into_iter().map(|l| (l.line, l.dest)).collect();
        let want: Vec<(usize, String)> = [
            (1, "a.md"),
            (6, "d/e.md#f"),
            (6, "g h.png"),
            (7, "i.md"),
            (9, "j.md"),
            (9, "k.md"),
        ]
        .into_iter()
        .map(|(l, d)| (l, d.to_string()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn externals_are_told_apart() {
        for d in ["https://x", "http://x/y", "mailto:a@b", "//cdn/x"] {
            assert!(is_external(d), "{d}");
        }
        for d in ["a.md", "../b/c.md#d:e", "#anchor", "dir/"] {
            assert!(!is_external(d), "{d}");
        }
        assert_eq!(percent_decoded("a%20b%2"), "a b%2");
    }

    #[test]
    fn broken_links_are_named_with_their_file_and_line() {
        let root = std::env::temp_dir().join(format!("capstan-doc-checks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("docs/node_modules")).unwrap();
        std::fs::write(root.join("docs/node_modules/x.md"), "[gone](nowhere.md)").unwrap();
        std::fs::write(root.join("docs/b.md"), "# Title `here`\n").unwrap();
        std::fs::write(
            root.join("a.md"),
            "# A\n\n[ok](docs/b.md#title-here) [dir](docs) [self](#a) [web](https://x/y)\n\
             [missing](docs/c.md)\n[bad anchor](docs/b.md#nope) [up](../../x.md)\n",
        )
        .unwrap();
        let root = root.canonicalize().unwrap();
        let broken = broken_links(&root);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(broken.len(), 3, "{broken:#?}");
        assert_eq!(
            broken[0],
            "a.md:4: [missing](docs/c.md): docs/c.md does not exist"
        );
        assert_eq!(
            broken[1],
            "a.md:5: [bad anchor](docs/b.md#nope): docs/b.md has no heading or anchor #nope"
        );
        assert!(
            broken[2].starts_with("a.md:5: [up](../../x.md): "),
            "{}",
            broken[2]
        );
    }

    #[test]
    fn templates_are_read_from_plugin_new() {
        let source = "macro_rules! example { ($dir:literal, [$($file:literal),+]) => {} }\n\
            const EXAMPLE_NAME: &str = \"require-labels\";\n\
            files: example!(\"rust/require-labels\", [\"Cargo.toml\", \"src/lib.rs\"]),\n\
            files: example!(\n  \"go/require-labels\",\n  [\"go.mod\"]\n),";
        assert_eq!(
            templates(source),
            [
                Template {
                    dir: "rust/require-labels".into(),
                    files: vec!["Cargo.toml".into(), "src/lib.rs".into()]
                },
                Template {
                    dir: "go/require-labels".into(),
                    files: vec!["go.mod".into()]
                },
            ]
        );
        assert_eq!(
            str_const(source, "EXAMPLE_NAME").as_deref(),
            Some("require-labels")
        );
    }

    #[test]
    fn leftovers_are_found() {
        let others = ["unique-ingress-host".to_string()];
        let clean = "module capstan.dev/examples/my-policy\n// Admission policy `my-policy`.";
        assert!(leftovers(clean, "require-labels", &others).is_empty());
        for text in [
            "package requirelabels",
            "pub struct RequireLabels;",
            "// The same policy as examples/js/my-policy",
            "\"description\": \"Example Capstan admission plugin\"",
            "# See README.md.",
            "// like unique_ingress_host",
        ] {
            assert!(
                !leftovers(text, "require-labels", &others).is_empty(),
                "{text}"
            );
        }
        assert!(leftovers("include /sdk/c/README.md", "require-labels", &others).is_empty());
    }
}

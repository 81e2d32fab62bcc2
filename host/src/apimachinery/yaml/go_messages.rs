//! serde-saphyr's syntax errors worded as go-yaml (yaml.v2, which kube's
//! sigs.k8s.io/yaml reads bodies with) words them: `yaml: line N: did not
//! find expected node content`, `yaml: found unexpected end of stream`, ...
//!
//! go-yaml numbers lines its own way: a parser error names the 0-based line
//! of the token it stopped at, a scanner error the 1-based one, and neither
//! names line 0. An error at the end of the text is at the line after the
//! last (libyaml ends the stream on a line of its own).

/// Which part of libyaml found the problem (they number lines differently).
#[derive(Clone, Copy)]
enum Found {
    Parser,
    Scanner,
    /// go-yaml's decoder, which names no line.
    Decoder,
}

/// go-yaml's message for `text`, given serde-saphyr's `message`; serde-saphyr's
/// own message (after `yaml: `) for problems go-yaml words no differently.
pub fn reword(text: &str, message: &str) -> String {
    let (problem, line) = split_position(message);
    let (found, line, what) = match problem {
        p if p.starts_with("unclosed bracket") => {
            (Found::Parser, end_line(text), unclosed_flow(text))
        }
        p if p.starts_with("unclosed quote") => (
            Found::Scanner,
            text.matches('\n').count() + 1,
            "found unexpected end of stream".to_string(),
        ),
        p if p.ends_with("did not find expected key") => {
            (Found::Parser, line, "did not find expected key".into())
        }
        p if p.ends_with("did not find expected '-' indicator") => (
            Found::Parser,
            line,
            "did not find expected '-' indicator".into(),
        ),
        p if p.starts_with("misplaced bracket") => (
            Found::Parser,
            line,
            "did not find expected node content".into(),
        ),
        p if p.starts_with("tabs disallowed") => (Found::Scanner, line, tab_problem(text, line)),
        p if p.ends_with("found a tab") => (
            Found::Scanner,
            tab_line(text, line),
            "found a tab character that violates indentation".into(),
        ),
        p if p.starts_with("unexpected character") => (
            Found::Scanner,
            line,
            "found character that cannot start any token".into(),
        ),
        p if p.starts_with("alias references unknown anchor") => (
            Found::Decoder,
            0,
            format!("unknown anchor '{}' referenced", alias_at(text, message)),
        ),
        p if p.starts_with("mapping values are not allowed") => (Found::Scanner, line, p.into()),
        _ => (Found::Decoder, 0, message.to_string()),
    };
    let shown = match found {
        Found::Parser => line.saturating_sub(1),
        Found::Scanner if line > 1 => line,
        _ => 0,
    };
    if shown == 0 {
        format!("yaml: {what}")
    } else {
        format!("yaml: line {shown}: {what}")
    }
}

/// serde-saphyr's problem and its 1-based line (0 when it names none).
fn split_position(message: &str) -> (&str, usize) {
    match message.rsplit_once(" at line ") {
        Some((problem, at)) => {
            let line = at.split(',').next().unwrap_or_default().trim();
            (problem, line.parse().unwrap_or(0))
        }
        None => (message, 0),
    }
}

/// The 1-based line libyaml ends the stream on.
fn end_line(text: &str) -> usize {
    let newlines = text.matches('\n').count();
    let open_last_line = !text.is_empty() && !text.ends_with('\n');
    newlines + usize::from(open_last_line) + 1
}

/// What go-yaml expected when the text ended inside a flow collection:
/// a node after `[`, `{`, `,` or `:`, else the innermost collection's end.
fn unclosed_flow(text: &str) -> String {
    let scan = FlowScan::of(text);
    match (scan.last, scan.open.last()) {
        (Some('[' | '{' | ',' | ':'), _) | (_, None) => "did not find expected node content".into(),
        (_, Some('{')) => "did not find expected ',' or '}'".into(),
        _ => "did not find expected ',' or ']'".into(),
    }
}

/// The flow collections still open at the end of a text, and its last
/// significant character (quotes and comments skipped).
struct FlowScan {
    open: Vec<char>,
    last: Option<char>,
}

impl FlowScan {
    fn of(text: &str) -> FlowScan {
        let mut scan = FlowScan {
            open: Vec::new(),
            last: None,
        };
        let mut chars = text.chars().peekable();
        let mut previous = '\n';
        while let Some(c) = chars.next() {
            match c {
                '#' if previous.is_whitespace() => {
                    while chars.next_if(|&n| n != '\n').is_some() {}
                    previous = '\n';
                    continue;
                }
                '"' | '\'' => skip_quoted(&mut chars, c),
                '[' | '{' => scan.open.push(c),
                ']' | '}' => {
                    scan.open.pop();
                }
                _ => {}
            }
            if !c.is_whitespace() {
                scan.last = Some(c);
            }
            previous = c;
        }
        scan
    }
}

/// Skips a quoted scalar's text up to its closing quote.
fn skip_quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, quote: char) {
    while let Some(c) = chars.next() {
        match c {
            '\\' if quote == '"' => {
                chars.next();
            }
            '\'' if quote == '\'' && chars.peek() == Some(&'\'') => {
                chars.next();
            }
            c if c == quote => return,
            _ => {}
        }
    }
}

/// go-yaml's words for a tab in indentation: after a line that ends in a
/// plain value the scanner is continuing that value, else starting a token.
fn tab_problem(text: &str, line: usize) -> String {
    let before = text
        .lines()
        .take(line.saturating_sub(1))
        .map(|l| l.split(" #").next().unwrap_or_default().trim_end())
        .filter(|l| !l.trim().is_empty())
        .last();
    match before {
        Some(l) if !l.ends_with(':') && !l.ends_with('-') => {
            "found a tab character that violates indentation".into()
        }
        _ => "found character that cannot start any token".into(),
    }
}

/// The first line from `line` on (1-based) whose indentation has a tab:
/// serde-saphyr names the plain scalar the tab interrupts, go-yaml the tab.
fn tab_line(text: &str, line: usize) -> usize {
    let indented_with_tab = |l: &str| {
        l.chars()
            .take_while(|c| c.is_whitespace())
            .any(|c| c == '\t')
    };
    text.lines()
        .enumerate()
        .skip(line.saturating_sub(1))
        .find(|(_, l)| indented_with_tab(l))
        .map_or(line, |(i, _)| i + 1)
}

/// The anchor name of the alias serde-saphyr's message points at.
fn alias_at(text: &str, message: &str) -> String {
    let (_, line) = split_position(message);
    let column = message
        .rsplit_once(", column ")
        .and_then(|(_, c)| c.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let row = text.lines().nth(line.saturating_sub(1)).unwrap_or_default();
    let from = row.chars().skip(column.saturating_sub(1));
    from.skip_while(|&c| c == '*')
        .take_while(|c| !c.is_whitespace() && !",[]{}".contains(*c))
        .collect()
}

#[cfg(test)]
mod tests {
    /// serde-saphyr's message for `text`, reworded.
    fn go(text: &str) -> String {
        let err = crate::apimachinery::yaml::from_slice::<serde_json::Value>(text.as_bytes());
        err.expect_err(text)
    }

    // Each expectation is kube-apiserver 1.32's answer to the same body.
    #[test]
    fn unclosed_flow_collections() {
        let node = "yaml: line 1: did not find expected node content";
        assert_eq!(go("a: ["), node);
        assert_eq!(go("a: {"), node);
        assert_eq!(go("a: [1,"), node);
        assert_eq!(go("a: {b:"), node);
        assert_eq!(
            go("a: [1, 2"),
            "yaml: line 1: did not find expected ',' or ']'"
        );
        assert_eq!(
            go("a: {b: 1\n"),
            "yaml: line 1: did not find expected ',' or '}'"
        );
        assert_eq!(
            go("a: {b: 1, c: [1, 2"),
            "yaml: line 1: did not find expected ',' or ']'"
        );
        assert_eq!(
            go("x: 1\ny: [1, 2\n"),
            "yaml: line 2: did not find expected ',' or ']'"
        );
        assert_eq!(go("a: ]"), "yaml: did not find expected node content");
    }

    #[test]
    fn bad_indentation_and_tabs() {
        assert_eq!(
            go("a:\n  b: 1\n c: 2"),
            "yaml: line 2: did not find expected key"
        );
        assert_eq!(
            go("a:\n  - b\n  c: d"),
            "yaml: line 2: did not find expected '-' indicator"
        );
        assert_eq!(
            go("x: 1\n  y: 2"),
            "yaml: line 2: mapping values are not allowed in this context"
        );
        assert_eq!(
            go("a:\n\tb: 1"),
            "yaml: line 2: found character that cannot start any token"
        );
        assert_eq!(
            go("a: b\n\tc: d"),
            "yaml: line 2: found a tab character that violates indentation"
        );
        assert_eq!(
            go("a:\n  b: 1\n\tc: 2"),
            "yaml: line 3: found a tab character that violates indentation"
        );
    }

    #[test]
    fn quotes_mapping_values_and_anchors() {
        assert_eq!(go("a: \"abc"), "yaml: found unexpected end of stream");
        assert_eq!(go("a: 'abc"), "yaml: found unexpected end of stream");
        assert_eq!(
            go("a: \"abc\n"),
            "yaml: line 2: found unexpected end of stream"
        );
        assert_eq!(
            go("x: 1\na: \"abc"),
            "yaml: line 2: found unexpected end of stream"
        );
        assert_eq!(
            go("a: b: c"),
            "yaml: mapping values are not allowed in this context"
        );
        assert_eq!(
            go("x: 1\na: b: c"),
            "yaml: line 2: mapping values are not allowed in this context"
        );
        assert_eq!(go("a: *x"), "yaml: unknown anchor 'x' referenced");
        assert_eq!(
            go("a: @b"),
            "yaml: found character that cannot start any token"
        );
    }
}

//! YAML as kube-apiserver reads and writes it (sigs.k8s.io/yaml over
//! yaml.v2), with serde-saphyr, a maintained pure-Rust parser: YAML 1.1
//! scalars (`yes`/`on` are booleans, `0777` is octal, `1_000` is 1000),
//! merge keys, the last of duplicate keys; custom tags (`!foo`) refused;
//! anchors and aliases bounded by serde-saphyr's budget, so a billion laughs
//! is an error, not a gigabyte. Every YAML text of the server (request
//! bodies, responses, configuration files) goes through here.
//!
//! Configuration files are read as a typed reader reads them (kube reads
//! its own with the target type at hand, so `name: y` stays a string): only
//! `true`/`false` are booleans and a leading zero is no octal.

mod go_messages;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// YAML 1.1 scalars (request bodies) or only the YAML 1.2 core ones.
fn options(yaml_1_1: bool) -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
    o.legacy_octal_numbers = yaml_1_1;
    o.strict_booleans = !yaml_1_1;
    o.leading_zero_numbers_as_strings = !yaml_1_1;
    o.reject_unsupported_tags = true;
    o.with_snippet = false;
    o
}

/// A request body's first YAML document (go-yaml reads no further) as `T`;
/// a syntax error worded as go-yaml words it (`yaml: line 1: ...`).
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return serde_saphyr::from_slice_with_options(bytes, options(true))
            .map_err(|e| one_line(&e.to_string()));
    };
    let text = first_document(text);
    serde_saphyr::from_str_with_options(text, options(true))
        .map_err(|e| go_messages::reword(text, &one_line(&e.to_string())))
}

/// go-yaml's words for the first key a request body's mapping repeats
/// (`line 5: key "name" already set in map`), which kube warns about or,
/// under fieldValidation=Strict, refuses; None when no key repeats.
pub fn duplicate_key(bytes: &[u8]) -> Option<String> {
    let text = first_document(std::str::from_utf8(bytes).ok()?);
    let mut strict = options(true);
    strict.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    let err = serde_saphyr::from_str_with_options::<serde::de::IgnoredAny>(text, strict).err()?;
    let message = err.to_string();
    let rest = message.strip_prefix("duplicate mapping key: ")?;
    let (key, position) = rest.split_once(", set DuplicateKeyPolicy")?;
    let line = position.split(" at line ").nth(1)?.split(',').next()?;
    let shown = match key.parse::<i64>() {
        Ok(n) => n.to_string(),
        Err(_) => serde_json::to_string(key).ok()?,
    };
    Some(format!("line {line}: key {shown} already set in map"))
}

/// The text up to the marker (`---` or `...` at the start of a line) that
/// ends the first document; a `---` before any content starts it.
fn first_document(text: &str) -> &str {
    let mut content = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\r', '\n']);
        let marker = |m: &str| {
            bare.strip_prefix(m)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
        };
        if content && (marker("---") || marker("...")) {
            return &text[..offset];
        }
        let comment = bare.trim_start().starts_with('#') || bare.starts_with('%');
        content |= !(bare.trim().is_empty() || comment || marker("---"));
        offset += line.len();
    }
    text
}

/// A configuration file (or kubeconfig) as `T`.
pub fn config_from_str<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_saphyr::from_str_with_options(text, options(false)).map_err(|e| one_line(&e.to_string()))
}

/// Every document of a configuration-like file (`---`-separated) as `T`.
pub fn documents_from_str<T: DeserializeOwned>(text: &str) -> Result<Vec<T>, String> {
    serde_saphyr::from_multiple_with_options(text, options(false))
        .map_err(|e| one_line(&e.to_string()))
}

/// `value` as a YAML document; strings YAML 1.1 would read as something
/// else (`"yes"`, `"0777"`) are quoted.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, String> {
    serde_saphyr::to_string(value).map_err(|e| one_line(&e.to_string()))
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn read(text: &str) -> Result<Value, String> {
        from_slice(text.as_bytes())
    }

    #[test]
    fn scalars_are_read_as_kube_reads_them() {
        let v =
            read("a: yes\nb: 'yes'\nc: 0777\nd: 1_000\ne: 0x1F\nf: ~\ng: !!str 5\nh: 1.5").unwrap();
        assert_eq!(
            v,
            json!({"a": true, "b": "yes", "c": 511, "d": 1000, "e": 31, "f": null, "g": "5", "h": 1.5})
        );
    }

    #[test]
    fn configuration_files_keep_yaml_1_1_words_as_strings() {
        let v: Value = config_from_str("name: y\nmode: 0644\nenabled: yes\nset: true").unwrap();
        assert_eq!(
            v,
            json!({"name": "y", "mode": "0644", "enabled": "yes", "set": true})
        );
        assert!(config_from_str::<Value>("x: !custom a").is_err());
    }

    #[test]
    fn merge_keys_aliases_and_duplicates() {
        let v = read("base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\nr: *b\nk: 1\nk: 2").unwrap();
        assert_eq!(v["m"], json!({"x": 1, "y": 2}));
        assert_eq!(v["r"], json!({"x": 1}));
        assert_eq!(v["k"], 2);
    }

    #[test]
    fn custom_tags_are_refused() {
        let err = read("a: !custom foo").unwrap_err();
        assert!(!err.is_empty() && !err.contains('\n'), "{err}");
        assert!(read("a: !!python/object:os.system ls").is_err());
    }

    #[test]
    fn a_billion_laughs_is_an_error() {
        let mut text = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n".to_string();
        for i in 1..10 {
            let p = i - 1;
            let refs = vec![format!("*a{p}"); 9].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let err = read(&text).unwrap_err();
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn only_the_first_document_is_read_as_go_yaml_does() {
        assert_eq!(read("a: 1\n---\nb: 2").unwrap(), json!({"a": 1}));
        assert_eq!(read("---\na: 1\n...\nb: [").unwrap(), json!({"a": 1}));
        assert_eq!(
            read("# c\n--- \na: |\n  x\n---\n").unwrap(),
            json!({"a": "x\n"})
        );
        assert_eq!(
            read("a: '---'\nb: ---x").unwrap(),
            json!({"a": "---", "b": "---x"})
        );
    }

    #[test]
    fn a_repeated_key_is_named_as_go_yaml_names_it() {
        let body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a1\n  name: b1";
        assert_eq!(
            duplicate_key(body).as_deref(),
            Some(r#"line 5: key "name" already set in map"#)
        );
        assert_eq!(duplicate_key(b"a: 1\nb: {c: 1}"), None);
        assert_eq!(read("a: 1\na: 2").unwrap(), json!({"a": 2}));
    }

    #[test]
    fn bad_syntax_is_an_error() {
        assert!(read("a: [b").is_err());
        assert!(read("? [a, b]\n: c").is_err());
        assert!(from_slice::<Value>(b"a: \xff").is_err());
    }

    #[test]
    fn written_strings_keep_their_type_for_yaml_1_1_readers() {
        let v = json!({"a": "yes", "b": "0777", "c": 1, "d": null, "e": "two\nlines"});
        let text = to_string(&v).unwrap();
        assert_eq!(read(&text).unwrap(), v, "{text}");
    }
}

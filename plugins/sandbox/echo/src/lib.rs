//! sandbox-echo: a well-behaved admission plugin for the host's sandbox tests.
//!
//! It allows every request, echoing the request's uid, and calls every host
//! import (`log`, `config`, `get-object`, `list-objects`) so that the tests see
//! them work: what it got back is returned as audit annotations.

wit_bindgen::generate!({
    path: "../../../plugin-sdk/wit",
    world: "admission",
});

use capstan::plugin::host::{self, Level};

struct Echo;

impl Guest for Echo {
    fn review(admission_review: String) -> Result<String, String> {
        host::log(Level::Info, "sandbox-echo: reviewing a request");
        let uid = request_uid(&admission_review).unwrap_or_default();
        let config = host::config();
        let got = describe_get(host::get_object("v1", "namespaces", None, "default"));
        let listed = match host::list_objects("v1", "pods", Some("default"), Some("app=web"), None)
        {
            Ok(list) => list,
            Err(e) => format!("error: {e}"),
        };
        Ok(format!(
            concat!(
                r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","#,
                r#""response":{{"uid":"{}","allowed":true,"auditAnnotations":{{"#,
                r#""config":"{}","get":"{}","list":"{}"}}}}}}"#
            ),
            escape(&uid),
            escape(&config),
            escape(&got),
            escape(&listed)
        ))
    }
}

/// Summarises a get-object answer in one string.
fn describe_get(answer: Result<Option<String>, String>) -> String {
    match answer {
        Ok(Some(object)) => object,
        Ok(None) => "not found".to_string(),
        Err(e) => format!("error: {e}"),
    }
}

/// Finds `request.uid` without a JSON parser (keeps the component small):
/// the first `"uid":"..."` in the text.
fn request_uid(review: &str) -> Option<String> {
    let start = review.find("\"uid\"")? + 5;
    let rest = review[start..].trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

/// Escapes text for use inside a JSON string.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

export!(Echo);

//! sandbox-convert-widget: a converter (the `converter` world) for a test
//! CRD `widgets.example.com`: v1 has `spec.size`, v2 `spec.replicas`.
//! Misbehaves on request, for the sandbox tests: a Widget named `trap`
//! panics, one named `spin` never returns, one named `rename` changes its
//! name (which the host must refuse) and one named `relabel` gets a label.

use capstan_plugin_sdk::{conversion::version_of, json, ConverterPlugin, Value};

struct Widgets;

impl ConverterPlugin for Widgets {
    fn convert(mut object: Value, desired_api_version: &str) -> Result<Value, String> {
        misbehave(&mut object);
        let from = object["apiVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let spec = object["spec"].as_object_mut();
        match (version_of(&from), version_of(desired_api_version), spec) {
            (a, b, _) if a == b => {}
            (_, _, None) => {}
            ("v1", "v2", Some(spec)) => {
                let size = spec.remove("size").unwrap_or(json!(1));
                spec.insert("replicas".into(), size);
            }
            ("v2", "v1", Some(spec)) => {
                let replicas = spec.remove("replicas").unwrap_or(json!(1));
                spec.insert("size".into(), replicas);
            }
            (a, b, _) => return Err(format!("cannot convert a Widget from {a} to {b}")),
        }
        Ok(object)
    }
}

fn misbehave(object: &mut Value) {
    match object.pointer("/metadata/name").and_then(Value::as_str) {
        Some("trap") => panic!("convert-widget panicked on purpose"),
        Some("spin") => {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        Some("rename") => object["metadata"]["name"] = json!("renamed"),
        Some("relabel") => object["metadata"]["labels"] = json!({"converted": "yes"}),
        _ => {}
    }
}

capstan_plugin_sdk::converter_plugin!(Widgets);

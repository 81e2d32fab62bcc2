//! Label and field selectors: any text parses or is refused, and a parsed
//! selector matches any labels and object without a panic.

use super::generators::{from_tokens, json_value, object, SELECTOR_TOKENS};
use crate::apimachinery::selectors::field::parse_field_selector;
use crate::apimachinery::selectors::label::{from_label_selector_object, parse_label_selector};
use proptest::prelude::*;
use serde_json::Value;

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn label_selector_texts(text in prop_oneof![from_tokens(SELECTOR_TOKENS, 16), "\\PC{0,40}"], obj in object()) {
        if let Ok(selector) = parse_label_selector(&text) {
            let _ = selector.matches_object(&obj);
            if let Some(labels) = obj.pointer("/metadata/labels").and_then(Value::as_object) {
                let _ = selector.matches(labels);
            }
        }
    }

    #[test]
    fn label_selector_objects(selector in json_value(), obj in object()) {
        if let Ok(selector) = from_label_selector_object(&selector) {
            let _ = selector.matches_object(&obj);
        }
    }

    #[test]
    fn field_selector_texts(text in prop_oneof![from_tokens(SELECTOR_TOKENS, 16), "\\PC{0,40}"], obj in object()) {
        if let Ok(selector) = parse_field_selector(&text) {
            let _ = selector.matches(crate::apimachinery::selectors::field_labels_for("", "pods"), &obj);
            let _ = selector.matches_custom(&obj);
        }
    }
}

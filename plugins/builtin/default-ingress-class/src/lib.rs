//! Built-in admission plugin `default-ingress-class`, kube-apiserver's
//! DefaultIngressClass: an Ingress created without a class (no
//! `spec.ingressClassName`, no `kubernetes.io/ingress.class` annotation)
//! gets the default IngressClass, the one annotated
//! `ingressclass.kubernetes.io/is-default-class: "true"` (the newest when
//! several are, then by name, as kube chooses).

use capstan_plugin_sdk::{
    host, json, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, JsonPatch, Operation,
    Value,
};

const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
const DEFAULT_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";

/// The plugin.
pub struct DefaultIngressClass;

impl AdmissionPlugin for DefaultIngressClass {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(ingress) = req
            .written_object("networking.k8s.io", "ingresses")
            .filter(|_| req.operation == Operation::Create)
        else {
            return Ok(AdmissionResponse::allow());
        };
        let named =
            object::get(ingress, &["spec", "ingressClassName"]).is_some_and(|v| !v.is_null());
        if named || object::annotations(ingress).contains_key(CLASS_ANNOTATION) {
            return Ok(AdmissionResponse::allow());
        }
        let classes =
            match host::list_objects("networking.k8s.io/v1", "ingressclasses", None, None, None) {
                Ok(classes) => classes,
                Err(e) => return Ok(AdmissionResponse::forbidden(req, &e)),
            };
        let Some(name) = default_class(&classes) else {
            return Ok(AdmissionResponse::allow());
        };
        let patch = if ingress.get("spec").is_some_and(Value::is_object) {
            JsonPatch::new().add(["spec", "ingressClassName"], json!(name))
        } else {
            JsonPatch::new().add(["spec"], json!({"ingressClassName": name}))
        };
        Ok(AdmissionResponse::allow().with_patch(patch.ops()))
    }
}

/// The newest class marked default (ties by name), if any.
fn default_class(classes: &[Value]) -> Option<String> {
    let mut defaults: Vec<(&str, &str)> = classes
        .iter()
        .filter(|c| {
            object::annotations(c)
                .get(DEFAULT_ANNOTATION)
                .map(String::as_str)
                == Some("true")
        })
        .map(|c| {
            let created = object::get_str(c, &["metadata", "creationTimestamp"]).unwrap_or("");
            (created, object::name(c))
        })
        .collect();
    defaults.sort_by(|a, b| b.0.cmp(a.0).then(a.1.cmp(b.1)));
    defaults.first().map(|(_, name)| name.to_string())
}

capstan_plugin_sdk::admission_plugin!(DefaultIngressClass);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::testing;

    fn class(name: &str, default: &str, created: &str) {
        let class = json!({"metadata": {"name": name, "creationTimestamp": created,
            "annotations": {DEFAULT_ANNOTATION: default}}, "spec": {"controller": "x/y"}});
        testing::put_object("networking.k8s.io/v1", "ingressclasses", class);
    }

    fn admit(operation: Operation, ingress: Value) -> Value {
        let req = testing::request(
            operation,
            "networking.k8s.io/v1",
            "ingresses",
            "Ingress",
            "ns",
            ingress.clone(),
        );
        let r = DefaultIngressClass::review(&req).unwrap();
        assert!(r.allowed);
        testing::apply_patch(&ingress, &r).unwrap()
    }

    #[test]
    fn an_ingress_without_class_gets_the_newest_default() {
        testing::reset();
        class("old", "true", "2024-01-01T00:00:00Z");
        class("b-new", "true", "2025-01-01T00:00:00Z");
        class("a-new", "true", "2025-01-01T00:00:00Z");
        class("off", "false", "2026-01-01T00:00:00Z");
        let out = admit(
            Operation::Create,
            json!({"metadata": {"name": "web"}, "spec": {"rules": []}}),
        );
        assert_eq!(out["spec"]["ingressClassName"], "a-new");
        let bare = admit(Operation::Create, json!({"metadata": {"name": "web"}}));
        assert_eq!(bare["spec"]["ingressClassName"], "a-new");
    }

    #[test]
    fn a_chosen_class_an_update_or_no_default_change_nothing() {
        testing::reset();
        let plain = json!({"metadata": {"name": "web"}, "spec": {}});
        assert_eq!(admit(Operation::Create, plain.clone()), plain);
        class("nginx", "true", "2025-01-01T00:00:00Z");
        let named = json!({"metadata": {"name": "web"}, "spec": {"ingressClassName": "other"}});
        assert_eq!(admit(Operation::Create, named.clone()), named);
        let annotated =
            json!({"metadata": {"name": "w", "annotations": {CLASS_ANNOTATION: "x"}}, "spec": {}});
        assert_eq!(admit(Operation::Create, annotated.clone()), annotated);
        assert_eq!(admit(Operation::Update, plain.clone()), plain);
    }
}

//! apps/v1 StatefulSet, DaemonSet and ControllerRevision
//! (`ValidateStatefulSet`, `ValidateDaemonSet`, `ValidateControllerRevision*`
//! and their updates in kube's `pkg/apis/apps/validation`). Deployments and
//! ReplicaSets are `workloads`' business.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::workloads;
use crate::common::{self, int, opt_int, same, text};
use crate::int_or_percent as iop;
use crate::selector;
use kube_rules::gofmt;

const STATEFULSET_UPDATABLE: &str = "updates to statefulset spec for fields other than \
'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' \
and 'minReadySeconds' are forbidden";
const RETENTION: [&str; 2] = ["Retain", "Delete"];

fn spec_of(object: &Value) -> &Value {
    object.get("spec").unwrap_or(&Value::Null)
}

fn push_non_negative(causes: &mut Vec<Cause>, field: &str, value: i64) {
    causes.extend(common::non_negative(field, value));
}

/// A StatefulSet create or update.
pub fn stateful_set(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = spec_of(object);
    let mut causes = stateful_set_spec(spec);
    if let Some(old) = old {
        if !same(Some(&fixed_part(spec)), Some(&fixed_part(spec_of(old)))) {
            causes.push(common::forbidden("spec", STATEFULSET_UPDATABLE));
        }
    }
    causes
}

fn stateful_set_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match text(spec, "podManagementPolicy") {
        "" => causes.push(common::required("spec.podManagementPolicy", "")),
        "OrderedReady" | "Parallel" => {}
        other => causes.push(common::invalid_str(
            "spec.podManagementPolicy",
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    stateful_update_strategy(spec, &mut causes);
    let policy = spec.get("persistentVolumeClaimRetentionPolicy");
    for key in ["whenDeleted", "whenScaled"] {
        if let Some(policy) = policy.filter(|p| p.is_object()) {
            let value = text(policy, key);
            if !RETENTION.contains(&value) {
                let field = format!("spec.persistentVolumeClaimRetentionPolicy.{key}");
                causes.push(common::not_supported(&field, value, &RETENTION));
            }
        }
    }
    push_non_negative(&mut causes, "spec.replicas", int(spec, "replicas"));
    push_non_negative(
        &mut causes,
        "spec.minReadySeconds",
        int(spec, "minReadySeconds"),
    );
    if let Some(ordinals) = spec.get("ordinals").filter(|o| o.is_object()) {
        push_non_negative(&mut causes, "spec.ordinals.start", int(ordinals, "start"));
    }
    stateful_selector_and_template(spec, &mut causes);
    causes
}

fn stateful_update_strategy(spec: &Value, causes: &mut Vec<Cause>) {
    let strategy = spec.get("updateStrategy").unwrap_or(&Value::Null);
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    let field = "spec.updateStrategy";
    match text(strategy, "type") {
        "" => causes.push(common::required(field, "")),
        "OnDelete" => {
            if let Some(rolling) = rolling {
                causes.push(common::invalid(
                    "spec.updateStrategy.rollingUpdate",
                    &rolling_stateful(rolling),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(rolling) = rolling {
                let field = "spec.updateStrategy.rollingUpdate.partition";
                push_non_negative(causes, field, int(rolling, "partition"));
            }
        }
        other => {
            let rendered = format!(
                "apps.StatefulSetUpdateStrategy{{Type:{}, RollingUpdate:{}}}",
                gofmt::quote(other),
                pointer("apps.RollingUpdateStatefulSetStrategy", rolling)
            );
            let detail = "must be 'RollingUpdate' or 'OnDelete'";
            causes.push(common::invalid(field, &rendered, detail));
        }
    }
}

/// A Go pointer as `%#v` prints it: the address is not knowable, so a set
/// pointer shows a placeholder address.
pub fn pointer(type_name: &str, value: Option<&Value>) -> String {
    match value {
        None => format!("(*{type_name})(nil)"),
        Some(_) => format!("(*{type_name})(0xc000000000)"),
    }
}

fn rolling_stateful(rolling: &Value) -> String {
    format!(
        "apps.RollingUpdateStatefulSetStrategy{{Partition:{}, MaxUnavailable:{}}}",
        int(rolling, "partition"),
        pointer(
            "intstr.IntOrString",
            rolling.get("maxUnavailable").filter(|v| !v.is_null())
        )
    )
}

fn stateful_selector_and_template(spec: &Value, causes: &mut Vec<Cause>) {
    let field = "spec.selector";
    let sel = spec.get("selector").filter(|s| !s.is_null());
    let mut usable = true;
    match sel {
        None => causes.push(common::required(field, "")),
        Some(sel) => {
            let (problems, ok) = selector::check(sel, field);
            causes.extend(problems);
            usable = ok;
            if selector::is_empty(sel) {
                let detail = "empty selector is invalid for statefulset";
                causes.push(common::invalid(field, &gofmt::label_selector(sel), detail));
            }
        }
    }
    let template = spec.get("template").unwrap_or(&Value::Null);
    let labels = template.get("metadata").and_then(|m| m.get("labels"));
    match sel {
        Some(sel) if !usable => {
            causes.push(common::invalid(field, &gofmt::label_selector(sel), ""));
        }
        Some(sel) if selector::is_empty(sel) || selector::matches(sel, labels) => {}
        _ => causes.push(mismatch(labels)),
    }
    if usable {
        causes.extend(selector::labels(labels, "spec.template.labels"));
    }
    restart_always(template, "StatefulSet", causes);
}

fn mismatch(labels: Option<&Value>) -> Cause {
    common::invalid(
        "spec.template.metadata.labels",
        &gofmt::string_map(labels),
        "`selector` does not match template `labels`",
    )
}

/// The template restarts Always and has no activeDeadlineSeconds.
fn restart_always(template: &Value, owner: &str, causes: &mut Vec<Cause>) {
    let spec = template.get("spec").unwrap_or(&Value::Null);
    let policy = text(spec, "restartPolicy");
    if policy != "Always" {
        let field = "spec.template.spec.restartPolicy";
        causes.push(common::not_supported(field, policy, &["Always"]));
    }
    if spec
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        let field = "spec.template.spec.activeDeadlineSeconds";
        let detail = format!("activeDeadlineSeconds in {owner} is not Supported");
        causes.push(common::forbidden(field, &detail));
    }
}

/// A StatefulSet spec without its updatable fields, defaults filled in.
fn fixed_part(spec: &Value) -> Value {
    let mut fixed = spec.clone();
    if let Some(map) = fixed.as_object_mut() {
        for key in [
            "replicas",
            "ordinals",
            "template",
            "updateStrategy",
            "persistentVolumeClaimRetentionPolicy",
            "minReadySeconds",
        ] {
            map.remove(key);
        }
        let policy = map.entry("podManagementPolicy").or_insert(Value::Null);
        if policy.is_null() {
            *policy = Value::String("OrderedReady".into());
        }
    }
    fixed
}

/// A DaemonSet create or update (`ValidateDaemonSet`, then on update
/// `ValidateDaemonSetUpdate` and the apps/v1 immutable selector).
pub fn daemon_set(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = spec_of(object);
    let mut causes = daemon_set_spec(spec);
    if let Some(old) = old {
        let (selector, before) = (spec.get("selector"), spec_of(old).get("selector"));
        if !same(selector, before) {
            let shown = selector
                .filter(|s| !s.is_null())
                .map_or_else(|| gofmt::scalar(None), gofmt::label_selector);
            causes.push(common::immutable("spec.selector", &shown));
        }
    }
    causes
}

fn daemon_set_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let field = "spec.selector";
    let sel = spec.get("selector").filter(|s| !s.is_null());
    let template = spec.get("template").unwrap_or(&Value::Null);
    let labels = template.get("metadata").and_then(|m| m.get("labels"));
    if let Some(sel) = sel {
        let (problems, usable) = selector::check(sel, field);
        causes.extend(problems);
        if usable && !selector::is_empty(sel) && !selector::matches(sel, labels) {
            causes.push(mismatch(labels));
        }
        if selector::is_empty(sel) {
            let detail = "empty selector is invalid for daemonset";
            causes.push(common::invalid(field, &gofmt::label_selector(sel), detail));
        }
    } else {
        causes.push(mismatch(labels));
    }
    workloads::template_spec(template, "DaemonSet", &mut causes);
    push_non_negative(
        &mut causes,
        "spec.minReadySeconds",
        int(spec, "minReadySeconds"),
    );
    let generation = int(spec, "templateGeneration");
    push_non_negative(&mut causes, "spec.templateGeneration", generation);
    daemon_update_strategy(
        spec.get("updateStrategy").unwrap_or(&Value::Null),
        &mut causes,
    );
    if let Some(limit) = opt_int(spec, "revisionHistoryLimit") {
        push_non_negative(&mut causes, "spec.revisionHistoryLimit", limit);
    }
    causes
}

fn daemon_update_strategy(strategy: &Value, causes: &mut Vec<Cause>) {
    let field = "spec.updateStrategy";
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match text(strategy, "type") {
        "OnDelete" => {}
        "RollingUpdate" => match rolling {
            None => causes.push(common::required("spec.updateStrategy.rollingUpdate", "")),
            Some(rolling) => rolling_daemon(rolling, causes),
        },
        other => {
            let rendered = format!(
                "apps.DaemonSetUpdateStrategy{{Type:{}, RollingUpdate:{}}}",
                gofmt::quote(other),
                pointer("apps.RollingUpdateDaemonSet", rolling)
            );
            causes.push(common::not_supported_rendered(
                field,
                &rendered,
                &["RollingUpdate", "OnDelete"],
            ));
        }
    }
}

/// `ValidateRollingUpdateDaemonSet`.
fn rolling_daemon(rolling: &Value, causes: &mut Vec<Cause>) {
    let at = "spec.updateStrategy.rollingUpdate";
    let zero = Value::from(0);
    let unavailable = rolling.get("maxUnavailable").filter(|v| !v.is_null());
    let unavailable = unavailable.unwrap_or(&zero);
    let surge = rolling
        .get("maxSurge")
        .filter(|v| !v.is_null())
        .unwrap_or(&zero);
    let (unavailable_field, surge_field) =
        (format!("{at}.maxUnavailable"), format!("{at}.maxSurge"));
    causes.extend(iop::positive(unavailable, &unavailable_field));
    causes.extend(iop::positive(surge, &surge_field));
    causes.extend(iop::at_most_100_percent(unavailable, &unavailable_field));
    causes.extend(iop::at_most_100_percent(surge, &surge_field));
    match (iop::amount(unavailable) != 0, iop::amount(surge) != 0) {
        (true, true) => causes.push(common::invalid(
            &surge_field,
            &iop::render(surge),
            "may not be set when maxUnavailable is non-zero",
        )),
        (false, false) => causes.push(common::required(
            &unavailable_field,
            "cannot be 0 when maxSurge is 0",
        )),
        _ => {}
    }
}

/// A ControllerRevision create or update.
pub fn controller_revision(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes: Vec<Cause> = common::non_negative("revision", int(object, "revision"))
        .into_iter()
        .collect();
    let data = object.get("data");
    match old {
        None => match data {
            None | Some(Value::Null) => causes.push(common::required("data", "data is mandatory")),
            Some(Value::Object(_)) => {}
            Some(_) => causes.push(common::required("data", "data must be a valid JSON object")),
        },
        Some(old) if data != old.get("data") => {
            let raw = data.map(Value::to_string).unwrap_or_default();
            causes.push(common::immutable("data", &raw_extension(raw.as_bytes())));
        }
        Some(_) => {}
    }
    causes
}

/// A `runtime.RawExtension` as `%#v` prints it.
fn raw_extension(raw: &[u8]) -> String {
    let bytes: Vec<String> = raw.iter().map(|b| format!("0x{b:x}")).collect();
    format!(
        "runtime.RawExtension{{Raw:[]uint8{{{}}}, Object:runtime.Object(nil)}}",
        bytes.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    fn stateful(spec: Value) -> Value {
        let mut object = json!({"spec": {"selector": {"matchLabels": {"a": "b"}},
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": {"a": "b"}},
                         "spec": {"restartPolicy": "Always", "containers": [{"name": "c"}]}}}});
        for (key, value) in spec.as_object().cloned().unwrap_or_default() {
            object["spec"][key] = value;
        }
        object
    }

    #[test]
    fn stateful_set_policies_and_strategy() {
        assert!(stateful_set(&stateful(json!({})), None).is_empty());
        let bad =
            stateful(json!({"podManagementPolicy": "Bogus", "updateStrategy": {"type": "Bogus"}}));
        assert_eq!(
            messages(&stateful_set(&bad, None)),
            vec![
                "spec.podManagementPolicy: Invalid value: \"Bogus\": must be 'OrderedReady' or 'Parallel'",
                "spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:\"Bogus\", \
                 RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'",
            ]
        );
        let on_delete = stateful(
            json!({"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}}),
        );
        assert_eq!(
            messages(&stateful_set(&on_delete, None)),
            vec!["spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy\
                  {Partition:1, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'"]
        );
    }

    #[test]
    fn stateful_set_spec_is_mostly_immutable() {
        let old = stateful(json!({"serviceName": "x"}));
        let scaled = stateful(json!({"serviceName": "x", "replicas": 4}));
        assert!(stateful_set(&scaled, Some(&old)).is_empty());
        let renamed = stateful(json!({"serviceName": "y"}));
        assert_eq!(
            messages(&stateful_set(&renamed, Some(&old))),
            vec![format!("spec: Forbidden: {STATEFULSET_UPDATABLE}")]
        );
    }

    #[test]
    fn daemon_set_strategy_and_template() {
        let ds = json!({"spec": {"selector": {"matchLabels": {"a": "b"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "200%"}},
            "template": {"metadata": {"labels": {"a": "x"}},
                         "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}});
        assert_eq!(
            messages(&daemon_set(&ds, None)),
            vec![
                "spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"x\"}: \
                 `selector` does not match template `labels`",
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, \
                 IntVal:0, StrVal:\"200%\"}: must not be greater than 100%",
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, \
                 IntVal:0, StrVal:\"200%\"}: may not be set when maxUnavailable is non-zero",
            ]
        );
    }

    #[test]
    fn controller_revision_data() {
        assert_eq!(
            messages(&controller_revision(&json!({"revision": -1}), None)),
            vec![
                "revision: Invalid value: -1: must be greater than or equal to 0",
                "data: Required value: data is mandatory"
            ]
        );
        let old = json!({"revision": 1, "data": {"a": 1}});
        let new = json!({"revision": 1, "data": {"a": 2}});
        assert_eq!(
            messages(&controller_revision(&new, Some(&old))),
            vec![
                "data: Invalid value: runtime.RawExtension{Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, \
                  0x3a, 0x32, 0x7d}, Object:runtime.Object(nil)}: field is immutable"
            ]
        );
    }
}

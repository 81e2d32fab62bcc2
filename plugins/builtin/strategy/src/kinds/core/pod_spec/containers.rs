//! A container's env, volume mounts, resources and security context
//! (`validateContainerCommon` after ports), and its probes.

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, text};

/// Where a container's extra checks go in kube's order.
pub enum Stage {
    /// env and volumeMounts: after ports, before the pull policy.
    BeforePullPolicy,
    /// resources and securityContext: after the pull policy.
    AfterPullPolicy,
}

/// The container's checks of `stage`; `volumes` are the pod's valid volumes.
pub fn container_extras(
    container: &Value,
    path: &str,
    volumes: &HashSet<String>,
    stage: Stage,
    causes: &mut Vec<Cause>,
) {
    match stage {
        Stage::BeforePullPolicy => {
            env(
                common::list(container, "env"),
                &format!("{path}.env"),
                causes,
            );
            mounts(
                common::list(container, "volumeMounts"),
                &format!("{path}.volumeMounts"),
                volumes,
                causes,
            );
        }
        Stage::AfterPullPolicy => {
            resources(
                &container["resources"],
                &format!("{path}.resources"),
                causes,
            );
            security(
                &container["securityContext"],
                &format!("{path}.securityContext"),
                causes,
            );
        }
    }
}

/// `IsRelaxedEnvVarName` (kube 1.32's default: the
/// RelaxedEnvironmentVariableValidation gate is on).
fn env_name(name: &str) -> Vec<String> {
    let printable = |c: char| c.is_ascii() && !c.is_ascii_control() && c != '=';
    if name.chars().all(printable) {
        Vec::new()
    } else {
        vec!["a valid environment variable name must consist only of printable ASCII characters other than '='".into()]
    }
}

fn env(vars: &[Value], at: &str, causes: &mut Vec<Cause>) {
    for (i, var) in vars.iter().enumerate() {
        let field = format!("{at}[{i}].name");
        let name = text(var, "name");
        if name.is_empty() {
            causes.push(common::required(&field, ""));
        } else {
            common::invalid_each(causes, &field, name, env_name(name));
        }
        if let Some(from) = var.get("valueFrom").and_then(Value::as_object) {
            let sources = [
                "fieldRef",
                "resourceFieldRef",
                "configMapKeyRef",
                "secretKeyRef",
            ];
            let count = sources
                .iter()
                .filter(|s| from.get(**s).is_some_and(|v| !v.is_null()))
                .count();
            let vf = format!("{at}[{i}].valueFrom");
            let detail = if count == 0 {
                Some("must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`")
            } else if !text(var, "value").is_empty() {
                Some("may not be specified when `value` is not empty")
            } else if count > 1 {
                Some("may not have more than one field specified at a time")
            } else {
                None
            };
            if let Some(detail) = detail {
                causes.push(common::invalid(&vf, "\"\"", detail));
            }
        }
    }
}

fn mounts(mounts: &[Value], at: &str, volumes: &HashSet<String>, causes: &mut Vec<Cause>) {
    let mut paths = HashSet::new();
    for (i, mount) in mounts.iter().enumerate() {
        let path = format!("{at}[{i}]");
        let name = text(mount, "name");
        if name.is_empty() {
            causes.push(common::required(&format!("{path}.name"), ""));
        }
        if !volumes.contains(name) {
            causes.push(common::not_found(&format!("{path}.name"), name));
        }
        let mount_path = text(mount, "mountPath");
        if mount_path.is_empty() {
            causes.push(common::required(&format!("{path}.mountPath"), ""));
        }
        if !paths.insert(mount_path) {
            causes.push(common::invalid_str(
                &format!("{path}.mountPath"),
                mount_path,
                "must be unique",
            ));
        }
        let (sub, expr) = (text(mount, "subPath"), text(mount, "subPathExpr"));
        if !sub.is_empty() && !expr.is_empty() {
            let detail = "subPathExpr and subPath are mutually exclusive";
            causes.push(common::invalid_str(
                &format!("{path}.subPathExpr"),
                expr,
                detail,
            ));
        }
    }
}

fn overcommit_allowed(name: &str) -> bool {
    (!name.contains('/') || name.contains("kubernetes.io/")) && !name.starts_with("hugepages-")
}

/// `validateResourceRequirements`: requests within limits; resources that
/// cannot be overcommitted need equal limits.
fn resources(req: &Value, at: &str, causes: &mut Vec<Cause>) {
    let map = |key: &str| req.get(key).and_then(Value::as_object);
    let limits = map("limits");
    let parse = crate::kinds::core::validation::quantity_of;
    for (name, value) in limits.into_iter().flatten() {
        let q = parse(value);
        if q.is_negative() {
            causes.push(common::invalid_str(
                &format!("{at}.limits[{name}]"),
                &q.to_string(),
                "must be greater than or equal to 0",
            ));
        }
    }
    let req_field = format!("{at}.requests");
    for (name, value) in map("requests").into_iter().flatten() {
        let q = parse(value);
        if q.is_negative() {
            causes.push(common::invalid_str(
                &format!("{req_field}[{name}]"),
                &q.to_string(),
                "must be greater than or equal to 0",
            ));
        }
        match limits.and_then(|l| l.get(name)).map(parse) {
            Some(limit) if q != limit && !overcommit_allowed(name) => {
                let detail = format!("must be equal to {name} limit of {limit}");
                causes.push(common::invalid_str(&req_field, &q.to_string(), &detail));
            }
            Some(limit) if q > limit => {
                let detail = format!("must be less than or equal to {name} limit of {limit}");
                causes.push(common::invalid_str(&req_field, &q.to_string(), &detail));
            }
            None if !overcommit_allowed(name) => {
                let detail = "Limit must be set for non overcommitable resources";
                causes.push(common::required(&format!("{at}.limits"), detail));
            }
            _ => {}
        }
    }
}

/// `IsValidUserID`/`IsValidGroupID` of a (pod or container) security context.
pub fn security(sc: &Value, at: &str, causes: &mut Vec<Cause>) {
    for key in ["runAsUser", "runAsGroup"] {
        if let Some(id) = sc.get(key).and_then(Value::as_i64) {
            if !(0..=2_147_483_647).contains(&id) {
                let detail = kube_rules::inclusive_range_error(0, 2_147_483_647);
                causes.push(common::invalid(
                    &format!("{at}.{key}"),
                    &id.to_string(),
                    &detail,
                ));
            }
        }
    }
}

/// A regular container's lifecycle handlers and probes (`validateContainers`).
pub fn probes(container: &Value, path: &str, causes: &mut Vec<Cause>) {
    for hook in ["postStart", "preStop"] {
        if let Some(handler) = container
            .pointer(&format!("/lifecycle/{hook}"))
            .filter(|v| !v.is_null())
        {
            handler_checks(handler, &format!("{path}.lifecycle.{hook}"), causes);
        }
    }
    for kind in ["livenessProbe", "readinessProbe", "startupProbe"] {
        let Some(probe) = container.get(kind).filter(|v| !v.is_null()) else {
            continue;
        };
        let at = format!("{path}.{kind}");
        handler_checks(probe, &at, causes);
        for key in [
            "initialDelaySeconds",
            "timeoutSeconds",
            "periodSeconds",
            "successThreshold",
            "failureThreshold",
        ] {
            let value = common::int(probe, key);
            if value < 0 {
                causes.push(common::invalid(
                    &format!("{at}.{key}"),
                    &value.to_string(),
                    "must be greater than or equal to 0",
                ));
            }
        }
        let success = probe
            .get("successThreshold")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        if kind != "readinessProbe" && success != 1 {
            causes.push(common::invalid(
                &format!("{at}.successThreshold"),
                &success.to_string(),
                "must be 1",
            ));
        }
    }
    if container.get("restartPolicy").is_some_and(|v| !v.is_null()) {
        let detail = "may not be set for non-init containers";
        causes.push(common::forbidden(&format!("{path}.restartPolicy"), detail));
    }
}

const HANDLERS: [&str; 5] = ["exec", "httpGet", "tcpSocket", "grpc", "sleep"];

/// `validateHandler`: exactly one handler, its port and required fields.
fn handler_checks(handler: &Value, at: &str, causes: &mut Vec<Cause>) {
    let mut count = 0;
    for kind in HANDLERS
        .iter()
        .filter(|k| handler.get(**k).is_some_and(|v| !v.is_null()))
    {
        let path = format!("{at}.{kind}");
        if count > 0 {
            causes.push(common::forbidden(
                &path,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        count += 1;
        let action = &handler[*kind];
        match *kind {
            "exec" if common::list(action, "command").is_empty() => {
                causes.push(common::required(&format!("{path}.command"), ""));
            }
            "httpGet" => {
                if text(action, "path").is_empty() {
                    causes.push(common::required(&format!("{path}.path"), ""));
                }
                port_num_or_name(&action["port"], &format!("{path}.port"), causes);
            }
            "tcpSocket" | "grpc" => {
                port_num_or_name(&action["port"], &format!("{path}.port"), causes)
            }
            _ => {}
        }
    }
    if count == 0 {
        causes.push(common::required(at, "must specify a handler type"));
    }
}

/// `ValidatePortNumOrName`.
fn port_num_or_name(port: &Value, field: &str, causes: &mut Vec<Cause>) {
    match port {
        Value::String(name) => {
            common::invalid_each(causes, field, name, kube_rules::port_name(name))
        }
        other => {
            let number = other.as_i64().unwrap_or_default();
            if let Some(detail) = kube_rules::port_num(number) {
                causes.push(common::invalid(field, &number.to_string(), &detail));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn requests_above_limits_and_mounts_of_missing_volumes() {
        let c = json!({"name": "c", "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}},
            "volumeMounts": [{"name": "missing", "mountPath": "/x"}]});
        let mut causes = Vec::new();
        container_extras(
            &c,
            "spec.containers[0]",
            &HashSet::new(),
            Stage::BeforePullPolicy,
            &mut causes,
        );
        container_extras(
            &c,
            "spec.containers[0]",
            &HashSet::new(),
            Stage::AfterPullPolicy,
            &mut causes,
        );
        assert_eq!(messages(&causes), [
            "spec.containers[0].volumeMounts[0].name: Not found: \"missing\"",
            "spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1",
        ]);
    }

    #[test]
    fn numbers_are_quantities_too() {
        let c = json!({"resources": {"limits": {"cpu": 0.5}, "requests": {"cpu": "500m"}}});
        let mut causes = Vec::new();
        container_extras(
            &c,
            "c",
            &HashSet::new(),
            Stage::AfterPullPolicy,
            &mut causes,
        );
        assert!(causes.is_empty(), "{:?}", messages(&causes));
    }

    #[test]
    fn probes_need_one_handler() {
        let c = json!({"livenessProbe": {"httpGet": {"path": "/", "port": 0}, "successThreshold": 1}, "readinessProbe": {}});
        let mut causes = Vec::new();
        probes(&c, "spec.containers[0]", &mut causes);
        assert_eq!(messages(&causes), [
            "spec.containers[0].livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive",
            "spec.containers[0].readinessProbe: Required value: must specify a handler type",
        ]);
    }
}

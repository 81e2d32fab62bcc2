//! Baseline policy `allowed-registries`: every image of a pod (or of a
//! controller's pod template) comes from one of the registries its settings
//! list, `{"registries": ["ghcr.io/acme", "registry.k8s.io"]}`. An entry is
//! a prefix of the image's full name (`registry/repository`, Docker Hub's
//! images as `docker.io/library/nginx`) that ends where a path segment
//! ends: `ghcr.io/acme` allows `ghcr.io/acme/api`, not `ghcr.io/acme-evil/x`.

use capstan_plugin_sdk::{host, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse};
use pod_policy::{pod_spec, verdict, ImageRef, Problem};
use serde::Deserialize;

/// The settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Registry (or registry/path) prefixes images may come from.
    registries: Vec<String>,
}

/// The plugin.
pub struct AllowedRegistries;

impl AdmissionPlugin for AllowedRegistries {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(spec) = pod_spec(req) else {
            return Ok(AdmissionResponse::allow());
        };
        let settings: Settings = host::config()?;
        let allowed = settings.registries.join(", ");
        let problems = spec
            .all_containers()
            .into_iter()
            .filter_map(|c| {
                let image = object::get_str(c.value, &["image"]).filter(|i| !i.is_empty())?;
                let name = ImageRef::parse(image).full_name();
                if settings.registries.iter().any(|p| under(&name, p)) {
                    return None;
                }
                Some(Problem::new(
                    format!("{}.image", c.path),
                    format!(
                        "container {:?} uses image {image:?} ({name}), which is not from an allowed registry ({allowed})",
                        c.name
                    ),
                ))
            })
            .collect();
        Ok(verdict(req, problems))
    }
}

/// Whether `name` is `prefix` or under it (a segment boundary after it).
fn under(name: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    !prefix.is_empty()
        && name
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

capstan_plugin_sdk::admission_plugin!(AllowedRegistries);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing, Operation, Value};

    fn review(registries: Value, images: &[&str]) -> Result<AdmissionResponse, String> {
        testing::reset();
        testing::set_config(json!({ "registries": registries }));
        let containers: Vec<Value> = images
            .iter()
            .enumerate()
            .map(|(i, image)| json!({"name": format!("c{i}"), "image": image}))
            .collect();
        let obj = json!({"metadata": {"name": "web"}, "spec": {"containers": containers}});
        let req = testing::request(Operation::Create, "v1", "pods", "Pod", "ns", obj);
        AllowedRegistries::review(&req)
    }

    #[test]
    fn images_under_a_listed_prefix_are_allowed() {
        let r = review(
            json!(["ghcr.io/acme/", "docker.io/library"]),
            &["ghcr.io/acme/api:1", "nginx:1.27"],
        );
        assert!(r.unwrap().allowed);
    }

    #[test]
    fn other_registries_and_lookalike_prefixes_are_denied() {
        let r = review(
            json!(["ghcr.io/acme"]),
            &["ghcr.io/acme-evil/x:1", "nginx:1"],
        )
        .unwrap();
        assert_eq!(
            r.message(),
            "pods \"web\" is forbidden: container \"c0\" uses image \"ghcr.io/acme-evil/x:1\" (ghcr.io/acme-evil/x), which is not from an allowed registry (ghcr.io/acme); \
             container \"c1\" uses image \"nginx:1\" (docker.io/library/nginx), which is not from an allowed registry (ghcr.io/acme)"
        );
    }

    #[test]
    fn settings_are_required() {
        testing::reset();
        let req = testing::request(
            Operation::Create,
            "v1",
            "pods",
            "Pod",
            "ns",
            json!({"spec": {}}),
        );
        let e = AllowedRegistries::review(&req).unwrap_err();
        assert!(e.contains("registries"), "{e}");
    }
}

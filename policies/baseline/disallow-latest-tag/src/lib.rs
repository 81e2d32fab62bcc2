//! Baseline policy `disallow-latest-tag`: every container, init container
//! and ephemeral container of a pod (or of a controller's pod template)
//! names an image pinned to a tag other than `latest`, or to a digest. An
//! image without a tag means `latest`, which moves under a running workload.

use capstan_plugin_sdk::{object, AdmissionPlugin, AdmissionRequest, AdmissionResponse};
use pod_policy::{pod_spec, verdict, ImageRef, Problem};

/// The plugin.
pub struct DisallowLatestTag;

impl AdmissionPlugin for DisallowLatestTag {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(spec) = pod_spec(req) else {
            return Ok(AdmissionResponse::allow());
        };
        let problems = spec
            .all_containers()
            .into_iter()
            .filter_map(|c| {
                let image = object::get_str(c.value, &["image"]).filter(|i| !i.is_empty())?;
                let why = unpinned(&ImageRef::parse(image))?;
                Some(Problem::new(
                    format!("{}.image", c.path),
                    format!(
                        "container {:?} uses image {image:?}, {why}: pin a tag other than \"latest\", or a digest",
                        c.name
                    ),
                ))
            })
            .collect();
        Ok(verdict(req, problems))
    }
}

/// Why the image is not pinned, if it is not: a digest pins it whatever the tag.
fn unpinned(image: &ImageRef) -> Option<&'static str> {
    match (&image.digest, image.tag.as_deref()) {
        (Some(_), _) => None,
        (None, None) => Some("which has no tag (latest)"),
        (None, Some("latest")) => Some("tagged latest"),
        (None, Some(_)) => None,
    }
}

capstan_plugin_sdk::admission_plugin!(DisallowLatestTag);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing, Operation, Value};

    fn review(resource: &str, api_version: &str, obj: Value) -> AdmissionResponse {
        testing::reset();
        let req = testing::request(Operation::Create, api_version, resource, "X", "ns", obj);
        DisallowLatestTag::review(&req).unwrap()
    }

    fn pod(images: &[&str]) -> Value {
        let containers: Vec<Value> = images
            .iter()
            .enumerate()
            .map(|(i, image)| json!({"name": format!("c{i}"), "image": image}))
            .collect();
        json!({"metadata": {"name": "web"}, "spec": {"containers": containers}})
    }

    #[test]
    fn pinned_tags_and_digests_are_allowed() {
        let r = review(
            "pods",
            "v1",
            pod(&[
                "nginx:1.27",
                "ghcr.io/a/b@sha256:0123",
                "a:latest@sha256:99",
            ]),
        );
        assert!(r.allowed);
    }

    #[test]
    fn latest_and_missing_tags_are_denied_naming_each_container() {
        let r = review(
            "pods",
            "v1",
            pod(&["nginx", "nginx:1.27", "localhost:5000/app:latest"]),
        );
        assert!(!r.allowed);
        assert_eq!(r.code(), 403);
        assert_eq!(
            r.message(),
            "pods \"web\" is forbidden: container \"c0\" uses image \"nginx\", which has no tag (latest): pin a tag other than \"latest\", or a digest; \
             container \"c2\" uses image \"localhost:5000/app:latest\", tagged latest: pin a tag other than \"latest\", or a digest"
        );
        let causes = r.status.unwrap().details.unwrap().causes;
        assert_eq!(causes[0].field, "spec.containers[0].image");
    }

    #[test]
    fn templates_of_controllers_are_checked() {
        let d = json!({"metadata": {"name": "d"}, "spec": {"template": {"spec": {"initContainers": [{"name": "init", "image": "busybox"}]}}}});
        let r = review("deployments", "apps/v1", d);
        assert!(
            r.message()
                .starts_with("deployments.apps \"d\" is forbidden: container \"init\""),
            "{}",
            r.message()
        );
        assert!(review("configmaps", "v1", json!({"data": {"image": "x"}})).allowed);
    }
}

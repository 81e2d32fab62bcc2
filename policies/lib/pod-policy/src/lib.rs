//! What the baseline policies share: the pod spec a write carries (a pod's
//! own, or the template of a Deployment, ReplicaSet, StatefulSet, DaemonSet,
//! Job or CronJob), its containers with their field paths, image references
//! read as the container runtime reads them, and one way to deny: kube's
//! Forbidden (`<resource> "<name>" is forbidden: <problems>`), each problem
//! also a cause naming its field.

use capstan_plugin_sdk::{object, AdmissionRequest, AdmissionResponse, Operation, Value};

/// Where each kind keeps its pod spec: (group, resource, path).
const POD_SPECS: [(&str, &str, &[&str]); 7] = [
    ("", "pods", &["spec"]),
    ("apps", "deployments", &["spec", "template", "spec"]),
    ("apps", "replicasets", &["spec", "template", "spec"]),
    ("apps", "statefulsets", &["spec", "template", "spec"]),
    ("apps", "daemonsets", &["spec", "template", "spec"]),
    ("batch", "jobs", &["spec", "template", "spec"]),
    (
        "batch",
        "cronjobs",
        &["spec", "jobTemplate", "spec", "template", "spec"],
    ),
];

/// A pod spec and its field path (`spec`, `spec.template.spec`, ...).
pub struct PodSpec<'a> {
    pub spec: &'a Value,
    pub path: String,
}

/// The pod spec a create or update of a pod or pod controller writes;
/// None for other requests (deletes, subresources, other resources).
pub fn pod_spec(req: &AdmissionRequest) -> Option<PodSpec<'_>> {
    let writes = matches!(req.operation, Operation::Create | Operation::Update);
    if !writes || !req.subresource().is_empty() {
        return None;
    }
    let (_, _, path) = POD_SPECS.iter().find(|(g, r, _)| req.is_resource(g, r))?;
    let spec = object::get(req.object.as_ref()?, path)?;
    Some(PodSpec {
        spec,
        path: path.join("."),
    })
}

/// One container: its name, field path (`spec.containers[0]`) and value.
pub struct Container<'a> {
    pub name: &'a str,
    pub path: String,
    pub value: &'a Value,
}

impl PodSpec<'_> {
    /// Containers of the listed fields (`containers`, `initContainers`,
    /// `ephemeralContainers`), in kube's visiting order.
    pub fn containers(&self, fields: &[&str]) -> Vec<Container<'_>> {
        object::pod_containers(self.spec)
            .into_iter()
            .filter(|(field, _, _)| fields.contains(field))
            .map(|(field, i, value)| Container {
                name: object::get_str(value, &["name"]).unwrap_or(""),
                path: format!("{}.{field}[{i}]", self.path),
                value,
            })
            .collect()
    }

    /// Every container, init container and ephemeral container.
    pub fn all_containers(&self) -> Vec<Container<'_>> {
        self.containers(&object::POD_CONTAINER_FIELDS)
    }
}

/// One violation: the field and what is wrong with it.
pub struct Problem {
    pub field: String,
    pub message: String,
}

impl Problem {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Allowed when there is no problem, else kube's Forbidden listing them all
/// (`; `-separated), each also a `FieldValueForbidden` cause.
pub fn verdict(req: &AdmissionRequest, problems: Vec<Problem>) -> AdmissionResponse {
    if problems.is_empty() {
        return AdmissionResponse::allow();
    }
    let message: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    problems.iter().fold(
        AdmissionResponse::forbidden(req, &message.join("; ")),
        |r, p| r.with_cause("FieldValueForbidden", &p.field, &p.message),
    )
}

/// An image reference as the container runtime reads it.
#[derive(Debug, PartialEq)]
pub struct ImageRef {
    /// `docker.io` when the reference names none.
    pub registry: String,
    /// With `library/` for Docker Hub's official images.
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    /// Parses `[registry/]repository[:tag][@digest]`.
    pub fn parse(image: &str) -> ImageRef {
        let (name, digest) = match image.split_once('@') {
            Some((n, d)) => (n, Some(d.to_string())),
            None => (image, None),
        };
        let last_slash = name.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match name[last_slash..].rfind(':') {
            Some(i) => (
                &name[..last_slash + i],
                Some(name[last_slash + i + 1..].to_string()),
            ),
            None => (name, None),
        };
        let (registry, repository) = match name.split_once('/') {
            Some((first, rest))
                if first.contains('.') || first.contains(':') || first == "localhost" =>
            {
                (first.to_string(), rest.to_string())
            }
            _ => ("docker.io".to_string(), name.to_string()),
        };
        let repository = match registry == "docker.io" && !repository.contains('/') {
            true => format!("library/{repository}"),
            false => repository,
        };
        ImageRef {
            registry,
            repository,
            tag,
            digest,
        }
    }

    /// `registry/repository`: what registry prefixes are matched against.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing};

    #[test]
    fn image_references_read_as_the_runtime_reads_them() {
        let r = ImageRef::parse("nginx");
        assert_eq!(r.full_name(), "docker.io/library/nginx");
        assert_eq!((r.tag, r.digest), (None, None));
        let r = ImageRef::parse("localhost:5000/team/app:1.2@sha256:abc");
        assert_eq!(r.registry, "localhost:5000");
        assert_eq!(r.repository, "team/app");
        assert_eq!(r.tag.as_deref(), Some("1.2"));
        assert_eq!(r.digest.as_deref(), Some("sha256:abc"));
        let r = ImageRef::parse("ghcr.io/acme/api:latest");
        assert_eq!(r.full_name(), "ghcr.io/acme/api");
        assert_eq!(r.tag.as_deref(), Some("latest"));
        assert_eq!(
            ImageRef::parse("acme/api").full_name(),
            "docker.io/acme/api"
        );
    }

    #[test]
    fn pod_specs_of_pods_and_templates_with_their_paths() {
        let pod = testing::request(
            Operation::Create,
            "v1",
            "pods",
            "Pod",
            "ns",
            json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}], "initContainers": [{"name": "i"}]}}),
        );
        let spec = pod_spec(&pod).unwrap();
        let paths: Vec<String> = spec.all_containers().into_iter().map(|c| c.path).collect();
        assert_eq!(paths, ["spec.initContainers[0]", "spec.containers[0]"]);
        let cron = testing::request(
            Operation::Update,
            "batch/v1",
            "cronjobs",
            "CronJob",
            "ns",
            json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}}}),
        );
        let spec = pod_spec(&cron).unwrap();
        assert_eq!(
            spec.all_containers()[0].path,
            "spec.jobTemplate.spec.template.spec.containers[0]"
        );
        let mut status = pod.clone();
        status.sub_resource = Some("status".into());
        assert!(pod_spec(&status).is_none());
        let cm = testing::request(
            Operation::Create,
            "v1",
            "configmaps",
            "ConfigMap",
            "ns",
            json!({}),
        );
        assert!(pod_spec(&cm).is_none());
    }

    #[test]
    fn a_denial_lists_every_problem_as_kube_words_forbidden() {
        let pod = testing::request(
            Operation::Create,
            "v1",
            "pods",
            "Pod",
            "ns",
            json!({"metadata": {"name": "web"}}),
        );
        let r = verdict(
            &pod,
            vec![
                Problem::new("spec.hostPID", "a"),
                Problem::new("spec.hostIPC", "b"),
            ],
        );
        assert_eq!(r.code(), 403);
        assert_eq!(r.message(), "pods \"web\" is forbidden: a; b");
        let causes = &r.status.unwrap().details.unwrap().causes;
        assert_eq!(causes[1].field, "spec.hostIPC");
        assert!(verdict(&pod, vec![]).allowed);
    }
}

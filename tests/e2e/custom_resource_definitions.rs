//! CustomResourceDefinitions as objects: served like any resource, kube's
//! validation and its 422 wording, and the NamesAccepted/Established
//! conditions of the naming controller. (Serving the custom resources
//! themselves is later work.)

use std::time::Duration;

use crate::support::{eventually, stderr, Server};

/// kubernetes/website content/en/examples/customresourcedefinition/
/// shirt-resource-definition.yaml (the "Shirt" example of the CRD docs).
const SHIRTS: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: shirts.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: shirts
    singular: shirt
    kind: Shirt
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color:
                type: string
              size:
                type: string
    selectableFields:
    - jsonPath: .spec.color
    - jsonPath: .spec.size
    additionalPrinterColumns:
    - jsonPath: .spec.color
      name: Color
      type: string
    - jsonPath: .spec.size
      name: Size
      type: string
";

/// `kubectl create -f -` of `manifest`, which must fail; its stderr.
fn create_fails(s: &Server, manifest: &str) -> String {
    let out = s.kubectl_stdin(&["create", "-f", "-"], Some(manifest));
    assert!(!out.status.success(), "create succeeded:\n{manifest}");
    stderr(&out)
}

#[test]
fn a_real_crd_is_served_established_and_explained() {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], SHIRTS);
    let listed = s.ok(&["get", "crd"]);
    assert!(listed.starts_with("NAME"), "{listed}");
    assert!(listed.contains("CREATED AT"), "{listed}");
    assert!(listed.contains("shirts.stable.example.com"), "{listed}");
    s.ok(&[
        "wait",
        "--for",
        "condition=established",
        "--timeout=30s",
        "crd/shirts.stable.example.com",
    ]);
    let crd = s.json(&[
        "get",
        "customresourcedefinition",
        "shirts.stable.example.com",
    ]);
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Shirt");
    assert_eq!(crd["status"]["acceptedNames"]["listKind"], "ShirtList");
    assert_eq!(crd["status"]["storedVersions"], serde_json::json!(["v1"]));
    assert_eq!(crd["spec"]["conversion"]["strategy"], "None");
    let names = &crd["status"]["conditions"][0];
    assert_eq!(
        (names["type"].as_str(), names["reason"].as_str()),
        (Some("NamesAccepted"), Some("NoConflicts"))
    );
    let established = &crd["status"]["conditions"][1];
    assert_eq!(established["reason"], "InitialNamesAccepted");
    assert_eq!(
        established["message"],
        "the initial names have been accepted"
    );
    // Applying the same manifest again changes nothing and is accepted.
    s.ok_stdin(&["apply", "-f", "-"], SHIRTS);
    let explained = s.ok(&["explain", "customresourcedefinition.spec"]);
    assert!(
        explained.contains("KIND:       CustomResourceDefinition"),
        "{explained}"
    );
    assert!(explained.contains("versions"), "{explained}");
    let described = s.ok(&["describe", "crd", "shirts.stable.example.com"]);
    assert!(described.contains("Established"), "{described}");
    s.ok(&["delete", "crd", "shirts.stable.example.com"]);
    assert!(!s.ok(&["get", "crds"]).contains("shirts"));
}

#[test]
fn invalid_crds_get_kubes_422_messages() {
    let s = Server::start();
    let untyped = SHIRTS.replace(
        "          spec:\n            type: object\n",
        "          spec:\n",
    );
    let err = create_fails(&s, &untyped);
    assert!(
        err.contains("The CustomResourceDefinition \"shirts.stable.example.com\" is invalid: spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"),
        "{err}"
    );
    let misnamed = SHIRTS.replace(
        "name: shirts.stable.example.com",
        "name: shirt.stable.example.com",
    );
    let err = create_fails(&s, &misnamed);
    assert!(
        err.contains("metadata.name: Invalid value: \"shirt.stable.example.com\": must be spec.names.plural+\".\"+spec.group"),
        "{err}"
    );
    let scoped = SHIRTS.replace("scope: Namespaced", "scope: Global");
    let err = create_fails(&s, &scoped);
    assert!(
        err.contains("spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\""),
        "{err}"
    );
    let second = "  - name: v2\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n    selectableFields:";
    let two_storage = SHIRTS.replacen("    selectableFields:", second, 1);
    let err = create_fails(&s, &two_storage);
    assert!(
        err.contains(
            "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{"
        ),
        "{err}"
    );
    assert!(
        err.contains(": must have exactly one version marked as storage version"),
        "{err}"
    );
    assert!(
        err.contains("status.storedVersions: Invalid value: []string{\"v1\"}: must have the storage version v2"),
        "{err}"
    );
    assert!(
        !s.ok(&["get", "crds"]).contains("shirts"),
        "nothing was stored"
    );
}

#[test]
fn a_conflicting_plural_is_not_accepted() {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], SHIRTS);
    s.ok(&[
        "wait",
        "--for",
        "condition=established",
        "--timeout=30s",
        "crd/shirts.stable.example.com",
    ]);
    // Same group, a different kind whose plural is the first CRD's singular.
    let rival = SHIRTS
        .replace(
            "name: shirts.stable.example.com",
            "name: shirt.stable.example.com",
        )
        .replace("plural: shirts", "plural: shirt")
        .replace("singular: shirt\n", "singular: tee\n")
        .replace("kind: Shirt", "kind: Tee");
    s.ok_stdin(&["apply", "-f", "-"], &rival);
    let conflicted = eventually(Duration::from_secs(20), || {
        let crd = s.json(&["get", "crd", "shirt.stable.example.com"]);
        crd["status"]["conditions"][0]["reason"] == "PluralConflict"
    });
    assert!(conflicted, "the rival CRD's names were accepted");
    let crd = s.json(&["get", "crd", "shirt.stable.example.com"]);
    let names = &crd["status"]["conditions"][0];
    assert_eq!(names["type"], "NamesAccepted");
    assert_eq!(names["status"], "False");
    assert_eq!(names["message"], "\"shirt\" is already in use");
    assert_eq!(crd["status"]["conditions"][1]["reason"], "NotAccepted");
    let err = s.fails(&[
        "wait",
        "--for",
        "condition=established",
        "--timeout=2s",
        "crd/shirt.stable.example.com",
    ]);
    assert!(err.contains("timed out"), "{err}");
}

#[test]
fn crds_with_broken_validation_rules_are_refused_and_good_ones_accepted() {
    let s = Server::start();
    let with_rules = |rules: &str| {
        SHIRTS.replace(
            "          spec:\n            type: object\n",
            &format!("          spec:\n            type: object\n            x-kubernetes-validations:\n{rules}"),
        )
    };
    let broken = with_rules(
        "            - rule: \"self.color ==\"\n            - rule: \"has(self.size)\"\n              reason: Wrong\n",
    );
    let err = create_fails(&s, &broken);
    let at = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations";
    assert!(
        err.contains(&format!("{at}[1].reason: Unsupported value: \"Wrong\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"")),
        "{err}"
    );
    assert!(
        err.contains(&format!("{at}[0].rule: Invalid value: apiextensions.ValidationRule{{Rule:\"self.color ==\", Message:\"\"")),
        "{err}"
    );
    assert!(
        err.contains(": compilation failed: ERROR: <input>:1:"),
        "{err}"
    );
    assert!(
        !s.ok(&["get", "crds"]).contains("shirts"),
        "nothing was stored"
    );
    let good = with_rules("            - rule: \"!has(self.size) || self.size != 'XXL'\"\n");
    s.ok_stdin(&["create", "-f", "-"], &good);
}

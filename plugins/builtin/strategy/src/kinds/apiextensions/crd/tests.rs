use serde_json::{json, Value};

use super::*;
use crate::tests::messages;

/// A valid CRD as a client writes it, after defaults and PrepareForCreate.
fn crd() -> Value {
    let mut object = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}
                }}}
            }]
        }
    });
    defaults(&mut object);
    object["status"] = initial_status(&object);
    object
}

fn errors(object: &Value) -> Vec<String> {
    messages(&validate(object, None))
}

#[test]
fn a_valid_crd_has_no_errors_and_gets_kube_defaults() {
    let object = crd();
    assert_eq!(errors(&object), Vec::<String>::new());
    assert_eq!(object["spec"]["names"]["singular"], "widget");
    assert_eq!(object["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(object["spec"]["conversion"], json!({"strategy": "None"}));
    assert_eq!(
        object["status"],
        json!({"acceptedNames": {"kind": "", "plural": ""}, "storedVersions": ["v1"]})
    );
}

#[test]
fn name_must_be_plural_dot_group() {
    let mut object = crd();
    object["metadata"]["name"] = json!("widget.example.com");
    assert_eq!(
        errors(&object),
        vec!["metadata.name: Invalid value: \"widget.example.com\": must be spec.names.plural+\".\"+spec.group"]
    );
}

#[test]
fn group_needs_a_dot_and_a_dns_subdomain() {
    let mut object = crd();
    object["spec"]["group"] = json!("example");
    object["metadata"]["name"] = json!("widgets.example");
    assert_eq!(
        errors(&object),
        vec!["spec.group: Invalid value: \"example\": should be a domain with at least one dot"]
    );
    object["spec"]["group"] = json!("");
    object["metadata"]["name"] = json!("widgets.");
    assert_eq!(errors(&object), vec!["spec.group: Required value"]);
}

#[test]
fn scope_is_cluster_or_namespaced() {
    let mut object = crd();
    object["spec"]["scope"] = json!("Global");
    assert_eq!(
        errors(&object),
        vec!["spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\""]
    );
    object["spec"]["scope"] = json!("");
    assert_eq!(errors(&object), vec!["spec.scope: Required value"]);
}

#[test]
fn exactly_one_storage_version() {
    let mut object = crd();
    let mut second = object["spec"]["versions"][0].clone();
    second["name"] = json!("v2");
    object["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .push(second);
    let errs = errors(&object);
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].starts_with(
        "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{\
         apiextensions.CustomResourceDefinitionVersion{Name:\"v1\", Served:true, Storage:true, \
         Deprecated:false, DeprecationWarning:(*string)(nil), \
         Schema:(*apiextensions.CustomResourceValidation)(nil), "
    ));
    assert!(errs[0].ends_with("}}: must have exactly one version marked as storage version"));
    assert_eq!(
        errs[1],
        "status.storedVersions: Invalid value: []string{\"v1\"}: must have the storage version v2"
    );
}

#[test]
fn no_storage_version_means_no_stored_version() {
    let mut object = crd();
    object["spec"]["versions"][0]["storage"] = json!(false);
    object["status"] = initial_status(&object);
    let errs = errors(&object);
    assert!(errs[0].ends_with(": must have exactly one version marked as storage version"));
    assert_eq!(
        errs[1],
        "status.storedVersions: Invalid value: []string(nil): must have at least one stored version"
    );
}

#[test]
fn version_names_are_unique_dns1035_labels() {
    let mut object = crd();
    object["spec"]["versions"][0]["name"] = json!("V1");
    object["status"] = initial_status(&object);
    let label = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', \
                 start with an alphabetic character, and end with an alphanumeric character \
                 (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    assert_eq!(
        errors(&object),
        vec![
            format!("spec.versions[0].name: Invalid value: \"V1\": {label}"),
            format!("spec.version: Invalid value: \"V1\": {label}"),
        ]
    );
    let mut object = crd();
    let mut twin = object["spec"]["versions"][0].clone();
    twin["storage"] = json!(false);
    object["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .push(twin);
    assert!(errors(&object)[0].ends_with(": must contain unique version names"));
}

#[test]
fn names_are_required_and_checked() {
    let mut object = crd();
    object["spec"]["names"] = json!({"plural": "widgets", "kind": "Widget", "listKind": "Widget",
                                     "singular": "widget", "shortNames": ["W"]});
    let label_regex = "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    assert_eq!(
        errors(&object),
        vec![
            format!("spec.names.shortNames[0]: Invalid value: \"W\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character {label_regex}"),
            "spec.names.listKind: Invalid value: \"Widget\": kind and listKind may not be the same".to_string(),
        ]
    );
    let mut object = crd();
    object["spec"]["names"] = json!({"plural": "widgets"});
    assert_eq!(
        errors(&object),
        vec![
            "spec.names.singular: Required value",
            "spec.names.kind: Required value",
            "spec.names.listKind: Required value"
        ]
    );
}

#[test]
fn a_schema_is_required() {
    let mut object = crd();
    object["spec"]["versions"][0]
        .as_object_mut()
        .unwrap()
        .remove("schema");
    assert_eq!(
        errors(&object),
        vec!["spec.versions[0].schema.openAPIV3Schema: Required value"]
    );
}

#[test]
fn fields_without_type_are_not_structural() {
    let mut object = crd();
    object["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] =
        json!({"properties": {"size": {}, "tags": {"type": "array"}}});
    assert_eq!(
        errors(&object),
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].properties[size].type: Required value: must not be empty for specified object fields",
            "spec.validation.openAPIV3Schema.properties[spec].properties[tags].items: Required value: must be specified",
            "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
        ]
    );
}

#[test]
fn per_version_schemas_are_reported_per_version() {
    let mut object = crd();
    let mut v2 = object["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    v2["schema"]["openAPIV3Schema"] = json!({"type": "string"});
    object["spec"]["versions"].as_array_mut().unwrap().push(v2);
    assert_eq!(
        errors(&object),
        vec!["spec.versions[1].schema.openAPIV3Schema.type: Invalid value: \"string\": must be object at the root"]
    );
}

#[test]
fn root_needs_a_type_and_items_schemas_need_one_too() {
    let mut object = crd();
    object["spec"]["versions"][0]["schema"]["openAPIV3Schema"] =
        json!({"properties": {"list": {"type": "array", "items": {}}}});
    assert_eq!(
        errors(&object),
        vec![
            "spec.validation.openAPIV3Schema.properties[list].items.type: Required value: must not be empty for specified array items",
            "spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root",
        ]
    );
}

#[test]
fn unsupported_keywords_and_types() {
    let mut object = crd();
    object["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"] = json!({
        "a": {"type": "thing"},
        "b": {"type": "string", "$ref": "#/x"},
        "c": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
        "d": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": false},
        "e": {"type": "object", "x-kubernetes-preserve-unknown-fields": false},
    });
    assert_eq!(
        errors(&object),
        vec![
            "spec.validation.openAPIV3Schema.properties[a].type: Unsupported value: \"thing\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"",
            "spec.validation.openAPIV3Schema.properties[b].$ref: Forbidden: $ref is not supported",
            "spec.validation.openAPIV3Schema.properties[c].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            "spec.validation.openAPIV3Schema.properties[d].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
            "spec.validation.openAPIV3Schema.properties[e].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined",
        ]
    );
}

#[test]
fn value_validations_may_not_carry_types_except_int_or_string() {
    let mut object = crd();
    object["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"] = json!({
        "a": {"type": "string", "anyOf": [{"type": "string"}]},
        "port": {"x-kubernetes-int-or-string": true,
                 "anyOf": [{"type": "integer"}, {"type": "string"}]},
    });
    assert_eq!(
        errors(&object),
        vec!["spec.validation.openAPIV3Schema.properties[a].anyOf[0].type: Forbidden: must be empty to be structural"]
    );
}

#[test]
fn protected_groups_need_the_approval_annotation() {
    let mut object = crd();
    object["spec"]["group"] = json!("widgets.k8s.io");
    object["metadata"]["name"] = json!("widgets.widgets.k8s.io");
    assert_eq!(
        errors(&object),
        vec!["metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"]
    );
    object["metadata"]["annotations"] =
        json!({"api-approved.kubernetes.io": "unapproved, testing"});
    assert!(errors(&object).is_empty());
}

#[test]
fn preserve_unknown_fields_true_is_refused() {
    let mut object = crd();
    object["spec"]["preserveUnknownFields"] = json!(true);
    assert_eq!(
        errors(&object),
        vec!["spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"]
    );
}

#[test]
fn group_and_plural_are_immutable_and_storage_changes_are_recorded() {
    let old = crd();
    let mut new = crd();
    new["spec"]["names"]["plural"] = json!("gadgets");
    new["metadata"]["name"] = json!("gadgets.example.com");
    assert!(messages(&validate(&new, Some(&old))).contains(
        &"spec.names.plural: Invalid value: \"gadgets\": field is immutable".to_string()
    ));
    let mut new = crd();
    let mut v2 = new["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    new["spec"]["versions"][0]["storage"] = json!(false);
    new["spec"]["versions"].as_array_mut().unwrap().push(v2);
    record_storage_version(&mut new);
    assert_eq!(new["status"]["storedVersions"], json!(["v1", "v2"]));
    assert!(validate(&new, Some(&old)).is_empty());
}

#[test]
fn deprecation_warnings_only_on_deprecated_versions() {
    let mut object = crd();
    object["spec"]["versions"][0]["deprecationWarning"] = json!("old");
    assert_eq!(
        errors(&object),
        vec!["spec.versions[0].deprecationWarning: Invalid value: \"old\": can only be set for deprecated versions"]
    );
    object["spec"]["versions"][0]["deprecated"] = json!(true);
    assert!(errors(&object).is_empty());
}

#[test]
fn conversion_strategy_is_none_or_webhook_with_a_client_config() {
    let mut object = crd();
    object["spec"]["conversion"] = json!({"strategy": "Magic"});
    assert_eq!(
        errors(&object),
        vec!["spec.conversion.strategy: Unsupported value: \"Magic\": supported values: \"None\", \"Webhook\""]
    );
    object["spec"]["conversion"] = json!({"strategy": "Webhook"});
    assert_eq!(
        errors(&object),
        vec!["spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook"]
    );
}

#[test]
fn root_kind_and_api_version_are_strings_and_root_is_not_nullable() {
    let mut object = crd();
    let root = &mut object["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    root["properties"]["kind"] = json!({"type": "integer"});
    root["nullable"] = json!(true);
    assert_eq!(
        errors(&object),
        vec![
            "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root",
            "spec.validation.openAPIV3Schema.properties[kind].type: Invalid value: \"integer\": must be string",
        ]
    );
}

#[test]
fn embedded_resources_are_objects_and_extensions_need_their_types() {
    let mut object = crd();
    object["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"] = json!({
        "raw": {"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
        "list": {"type": "object", "x-kubernetes-list-type": "map"},
        "map": {"type": "object", "x-kubernetes-map-type": "sometimes"},
    });
    assert_eq!(
        errors(&object),
        vec![
            "spec.validation.openAPIV3Schema.properties[raw].type: Required value: must be object if x-kubernetes-embedded-resource is true",
            "spec.validation.openAPIV3Schema.properties[list].type: Invalid value: \"object\": must be array if x-kubernetes-list-type is specified",
            "spec.validation.openAPIV3Schema.properties[map].x-kubernetes-map-type: Unsupported value: \"sometimes\": supported values: \"atomic\", \"granular\"",
        ]
    );
}

#[test]
fn status_subresource_needs_an_object_root() {
    let mut object = crd();
    object["spec"]["versions"][0]["subresources"] = json!({"status": {}});
    object["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "string"});
    assert_eq!(
        errors(&object),
        vec![
            "spec.validation.openAPIV3Schema.type: Invalid value: \"string\": only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
            "spec.validation.openAPIV3Schema.type: Invalid value: \"string\": must be object at the root",
        ]
    );
}

#[test]
fn broken_validation_rules_are_refused_and_good_ones_accepted() {
    let mut object = crd();
    let spec =
        &mut object["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    spec["x-kubernetes-validations"] = json!([{"rule": "self.size >= 0"}]);
    assert_eq!(errors(&object), Vec::<String>::new());
    let spec =
        &mut object["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    spec["x-kubernetes-validations"] = json!([
        {"rule": "self.size >= 0", "reason": "Wrong"},
        {"rule": "self.size >"},
    ]);
    let got = errors(&object);
    let at = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations";
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(
        got[0],
        format!(
            "{at}[0].reason: Unsupported value: \"Wrong\": supported values: \
             \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \
             \"FieldValueRequired\""
        )
    );
    assert!(
        got[1].starts_with(&format!(
            "{at}[1].rule: Invalid value: apiextensions.ValidationRule{{Rule:\"self.size >\", \
             Message:\"\", MessageExpression:\"\", \
             Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", \
             OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:"
        )),
        "{}",
        got[1]
    );
}

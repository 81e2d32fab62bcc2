use std::collections::HashMap;

use serde_json::{json, Value};

use super::*;

/// Deployment's schema as the built-in catalogue holds it: the object
/// refers to its spec by `$ref`.
struct Components(HashMap<String, Value>);

impl SchemaSource for Components {
    fn schema(&self, reference: &str) -> Option<&Value> {
        self.0.get(reference.rsplit('/').next()?)
    }
}

fn components() -> Components {
    Components(HashMap::from([
        (
            "Deployment".to_string(),
            json!({"type": "object", "properties": {
                "apiVersion": {"type": "string"},
                "metadata": {"allOf": [{"$ref": "#/components/schemas/ObjectMeta"}]},
                "spec": {"allOf": [{"$ref": "#/components/schemas/DeploymentSpec"}]}}}),
        ),
        (
            "DeploymentSpec".to_string(),
            json!({"type": "object", "properties": {
                "replicas": {"type": "integer", "format": "int32"},
                "paused": {"type": "boolean"},
                "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}),
        ),
        (
            "ObjectMeta".to_string(),
            json!({"type": "object", "properties": {
                "name": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}),
        ),
    ]))
}

fn check_with(text: &str, object: Value, schemas: &Components) -> Result<(), String> {
    let program = crate::compile(text).unwrap();
    let object = Box::leak(Box::new(object));
    let decls = Declarations {
        variables: HashMap::from([(
            "object".to_string(),
            Type::Object {
                schema: object,
                root: true,
            },
        )]),
        schemas,
    };
    check(&program, text, &decls)
}

fn check_deployment(text: &str) -> Result<(), String> {
    let schemas = components();
    check_with(
        text,
        json!({"$ref": "#/components/schemas/Deployment"}),
        &schemas,
    )
}

#[test]
fn well_typed_expressions_pass() {
    for ok in [
        "object.spec.replicas > 1",
        "object.spec.replicas > 1.5",
        "'wants ' + string(object.spec.replicas)",
        "object.metadata.labels['team'] == 'a'",
        "has(object.spec.paused) && !object.spec.paused",
        "object.spec.template.anything == 1",
        "object.kind == 'Deployment'",
        "object.metadata.labels.all(k, k.startsWith('x'))",
    ] {
        assert_eq!(check_deployment(ok), Ok(()), "{ok}");
    }
}

#[test]
fn type_confusion_is_reported_as_cel_go_does() {
    assert_eq!(
        check_deployment("object.spec.replicas > '1'").unwrap_err(),
        "ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n \
         | object.spec.replicas > '1'\n | .....................^"
    );
    let err = check_deployment("'wants replicas > 1, got ' + object.spec.replicas").unwrap_err();
    assert!(
        err.contains("found no matching overload for '_+_' applied to '(string, int)'"),
        "{err}"
    );
    let err = check_deployment("object.spec.maxRetries < 10").unwrap_err();
    assert!(err.contains("undefined field 'maxRetries'"), "{err}");
}

#[test]
fn a_crd_schema_types_its_fields() {
    let schemas = components();
    let crontab = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"replicas": {"type": "integer"}, "image": {"type": "string"}}}}});
    assert_eq!(
        check_with("object.spec.replicas > 1", crontab.clone(), &schemas),
        Ok(())
    );
    assert!(check_with("object.spec.maxRetries < 10", crontab, &schemas)
        .unwrap_err()
        .contains("undefined field 'maxRetries'"));
}

#[test]
fn a_null_and_a_string_branch_do_not_mix() {
    let err = check_deployment("object.kind == '' ? null : 'x'").unwrap_err();
    assert!(
        err.contains("found no matching overload for '_?_:_' applied to '(bool, null, string)'"),
        "{err}"
    );
}

#[test]
fn untyped_variables_are_not_refused() {
    let program = crate::compile("object.spec.replicas > '1'").unwrap();
    let decls = Declarations {
        variables: HashMap::from([("object".to_string(), Type::Dyn)]),
        schemas: &NoSchemas,
    };
    assert_eq!(
        check(&program, "object.spec.replicas > '1'", &decls),
        Ok(())
    );
}

#[test]
fn mutations_are_checked_as_kube_checks_them() {
    use crate::policy_types::check_mutation_expression as check;
    let object = Type::Struct("Object".into());
    let patches = Type::List(Box::new(Type::Struct("JSONPatch".into())));
    let declared = [
        "object",
        "oldObject",
        "request",
        "namespaceObject",
        "authorizer",
    ];
    let err =
        |text: &str, want: &Type<'static>| check(text, &declared, None, Some(want)).unwrap_err();
    assert_eq!(
        err("object.spec", &object),
        "must evaluate to Object but got dyn"
    );
    assert_eq!(
        err("Object.spec{replicas: 1}", &object),
        "must evaluate to Object but got Object.spec"
    );
    assert_eq!(
        err("JSONPatch{op: 'add'}", &patches),
        "must evaluate to list(JSONPatch) but got JSONPatch"
    );
    assert_eq!(
        err("[]", &patches),
        "must evaluate to list(JSONPatch) but got list(dyn)"
    );
    assert_eq!(
        err("[JSONPatch{op: 'add', where: '/x'}]", &patches),
        "compilation failed: ERROR: <input>:1:28: expected type of field 'where' is '' but provided type is 'string'\n | [JSONPatch{op: 'add', where: '/x'}]\n | ...........................^"
    );
    assert_eq!(
        err("[JSONPatch{op: 1}]", &patches),
        "compilation failed: ERROR: <input>:1:14: expected type of field 'op' is 'string' but provided type is 'int'\n | [JSONPatch{op: 1}]\n | .............^"
    );
    assert_eq!(
        err("Foo{}", &object),
        "compilation failed: ERROR: <input>:1:4: undeclared reference to 'Foo' (in container '')\n | Foo{}\n | ...^"
    );
    let fine = [
        (
            "Object{metadata: Object.metadata{labels: {'a': 'b'}}}",
            &object,
        ),
        (
            "object.spec.containers.map(c, JSONPatch{op: 'add', path: '/x', value: c.name})",
            &patches,
        ),
        (
            "has(object.x) ? [JSONPatch{op: 'remove', path: '/x'}] : []",
            &patches,
        ),
        (
            "[JSONPatch{op: 'add', path: '/a/' + jsonpatch.escapeKey('b/c'), value: 1}]",
            &patches,
        ),
    ];
    for (text, want) in fine {
        assert_eq!(
            check(text, &declared, None, Some(want)).as_ref(),
            Ok(want),
            "{text}"
        );
    }
}

#[test]
fn struct_literals_are_undeclared_outside_mutations() {
    let declared = ["object"];
    let found = crate::policy_types::check_admission_expression(
        "Object{} == Object{}",
        &declared,
        None,
        None,
    );
    assert!(found
        .unwrap_err()
        .contains("undeclared reference to 'Object'"));
}

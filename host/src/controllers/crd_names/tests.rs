use serde_json::json;

use super::*;

fn crd(plural: &str, kind: &str, short: &[&str]) -> Value {
    json!({"metadata": {"name": format!("{plural}.example.com")},
           "spec": {"group": "example.com",
                    "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind,
                              "listKind": format!("{kind}List"), "shortNames": short}},
           "status": {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}})
}

fn taken_by(others: &[Value]) -> Taken {
    let mut taken = Taken::default();
    for other in others {
        let status = desired_status(other, &calculate(other, &Taken::default()));
        taken.add_accepted(&status["acceptedNames"]);
    }
    taken
}

fn conditions(status: &Value) -> Vec<(String, String, String, String)> {
    status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap().to_string();
            (s("type"), s("status"), s("reason"), s("message"))
        })
        .collect()
}

#[test]
fn fresh_names_are_accepted_and_the_crd_established() {
    let widgets = crd("widgets", "Widget", &["wd"]);
    let status = desired_status(&widgets, &calculate(&widgets, &Taken::default()));
    assert_eq!(status["acceptedNames"], widgets["spec"]["names"]);
    assert_eq!(status["storedVersions"], json!(["v1"]));
    assert_eq!(
        conditions(&status),
        vec![
            (
                "NamesAccepted".into(),
                "True".into(),
                "NoConflicts".into(),
                "no conflicts found".into()
            ),
            (
                "Established".into(),
                "True".into(),
                "InitialNamesAccepted".into(),
                "the initial names have been accepted".into()
            ),
        ]
    );
}

#[test]
fn a_plural_in_use_is_a_plural_conflict() {
    let taken = taken_by(&[crd("widgets", "Widget", &[])]);
    let copy = crd("widgets", "Gadget", &[]);
    let naming = calculate(&copy, &taken);
    assert_eq!(
        (naming.status, naming.reason.as_str()),
        ("False", "PluralConflict")
    );
    assert_eq!(naming.message, "\"widgets\" is already in use");
    let status = desired_status(&copy, &naming);
    assert_eq!(status["acceptedNames"]["plural"], "");
    assert_eq!(status["acceptedNames"]["kind"], "Gadget");
    assert_eq!(
        conditions(&status)[1],
        (
            "Established".into(),
            "False".into(),
            "NotAccepted".into(),
            "not all names are accepted".into()
        )
    );
}

#[test]
fn kinds_list_kinds_and_short_names_conflict_too() {
    let taken = taken_by(&[crd("widgets", "Widget", &["wd", "w"])]);
    let mut kind = crd("gadgets", "Widget", &[]);
    kind["spec"]["names"]["listKind"] = json!("GadgetList");
    let naming = calculate(&kind, &taken);
    assert_eq!(
        (naming.reason.as_str(), naming.message.as_str()),
        ("KindConflict", "\"Widget\" is already in use")
    );
    let mut list_kind = crd("gadgets", "Gadget", &[]);
    list_kind["spec"]["names"]["listKind"] = json!("WidgetList");
    let naming = calculate(&list_kind, &taken);
    assert_eq!(
        (naming.reason.as_str(), naming.message.as_str()),
        ("ListKindConflict", "\"WidgetList\" is already in use")
    );
    let naming = calculate(&crd("gadgets", "Gadget", &["wd", "w"]), &taken);
    assert_eq!(
        (naming.reason.as_str(), naming.message.as_str()),
        (
            "ShortNamesConflict",
            "[\"wd\" is already in use, \"w\" is already in use]"
        )
    );
}

#[test]
fn a_crd_keeps_names_it_already_accepted() {
    let widgets = crd("widgets", "Widget", &[]);
    let mut accepted = widgets.clone();
    accepted["status"] = desired_status(&widgets, &calculate(&widgets, &Taken::default()));
    let mut taken = Taken::default();
    taken.add_accepted(&accepted["status"]["acceptedNames"]);
    let again = desired_status(&accepted, &calculate(&accepted, &taken));
    assert!(same_status(&again, &accepted["status"]));
}

//! The traits a plugin implements, one per world, and the dispatchers that
//! turn the world's JSON text into typed values and back. The `*_plugin!`
//! macros export a dispatcher from a wasm32 build; natively, tests can call
//! the dispatchers directly with the same JSON the host would send.

use serde::Serialize;
use serde_json::Value;

use crate::access::{
    SubjectAccessReview, SubjectAccessReviewStatus, SubjectRulesReview, SubjectRulesReviewStatus,
    TokenReview, TokenReviewStatus,
};
use crate::conversion::{convert_all, ConversionReview};
use crate::response::AdmissionResponse;
use crate::review::{AdmissionRequest, AdmissionReview};
use crate::strategy::{StrategyAnswer, StrategyCall};

/// An admission plugin (mutating or validating). `Err` means "I could not
/// decide": the host applies the plugin's failurePolicy.
pub trait AdmissionPlugin {
    fn review(request: &AdmissionRequest) -> Result<AdmissionResponse, String>;
}

/// An authenticator: the status for a token (see `TokenReviewStatus`).
pub trait AuthenticatorPlugin {
    fn authenticate(review: &TokenReview) -> Result<TokenReviewStatus, String>;
}

/// An authorizer: allow, deny or no opinion (see `SubjectAccessReviewStatus`).
pub trait AuthorizerPlugin {
    fn authorize(review: &SubjectAccessReview) -> Result<SubjectAccessReviewStatus, String>;

    /// The rules the user has in a namespace (for SelfSubjectRulesReview);
    /// by default "incomplete": this authorizer cannot list them.
    fn rules(_review: &SubjectRulesReview) -> Result<SubjectRulesReviewStatus, String> {
        Ok(SubjectRulesReviewStatus::unsupported(
            "this authorizer does not list rules",
        ))
    }
}

/// A resource strategy.
pub trait StrategyPlugin {
    fn call(call: &StrategyCall) -> Result<StrategyAnswer, String>;

    /// The call, owned: a plugin may override it to use the objects without
    /// copying them (what large objects need within the memory limit).
    fn call_owned(call: StrategyCall) -> Result<StrategyAnswer, String> {
        Self::call(&call)
    }
}

/// A converter of custom resources (the `converter` world): one object, in
/// its own apiVersion, to `desired_api_version` (`<group>/<version>`). The
/// SDK sets the answer's apiVersion; labels and annotations may change,
/// the rest of metadata is the server's. `Err(message)` fails the
/// conversion: the client sees kube's `conversion webhook for ... failed:
/// <message>`.
pub trait ConverterPlugin {
    fn convert(object: Value, desired_api_version: &str) -> Result<Value, String>;
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("invalid {what}: {e}"))
}

fn render<T: Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string(value).map_err(|e| format!("cannot encode the answer: {e}"))
}

/// AdmissionReview JSON in, AdmissionReview JSON out (response.uid = request.uid,
/// apiVersion echoed, "admission.k8s.io/v1" when absent).
pub fn run_admission<P: AdmissionPlugin>(admission_review: &str) -> Result<String, String> {
    let review: AdmissionReview = parse("AdmissionReview", admission_review)?;
    let request = review
        .request
        .ok_or_else(|| "AdmissionReview has no request".to_string())?;
    let mut response = P::review(&request)?;
    response.uid = request.uid.clone();
    render(&AdmissionReview {
        api_version: Some(
            review
                .api_version
                .unwrap_or_else(|| "admission.k8s.io/v1".into()),
        ),
        kind: Some("AdmissionReview".to_string()),
        request: None,
        response: Some(response),
    })
}

/// TokenReview JSON in, the same TokenReview with `status` out.
pub fn run_authenticator<P: AuthenticatorPlugin>(token_review: &str) -> Result<String, String> {
    let mut review: TokenReview = parse("TokenReview", token_review)?;
    review.status = Some(P::authenticate(&review)?);
    review
        .api_version
        .get_or_insert_with(|| "authentication.k8s.io/v1".into());
    review.kind.get_or_insert_with(|| "TokenReview".into());
    render(&review)
}

/// SubjectAccessReview JSON in, the same review with `status` out; a
/// `SubjectRulesReview` goes to `P::rules` instead.
pub fn run_authorizer<P: AuthorizerPlugin>(subject_access_review: &str) -> Result<String, String> {
    let probe: Value = parse("SubjectAccessReview", subject_access_review)?;
    if probe.get("kind").and_then(Value::as_str) == Some("SubjectRulesReview") {
        let mut review: SubjectRulesReview = parse("SubjectRulesReview", subject_access_review)?;
        review.status = Some(P::rules(&review)?);
        return render(&review);
    }
    let mut review: SubjectAccessReview = parse("SubjectAccessReview", subject_access_review)?;
    review.status = Some(P::authorize(&review)?);
    review
        .api_version
        .get_or_insert_with(|| "authorization.k8s.io/v1".into());
    review
        .kind
        .get_or_insert_with(|| "SubjectAccessReview".into());
    render(&review)
}

/// strategy-call JSON in, answer JSON out.
pub fn run_strategy<P: StrategyPlugin>(strategy_call: &str) -> Result<String, String> {
    let call: StrategyCall = parse("strategy call", strategy_call)?;
    let answer: Value = P::call_owned(call)?.into_json();
    render(&answer)
}

/// ConversionReview JSON in, ConversionReview JSON out (apiVersion echoed,
/// "apiextensions.k8s.io/v1" when absent; response.uid = request.uid).
pub fn run_converter<P: ConverterPlugin>(conversion_review: &str) -> Result<String, String> {
    let review: ConversionReview = parse("ConversionReview", conversion_review)?;
    let request = review
        .request
        .ok_or_else(|| "ConversionReview has no request".to_string())?;
    let response = convert_all(&request, P::convert);
    render(&ConversionReview {
        api_version: Some(
            review
                .api_version
                .unwrap_or_else(|| "apiextensions.k8s.io/v1".into()),
        ),
        kind: Some("ConversionReview".to_string()),
        request: None,
        response: Some(response),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct DenyDeletes;
    impl AdmissionPlugin for DenyDeletes {
        fn review(request: &AdmissionRequest) -> Result<AdmissionResponse, String> {
            match request.operation {
                crate::Operation::Delete => Ok(AdmissionResponse::forbidden(request, "no deletes")),
                _ => Ok(AdmissionResponse::allow()),
            }
        }
    }

    #[test]
    fn admission_round_trip_echoes_uid_and_api_version() {
        let input = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "abc", "operation": "DELETE", "name": "p",
                        "resource": {"group": "", "version": "v1", "resource": "pods"},
                        "kind": {"group": "", "version": "v1", "kind": "Pod"}}});
        let out: Value =
            serde_json::from_str(&run_admission::<DenyDeletes>(&input.to_string()).unwrap())
                .unwrap();
        assert_eq!(out["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(out["kind"], "AdmissionReview");
        assert_eq!(out["response"]["uid"], "abc");
        assert_eq!(out["response"]["allowed"], false);
        assert_eq!(
            out["response"]["status"]["message"],
            "pods \"p\" is forbidden: no deletes"
        );
        assert!(out.get("request").is_none());
    }

    #[test]
    fn admission_without_request_or_bad_json_is_an_error() {
        assert!(run_admission::<DenyDeletes>("{}")
            .unwrap_err()
            .contains("no request"));
        assert!(run_admission::<DenyDeletes>("nope")
            .unwrap_err()
            .starts_with("invalid AdmissionReview"));
    }

    struct Static;
    impl AuthenticatorPlugin for Static {
        fn authenticate(review: &TokenReview) -> Result<TokenReviewStatus, String> {
            Ok(match review.spec.token.as_str() {
                "t0k3n" => TokenReviewStatus::authenticated(crate::UserInfo {
                    username: "alice".into(),
                    ..Default::default()
                }),
                _ => TokenReviewStatus::unauthenticated("unknown token"),
            })
        }
    }
    impl AuthorizerPlugin for Static {
        fn authorize(review: &SubjectAccessReview) -> Result<SubjectAccessReviewStatus, String> {
            Ok(match review.spec.user.as_str() {
                "alice" => SubjectAccessReviewStatus::allow("alice may"),
                "mallory" => SubjectAccessReviewStatus::deny("never"),
                _ => SubjectAccessReviewStatus::no_opinion(),
            })
        }
    }
    #[test]
    fn rules_reviews_go_to_rules_and_default_to_incomplete() {
        let input = r#"{"kind":"SubjectRulesReview","spec":{"namespace":"ns","user":"alice"}}"#;
        let out: Value = serde_json::from_str(&run_authorizer::<Static>(input).unwrap()).unwrap();
        assert_eq!(out["kind"], "SubjectRulesReview");
        assert_eq!(out["status"]["incomplete"], true);
        assert_eq!(out["spec"]["user"], "alice");
    }

    impl StrategyPlugin for Static {
        fn call(call: &StrategyCall) -> Result<StrategyAnswer, String> {
            Ok(StrategyAnswer::Object(call.object.clone()))
        }
    }

    #[test]
    fn authenticator_and_authorizer_fill_status() {
        let out: Value = serde_json::from_str(
            &run_authenticator::<Static>(r#"{"spec":{"token":"t0k3n"}}"#).unwrap(),
        )
        .unwrap();
        assert_eq!(out["status"]["authenticated"], true);
        assert_eq!(out["status"]["user"]["username"], "alice");
        assert_eq!(out["kind"], "TokenReview");
        let out: Value = serde_json::from_str(
            &run_authorizer::<Static>(r#"{"spec":{"user":"mallory"}}"#).unwrap(),
        )
        .unwrap();
        assert_eq!(
            out["status"],
            json!({"allowed": false, "denied": true, "reason": "never"})
        );
    }

    impl ConverterPlugin for Static {
        fn convert(mut object: Value, _to: &str) -> Result<Value, String> {
            match object.pointer("/spec/size").cloned() {
                Some(size) => {
                    object["spec"] = json!({"replicas": size});
                    Ok(object)
                }
                None => Err("spec.size is required".into()),
            }
        }
    }

    #[test]
    fn converter_answers_a_review_in_the_request_version() {
        let input = json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "ConversionReview",
            "request": {"uid": "u1", "desiredAPIVersion": "example.com/v2",
                        "objects": [{"apiVersion": "example.com/v1", "kind": "W", "spec": {"size": 3}}]},
            "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}}});
        let out: Value =
            serde_json::from_str(&run_converter::<Static>(&input.to_string()).unwrap()).unwrap();
        assert_eq!(out["apiVersion"], "apiextensions.k8s.io/v1beta1");
        assert_eq!(out["response"]["uid"], "u1");
        assert_eq!(out["response"]["result"]["status"], "Success");
        assert_eq!(
            out["response"]["convertedObjects"],
            json!([{"apiVersion": "example.com/v2", "kind": "W", "spec": {"replicas": 3}}])
        );
        let failing = json!({"request": {"uid": "u2", "desiredAPIVersion": "example.com/v2",
                        "objects": [{"apiVersion": "example.com/v1", "kind": "W"}]}});
        let out: Value =
            serde_json::from_str(&run_converter::<Static>(&failing.to_string()).unwrap()).unwrap();
        assert_eq!(out["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(
            out["response"]["result"]["message"],
            "spec.size is required"
        );
        assert!(run_converter::<Static>("{}")
            .unwrap_err()
            .contains("no request"));
    }

    #[test]
    fn strategy_answers_with_object() {
        let out =
            run_strategy::<Static>(r#"{"phase":"prepare-for-create","object":{"a":1}}"#).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"object": {"a": 1}})
        );
        assert!(run_strategy::<Static>(r#"{"phase":"explode"}"#).is_err());
    }
}

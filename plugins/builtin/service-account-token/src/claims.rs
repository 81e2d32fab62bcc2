//! The claims of a kube service account token (pkg/serviceaccount/claims.go):
//! the registered ones and the private `kubernetes.io` ones, with go-jose's
//! time checks (`Claims.ValidateWithLeeway`, one minute of leeway) and the
//! audience rule of pkg/serviceaccount/jwt.go.

use kube_rules::gofmt::quote_list;
use serde::{Deserialize, Deserializer};

/// go-jose's `jwt.DefaultLeeway`, in seconds.
pub const LEEWAY: i64 = 60;

/// The claims of a token (only what validation reads).
#[derive(Debug, Default, Deserialize)]
pub struct Claims {
    #[serde(default)]
    pub iss: String,
    #[serde(default, deserialize_with = "audience")]
    pub aud: Vec<String>,
    #[serde(default, deserialize_with = "numeric_date")]
    pub exp: Option<i64>,
    #[serde(default, deserialize_with = "numeric_date")]
    pub nbf: Option<i64>,
    #[serde(default, deserialize_with = "numeric_date")]
    pub iat: Option<i64>,
    #[serde(default)]
    pub jti: String,
    #[serde(default, rename = "kubernetes.io")]
    pub kubernetes: Kubernetes,
}

/// The private `kubernetes.io` claim.
#[derive(Debug, Default, Deserialize)]
pub struct Kubernetes {
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub serviceaccount: Ref,
    #[serde(default)]
    pub pod: Option<Ref>,
    #[serde(default)]
    pub secret: Option<Ref>,
    #[serde(default)]
    pub node: Option<Ref>,
}

/// A reference to an object by name and UID.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
pub struct Ref {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub uid: String,
}

impl Claims {
    /// `nbf`, `exp` and `iat` against `now` (Unix seconds), with kube's messages.
    pub fn check_times(&self, now: i64) -> Result<(), String> {
        if self.nbf.is_some_and(|nbf| now + LEEWAY < nbf) {
            return Err("service account token is not valid yet".into());
        }
        if self.exp.is_some_and(|exp| now - LEEWAY > exp) {
            return Err("service account token has expired".into());
        }
        if self.iat.is_some_and(|iat| now + LEEWAY < iat) {
            return Err("service account token is issued in the future".into());
        }
        Ok(())
    }

    /// The audiences the token is good for among `requested` (the review's,
    /// else the server's `implicit` ones); a token without `aud` counts as
    /// issued for the server's audiences. Empty is an error unless the server
    /// has no audiences at all (kube's rule).
    pub fn audiences_for(
        &self,
        requested: &[String],
        implicit: &[String],
    ) -> Result<Vec<String>, String> {
        let token: &[String] = if self.aud.is_empty() {
            implicit
        } else {
            &self.aud
        };
        let requested = if requested.is_empty() {
            implicit
        } else {
            requested
        };
        let matched: Vec<String> = requested
            .iter()
            .filter(|a| token.contains(a))
            .cloned()
            .collect();
        if matched.is_empty() && !implicit.is_empty() {
            return Err(format!(
                "token audiences {} is invalid for the target audiences {}",
                quote_list(token),
                quote_list(requested)
            ));
        }
        Ok(matched)
    }
}

/// `aud`: one string or a list of strings (go-jose's `Audience`).
fn audience<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    })
}

/// A NumericDate: seconds since the epoch, fractions dropped (go-jose reads a float).
fn numeric_date<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.map(|f| f as i64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: serde_json::Value) -> Claims {
        serde_json::from_value(value).unwrap()
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_kube_claims() {
        let c = claims(json!({"iss": "i", "aud": "one", "exp": 10.9, "jti": "j",
            "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "sa", "uid": "u"},
                              "pod": {"name": "p", "uid": "pu"}, "node": null}}));
        assert_eq!(c.aud, ["one"]);
        assert_eq!(c.exp, Some(10));
        assert_eq!(c.kubernetes.serviceaccount.uid, "u");
        assert_eq!(c.kubernetes.pod.unwrap().name, "p");
        assert!(c.kubernetes.node.is_none());
        assert!(serde_json::from_value::<Claims>(json!({"aud": 5})).is_err());
    }

    #[test]
    fn times_have_a_minute_of_leeway() {
        let c = claims(json!({"nbf": 1000, "exp": 2000, "iat": 1000}));
        assert!(c.check_times(1500).is_ok());
        assert!(c.check_times(940).is_ok());
        assert_eq!(
            c.check_times(939).unwrap_err(),
            "service account token is not valid yet"
        );
        assert!(c.check_times(2060).is_ok());
        assert_eq!(
            c.check_times(2061).unwrap_err(),
            "service account token has expired"
        );
        let future = claims(json!({"iat": 1000}));
        assert_eq!(
            future.check_times(939).unwrap_err(),
            "service account token is issued in the future"
        );
        assert!(claims(json!({})).check_times(0).is_ok());
    }

    #[test]
    fn audiences_intersect_in_request_order() {
        let c = claims(json!({"aud": ["a", "b", "c"]}));
        let server = strings(&["a"]);
        assert_eq!(
            c.audiences_for(&strings(&["c", "x", "b"]), &server)
                .unwrap(),
            ["c", "b"]
        );
        assert_eq!(c.audiences_for(&[], &server).unwrap(), ["a"]);
        assert_eq!(
            c.audiences_for(&strings(&["x"]), &server).unwrap_err(),
            r#"token audiences ["a" "b" "c"] is invalid for the target audiences ["x"]"#
        );
        let legacy = claims(json!({}));
        assert_eq!(
            legacy.audiences_for(&strings(&["a"]), &server).unwrap(),
            ["a"]
        );
        assert!(c.audiences_for(&strings(&["x"]), &[]).unwrap().is_empty());
    }
}

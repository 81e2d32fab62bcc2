//! kube's panic recovery: a request whose handling panicked is answered
//! with kube's 500 and the server goes on serving; the panic is logged and
//! the request audited at the Panic stage (kube's `APIServer panic'd: ...`).

use crate::audit::event::Recording;
use crate::audit::policy::Stage;
use crate::audit::Auditor;
use axum::response::Response;
use futures_util::FutureExt;
use std::future::Future;
use std::sync::Arc;

/// kube's answer to a request that made it panic (plain text).
const ANSWER: &str = "This request caused apiserver to panic. Look in the logs for details.\n";

pub async fn recovering(
    auditor: &Auditor,
    recording: Option<Arc<Recording>>,
    serve: impl Future<Output = Response>,
) -> Response {
    let panic = match std::panic::AssertUnwindSafe(serve).catch_unwind().await {
        Ok(resp) => return resp,
        Err(panic) => panic,
    };
    let why = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    tracing::error!(panic = %why, "a request's handling panicked; answered 500");
    if let Some(r) = recording {
        r.panicked(&why);
        auditor.emit(&r, Stage::Panic);
    }
    crate::apimachinery::status::plain_text(http::StatusCode::INTERNAL_SERVER_ERROR, ANSWER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::user::UserInfo;
    use crate::audit::event::Request;
    use crate::audit::policy::Policy;
    use crate::audit::Sink;
    use serde_json::Value;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Kept(Mutex<Vec<Arc<Value>>>);

    impl Sink for Kept {
        fn send(&self, event: Arc<Value>) -> bool {
            self.0.lock().unwrap().push(event);
            true
        }
        fn name(&self) -> &'static str {
            "kept"
        }
    }

    #[tokio::test]
    async fn a_panicking_request_gets_kube_s_500_and_a_panic_stage_event() {
        let policy = Policy::parse(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]\n",
        )
        .unwrap();
        let mut auditor = Auditor::new(Some(policy));
        let kept = Arc::new(Kept::default());
        auditor.add(kept.clone());
        let user = UserInfo {
            username: "alice".into(),
            ..UserInfo::default()
        };
        let (method, uri, headers) = (
            http::Method::GET,
            "/api/v1/namespaces".parse().unwrap(),
            http::HeaderMap::new(),
        );
        let request = Request {
            audit_id: "a1".into(),
            method: &method,
            uri: &uri,
            headers: &headers,
            source_ip: None,
            resource: None,
        };
        let decision = auditor
            .decide(&user, &method, "/api/v1/namespaces", None)
            .unwrap();
        let recording = Arc::new(Recording::new(decision, user, &request));
        let resp = recovering(&auditor, Some(recording), async { panic!("boom") }).await;
        assert_eq!(resp.status(), 500);
        let events = kept.0.lock().unwrap();
        let event = events.last().expect("a Panic event");
        assert_eq!(event["stage"], "Panic");
        assert_eq!(event["responseStatus"]["code"], 500);
        assert_eq!(
            event["responseStatus"]["message"],
            "APIServer panic'd: boom"
        );
        assert_eq!(event["responseStatus"]["reason"], "InternalError");
    }

    #[tokio::test]
    async fn an_answer_passes_untouched() {
        let resp = recovering(&Auditor::new(None), None, async {
            axum::response::IntoResponse::into_response(http::StatusCode::CREATED)
        })
        .await;
        assert_eq!(resp.status(), 201);
    }
}

//! The `authorizer` of admission policies answered by Capstan's own
//! authorizer chain (`auth::Authorizer`), for the request's user or a
//! service account the expression names. The chain's plugins are async;
//! a policy's evaluation is not, so a check waits for its answer on a
//! thread the runtime lets block (`block_in_place`), not on a worker's
//! async loop. A runtime that cannot block (a single-threaded one) answers
//! with an error the expression sees through `errored()`.

use std::sync::Arc;

use kube_cel::authz::{Authorize, Check, Decision};
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::apimachinery::user::UserInfo;
use crate::auth::attributes::{Attributes, ResourceAttributes};
use crate::auth::{authorize, Auth};

pub struct ChainAuthorizer {
    pub auth: Arc<Auth>,
    /// The request's user (`userInfo`), read when a check asks.
    pub user: serde_json::Value,
}

impl ChainAuthorizer {
    fn attributes(&self, check: &Check) -> Attributes {
        let user = match &check.user {
            Some(u) => UserInfo {
                username: u.name.clone(),
                groups: u.groups.clone(),
                ..UserInfo::default()
            },
            None => serde_json::from_value(self.user.clone()).unwrap_or_default(),
        };
        Attributes {
            user,
            verb: check.verb.clone(),
            resource: check.resource.as_ref().map(|r| ResourceAttributes {
                namespace: r.namespace.clone(),
                group: r.group.clone(),
                version: "*".to_string(),
                resource: r.resource.clone(),
                subresource: r.subresource.clone(),
                name: r.name.clone(),
            }),
            path: check.path.clone(),
        }
    }
}

impl Authorize for ChainAuthorizer {
    fn authorize(&self, check: &Check) -> Decision {
        let attributes = self.attributes(check);
        let answer = match Handle::try_current() {
            Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => {
                let auth = self.auth.clone();
                tokio::task::block_in_place(|| h.block_on(auth.authorizer.authorize(&attributes)))
            }
            _ => {
                return Decision {
                    error: Some("the authorizer cannot be asked here".to_string()),
                    ..Decision::default()
                }
            }
        };
        match answer {
            authorize::Decision::Allow(reason) => Decision {
                allowed: true,
                reason,
                error: None,
            },
            authorize::Decision::Deny(reason) | authorize::Decision::NoOpinion(reason) => {
                Decision {
                    allowed: false,
                    reason,
                    error: None,
                }
            }
        }
    }
}

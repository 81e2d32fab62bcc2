//! The audit flags of `capstan serve` (kube-apiserver's `--audit-*`) made
//! into the server's [`Auditor`]: the policy file read, the log and webhook
//! backends started.

use super::ServeArgs;
use crate::audit::{self, Auditor};
use std::sync::Arc;

/// The auditing `args` ask for: the policy file read, the log and webhook
/// backends started.
pub fn auditor(args: &ServeArgs) -> anyhow::Result<Auditor> {
    use anyhow::Context;
    let format = audit::log::Format::parse(&args.audit_log_format).map_err(anyhow::Error::msg)?;
    let policy = match &args.audit_policy_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading --audit-policy-file {}", path.display()))?;
            let policy = audit::policy::Policy::parse(&text)
                .map_err(|e| anyhow::anyhow!("--audit-policy-file {}: {e}", path.display()))?;
            Some(policy)
        }
        None => None,
    };
    let mut auditor = Auditor::new(policy);
    if let Some(path) = &args.audit_log_path {
        let rotation = audit::log::Rotation {
            max_size_mb: args.audit_log_maxsize,
            max_backups: args.audit_log_maxbackup,
            max_age_days: args.audit_log_maxage,
        };
        let sink = audit::log::LogSink::start(path, rotation, format)
            .with_context(|| format!("opening --audit-log-path {path}"))?;
        auditor.add(Arc::new(sink));
    }
    if let Some(path) = &args.audit_webhook_config_file {
        let batching = audit::webhook::Batching {
            max_size: args.audit_webhook_batch_max_size,
            max_wait: args.audit_webhook_batch_max_wait,
        };
        let errors = auditor.error_counter("webhook");
        let sink = audit::webhook::WebhookSink::start(path, batching, errors)
            .with_context(|| format!("--audit-webhook-config-file {}", path.display()))?;
        auditor.add(Arc::new(sink));
    }
    Ok(auditor)
}

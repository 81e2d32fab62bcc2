//! The time a request spends calling admission webhooks, which kube's SLI
//! latency (`apiserver_request_sli_duration_seconds`) leaves out: the
//! request's future runs in [`timing_webhooks`], each webhook call adds its
//! time with [`webhook_called`].

tokio::task_local! {
    /// Seconds the request being served spent calling admission webhooks.
    static WEBHOOK_SECONDS: std::cell::Cell<f64>;
}

/// Runs one request's future; its webhook time is returned with its output.
pub async fn timing_webhooks<F: std::future::Future>(serve: F) -> (F::Output, f64) {
    WEBHOOK_SECONDS
        .scope(std::cell::Cell::new(0.0), async {
            let out = serve.await;
            (out, WEBHOOK_SECONDS.with(|c| c.get()))
        })
        .await
}

/// The request being served spent `seconds` calling a webhook.
pub fn webhook_called(seconds: f64) {
    let _ = WEBHOOK_SECONDS.try_with(|c| c.set(c.get() + seconds));
}

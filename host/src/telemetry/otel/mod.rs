//! OpenTelemetry traces as kube-apiserver makes them (`--tracing-config-file`):
//! a server span per request, named as kube names it, child spans for the
//! handler, authentication, authorization, each admission entry and each
//! storage call, exported over OTLP/gRPC in batches.
//!
//! W3C trace context (`traceparent`, `baggage`) as kube handles it: an
//! incoming context is linked from the request's own (new) trace, not
//! trusted as its parent (kube's public endpoint); without tracing it
//! passes through unchanged. Webhooks (admission, conversion, token and
//! authorization) receive the context of the span that calls them.
//!
//! The current span travels with the request's future
//! ([`opentelemetry::context::FutureExt::with_context`]); code without a
//! request around it makes no spans.

pub mod config;
pub mod request;

use config::TracingConfiguration;
use opentelemetry::context::{FutureExt as _, WithContext};
use opentelemetry::propagation::{
    Extractor, Injector, TextMapCompositePropagator, TextMapPropagator,
};
use opentelemetry::trace::{
    Link, SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider};
use std::borrow::Cow;
use std::future::Future;
use std::sync::OnceLock;

/// The tracer, once `--tracing-config-file` configured one.
static TRACER: OnceLock<SdkTracer> = OnceLock::new();

/// kube's propagators: trace context and baggage.
fn propagator() -> &'static TextMapCompositePropagator {
    static P: OnceLock<TextMapCompositePropagator> = OnceLock::new();
    P.get_or_init(|| {
        TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ])
    })
}

/// The exporter's handle: spans still queued are flushed by [`Exporter::shutdown`].
pub struct Exporter(SdkTracerProvider);

impl Exporter {
    /// Flushes and stops the exporter (blocking: call off the async workers).
    pub fn shutdown(&self) {
        if let Err(e) = self.0.shutdown() {
            tracing::warn!(error = %e, "tracing exporter did not shut down cleanly");
        }
    }
}

/// Starts exporting to the configured collector, as kube: the sampler
/// follows a sampled parent span, else samples `samplingRatePerMillion`;
/// resource `service.name=apiserver` and the server's instance id. Must be
/// called within the Tokio runtime (the gRPC channel's worker runs on it).
pub fn init(config: &TracingConfiguration, instance_id: &str) -> Result<Exporter, String> {
    use opentelemetry_otlp::WithExportConfig;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint(config.url()?)
        .build()
        .map_err(|e| format!("tracing exporter: {e}"))?;
    let sampler = match config.ratio() {
        r if r > 0.0 => Sampler::TraceIdRatioBased(r),
        _ => Sampler::AlwaysOff,
    };
    let resource = opentelemetry_sdk::Resource::builder_empty()
        .with_attributes([
            KeyValue::new("service.name", "apiserver"),
            KeyValue::new("service.instance.id", instance_id.to_string()),
        ])
        .build();
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_sampler(Sampler::ParentBased(Box::new(sampler)))
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("k8s.io/apiserver");
    TRACER
        .set(tracer)
        .map_err(|_| "tracing is already configured".to_string())?;
    Ok(Exporter(provider))
}

fn tracer() -> Option<&'static SdkTracer> {
    TRACER.get()
}

/// A future run with a context current (or as it is, without one).
pub type Traced<F> = futures_util::future::Either<WithContext<F>, F>;

/// `fut` wrapped, not awaited inside another future: a request's futures
/// are large, and an `async fn` wrapper would hold them twice.
fn traced<F: Future>(cx: &Option<Context>, fut: F) -> Traced<F> {
    use futures_util::future::Either;
    match cx {
        Some(cx) => Either::Left(fut.with_context(cx.clone())),
        None => Either::Right(fut),
    }
}

/// The trace context a request is served in.
pub struct RequestTrace(Option<Context>);

impl RequestTrace {
    /// With tracing: a new server span named `name` (kube's span name
    /// formatter), linked to the client's context. Without: the client's
    /// context, passed through to the calls the request makes.
    pub fn start(
        headers: &http::HeaderMap,
        name: impl FnOnce() -> String,
        attrs: impl FnOnce() -> Vec<KeyValue>,
    ) -> Self {
        let remote = propagator().extract(&Headers(headers));
        let Some(tracer) = tracer() else {
            let passes = remote.span().span_context().is_valid() || !remote.baggage().is_empty();
            return RequestTrace(passes.then_some(remote));
        };
        let mut builder = tracer.span_builder(name()).with_kind(SpanKind::Server);
        let linked = remote.span().span_context().clone();
        if linked.is_valid() {
            builder = builder.with_links(vec![Link::with_context(linked)]);
        }
        // kube's public endpoint: a new root, the client's baggage kept.
        let root = Context::new().with_baggage(
            remote
                .baggage()
                .iter()
                .map(|(k, (v, _))| KeyValue::new(k.clone(), v.clone())),
        );
        let span = recording(tracer.build_with_context(builder, &root), attrs);
        RequestTrace(Some(root.with_span(span)))
    }

    /// Runs the request's future with its context current.
    pub fn run<F: Future>(&self, fut: F) -> Traced<F> {
        traced(&self.0, fut)
    }

    /// Ends the server span with the response's status code.
    pub fn finish(self, status: u16) {
        let Some(cx) = self.0 else { return };
        let span = cx.span();
        span.set_attribute(KeyValue::new("http.status_code", i64::from(status)));
        if status >= 500 {
            span.set_status(Status::error(""));
        }
        span.end();
    }
}

/// `span` with `attrs` set, when it is sampled (else they are never made).
fn recording(
    mut span: opentelemetry_sdk::trace::Span,
    attrs: impl FnOnce() -> Vec<KeyValue>,
) -> opentelemetry_sdk::trace::Span {
    use opentelemetry::trace::Span as _;
    if span.is_recording() {
        span.set_attributes(attrs());
    }
    span
}

/// A child span of the current context, ended when dropped; nothing at
/// all without tracing (or without a request around it).
pub struct Span(Option<Context>);

impl Span {
    /// No span (a request that has none of this kind).
    pub fn none() -> Self {
        Span(None)
    }

    /// A span named `name`; the name and `attrs` are only made when a
    /// request is traced, the attributes only when it is sampled.
    pub fn start<N: Into<Cow<'static, str>>>(
        name: impl FnOnce() -> N,
        attrs: impl FnOnce() -> Vec<KeyValue>,
    ) -> Self {
        Self::of_kind(SpanKind::Internal, name, attrs)
    }

    /// The span of an outgoing HTTP call (otelhttp's client span), whose
    /// context the call carries ([`Span::inject`]).
    pub fn client<N: Into<Cow<'static, str>>>(
        name: impl FnOnce() -> N,
        attrs: impl FnOnce() -> Vec<KeyValue>,
    ) -> Self {
        Self::of_kind(SpanKind::Client, name, attrs)
    }

    fn of_kind<N: Into<Cow<'static, str>>>(
        kind: SpanKind,
        name: impl FnOnce() -> N,
        attrs: impl FnOnce() -> Vec<KeyValue>,
    ) -> Self {
        let Some(tracer) = tracer() else {
            return Span(None);
        };
        let parent = Context::current();
        if !parent.has_active_span() {
            return Span(None);
        }
        let builder = tracer.span_builder(name()).with_kind(kind);
        let span = tracer.build_with_context(builder, &parent);
        Span(Some(parent.with_span(recording(span, attrs))))
    }

    /// Adds this span's trace context to an outgoing request's headers
    /// (without a span: the current context's, e.g. a client's passed through).
    pub fn inject(&self, headers: &mut http::HeaderMap) {
        match &self.0 {
            Some(cx) => propagator().inject_context(cx, &mut HeadersMut(headers)),
            None => inject(headers),
        }
    }

    /// Runs `fut` with this span current (its calls become its children).
    pub fn run<F: Future>(&self, fut: F) -> Traced<F> {
        traced(&self.0, fut)
    }

    pub fn set(&self, key: &'static str, value: impl Into<opentelemetry::Value>) {
        if let Some(cx) = &self.0 {
            cx.span().set_attribute(KeyValue::new(key, value));
        }
    }

    /// kube's span events (`"About to store object in database"`).
    pub fn event(&self, name: &'static str) {
        if let Some(cx) = &self.0 {
            cx.span().add_event(name, Vec::new());
        }
    }

    /// Marks the span failed, with why.
    pub fn fail(&self, why: &str) {
        if let Some(cx) = &self.0 {
            cx.span().set_status(Status::error(why.to_string()));
        }
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some(cx) = &self.0 {
            cx.span().end();
        }
    }
}

/// Adds the current trace context (`traceparent`, `tracestate`, `baggage`)
/// to an outgoing request's headers.
pub fn inject(headers: &mut http::HeaderMap) {
    let cx = Context::current();
    if cx.span().span_context().is_valid() || !cx.baggage().is_empty() {
        propagator().inject_context(&cx, &mut HeadersMut(headers));
    }
}

use opentelemetry::baggage::BaggageExt as _;

struct Headers<'a>(&'a http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

struct HeadersMut<'a>(&'a mut http::HeaderMap);

impl Injector for HeadersMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        let name = http::HeaderName::from_bytes(key.as_bytes());
        let value = http::HeaderValue::from_str(&value);
        if let (Ok(name), Ok(value)) = (name, value) {
            self.0.insert(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[tokio::test]
    async fn without_tracing_a_client_s_context_passes_through_to_calls() {
        let mut incoming = http::HeaderMap::new();
        incoming.insert("traceparent", PARENT.parse().unwrap());
        incoming.insert("baggage", "tenant=a".parse().unwrap());
        let trace = RequestTrace::start(&incoming, || "GET".into(), Vec::new);
        let outgoing = trace
            .run(async {
                let _span = Span::start(|| "Create", Vec::new);
                let mut h = http::HeaderMap::new();
                inject(&mut h);
                h
            })
            .await;
        assert_eq!(outgoing["traceparent"], PARENT);
        assert_eq!(outgoing["baggage"], "tenant=a");
    }

    #[tokio::test]
    async fn no_context_no_headers() {
        let trace = RequestTrace::start(&http::HeaderMap::new(), || "GET".into(), Vec::new);
        let outgoing = trace
            .run(async {
                let mut h = http::HeaderMap::new();
                inject(&mut h);
                h
            })
            .await;
        assert!(outgoing.is_empty());
    }
}

//! `--tracing-config-file`: kube's `apiserver.config.k8s.io` TracingConfiguration
//! (v1, v1beta1 or v1alpha1), read strictly and validated in kube's words.

use serde::Deserialize;

/// kube's upper bound of `samplingRatePerMillion`.
const MAX_SAMPLING_RATE_PER_MILLION: i64 = 1_000_000;
/// kube's OTLP endpoint when none is given (the collector's gRPC default).
pub const DEFAULT_ENDPOINT: &str = "localhost:4317";
const API_VERSIONS: [&str; 3] = [
    "apiserver.config.k8s.io/v1",
    "apiserver.config.k8s.io/v1beta1",
    "apiserver.config.k8s.io/v1alpha1",
];

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TracingConfiguration {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    /// host:port (gRPC dial target) of the OTLP collector.
    pub endpoint: Option<String>,
    /// Spans per million requests not already sampled by a parent; 0 or
    /// absent: none.
    pub sampling_rate_per_million: Option<i64>,
}

impl TracingConfiguration {
    /// Reads and validates a configuration file's text (YAML or JSON).
    pub fn parse(text: &str) -> Result<Self, String> {
        let config: Self = crate::apimachinery::yaml::config_from_str(text)
            .map_err(|e| format!("unable to decode tracing configuration data: {e}"))?;
        if config.kind != "TracingConfiguration" || !API_VERSIONS.contains(&&*config.api_version) {
            return Err(format!(
                "unable to decode tracing configuration data: no kind \"{}\" is registered for version \"{}\"",
                config.kind, config.api_version
            ));
        }
        let errors = config.validate();
        if !errors.is_empty() {
            return Err(format!(
                "failed to validate tracing configuration: {}",
                kube_rules::gofmt::aggregate(&errors)
            ));
        }
        Ok(config)
    }

    /// Reads the file at `path`, as kube's `ReadTracingConfiguration`.
    pub fn load(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "unable to read tracing configuration from {:?}: {e}",
                path.display()
            )
        })?;
        Self::parse(&text).map_err(|e| format!("failed to read tracing config: {e}"))
    }

    fn validate(&self) -> Vec<String> {
        let mut errors = Vec::new();
        if let Some(rate) = self.sampling_rate_per_million {
            if rate < 0 {
                errors.push(format!(
                    "samplingRatePerMillion: Invalid value: {rate}: sampling rate must be positive"
                ));
            }
            if rate > MAX_SAMPLING_RATE_PER_MILLION {
                errors.push(format!("samplingRatePerMillion: Invalid value: {rate}: sampling rate per million must be less than or equal to one million"));
            }
        }
        if let Some(endpoint) = &self.endpoint {
            if let Err(why) = collector_url(endpoint) {
                errors.push(format!("endpoint: Invalid value: {endpoint:?}: {why}"));
            }
        }
        errors
    }

    /// The sampling ratio of requests with no sampled parent (0.0 to 1.0).
    pub fn ratio(&self) -> f64 {
        self.sampling_rate_per_million.unwrap_or(0).max(0) as f64 / 1e6
    }

    /// The collector's URL for the OTLP/gRPC exporter (plain HTTP/2, as kube's
    /// `WithInsecure`).
    pub fn url(&self) -> Result<String, String> {
        collector_url(self.endpoint.as_deref().unwrap_or(DEFAULT_ENDPOINT))
    }
}

/// A gRPC dial target (`host:port`, `dns:///host:port`, `http://host:port`)
/// as the URL the exporter connects to.
fn collector_url(endpoint: &str) -> Result<String, String> {
    let target = match endpoint.split_once("://") {
        Some(("http" | "https", _)) => return parsed(endpoint),
        Some(("dns", rest)) => rest.trim_start_matches('/'),
        Some((scheme, _)) if !scheme.is_empty() => {
            return Err(format!("unsupported scheme {scheme:?}"))
        }
        _ => endpoint.trim_start_matches("//"),
    };
    parsed(&format!("http://{target}"))
}

fn parsed(url: &str) -> Result<String, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("{e}"))?;
    match uri.authority() {
        Some(a) if !a.host().is_empty() => Ok(url.to_string()),
        _ => Err("no host in endpoint".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kube_s_configuration_and_its_defaults() {
        let c = TracingConfiguration::parse(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 250000\n",
        )
        .unwrap();
        assert_eq!(c.url().unwrap(), "http://localhost:4317");
        assert_eq!(c.ratio(), 0.25);
        let c = TracingConfiguration::parse(
            "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nendpoint: dns:///collector:4317\n",
        )
        .unwrap();
        assert_eq!(c.url().unwrap(), "http://collector:4317");
        assert_eq!(c.ratio(), 0.0);
    }

    #[test]
    fn refuses_what_kube_refuses_in_its_words() {
        let bad = TracingConfiguration::parse(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 2000000\n",
        )
        .unwrap_err();
        assert_eq!(bad, "failed to validate tracing configuration: samplingRatePerMillion: Invalid value: 2000000: sampling rate per million must be less than or equal to one million");
        let bad = TracingConfiguration::parse(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: -1\n",
        )
        .unwrap_err();
        assert!(bad.ends_with("sampling rate must be positive"), "{bad}");
        let unknown = TracingConfiguration::parse(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsampling: 1\n",
        )
        .unwrap_err();
        assert!(
            unknown.starts_with("unable to decode tracing configuration data"),
            "{unknown}"
        );
        let kind = TracingConfiguration::parse("apiVersion: v1\nkind: ConfigMap\n").unwrap_err();
        assert!(kind.contains("no kind \"ConfigMap\""), "{kind}");
    }
}

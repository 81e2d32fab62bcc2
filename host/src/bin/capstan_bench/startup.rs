//! Startup measurement: spawns `<binary> serve --data-dir <temp> --secure-port <free>`
//! several times and times each from process start to the first 200 from /readyz,
//! polled with the admin kubeconfig the server writes into its data directory.

use super::client::Client;
use super::kubeconfig;
use super::stats::{median_ms, ms};
use anyhow::{bail, Context, Result};
use http::{Method, StatusCode};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Give up on a server that is not ready after this long.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const POLL_INTERVAL: Duration = Duration::from_millis(5);
/// Bound on one connection attempt or /readyz request while polling.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);

/// Startup times of the successful runs, plus why the others failed.
#[derive(Debug, Clone, Serialize)]
pub struct StartupResult {
    pub binary: String,
    pub runs: usize,
    pub samples_ms: Vec<f64>,
    pub median_ms: f64,
    pub max_ms: f64,
    pub failures: Vec<String>,
}

/// Measures `runs` startups of `binary`, one after the other, with data directories
/// (removed afterwards) under the system temporary directory.
pub async fn measure(binary: &Path, runs: usize) -> StartupResult {
    measure_in(binary, runs, &std::env::temp_dir()).await
}

async fn measure_in(binary: &Path, runs: usize, scratch: &Path) -> StartupResult {
    let mut samples_ms = Vec::new();
    let mut failures = Vec::new();
    for run in 0..runs {
        match measure_once(binary, scratch).await {
            Ok(elapsed) => {
                tracing::info!(run, startup_ms = ms(elapsed), "server became ready");
                samples_ms.push(ms(elapsed));
            }
            Err(e) => {
                tracing::warn!(run, error = %format!("{e:#}"), "startup run failed");
                failures.push(format!("{e:#}"));
            }
        }
    }
    StartupResult {
        binary: binary.display().to_string(),
        runs,
        median_ms: median_ms(&samples_ms),
        max_ms: samples_ms.iter().copied().fold(0.0, f64::max),
        samples_ms,
        failures,
    }
}

/// A spawned server; killed and its data directory removed when dropped.
struct Spawned {
    child: Child,
    data_dir: PathBuf,
    log: PathBuf,
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
        let _ = std::fs::remove_file(&self.log);
    }
}

async fn measure_once(binary: &Path, scratch: &Path) -> Result<Duration> {
    let port = free_port()?;
    let id: u32 = rand::random();
    let data_dir = scratch.join(format!("capstan-bench-startup-{id:08x}"));
    let log = data_dir.with_extension("log");
    let log_file =
        std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    let started = Instant::now();
    let spawned = Command::new(binary)
        .arg("serve")
        .arg("--data-dir")
        .arg(&data_dir)
        .arg("--secure-port")
        .arg(port.to_string())
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .spawn();
    let child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let _ = std::fs::remove_file(&log);
            return Err(e).with_context(|| format!("spawning {}", binary.display()));
        }
    };
    let mut server = Spawned {
        child,
        data_dir,
        log,
    };
    wait_ready(&mut server, started).await?;
    Ok(started.elapsed())
}

/// Polls until /readyz answers 200, the process exits, or the deadline passes.
async fn wait_ready(server: &mut Spawned, started: Instant) -> Result<()> {
    let kubeconfig_path = server.data_dir.join("admin.kubeconfig");
    let mut client: Option<Client> = None;
    loop {
        if let Some(status) = server.child.try_wait()? {
            bail!(
                "server exited ({status}) before becoming ready; output: {}",
                log_tail(&server.log)
            );
        }
        if started.elapsed() > READY_TIMEOUT {
            bail!(
                "not ready after {READY_TIMEOUT:?}; output: {}",
                log_tail(&server.log)
            );
        }
        if client.is_none() && kubeconfig_path.exists() {
            client = connect(&kubeconfig_path).await;
        }
        if let Some(c) = &client {
            match tokio::time::timeout(ATTEMPT_TIMEOUT, c.request(Method::GET, "/readyz", None))
                .await
            {
                Ok(Ok(reply)) if reply.status == StatusCode::OK => return Ok(()),
                Ok(Ok(_)) => {}
                Ok(Err(_)) | Err(_) => client = None,
            }
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// A client from the (possibly still half-written) kubeconfig, if the server accepts.
async fn connect(path: &Path) -> Option<Client> {
    let kc = kubeconfig::load(path, None).ok()?;
    tokio::time::timeout(ATTEMPT_TIMEOUT, Client::connect(&kc, true))
        .await
        .ok()?
        .ok()
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}

/// The last few lines the server printed, for error messages.
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(5)..].join(" | ");
    if tail.is_empty() {
        "(none)".to_string()
    } else {
        tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_binary_that_exits_is_a_reported_failure_not_a_hang() {
        let scratch = tempfile::tempdir().unwrap();
        let result = measure_in(Path::new("/bin/false"), 2, scratch.path()).await;
        assert_eq!(
            std::fs::read_dir(scratch.path()).unwrap().count(),
            0,
            "files left behind"
        );
        assert_eq!((result.runs, result.samples_ms.len()), (2, 0));
        assert_eq!(result.failures.len(), 2);
        assert!(
            result.failures[0].contains("exited"),
            "{}",
            result.failures[0]
        );
        assert_eq!((result.median_ms, result.max_ms), (0.0, 0.0));
    }

    #[tokio::test]
    async fn a_missing_binary_is_a_reported_failure() {
        let scratch = tempfile::tempdir().unwrap();
        let result = measure_in(Path::new("/nonexistent/capstan"), 1, scratch.path()).await;
        assert_eq!(
            std::fs::read_dir(scratch.path()).unwrap().count(),
            0,
            "log left behind"
        );
        assert!(
            result.failures[0].contains("spawning /nonexistent/capstan"),
            "{:?}",
            result.failures
        );
    }

    #[test]
    fn log_tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "1\n2\n3\n4\n5\n6\n7\n").unwrap();
        assert_eq!(log_tail(&path), "3 | 4 | 5 | 6 | 7");
        assert_eq!(log_tail(&dir.path().join("missing")), "(none)");
    }
}

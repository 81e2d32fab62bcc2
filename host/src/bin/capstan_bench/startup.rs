//! Startup measurement: spawns `<binary> serve --data-dir .. --secure-port ..
//! --plugin-cache-dir ..` several times, in three scenarios per run (a fresh
//! data directory with an empty plugin cache, a fresh one with the cache the
//! first filled, and that second data directory again), and times each from
//! process start to the first 200 from /readyz, polled with the admin
//! kubeconfig the server writes into its data directory; the server's RSS is
//! read from /proc when it is ready.

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
/// How long a server has to stop after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// The scenarios of one run, in order: each data directory is used by the
/// scenarios after the one that created it.
pub const SCENARIOS: [Scenario; 3] = [
    Scenario {
        name: "fresh data dir, empty plugin cache",
        data_dir: "fresh",
    },
    Scenario {
        name: "fresh data dir, warm plugin cache",
        data_dir: "second",
    },
    Scenario {
        name: "existing data dir",
        data_dir: "second",
    },
];

/// One way to start: the data directory (under the run's scratch directory)
/// it uses; every scenario shares the run's plugin cache directory.
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    pub name: &'static str,
    data_dir: &'static str,
}

/// Startup times and RSS at ready of the successful runs of one scenario,
/// plus why the others failed.
#[derive(Debug, Clone, Serialize)]
pub struct StartupResult {
    pub binary: String,
    pub scenario: String,
    pub runs: usize,
    pub samples_ms: Vec<f64>,
    pub median_ms: f64,
    pub max_ms: f64,
    pub rss_mib: Vec<f64>,
    pub median_rss_mib: f64,
    pub failures: Vec<String>,
}

impl StartupResult {
    fn new(binary: &Path, scenario: &Scenario, runs: usize) -> Self {
        StartupResult {
            binary: binary.display().to_string(),
            scenario: scenario.name.to_string(),
            runs,
            samples_ms: Vec::new(),
            median_ms: 0.0,
            max_ms: 0.0,
            rss_mib: Vec::new(),
            median_rss_mib: 0.0,
            failures: Vec::new(),
        }
    }

    fn finish(&mut self) {
        self.median_ms = median_ms(&self.samples_ms);
        self.max_ms = self.samples_ms.iter().copied().fold(0.0, f64::max);
        self.median_rss_mib = median_ms(&self.rss_mib);
    }
}

/// Measures `runs` runs of every scenario of `binary`, one after the other,
/// in scratch directories (removed afterwards) under the system temporary
/// directory.
pub async fn measure(binary: &Path, runs: usize) -> Vec<StartupResult> {
    measure_in(binary, runs, &std::env::temp_dir()).await
}

async fn measure_in(binary: &Path, runs: usize, scratch: &Path) -> Vec<StartupResult> {
    let mut results: Vec<StartupResult> = SCENARIOS
        .iter()
        .map(|s| StartupResult::new(binary, s, runs))
        .collect();
    for run in 0..runs {
        let dir = Scratch::new(scratch);
        for (scenario, result) in SCENARIOS.iter().zip(&mut results) {
            match measure_once(binary, &dir.0, scenario).await {
                Ok((elapsed, rss)) => {
                    tracing::info!(
                        run,
                        scenario = scenario.name,
                        startup_ms = ms(elapsed),
                        rss_mib = rss,
                        "server became ready"
                    );
                    result.samples_ms.push(ms(elapsed));
                    result.rss_mib.push(rss);
                }
                Err(e) => {
                    tracing::warn!(run, scenario = scenario.name, error = %format!("{e:#}"), "startup run failed");
                    result.failures.push(format!("{e:#}"));
                }
            }
        }
    }
    results.iter_mut().for_each(StartupResult::finish);
    results
}

/// A run's scratch directory (data directories, plugin cache, logs),
/// removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(parent: &Path) -> Scratch {
        let id: u32 = rand::random();
        Scratch(parent.join(format!("capstan-bench-startup-{id:08x}")))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A spawned server; killed when dropped.
pub struct Spawned {
    child: Child,
    data_dir: PathBuf,
    log: PathBuf,
}

impl Spawned {
    /// Starts `binary serve` on a free port with `data_dir` and `cache` (the
    /// plugin cache directory), its output in `log`.
    pub fn start(binary: &Path, data_dir: &Path, cache: &Path, log: &Path) -> Result<Spawned> {
        let port = free_port()?;
        if let Some(parent) = log.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let log_file =
            std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let _ = std::fs::remove_file(data_dir.join("admin.kubeconfig"));
        let child = Command::new(binary)
            .arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--secure-port")
            .arg(port.to_string())
            .arg("--plugin-cache-dir")
            .arg(cache)
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .spawn()
            .with_context(|| format!("spawning {}", binary.display()))?;
        Ok(Spawned {
            child,
            data_dir: data_dir.to_path_buf(),
            log: log.to_path_buf(),
        })
    }

    /// The server's resident set size now, in MiB.
    pub fn rss_mib(&self) -> Result<f64> {
        let path = format!("/proc/{}/status", self.child.id());
        let status = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        let kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .with_context(|| format!("no VmRSS in {path}"))?;
        Ok(kib / 1024.0)
    }

    /// The admin kubeconfig the server wrote.
    pub fn kubeconfig(&self) -> PathBuf {
        self.data_dir.join("admin.kubeconfig")
    }

    /// SIGTERM, then SIGKILL if it has not exited within [`STOP_TIMEOUT`].
    fn stop(mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One start of `scenario` in the run's scratch directory: time to ready and
/// RSS at ready; the server is stopped (SIGTERM) afterwards.
async fn measure_once(
    binary: &Path,
    scratch: &Path,
    scenario: &Scenario,
) -> Result<(Duration, f64)> {
    let data_dir = scratch.join(scenario.data_dir);
    let log = scratch.join(format!("{}.log", scenario.data_dir));
    let started = Instant::now();
    let mut server = Spawned::start(binary, &data_dir, &scratch.join("plugin-cache"), &log)?;
    wait_ready(&mut server, started).await?;
    let elapsed = started.elapsed();
    let rss = server.rss_mib()?;
    server.stop();
    Ok((elapsed, rss))
}

/// Polls until /readyz answers 200, the process exits, or the deadline passes.
pub async fn wait_ready(server: &mut Spawned, started: Instant) -> Result<()> {
    let kubeconfig_path = server.kubeconfig();
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
        let results = measure_in(Path::new("/bin/false"), 2, scratch.path()).await;
        assert_eq!(
            std::fs::read_dir(scratch.path()).unwrap().count(),
            0,
            "files left behind"
        );
        let names: Vec<&str> = results.iter().map(|r| r.scenario.as_str()).collect();
        assert_eq!(names, SCENARIOS.map(|s| s.name));
        for result in &results {
            assert_eq!((result.runs, result.samples_ms.len()), (2, 0));
            assert_eq!(result.failures.len(), 2);
            assert!(
                result.failures[0].contains("exited"),
                "{}",
                result.failures[0]
            );
            assert_eq!((result.median_ms, result.max_ms), (0.0, 0.0));
        }
    }

    #[tokio::test]
    async fn a_missing_binary_is_a_reported_failure() {
        let scratch = tempfile::tempdir().unwrap();
        let results = measure_in(Path::new("/nonexistent/capstan"), 1, scratch.path()).await;
        assert_eq!(
            std::fs::read_dir(scratch.path()).unwrap().count(),
            0,
            "log left behind"
        );
        assert!(
            results[0].failures[0].contains("spawning /nonexistent/capstan"),
            "{:?}",
            results[0].failures
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

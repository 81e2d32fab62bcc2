//! Starting a server in a fresh data directory and talking to it.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The kubectl the tests use: fixed, so results do not depend on the dispatcher.
pub fn kubectl_path() -> String {
    std::env::var("CAPSTAN_KUBECTL")
        .unwrap_or_else(|_| "/usr/lib/google-cloud-sdk/bin/kubectl.1.33".to_string())
}

/// Held by a server start until one start has warmed the shared cache.
static FIRST_START: std::sync::Mutex<()> = std::sync::Mutex::new(());
static WARMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The compiled-plugin cache every test server shares.
pub const SHARED_PLUGIN_CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/plugin-cache");

pub struct Server {
    child: Option<Child>,
    /// This server's own scratch directory (its log, request bodies).
    pub dir: tempfile::TempDir,
    /// The data directory (the scratch directory, or a replica's peer's).
    data_dir: PathBuf,
    pub port: u16,
    extra_args: Vec<String>,
    /// Without `--plugin-cache-dir`, with this `XDG_CACHE_HOME` (the default
    /// cache location); `None`: the tests' shared cache directory.
    cache_home: Option<PathBuf>,
    /// How long a start may take before the test fails.
    ready_within: Duration,
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local addr").port()
}

impl Server {
    /// Starts `capstan serve` on a free port in a new data directory and waits until it serves.
    pub fn start() -> Server {
        Self::start_with(&[])
    }

    /// Starts with extra `capstan serve` flags.
    pub fn start_with(extra: &[&str]) -> Server {
        Self::start_within(extra, Duration::from_secs(90))
    }

    /// Starts with extra flags, allowing `ready_within` for the start: a
    /// plugin that embeds an interpreter (JS, Python) compiles for tens of
    /// seconds before the server serves, when the plugin cache is cold.
    pub fn start_within(extra: &[&str], ready_within: Duration) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let data_dir = dir.path().to_path_buf();
        Self::spawn_new(dir, data_dir, extra, ready_within)
    }

    /// Starts in a new data directory with the default plugin cache, the
    /// user's cache under `cache_home` (as `XDG_CACHE_HOME`).
    pub fn start_with_cache_home(cache_home: &std::path::Path) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut s = Server {
            child: None,
            data_dir: dir.path().to_path_buf(),
            dir,
            port: free_port(),
            extra_args: Vec::new(),
            cache_home: Some(cache_home.to_path_buf()),
            ready_within: Duration::from_secs(90),
        };
        s.spawn();
        s
    }

    /// Another replica: same data directory (certificates, token key), its
    /// own port, started with `extra` flags (e.g. the same --etcd-servers).
    pub fn start_replica(&self, extra: &[&str]) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        Self::spawn_new(dir, self.data_dir.clone(), extra, self.ready_within)
    }

    fn spawn_new(
        dir: tempfile::TempDir,
        data_dir: PathBuf,
        extra: &[&str],
        ready_within: Duration,
    ) -> Server {
        let extra_args = extra.iter().map(|s| s.to_string()).collect();
        let mut s = Server {
            child: None,
            dir,
            data_dir,
            port: free_port(),
            extra_args,
            cache_home: None,
            ready_within,
        };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        // The first server on the shared plugin cache compiles the built-in
        // plugins (slow in a debug build); the others wait for it and start
        // from the warm cache instead of all compiling at once.
        use std::sync::atomic::Ordering;
        let cold = self.cache_home.is_none() && !WARMED.load(Ordering::Acquire);
        let first_start = cold.then(|| FIRST_START.lock().unwrap_or_else(|e| e.into_inner()));
        self.spawn_unserialized();
        if first_start.is_some() {
            WARMED.store(true, Ordering::Release);
        }
    }

    fn spawn_unserialized(&mut self) {
        if self.data_dir == self.dir.path() {
            let _ = std::fs::remove_file(self.kubeconfig());
        }
        let log = std::fs::File::create(self.dir.path().join("server.log")).expect("log file");
        let mut command = Command::new(env!("CARGO_BIN_EXE_capstan"));
        command
            .args(["serve", "--data-dir"])
            .arg(&self.data_dir)
            .args(["--secure-port", &self.port.to_string()]);
        match &self.cache_home {
            Some(home) => command.env("XDG_CACHE_HOME", home).env("NO_COLOR", "1"),
            None => command.args(["--plugin-cache-dir", SHARED_PLUGIN_CACHE]),
        };
        let child = command
            .args(&self.extra_args)
            .env("RUST_LOG", "capstan=debug")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start capstan");
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + self.ready_within;
        while Instant::now() < deadline {
            if self.kubeconfig().exists() {
                let out = self.curl(&[
                    "-o",
                    "/dev/null",
                    "-w",
                    "%{http_code}",
                    &self.url("/readyz"),
                ]);
                if String::from_utf8_lossy(&out.stdout) == "200" {
                    self.wait_root_ca();
                    return;
                }
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                panic!("capstan exited with {status}: {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("capstan did not become ready: {}", self.log());
    }

    /// Waits a little for `default/kube-root-ca.crt`, as the Kubernetes e2e
    /// framework does, so tests see the namespace as a cluster has it.
    fn wait_root_ca(&self) {
        let path = "/api/v1/namespaces/default/configmaps/kube-root-ca.crt";
        eventually(Duration::from_secs(5), || {
            let out = self.curl(&["-o", "/dev/null", "-w", "%{http_code}", &self.url(path)]);
            String::from_utf8_lossy(&out.stdout) == "200"
        });
    }

    /// Stops the server (SIGKILL when `hard`) and starts it again on the same data directory.
    pub fn restart(&mut self, hard: bool) {
        self.stop(hard);
        self.spawn();
    }

    /// Stops the server: SIGKILL when `hard`, else SIGTERM and a few
    /// seconds to shut down (SIGKILL after that).
    pub fn stop(&mut self, hard: bool) {
        if let Some(mut c) = self.child.take() {
            if !hard {
                let _ = Command::new("kill").arg(c.id().to_string()).status();
                let _ = eventually(Duration::from_secs(10), || {
                    matches!(c.try_wait(), Ok(Some(_)))
                });
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).expect("the server runs")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The running server's process (`/proc/<pid>/…`).
    fn proc_file(&self, file: &str) -> String {
        std::fs::read_to_string(format!("/proc/{}/{file}", self.pid())).expect("read /proc")
    }

    /// The server process's resident memory, in MiB.
    pub fn rss_mib(&self) -> u64 {
        let status = self.proc_file("status");
        let kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .expect("VmRSS in /proc/<pid>/status");
        kib / 1024
    }

    /// CPU time (user + system) the server process has used, in seconds.
    pub fn cpu_seconds(&self) -> f64 {
        let stat = self.proc_file("stat");
        // Fields after the command name (which may hold spaces): utime and
        // stime are the 12th and 13th of them, in clock ticks (100 a second).
        let fields: Vec<&str> = stat
            .rsplit_once(") ")
            .map(|(_, rest)| rest.split(' ').collect())
            .unwrap_or_default();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        (ticks(11) + ticks(12)) / 100.0
    }

    pub fn kubeconfig(&self) -> PathBuf {
        self.data_dir.join("admin.kubeconfig")
    }

    pub fn pki(&self, file: &str) -> PathBuf {
        self.data_dir.join("pki").join(file)
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// Runs kubectl against this server.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_stdin(args, None)
    }

    /// A kubeconfig for `user` in `groups`, minted by `capstan kubeconfig`.
    pub fn user_kubeconfig(&self, user: &str, groups: &[&str]) -> PathBuf {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_capstan"));
        cmd.args(["kubeconfig", "--data-dir"])
            .arg(&self.data_dir)
            .args(["--user", user]);
        for g in groups {
            cmd.args(["--group", g]);
        }
        let out = run_with_stdin(&mut cmd, None);
        assert!(out.status.success(), "capstan kubeconfig: {}", stderr(&out));
        let path = self
            .dir
            .path()
            .join(format!("{user}-{}.kubeconfig", rand_suffix()));
        std::fs::write(&path, &out.stdout).expect("write kubeconfig");
        path
    }

    /// A kubeconfig that presents only a bearer token (no client certificate).
    pub fn token_kubeconfig(&self, token: &str) -> PathBuf {
        let ca = std::fs::read(self.pki("ca.crt")).expect("CA");
        use base64::Engine;
        let ca = base64::engine::general_purpose::STANDARD.encode(ca);
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\nusers:\n- name: t\n  user:\n    token: {token}\ncontexts:\n- name: t\n  context: {{cluster: c, user: t}}\ncurrent-context: t\n",
            self.url("")
        );
        let path = self
            .dir
            .path()
            .join(format!("token-{}.kubeconfig", rand_suffix()));
        std::fs::write(&path, text).expect("write kubeconfig");
        path
    }

    /// kubectl with another kubeconfig (another user).
    pub fn kubectl_with(&self, kubeconfig: &std::path::Path, args: &[&str]) -> Output {
        run_with_stdin(
            Command::new(kubectl_path())
                .arg("--kubeconfig")
                .arg(kubeconfig)
                .args(["--server", &self.url("")])
                .args(args),
            None,
        )
    }

    /// A given kubectl release (`"1.27"`) instead of the fixed one, e.g. for
    /// what older clients ask of the server.
    pub fn kubectl_release(&self, release: &str, args: &[&str], stdin: Option<&str>) -> Output {
        let path = format!("/usr/lib/google-cloud-sdk/bin/kubectl.{release}");
        run_with_stdin(
            Command::new(path)
                .arg("--kubeconfig")
                .arg(self.kubeconfig())
                .args(["--server", &self.url("")])
                .args(args),
            stdin,
        )
    }

    pub fn kubectl_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        run_with_stdin(
            Command::new(kubectl_path())
                .arg("--kubeconfig")
                .arg(self.kubeconfig())
                .args(["--server", &self.url("")])
                .args(args),
            stdin,
        )
    }

    /// kubectl that must succeed; returns its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}\n{}",
            stderr(&out),
            self.log_tail()
        );
        stdout(&out)
    }

    /// kubectl that must succeed, with a manifest on stdin.
    pub fn ok_stdin(&self, args: &[&str], input: &str) -> String {
        let out = self.kubectl_stdin(args, Some(input));
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}\n{}",
            stderr(&out),
            self.log_tail()
        );
        stdout(&out)
    }

    /// kubectl that must fail; returns its stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            !out.status.success(),
            "kubectl {args:?} unexpectedly succeeded: {}",
            stdout(&out)
        );
        stderr(&out)
    }

    pub fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.extend(["-o", "json"]);
        serde_json::from_str(&self.ok(&a)).expect("kubectl printed JSON")
    }

    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    }

    /// curl with the admin client certificate; extra args first.
    pub fn curl(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "--cacert"]).arg(self.pki("ca.crt"));
        cmd.arg("--cert")
            .arg(self.pki("admin.crt"))
            .arg("--key")
            .arg(self.pki("admin.key"));
        cmd.args(args);
        run_with_stdin(&mut cmd, None)
    }

    /// An HTTP request with a JSON or other body; returns (status code, parsed body, headers text).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&str>,
    ) -> (u16, Value, String) {
        self.request_bytes(method, path, content_type, body.map(str::as_bytes))
    }

    /// [`Server::request`] with a body of any bytes (protobuf, for instance).
    pub fn request_bytes(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&[u8]>,
    ) -> (u16, Value, String) {
        let headers = self.dir.path().join(format!("headers-{}", rand_suffix()));
        let mut args: Vec<String> = vec![
            "-X".into(),
            method.into(),
            "-D".into(),
            headers.display().to_string(),
        ];
        args.extend(["-H".into(), format!("Content-Type: {content_type}")]);
        args.extend(["-w".into(), "\n%{http_code}".into()]);
        let body_file = self.dir.path().join(format!("body-{}", rand_suffix()));
        if let Some(b) = body {
            std::fs::write(&body_file, b).expect("write body");
            args.extend(["--data-binary".into(), format!("@{}", body_file.display())]);
        }
        args.push(self.url(path));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.curl(&argv);
        let text = stdout(&out);
        let (body_text, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
        let value = serde_json::from_str(body_text).unwrap_or(Value::String(body_text.to_string()));
        let header_text = std::fs::read_to_string(&headers).unwrap_or_default();
        (code.trim().parse().unwrap_or(0), value, header_text)
    }

    pub fn get_json(&self, path: &str) -> (u16, Value) {
        let (code, v, _) = self.request("GET", path, "application/json", None);
        (code, v)
    }
}

fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop(true);
    }
}

fn run_with_stdin(cmd: &mut Command, stdin: Option<&str>) -> Output {
    use std::io::Write;
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn command");
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(input.as_bytes()).expect("write stdin");
    }
    child.wait_with_output().expect("command output")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Polls `check` until it returns true or the timeout passes.
pub fn eventually(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// This machine's address on its default route, if it has one (kube refuses
/// loopback endpoints and pod IPs, so proxy tests reach local servers there).
pub fn routed_local_ip() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// A TLS server configuration for 127.0.0.1 signed by a fresh CA: (config,
/// the CA's PEM to trust), for the tests' webhook servers.
pub fn loopback_tls() -> (rustls::ServerConfig, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![rustls::pki_types::CertificateDer::from(cert.der().to_vec())],
            rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
        )
        .unwrap();
    (config, ca.pem())
}

/// Serves `handle` on a free port of 127.0.0.1 from a thread of its own:
/// over TLS with HTTP/1.1 when `tls` is given, else plain HTTP/2 (gRPC's
/// h2c). Returns the port.
pub fn serve_on_loopback<H, F, B>(tls: Option<rustls::ServerConfig>, handle: H) -> u16
where
    H: Fn(http::Request<hyper::body::Incoming>) -> F + Clone + Send + Sync + 'static,
    F: std::future::Future<Output = http::Response<B>> + Send + 'static,
    B: hyper::body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let acceptor = tls.map(|c| tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(c)));
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(serve_connection(tcp, acceptor.clone(), handle.clone()));
            }
        });
    });
    port
}

async fn serve_connection<H, F, B>(
    tcp: tokio::net::TcpStream,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    handle: H,
) where
    H: Fn(http::Request<hyper::body::Incoming>) -> F + Clone + Send + Sync + 'static,
    F: std::future::Future<Output = http::Response<B>> + Send + 'static,
    B: hyper::body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let svc = hyper::service::service_fn(move |req| {
        let answer = handle(req);
        async move { Ok::<_, std::convert::Infallible>(answer.await) }
    });
    let _ = match acceptor {
        Some(acceptor) => {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                .await
        }
        None => {
            hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                .serve_connection(hyper_util::rt::TokioIo::new(tcp), svc)
                .await
        }
    };
}

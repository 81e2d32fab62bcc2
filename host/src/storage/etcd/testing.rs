//! Test support: real etcd processes on free loopback ports (the `etcd`
//! binary must be on PATH: `apt-get install etcd-server`), one shared etcd
//! for the whole test binary, and a throwaway PKI for TLS tests.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use tokio::sync::{Mutex, OnceCell, OwnedMutexGuard};

use super::{EtcdOptions, EtcdStorage};

/// How long an etcd may take to start answering.
const START_TIMEOUT: Duration = Duration::from_secs(30);

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

fn next_id() -> usize {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// A key prefix no other test in this process uses.
pub(super) fn unique_prefix() -> String {
    format!("/capstan-test-{}-{}", std::process::id(), next_id())
}

/// Short timeouts, so failure tests finish quickly.
pub(super) fn test_options(url: &str, key_prefix: &str) -> EtcdOptions {
    EtcdOptions {
        key_prefix: key_prefix.to_string(),
        connect_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(2),
        ready_timeout: Duration::from_secs(1),
        keep_alive_interval: Duration::from_secs(5),
        keep_alive_timeout: Duration::from_secs(2),
        ..EtcdOptions::new(vec![url.to_string()])
    }
}

/// One etcd server process with its own data directory. Killed (and its
/// directory removed) on drop; `stop` and `restart` keep the data.
pub(super) struct EtcdProcess {
    child: Option<Child>,
    dir: PathBuf,
    client_url: String,
    peer_url: String,
    tls: bool,
    starts: usize,
}

impl EtcdProcess {
    /// Starts etcd on free loopback ports, serving `https` with client
    /// certificate authentication when `pki` is given. Does not wait until it
    /// answers: see [`wait_until_ready`].
    pub(super) fn start(pki: Option<&TestPki>) -> Self {
        let dir =
            std::env::temp_dir().join(format!("capstan-etcd-{}-{}", std::process::id(), next_id()));
        std::fs::create_dir_all(&dir).expect("create etcd test directory");
        if let Some(pki) = pki {
            pki.write_server_files(&dir);
        }
        let scheme = if pki.is_some() { "https" } else { "http" };
        let mut etcd = EtcdProcess {
            child: None,
            client_url: format!("{scheme}://127.0.0.1:{}", free_port()),
            peer_url: format!("http://127.0.0.1:{}", free_port()),
            dir,
            tls: pki.is_some(),
            starts: 0,
        };
        etcd.spawn();
        etcd
    }

    pub(super) fn client_url(&self) -> &str {
        &self.client_url
    }

    /// Kills etcd (SIGKILL, like a crash); its data stays.
    pub(super) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Freezes etcd (SIGSTOP): connections stay open but nothing answers,
    /// like a hung server or a network black hole.
    pub(super) fn pause(&self) {
        self.signal(libc::SIGSTOP);
        // The signal is asynchronous: wait until the kernel reports every
        // thread stopped, so the next request surely meets a frozen etcd.
        let pid = self.child.as_ref().map_or(0, Child::id);
        let tasks = format!("/proc/{pid}/task");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !all_threads_stopped(Path::new(&tasks)) {
            assert!(Instant::now() < deadline, "etcd did not stop");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Lets a paused etcd run again (SIGCONT).
    pub(super) fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, signal: libc::c_int) {
        let child = self.child.as_ref().expect("etcd is running");
        let pid = libc::pid_t::try_from(child.id()).expect("pid fits pid_t");
        // SAFETY: plain kill(2) on our own child process.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "signal {signal} to etcd");
    }

    /// Starts etcd again on the same ports and data.
    pub(super) fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    fn spawn(&mut self) {
        let log = File::create(self.dir.join(format!("etcd-{}.log", self.starts)))
            .expect("create etcd log");
        let stderr = log.try_clone().expect("clone etcd log handle");
        self.starts += 1;
        let mut command = self.command();
        command.stdout(log).stderr(stderr).stdin(Stdio::null());
        // SAFETY: prctl is async-signal-safe; it makes the kernel kill etcd
        // when the thread that started it (or the whole test process) dies.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = command
            .spawn()
            .expect("start etcd (is it installed? apt-get install etcd-server)");
        self.child = Some(child);
    }

    fn command(&self) -> Command {
        let mut command = Command::new("etcd");
        let data = self.dir.join("data");
        command
            .arg("--name=default")
            .arg(format!("--data-dir={}", data.display()))
            .arg(format!("--listen-client-urls={}", self.client_url))
            .arg(format!("--advertise-client-urls={}", self.client_url))
            .arg(format!("--listen-peer-urls={}", self.peer_url))
            .arg(format!("--initial-advertise-peer-urls={}", self.peer_url))
            .arg(format!("--initial-cluster=default={}", self.peer_url))
            .arg("--logger=zap")
            .arg("--log-outputs=stderr");
        if self.tls {
            let file = |name: &str| self.dir.join(name).display().to_string();
            command
                .arg(format!("--cert-file={}", file("server.crt")))
                .arg(format!("--key-file={}", file("server.key")))
                .arg(format!("--trusted-ca-file={}", file("ca.crt")))
                .arg("--client-cert-auth");
        }
        command
    }
}

impl Drop for EtcdProcess {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether every thread listed under `/proc/<pid>/task` is stopped (`T`).
fn all_threads_stopped(tasks: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(tasks) else {
        return false;
    };
    entries.flatten().all(|task| {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // The state follows the parenthesised command name.
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        state == Some('T')
    })
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// Polls until etcd at `options` answers a readiness probe.
pub(super) async fn wait_until_ready(options: &EtcdOptions) {
    let started = Instant::now();
    let store = EtcdStorage::connect(options.clone())
        .await
        .expect("etcd client");
    loop {
        use crate::storage::Storage;
        match store.is_ready().await {
            Ok(()) => return,
            Err(err) if started.elapsed() > START_TIMEOUT => {
                panic!("etcd at {:?} not ready: {err}", options.endpoints)
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

static SHARED_URL: OnceCell<String> = OnceCell::const_new();
static SHARED_DIR: OnceLock<PathBuf> = OnceLock::new();
static SHARED_TURN: LazyLock<Arc<Mutex<()>>> = LazyLock::new(|| Arc::new(Mutex::new(())));

/// Exclusive use of the shared etcd: revisions are store-wide, so tests
/// that assert on them must not interleave their writes.
pub(super) async fn shared_etcd_turn() -> OwnedMutexGuard<()> {
    SHARED_TURN.clone().lock_owned().await
}

/// The client URL of the etcd shared by all tests of this binary, started on
/// first use and ready.
pub(super) async fn shared_etcd_url() -> &'static str {
    SHARED_URL
        .get_or_init(|| async {
            let url = tokio::task::spawn_blocking(start_shared_etcd)
                .await
                .expect("start shared etcd");
            wait_until_ready(&test_options(&url, "")).await;
            url
        })
        .await
}

/// Starts the shared etcd from a thread that never ends, so the parent-death
/// signal fires only when the test process exits; the data directory is
/// removed by an exit hook.
fn start_shared_etcd() -> String {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("shared-etcd".into())
        .spawn(move || {
            let etcd = EtcdProcess::start(None);
            if SHARED_DIR.set(etcd.dir.clone()).is_ok() {
                // SAFETY: registers a plain `extern "C"` function.
                unsafe { libc::atexit(remove_shared_dir) };
            }
            let _ = sender.send(etcd.client_url.clone());
            loop {
                std::thread::park();
            }
        })
        .expect("spawn shared etcd thread");
    receiver.recv().expect("shared etcd started")
}

extern "C" fn remove_shared_dir() {
    if let Some(dir) = SHARED_DIR.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A CA, an etcd serving certificate for 127.0.0.1/localhost and a client
/// certificate, all PEM.
pub(super) struct TestPki {
    pub(super) ca_pem: String,
    server_cert_pem: String,
    server_key_pem: String,
    pub(super) client_cert_pem: String,
    pub(super) client_key_pem: String,
}

impl TestPki {
    pub(super) fn generate() -> Self {
        let ca_key = KeyPair::generate().expect("CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "capstan test etcd CA");
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = params.self_signed(&ca_key).expect("CA certificate");
        let leaf = |names: &[&str], common_name: &str, usage: ExtendedKeyUsagePurpose| {
            let key = KeyPair::generate().expect("leaf key");
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            let mut params = CertificateParams::new(names).expect("leaf params");
            params
                .distinguished_name
                .push(DnType::CommonName, common_name);
            params.extended_key_usages = vec![usage];
            let cert = params
                .signed_by(&key, &ca, &ca_key)
                .expect("leaf certificate");
            (cert.pem(), key.serialize_pem())
        };
        let (server_cert_pem, server_key_pem) = leaf(
            &["localhost", "127.0.0.1"],
            "etcd",
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let (client_cert_pem, client_key_pem) = leaf(
            &[],
            "capstan-apiserver",
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        TestPki {
            ca_pem: ca.pem(),
            server_cert_pem,
            server_key_pem,
            client_cert_pem,
            client_key_pem,
        }
    }

    fn write_server_files(&self, dir: &Path) {
        for (name, pem) in [
            ("ca.crt", &self.ca_pem),
            ("server.crt", &self.server_cert_pem),
            ("server.key", &self.server_key_pem),
        ] {
            std::fs::write(dir.join(name), pem).expect("write etcd TLS file");
        }
    }
}

//! Real etcd processes for the tests (Debian's etcd-server): a cluster of
//! one or more members on loopback ports, each member stoppable and
//! restartable on its data directory; everything is killed on drop.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Etcd {
    dir: tempfile::TempDir,
    members: Vec<Member>,
    initial_cluster: String,
}

struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    child: Option<Child>,
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local addr").port()
}

impl Etcd {
    /// Starts a cluster of `n` members and waits until it answers.
    pub fn start(n: usize) -> Etcd {
        let members: Vec<Member> = (0..n)
            .map(|i| Member {
                name: format!("m{i}"),
                client_port: free_port(),
                peer_port: free_port(),
                child: None,
            })
            .collect();
        let initial_cluster = members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port))
            .collect::<Vec<_>>()
            .join(",");
        let mut etcd = Etcd {
            dir: tempfile::tempdir().expect("temp dir"),
            members,
            initial_cluster,
        };
        for i in 0..n {
            etcd.spawn(i);
        }
        etcd.wait_healthy();
        etcd
    }

    /// `--etcd-servers` for Capstan: every member's client URL.
    pub fn servers(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("http://127.0.0.1:{}", m.client_port))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn data_dir(&self, i: usize) -> PathBuf {
        self.dir.path().join(&self.members[i].name)
    }

    fn spawn(&mut self, i: usize) {
        let data = self.data_dir(i);
        let log = std::fs::File::create(
            self.dir
                .path()
                .join(format!("{}.log", self.members[i].name)),
        )
        .expect("log file");
        let m = &self.members[i];
        let client = format!("http://127.0.0.1:{}", m.client_port);
        let peer = format!("http://127.0.0.1:{}", m.peer_port);
        let child = Command::new("etcd")
            .args(["--name", &m.name, "--data-dir"])
            .arg(&data)
            .args([
                "--listen-client-urls",
                &client,
                "--advertise-client-urls",
                &client,
            ])
            .args([
                "--listen-peer-urls",
                &peer,
                "--initial-advertise-peer-urls",
                &peer,
            ])
            .args([
                "--initial-cluster",
                &self.initial_cluster,
                "--initial-cluster-state",
                "new",
            ])
            .args(["--initial-cluster-token", "capstan-e2e"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start etcd (apt-get install etcd-server)");
        self.members[i].child = Some(child);
    }

    /// Kills member `i` (SIGKILL); its data stays.
    pub fn stop(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts member `i` again on its data.
    pub fn restart(&mut self, i: usize) {
        self.stop(i);
        self.spawn(i);
        self.wait_healthy();
    }

    fn wait_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let healthy = self.members.iter().filter(|m| m.child.is_some()).any(|m| {
                let out = Command::new("curl")
                    .args(["-s", "-m", "1"])
                    .arg(format!("http://127.0.0.1:{}/health", m.client_port))
                    .output();
                out.is_ok_and(|o| {
                    String::from_utf8_lossy(&o.stdout).contains("\"health\":\"true\"")
                })
            });
            if healthy {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("etcd did not become healthy");
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.stop(i);
        }
    }
}

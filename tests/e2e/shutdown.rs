//! Graceful shutdown with the real binary: on SIGTERM `/readyz` fails at
//! once while requests are still served for `--shutdown-delay-duration`,
//! open watches end cleanly, the server drains and exits, and every write
//! it acknowledged under load is there after a restart.

use crate::support::{eventually, Server};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[test]
fn sigterm_turns_unready_ends_watches_drains_and_loses_no_acknowledged_write() {
    let mut s = Server::start_with(&["--shutdown-delay-duration", "2s"]);
    let url = s.url("/api/v1/namespaces/default/configmaps");
    // An open watch (curl exits when the server ends it).
    let mut watch = Command::new("curl")
        .args(["-sk", "-N", "--cert"])
        .arg(s.pki("admin.crt"))
        .arg("--key")
        .arg(s.pki("admin.key"))
        .arg(format!("{url}?watch=true"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Writers under load: the names of the creates the server acknowledged.
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (acknowledged, stop) = (acknowledged.clone(), stop.clone());
            let (cert, key, url) = (s.pki("admin.crt"), s.pki("admin.key"), url.clone());
            std::thread::spawn(move || {
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let name = format!("w{w}-{i}");
                    let body = format!(
                        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}}}}"#
                    );
                    let out = Command::new("curl")
                        .args(["-sk", "-o", "/dev/null", "-w", "%{http_code}", "--cert"])
                        .arg(&cert)
                        .arg("--key")
                        .arg(&key)
                        .args(["-H", "Content-Type: application/json", "-d", &body, &url])
                        .output()
                        .unwrap();
                    if String::from_utf8_lossy(&out.stdout) == "201" {
                        acknowledged.lock().unwrap().push(name);
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let readyz = |s: &Server| {
        let out = s.curl(&["-o", "/dev/null", "-w", "%{http_code}", &s.url("/readyz")]);
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert_eq!(readyz(&s), "200");
    let _ = Command::new("kill").arg(s.pid().to_string()).status();
    assert!(
        eventually(Duration::from_secs(1), || readyz(&s) == "500"),
        "/readyz fails at once"
    );
    assert!(
        eventually(Duration::from_secs(2), || matches!(
            watch.try_wait(),
            Ok(Some(_))
        )),
        "the watch is ended"
    );
    let served_in_delay = acknowledged.lock().unwrap().len();
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        acknowledged.lock().unwrap().len() > served_in_delay,
        "writes are still served during the shutdown delay"
    );
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    s.stop(false);
    let log = s.log();
    assert!(log.contains("requests in flight drained"), "{log}");
    assert!(
        !log.contains("panicked") && !log.contains("was cancelled"),
        "the server exits without a panic or a cancelled loop: {log}"
    );
    s.restart(false);
    let names: Vec<String> = acknowledged.lock().unwrap().clone();
    assert!(names.len() > 10, "{} writes", names.len());
    let listed = s.json(&["get", "configmaps", "-o", "json"]);
    let stored: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["metadata"]["name"].as_str())
        .collect();
    let lost: Vec<&String> = names
        .iter()
        .filter(|n| !stored.contains(&n.as_str()))
        .collect();
    assert!(lost.is_empty(), "acknowledged and lost: {lost:?}");
}

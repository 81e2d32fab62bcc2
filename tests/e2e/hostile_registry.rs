//! A hostile OCI registry for tests: a small HTTP/1.1 server on a loopback
//! address answering each request with what the test chooses: a huge
//! body (with or without its length), a huge error, a trickle, a
//! redirect, or plain bytes. Standard library only, so that the puller's
//! unit tests (`host/src/policy/bundles/registry/hostile_tests.rs`, which include
//! this file) and the end-to-end tests share it. One request per
//! connection (`Connection: close`), a thread per connection; stopped on drop.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What to answer a request with.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `status` with `body` (its Content-Length) and extra headers.
    Bytes {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// `status` with `len` filler bytes, sent as fast as they are read;
    /// with a Content-Length when `declared`, else chunked.
    Huge {
        status: u16,
        len: u64,
        declared: bool,
    },
    /// 200 declaring `len` bytes, then one byte every `every`.
    Trickle { len: u64, every: Duration },
    /// 307 to `location`.
    Redirect(String),
}

impl Reply {
    /// 200 with `body`.
    pub fn ok(body: &[u8]) -> Reply {
        Reply::Bytes {
            status: 200,
            headers: Vec::new(),
            body: body.to_vec(),
        }
    }

    pub fn status(status: u16, body: &str) -> Reply {
        Reply::Bytes {
            status,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
        }
    }
}

/// A request as the registry saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub authorization: Option<String>,
}

type Answer = dyn Fn(&Seen) -> Reply + Send + Sync;

pub struct HostileRegistry {
    /// `ip:port`.
    pub addr: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl HostileRegistry {
    /// Listens on `ip` (a loopback address: 127.0.0.1, 127.0.0.2, ...) on a free port.
    pub fn start(
        ip: &str,
        answer: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
    ) -> HostileRegistry {
        let listener = TcpListener::bind((ip, 0)).expect("bind the hostile registry");
        let addr = listener.local_addr().expect("its address").to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let answer: Arc<Answer> = Arc::new(answer);
        let (log, stopping) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (answer, log, stopping) = (answer.clone(), log.clone(), stopping.clone());
                std::thread::spawn(move || serve(conn, &*answer, &log, &stopping));
            }
        });
        HostileRegistry { addr, seen, stop }
    }

    /// The requests seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for HostileRegistry {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(&self.addr);
    }
}

fn serve(conn: TcpStream, answer: &Answer, log: &Mutex<Vec<Seen>>, stop: &AtomicBool) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(seen) = read_request(&conn) else {
        return;
    };
    if let Ok(mut log) = log.lock() {
        log.push(seen.clone());
    }
    let _ = reply(conn, answer(&seen), stop);
}

fn read_request(conn: &TcpStream) -> Option<Seen> {
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut authorization = None;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("authorization") {
                authorization = Some(value.trim().to_string());
            }
        }
    }
    Some(Seen {
        path,
        authorization,
    })
}

fn reply(mut conn: TcpStream, reply: Reply, stop: &AtomicBool) -> std::io::Result<()> {
    let head = |status: u16, extra: &str| {
        format!("HTTP/1.1 {status} X\r\nConnection: close\r\nContent-Type: application/json\r\n{extra}\r\n")
    };
    match reply {
        Reply::Bytes {
            status,
            headers,
            body,
        } => {
            let mut extra = format!("Content-Length: {}\r\n", body.len());
            for (k, v) in headers {
                extra.push_str(&format!("{k}: {v}\r\n"));
            }
            conn.write_all(head(status, &extra).as_bytes())?;
            conn.write_all(&body)
        }
        Reply::Redirect(location) => {
            let extra = format!("Location: {location}\r\nContent-Length: 0\r\n");
            conn.write_all(head(307, &extra).as_bytes())
        }
        Reply::Huge {
            status,
            len,
            declared,
        } => {
            let extra = match declared {
                true => format!("Content-Length: {len}\r\n"),
                false => "Transfer-Encoding: chunked\r\n".to_string(),
            };
            conn.write_all(head(status, &extra).as_bytes())?;
            let chunk = vec![b'x'; 64 << 10];
            let mut sent = 0u64;
            while sent < len && !stop.load(Ordering::SeqCst) {
                let n = chunk.len().min((len - sent) as usize);
                match declared {
                    true => conn.write_all(&chunk[..n])?,
                    false => {
                        conn.write_all(format!("{n:x}\r\n").as_bytes())?;
                        conn.write_all(&chunk[..n])?;
                        conn.write_all(b"\r\n")?;
                    }
                }
                sent += n as u64;
            }
            if !declared {
                conn.write_all(b"0\r\n\r\n")?;
            }
            Ok(())
        }
        Reply::Trickle { len, every } => {
            let extra = format!("Content-Length: {len}\r\n");
            conn.write_all(head(200, &extra).as_bytes())?;
            for _ in 0..len {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                std::thread::sleep(every);
                conn.write_all(b" ")?;
            }
            Ok(())
        }
    }
}

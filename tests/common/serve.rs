//! A small HTTP/1.1 file server on 127.0.0.1 for the HTTP binary-cache tests: serves a
//! directory (keep-alive, `Range: bytes=N-`), logs every request, and injects faults
//! chosen per request by a rule the test sets (an error status, a connection dropped
//! mid-body, a slow answer, a replaced body, a 404, a redirect, a body that drips a
//! byte at a time, an endless body (bounded by [`ENDLESS_CAP`] so a test always ends).
//!
//! Pipelined requests (several sent before the first answer) are answered in order: a
//! connection's requests are read one at a time from one buffered reader, which keeps
//! what arrived beyond the request being served. [`Server::close_after`] makes every
//! connection end after a number of answers, as nginx does after `keepalive_requests`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What to do with one request instead of serving it plainly.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Answer with this status and a short body.
    Status(u16),
    /// Send the headers (with the full Content-Length) and half the body, then close.
    DropMidBody,
    /// Wait this long before answering (normally).
    Slow(Duration),
    /// Serve these bytes instead of the file.
    Body(Vec<u8>),
    /// Answer 404.
    NotFound,
    /// Answer 302 with this `Location`.
    Redirect(String),
    /// Serve the file one byte at a time, waiting this long before each.
    Drip(Duration),
    /// These bytes, then zeros without end (a Content-Length of 2^40; the server stops
    /// after [`ENDLESS_CAP`] bytes and closes the connection).
    Endless(Vec<u8>),
}

/// Where an endless body stops, so that a test against a client that never stops still
/// ends: 64 MiB.
pub const ENDLESS_CAP: u64 = 64 << 20;

/// Picks a fault for a request: (URL path, how many times this path was asked before).
pub type Rule = dyn Fn(&str, u32) -> Option<Fault> + Send + Sync;

struct State {
    root: PathBuf,
    rule: Mutex<Option<Arc<Rule>>>,
    seen: Mutex<HashMap<String, u32>>,
    log: Mutex<Vec<String>>,
    /// Body bytes sent, by request path.
    sent: Mutex<HashMap<String, u64>>,
    stop: AtomicBool,
    /// Answers per connection, and whether the last one says `Connection: close`.
    close_after: Mutex<Option<(u32, bool)>>,
    /// Connections accepted.
    connections: AtomicUsize,
}

/// A running server; stopped when dropped.
pub struct Server {
    pub url: String,
    state: Arc<State>,
    addr: std::net::SocketAddr,
}

impl Server {
    /// Serve `root` on a free loopback port.
    pub fn start(root: impl Into<PathBuf>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            root: root.into(),
            rule: Mutex::new(None),
            seen: Mutex::new(HashMap::new()),
            log: Mutex::new(Vec::new()),
            sent: Mutex::new(HashMap::new()),
            stop: AtomicBool::new(false),
            close_after: Mutex::new(None),
            connections: AtomicUsize::new(0),
        });
        let s = Arc::clone(&state);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                s.connections.fetch_add(1, Ordering::SeqCst);
                let s = Arc::clone(&s);
                std::thread::spawn(move || serve_connection(conn, &s));
            }
        });
        Server {
            url: format!("http://{addr}"),
            state,
            addr,
        }
    }

    /// Inject faults chosen by `rule` from now on (replacing any earlier rule).
    pub fn set_rule(&self, rule: impl Fn(&str, u32) -> Option<Fault> + Send + Sync + 'static) {
        *self.state.rule.lock().unwrap() = Some(Arc::new(rule));
    }

    /// End every connection opened from now on after `answers` answers (a request
    /// sent after them on it is never read), the last saying `Connection: close` when
    /// `announce`, else closing without a word. The unread requests are drained before
    /// the close, as nginx's lingering close does, so that the answers sent arrive.
    pub fn close_after(&self, answers: u32, announce: bool) {
        *self.state.close_after.lock().unwrap() = Some((answers.max(1), announce));
    }

    /// How many connections were accepted so far.
    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// Serve plainly again, and forget the request counts and the log.
    pub fn reset(&self) {
        *self.state.rule.lock().unwrap() = None;
        *self.state.close_after.lock().unwrap() = None;
        self.state.seen.lock().unwrap().clear();
        self.state.log.lock().unwrap().clear();
        self.state.sent.lock().unwrap().clear();
    }

    /// Body bytes sent so far for request paths ending in `suffix`.
    pub fn bytes_sent(&self, suffix: &str) -> u64 {
        let sent = self.state.sent.lock().unwrap();
        sent.iter()
            .filter(|(p, _)| p.ends_with(suffix))
            .map(|(_, n)| n)
            .sum()
    }

    /// Every request path so far, in order.
    pub fn log(&self) -> Vec<String> {
        self.state.log.lock().unwrap().clone()
    }

    /// How many requests asked for paths ending in `suffix`.
    pub fn count(&self, suffix: &str) -> usize {
        self.log().iter().filter(|p| p.ends_with(suffix)).count()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve_connection(conn: TcpStream, s: &State) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(match conn.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let mut out = conn;
    let close_after = *s.close_after.lock().unwrap();
    let mut answered = 0u32;
    loop {
        let mut request_line = String::new();
        match reader.read_line(&mut request_line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut range_from: Option<u64> = None;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("range") {
                    range_from = v
                        .trim()
                        .strip_prefix("bytes=")
                        .and_then(|r| r.strip_suffix('-'))
                        .and_then(|n| n.parse().ok());
                }
            }
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("/")
            .to_string();
        s.log.lock().unwrap().push(path.clone());
        let nth = {
            let mut seen = s.seen.lock().unwrap();
            let n = seen.entry(path.clone()).or_insert(0);
            *n += 1;
            *n - 1
        };
        let rule = s.rule.lock().unwrap().clone();
        let fault = rule.and_then(|r| r(&path, nth));
        let file = s.root.join(path.trim_start_matches('/'));
        let mut body = match &fault {
            Some(Fault::Body(b)) => Some(b.clone()),
            Some(Fault::NotFound) => None,
            _ if path.contains("..") => None,
            _ => std::fs::read(&file).ok().filter(|_| file.is_file()),
        };
        if let Some(Fault::Slow(d)) = &fault {
            std::thread::sleep(*d);
        }
        if let Some(Fault::Endless(prefix)) = &fault {
            endless(&mut out, prefix, &path, s);
            return;
        }
        let (status, reason) = match (&fault, &body) {
            (Some(Fault::Status(c)), _) => (*c, "Injected"),
            (Some(Fault::Redirect(_)), _) => (302, "Found"),
            (_, None) => (404, "Not Found"),
            (_, Some(_)) if range_from.is_some() => (206, "Partial Content"),
            _ => (200, "OK"),
        };
        if status != 200 && status != 206 {
            body = Some(format!("{status}\n").into_bytes());
        }
        let mut body = body.unwrap_or_default();
        let mut extra = String::new();
        if status == 206 {
            let from = range_from.unwrap_or(0).min(body.len() as u64) as usize;
            extra = format!(
                "Content-Range: bytes {from}-{}/{}\r\n",
                body.len().saturating_sub(1),
                body.len()
            );
            body.drain(..from);
        }
        if let Some(Fault::Redirect(to)) = &fault {
            extra.push_str(&format!("Location: {to}\r\n"));
        }
        answered += 1;
        let last = close_after.is_some_and(|(n, _)| answered >= n);
        let connection = match close_after {
            Some((_, true)) if last => "close",
            _ => "keep-alive",
        };
        let head = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Length: {}\r\n{extra}Connection: {connection}\r\n\r\n",
            body.len()
        );
        if out.write_all(head.as_bytes()).is_err() {
            return;
        }
        if let Some(Fault::DropMidBody) = fault {
            let _ = out.write_all(&body[..body.len() / 2]);
            let _ = out.flush();
            let _ = out.shutdown(Shutdown::Both);
            return;
        }
        if let Some(Fault::Drip(tick)) = fault {
            for b in &body {
                std::thread::sleep(tick);
                if out.write_all(&[*b]).and_then(|()| out.flush()).is_err() {
                    return;
                }
                *s.sent.lock().unwrap().entry(path.clone()).or_insert(0) += 1;
            }
            continue;
        }
        if out.write_all(&body).is_err() || out.flush().is_err() {
            return;
        }
        *s.sent.lock().unwrap().entry(path.clone()).or_insert(0) += body.len() as u64;
        if last {
            linger_close(&out, reader);
            return;
        }
    }
}

/// Close after the last answer: no more sending, then read (and drop) what the client
/// still sends until it closes, at most a second, so that the close does not reset the
/// connection under answers not yet read.
fn linger_close(out: &TcpStream, mut reader: BufReader<TcpStream>) {
    let _ = out.shutdown(Shutdown::Write);
    let _ = out.set_read_timeout(Some(Duration::from_secs(1)));
    let mut sink = [0u8; 4096];
    while let Ok(n) = std::io::Read::read(&mut reader, &mut sink) {
        if n == 0 {
            break;
        }
    }
}

/// `prefix`, then zeros, up to [`ENDLESS_CAP`] bytes, under a Content-Length of 2^40.
fn endless(out: &mut TcpStream, prefix: &[u8], path: &str, s: &State) {
    let head = "HTTP/1.1 200 OK\r\nContent-Length: 1099511627776\r\n\r\n";
    if out.write_all(head.as_bytes()).is_err() || out.write_all(prefix).is_err() {
        return;
    }
    let zeros = vec![0u8; 64 << 10];
    let mut sent = prefix.len() as u64;
    while sent < ENDLESS_CAP {
        if out.write_all(&zeros).is_err() {
            break;
        }
        sent += zeros.len() as u64;
    }
    *s.sent.lock().unwrap().entry(path.to_string()).or_insert(0) += sent;
    let _ = out.shutdown(Shutdown::Both);
}

/// Two store paths for small caches: APP (which references LIB) and LIB.
pub const APP: &str = "9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-app-1.0";
pub const LIB: &str = "1b6qcr7l9p0yx4mji8c6pbjcybz4fp88-lib-2.0";

/// A NAR string: length, bytes, zero padding to 8.
fn nar_string(b: &[u8]) -> Vec<u8> {
    let mut v = (b.len() as u64).to_le_bytes().to_vec();
    v.extend_from_slice(b);
    v.resize(v.len() + (8 - b.len() % 8) % 8, 0);
    v
}

fn regular_node(contents: &[u8]) -> Vec<u8> {
    let mut nar = Vec::new();
    for s in [&b"("[..], b"type", b"regular", b"contents"] {
        nar.extend(nar_string(s));
    }
    nar.extend(nar_string(contents));
    nar.extend(nar_string(b")"));
    nar
}

/// A NAR of one regular file holding `contents`.
pub fn file_nar(contents: &[u8]) -> Vec<u8> {
    let mut nar = nar_string(b"nix-archive-1");
    nar.extend(regular_node(contents));
    nar
}

/// A NAR of a directory of regular files (names sorted here, as NARs require).
pub fn dir_nar(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut sorted: Vec<&(String, Vec<u8>)> = entries.iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    sorted.dedup_by(|a, b| a.0 == b.0);
    let mut nar = nar_string(b"nix-archive-1");
    for s in [&b"("[..], b"type", b"directory"] {
        nar.extend(nar_string(s));
    }
    for (name, contents) in sorted {
        for s in [&b"entry"[..], b"(", b"name", name.as_bytes(), b"node"] {
            nar.extend(nar_string(s));
        }
        nar.extend(regular_node(contents));
        nar.extend(nar_string(b")"));
    }
    nar.extend(nar_string(b")"));
    nar
}

/// SHA-256 in base16.
pub fn hex_sha256(b: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// A binary cache at `dir` of `(base name, NAR, references)`, uncompressed NARs under
/// `nar/<hex>.nar` with true NarHash and NarSize. Returns each path's NAR file name.
pub fn write_cache(dir: &std::path::Path, paths: &[(&str, Vec<u8>, &str)]) -> Vec<String> {
    std::fs::create_dir_all(dir.join("nar")).unwrap();
    std::fs::write(dir.join("nix-cache-info"), "StoreDir: /nix/store\n").unwrap();
    let mut files = Vec::new();
    for (base, nar, refs) in paths {
        let digest = hex_sha256(nar);
        let file = format!("nar/{digest}.nar");
        std::fs::write(dir.join(&file), nar).unwrap();
        std::fs::write(
            dir.join(format!("{}.narinfo", &base[..32])),
            format!(
                "StorePath: /nix/store/{base}\nURL: {file}\nCompression: none\n\
                 NarHash: sha256:{digest}\nNarSize: {}\nReferences: {refs}\n",
                nar.len()
            ),
        )
        .unwrap();
        files.push(file);
    }
    files
}

//! Pipelined HTTP/1.1 GET requests over plain TCP, for the narinfo walk
//! (`super::HttpClient::fetch_narinfos` decides what the answers mean).
//!
//! Why not ureq: ureq 2 has no pipelining (one request at a time per connection) and
//! spends about eight system calls per request besides the write and the read: the
//! per-request deadline sets read and write timeouts on every buffer fill, a pooled
//! connection is checked with a non-blocking peek (two `ioctl`s around it), and the
//! timeouts are cleared when the connection goes back to the pool. Over a package set's
//! 274,484 narinfos that was more kernel time than nginx needed to serve them. Here a
//! connection gets its timeouts once, when it is opened, sends a batch of requests in
//! one write and reads the answers, in order, through one buffer.
//!
//! This is a small response reader, not an HTTP client: the status line and header
//! fields, parsed by `httparse` (in place in the read buffer, which usually holds the
//! whole head), then a body framed by `Content-Length` or `chunked`, and
//! `Connection: close` (or an HTTP/1.0 answer without keep-alive). Anything else (no
//! framing, 1xx, folded or malformed lines, odd URLs) is [`ReadError::Unexpected`] or
//! no [`Origin`] at all, for the caller to hand to the full client. Nothing here knows
//! narinfos, retries or redirects.

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The longest chunk-size or trailer line read.
const MAX_LINE: usize = 16 << 10;

/// The longest response head (status line and header fields) read.
const MAX_HEAD: usize = 64 << 10;

/// The most header fields one response may have.
const MAX_FIELDS: usize = 128;

/// Where the requests for one `http://` base URL go.
#[derive(Debug, Clone)]
pub(super) struct Origin {
    /// The URL, parsed (for resolving the host when connecting).
    url: url::Url,
    /// The `Host` header: the host, and the port when it is not 80.
    host: String,
    /// The base URL's path without a trailing `/` (empty for the root).
    prefix: String,
    /// The `User-Agent` header.
    agent: &'static str,
}

impl Origin {
    /// The origin of `base` when requests for `base/<name>` can be pipelined: an
    /// `http://` URL without user information, query or fragment, whose path joins
    /// names plainly. `None` otherwise (https, credentials, odd paths).
    pub(super) fn of(base: &str, agent: &'static str) -> Option<Origin> {
        let url = url::Url::parse(base).ok()?;
        if url.scheme() != "http"
            || !url.username().is_empty()
            || url.password().is_some()
            || url.query().is_some()
            || url.fragment().is_some()
        {
            return None;
        }
        let host = url.host_str()?.to_string();
        let host = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host,
        };
        let prefix = url.path().trim_end_matches('/').to_string();
        // The request target must be the one the full client would send for the
        // joined URL (dot segments, escapes): otherwise this is no place for a shortcut.
        let probe = format!("{}/x.narinfo", base.trim_end_matches('/'));
        let joined = url::Url::parse(&probe).ok()?;
        if joined.path() != format!("{prefix}/x.narinfo") || joined.query().is_some() {
            return None;
        }
        Some(Origin {
            url,
            host,
            prefix,
            agent,
        })
    }
}

/// One answer, read whole.
#[derive(Debug)]
pub(super) struct Response {
    pub status: u16,
    /// The reason phrase (`Not Found`).
    pub reason: String,
    pub body: Vec<u8>,
    /// The server closes the connection after this answer.
    pub close: bool,
}

/// Why an answer could not be read. The connection is of no further use after any.
#[derive(Debug)]
pub(super) enum ReadError {
    /// The connection ended (closed or reset) before a byte of the answer: the request
    /// was not answered, and may be sent again elsewhere.
    Closed,
    /// The connection failed (`error`), the time ran out (an error of kind
    /// `TimedOut`), or the connection ended (`None`) in `part` of the answer.
    Cut {
        part: Part,
        error: Option<io::Error>,
    },
    /// The body of an answer with this status is longer than the limit.
    TooLarge { status: u16 },
    /// Something this reader does not follow (named for a test's failure message); the
    /// caller asks another way.
    Unexpected(#[allow(dead_code)] &'static str),
}

/// Where in an answer reading stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    StatusLine,
    Header,
    Body,
}

/// One kept-alive connection; its timeouts are set once, here.
pub(super) struct Conn {
    reader: BufReader<TcpStream>,
    timeout: Duration,
    /// The deadline of the answer being read.
    deadline: Instant,
    /// Whether any byte of the answer being read has arrived.
    started: bool,
    part: Part,
}

impl Conn {
    /// Connect to `origin` within `timeout`; every read and write then waits at most
    /// `timeout`.
    pub(super) fn open(origin: &Origin, timeout: Duration) -> io::Result<Conn> {
        let addrs = origin.url.socket_addrs(|| None)?;
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address for the host");
        for a in addrs {
            match TcpStream::connect_timeout(&a, timeout) {
                Ok(s) => {
                    s.set_read_timeout(Some(timeout))?;
                    s.set_write_timeout(Some(timeout))?;
                    // One write per batch: nothing to gain from waiting to coalesce.
                    s.set_nodelay(true)?;
                    return Ok(Conn {
                        reader: BufReader::with_capacity(64 << 10, s),
                        timeout,
                        deadline: Instant::now(),
                        started: false,
                        part: Part::StatusLine,
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Send a GET of `base/<name>` for every name, in one write.
    pub(super) fn send<'a>(
        &mut self,
        origin: &Origin,
        names: impl Iterator<Item = &'a str>,
    ) -> io::Result<()> {
        let mut out = Vec::with_capacity(4096);
        for name in names {
            // The same header fields the full client sends.
            write!(
                out,
                "GET {}/{name} HTTP/1.1\r\nHost: {}\r\nUser-Agent: {}\r\nAccept: */*\r\n\r\n",
                origin.prefix, origin.host, origin.agent
            )?;
        }
        self.reader.get_mut().write_all(&out)
    }

    /// Read the next answer, its body at most `limit` bytes. The answer has `timeout`
    /// from now (a server that trickles bytes gets at most one more `timeout`: the
    /// socket's timeout is not shortened for each read).
    pub(super) fn read(&mut self, limit: u64) -> Result<Response, ReadError> {
        self.deadline = Instant::now() + self.timeout;
        self.started = false;
        self.part = Part::StatusLine;
        let Head {
            status,
            reason,
            length,
            chunked,
            close,
        } = self.head()?;
        self.part = Part::Body;
        let body = match (status, chunked, length) {
            (100..=199, _, _) => return Err(unexpected("an interim (1xx) answer")),
            (204 | 304, _, _) => Vec::new(),
            (_, true, Some(_)) => return Err(unexpected("both chunked and a Content-Length")),
            (_, true, None) => self.chunked(status, limit)?,
            (_, false, Some(n)) if n > limit => return Err(ReadError::TooLarge { status }),
            (_, false, Some(n)) => self.exactly(n)?,
            (_, false, None) => return Err(unexpected("a body without a length")),
        };
        Ok(Response {
            status,
            reason,
            body,
            close,
        })
    }

    /// The status line and header fields. Parsed where they lie in the read buffer when
    /// it holds them whole (the usual case); otherwise gathered line by line up to the
    /// blank line, so that no byte of the body is taken with them.
    fn head(&mut self) -> Result<Head, ReadError> {
        if let Some((n, head)) = parse_head(self.fill()?)? {
            self.reader.consume(n);
            return Ok(head);
        }
        let mut bytes = Vec::new();
        loop {
            let buf = self.fill()?;
            let (take, line_end) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            bytes.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            if bytes.len() > MAX_HEAD {
                return Err(unexpected("a response head too long"));
            }
            if !line_end {
                continue;
            }
            self.part = Part::Header;
            if bytes.ends_with(b"\n\n") || bytes.ends_with(b"\n\r\n") {
                return match parse_head(&bytes)? {
                    Some((n, head)) if n == bytes.len() => Ok(head),
                    _ => Err(unexpected("a malformed response head")),
                };
            }
        }
    }

    /// The buffered bytes, reading more when there are none.
    fn fill(&mut self) -> Result<&[u8], ReadError> {
        if self.reader.buffer().is_empty() && Instant::now() >= self.deadline {
            return Err(self.cut(Some(timed_out())));
        }
        loop {
            match self.reader.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(self.cut(Some(timed_out())))
                }
                Err(_) if !self.started => return Err(ReadError::Closed),
                Err(e) => return Err(self.cut(Some(e))),
            }
        }
        let buf = self.reader.buffer();
        if buf.is_empty() {
            return Err(if self.started {
                self.cut(None)
            } else {
                ReadError::Closed
            });
        }
        self.started = true;
        Ok(self.reader.buffer())
    }

    fn cut(&self, error: Option<io::Error>) -> ReadError {
        ReadError::Cut {
            part: self.part,
            error,
        }
    }

    /// One line without its `\r\n` (or `\n`), as text.
    fn line(&mut self) -> Result<String, ReadError> {
        let mut line = Vec::new();
        loop {
            let buf = self.fill()?;
            let (take, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            line.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            if line.len() > MAX_LINE {
                return Err(unexpected("a header line too long"));
            }
            if done {
                break;
            }
        }
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        String::from_utf8(line).map_err(|_| unexpected("a header line that is not UTF-8"))
    }

    /// Exactly `n` bytes.
    fn exactly(&mut self, n: u64) -> Result<Vec<u8>, ReadError> {
        let n = usize::try_from(n).map_err(|_| unexpected("a body too long"))?;
        let mut body = Vec::with_capacity(n);
        self.append(&mut body, n)?;
        Ok(body)
    }

    /// Append the next `n` bytes to `out`.
    fn append(&mut self, out: &mut Vec<u8>, mut n: usize) -> Result<(), ReadError> {
        while n > 0 {
            let buf = self.fill()?;
            let take = buf.len().min(n);
            out.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            n -= take;
        }
        Ok(())
    }

    /// A chunked body, at most `limit` bytes.
    fn chunked(&mut self, status: u16, limit: u64) -> Result<Vec<u8>, ReadError> {
        let mut body = Vec::new();
        loop {
            let line = self.line()?;
            let size = line.split(';').next().unwrap_or("").trim();
            let size = u64::from_str_radix(size, 16)
                .ok()
                .filter(|_| !size.is_empty() && size.len() <= 16)
                .ok_or_else(|| unexpected("a malformed chunk size"))?;
            if size == 0 {
                // Trailer fields, up to the empty line.
                let mut fields = 0;
                while !self.line()?.is_empty() {
                    fields += 1;
                    if fields > MAX_FIELDS {
                        return Err(unexpected("too many trailer fields"));
                    }
                }
                return Ok(body);
            }
            if body.len() as u64 + size > limit {
                return Err(ReadError::TooLarge { status });
            }
            self.append(&mut body, size as usize)?;
            if !self.line()?.is_empty() {
                return Err(unexpected("a chunk longer than its size"));
            }
        }
    }
}

fn unexpected(what: &'static str) -> ReadError {
    ReadError::Unexpected(what)
}

fn timed_out() -> io::Error {
    // The full client's words, so that a message reads the same either way.
    io::Error::new(io::ErrorKind::TimedOut, "timed out reading response")
}

/// What the head of an answer says about reading it.
struct Head {
    status: u16,
    reason: String,
    /// `Content-Length`.
    length: Option<u64>,
    /// `Transfer-Encoding: chunked`.
    chunked: bool,
    /// The server closes the connection after this answer.
    close: bool,
}

/// The head at the start of `bytes` and its length; `None` when it is not all there.
fn parse_head(bytes: &[u8]) -> Result<Option<(usize, Head)>, ReadError> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut resp = httparse::Response::new(&mut fields);
    let n = match resp.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if bytes.len() > MAX_HEAD => {
            return Err(unexpected("a response head too long"))
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(unexpected("too many header fields")),
        Err(_) => return Err(unexpected("a malformed response head")),
    };
    let (Some(version), Some(status)) = (resp.version, resp.code) else {
        return Err(unexpected("a malformed status line"));
    };
    let http10 = version == 0;
    let mut head = Head {
        status,
        reason: resp.reason.unwrap_or_default().to_string(),
        length: None,
        chunked: false,
        close: http10,
    };
    for field in resp.headers.iter() {
        let value = std::str::from_utf8(field.value)
            .map_err(|_| unexpected("a header value that is not UTF-8"))?
            .trim_matches([' ', '\t']);
        let name = field.name;
        if name.eq_ignore_ascii_case("content-length") {
            let n = value
                .parse::<u64>()
                .ok()
                .filter(|_| value.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| unexpected("a malformed Content-Length"))?;
            if head.length.is_some_and(|m| m != n) {
                return Err(unexpected("two different Content-Lengths"));
            }
            head.length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            if !value.eq_ignore_ascii_case("chunked") || head.chunked {
                return Err(unexpected("a transfer coding other than chunked"));
            }
            head.chunked = true;
        } else if name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    head.close = true;
                } else if token.eq_ignore_ascii_case("keep-alive") && http10 {
                    head.close = false;
                }
            }
        }
    }
    Ok(Some((n, head)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    const AGENT: &str = "test/1";

    #[test]
    fn origins() {
        let o = Origin::of("http://127.0.0.1:8080/cache", AGENT).unwrap();
        assert_eq!(
            (o.host.as_str(), o.prefix.as_str()),
            ("127.0.0.1:8080", "/cache")
        );
        let o = Origin::of("http://cache.example", AGENT).unwrap();
        assert_eq!((o.host.as_str(), o.prefix.as_str()), ("cache.example", ""));
        let o = Origin::of("http://[::1]:80/a%20b", AGENT).unwrap();
        assert_eq!((o.host.as_str(), o.prefix.as_str()), ("[::1]", "/a%20b"));
        for no in [
            "https://cache.nixos.org",
            "http://u:p@h/c",
            "http://h/c?x=1",
            "http://h/c#f",
            "file:///c",
            "not a url",
        ] {
            assert!(Origin::of(no, AGENT).is_none(), "{no}");
        }
    }

    /// A server that reads everything the client sends, then answers with `wire`
    /// (and closes); returns the URL and what it read.
    fn answer(wire: &'static [u8]) -> (String, std::thread::JoinHandle<Vec<u8>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            s.write_all(wire).unwrap();
            got
        });
        (url, h)
    }

    #[test]
    fn reads_pipelined_answers_in_order() {
        let (url, h) = answer(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst\
              HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\nno\n\
              HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nsec\r\n4\r\nond!\r\n0\r\nT: v\r\n\r\n\
              HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
        let o = Origin::of(&format!("{url}/c/"), AGENT).unwrap();
        let mut c = Conn::open(&o, Duration::from_secs(5)).unwrap();
        c.send(
            &o,
            ["a.narinfo", "b.narinfo", "c.narinfo", "d.narinfo"].into_iter(),
        )
        .unwrap();
        let got: Vec<(u16, String, Vec<u8>, bool)> = (0..4)
            .map(|_| {
                let r = c.read(100).unwrap();
                (r.status, r.reason, r.body, r.close)
            })
            .collect();
        assert_eq!(got[0], (200, "OK".into(), b"first".to_vec(), false));
        assert_eq!(got[1], (404, "Not Found".into(), b"no\n".to_vec(), false));
        assert_eq!(got[2], (200, "OK".into(), b"second!".to_vec(), false));
        assert_eq!(
            got[3],
            (500, "Internal Server Error".into(), Vec::new(), true)
        );
        assert!(matches!(c.read(100), Err(ReadError::Closed)));
        let sent = String::from_utf8(h.join().unwrap()).unwrap();
        let host = url.trim_start_matches("http://");
        assert_eq!(
            sent,
            ["a", "b", "c", "d"]
                .map(|n| format!(
                    "GET /c/{n}.narinfo HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {AGENT}\r\nAccept: */*\r\n\r\n"
                ))
                .concat()
        );
    }

    #[test]
    fn short_bodies_limits_and_oddities() {
        let cases: [(&'static [u8], &str); 8] = [
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc",
                "cut in body",
            ),
            (b"HTTP/1.1 200 OK\r\nContent-Le", "cut in head"),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n",
                "too large",
            ),
            (b"HTTP/1.1 200 OK\r\n\r\nabc", "unexpected"),
            (b"HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n", "unexpected"),
            (
                b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n",
                "unexpected",
            ),
            (b"HTTP/1.1 100 Continue\r\n\r\n", "unexpected"),
            (b"", "closed"),
        ];
        for (wire, want) in cases {
            let (url, h) = answer(wire);
            let o = Origin::of(&url, AGENT).unwrap();
            let mut c = Conn::open(&o, Duration::from_secs(5)).unwrap();
            c.send(&o, ["a"].into_iter()).unwrap();
            let got = match c.read(100) {
                Err(ReadError::Cut {
                    part: Part::Body,
                    error: None,
                }) => "cut in body",
                Err(ReadError::Cut {
                    part: Part::Header,
                    error: None,
                }) => "cut in head",
                Err(ReadError::TooLarge { status: 200 }) => "too large",
                Err(ReadError::Unexpected(_)) => "unexpected",
                Err(ReadError::Closed) => "closed",
                other => panic!("{other:?}"),
            };
            assert_eq!(got, want, "{}", String::from_utf8_lossy(wire));
            h.join().unwrap();
        }
    }

    #[test]
    fn a_head_split_across_reads_is_gathered_without_the_body() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            for part in [
                &b"HTTP/1.1 200 OK\r\nContent-"[..],
                b"Length: 3\r\n",
                b"\r\nabcHTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n",
            ] {
                s.write_all(part).unwrap();
                s.flush().unwrap();
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let o = Origin::of(&url, AGENT).unwrap();
        let mut c = Conn::open(&o, Duration::from_secs(5)).unwrap();
        c.send(&o, ["a", "b"].into_iter()).unwrap();
        let r = c.read(100).unwrap();
        assert_eq!((r.status, r.body, r.close), (200, b"abc".to_vec(), false));
        let r = c.read(100).unwrap();
        assert_eq!(
            (r.status, r.reason.as_str(), r.close),
            (404, "Not Found", true)
        );
        h.join().unwrap();
    }

    #[test]
    fn a_silent_server_times_out() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let o = Origin::of(&format!("http://{}", l.local_addr().unwrap()), AGENT).unwrap();
        let mut c = Conn::open(&o, Duration::from_millis(200)).unwrap();
        c.send(&o, ["a"].into_iter()).unwrap();
        let t = Instant::now();
        match c.read(100) {
            Err(ReadError::Cut {
                part: Part::StatusLine,
                error: Some(e),
            }) => {
                assert_eq!(e.kind(), io::ErrorKind::TimedOut);
            }
            other => panic!("{other:?}"),
        }
        assert!(t.elapsed() < Duration::from_secs(5));
        drop(l);
    }
}

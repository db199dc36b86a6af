//! NAR downloads as streams ([`HttpClient::stream`]): a body that asks for the rest of
//! itself with a `Range` request when the connection fails mid-body, within one retry
//! budget and one deadline for the whole download, and never past the length the
//! caller declares.

use std::io::{self, Read};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Attempt, FetchError, HttpClient};

/// The slowest download a stream's deadline allows for its declared length, in bytes
/// per second: a stream gets `timeout · (retries + 1)` plus its length at this rate.
pub const MIN_STREAM_RATE: u64 = 64 << 10;

/// What a stream may be: at most `max_bytes` long (`None`: no bound declared).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamBound {
    /// The length the body may not exceed (a narinfo's `FileSize`, or `NarSize` plus
    /// what compression may add).
    pub max_bytes: Option<u64>,
}

impl HttpClient {
    /// GET `url` as a stream that resumes where it stopped (a `Range` request) when the
    /// connection fails mid-body; `Ok(None)` on 404 or 410. The whole download has one
    /// retry budget ([`HttpConfig::retries`] failures; a request cut by its own timeout
    /// after bytes arrived is no failure) and one deadline (`timeout · (retries + 1)`
    /// plus the bound at [`MIN_STREAM_RATE`]); a body longer than `bound` is an error
    /// at the first byte past it.
    pub fn stream(
        self: &Arc<Self>,
        url: &str,
        bound: StreamBound,
    ) -> Result<Option<Box<dyn Read + Send>>, FetchError> {
        let attempts = self.config.retries.saturating_add(1);
        let allowance =
            self.config
                .timeout
                .saturating_mul(attempts)
                .saturating_add(Duration::from_secs(
                    bound.max_bytes.unwrap_or(1 << 32) / MIN_STREAM_RATE,
                ));
        let deadline = Instant::now().checked_add(allowance);
        let Some(inner) = self.open_at(url, 0, deadline)? else {
            return Ok(None);
        };
        Ok(Some(Box::new(Resuming {
            client: Arc::clone(self),
            url: url.to_string(),
            inner,
            offset: 0,
            failures: 0,
            resumed_at: 0,
            max_bytes: bound.max_bytes,
            deadline,
            allowance,
        })))
    }

    /// The body of `url` from byte `offset` on, with retries.
    fn open_at(
        &self,
        url: &str,
        offset: u64,
        deadline: Option<Instant>,
    ) -> Result<Option<BodyReader>, FetchError> {
        self.with_retries(url, |u| {
            let timeout = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left.min(self.config.timeout),
                    _ => return Err(Attempt::Fatal("the download's deadline passed".into())),
                },
                None => self.config.timeout,
            };
            let Some(resp) = self.request(u, offset, timeout)? else {
                return Ok(None);
            };
            let partial = resp.status() == 206;
            if offset > 0 && partial {
                let range = resp.header("Content-Range").unwrap_or_default();
                if !range.starts_with(&format!("bytes {offset}-")) {
                    return Err(Attempt::Fatal(format!(
                        "asked for bytes from {offset}, the server sent `{range}`"
                    )));
                }
            }
            let mut reader = resp.into_reader();
            if offset > 0 && !partial {
                // The server ignores ranges: skip what was read already.
                let skipped = io::copy(&mut (&mut reader).take(offset), &mut io::sink())
                    .map_err(|e| Attempt::Retry(format!("reading the body: {e}")))?;
                if skipped < offset {
                    return Err(Attempt::Retry(format!(
                        "the body is now {skipped} bytes long, shorter than the {offset} read before"
                    )));
                }
            }
            Ok(Some(reader))
        })
    }
}

type BodyReader = Box<dyn Read + Send + Sync + 'static>;

/// A response body that re-requests the rest of itself when the connection fails,
/// within one retry budget and one deadline, and never longer than its bound.
struct Resuming {
    client: Arc<HttpClient>,
    url: String,
    inner: BodyReader,
    offset: u64,
    /// Failures so far (of the whole download).
    failures: u32,
    /// The offset of the last resume.
    resumed_at: u64,
    /// The longest the body may be.
    max_bytes: Option<u64>,
    /// When the download must be done (`None`: too far away to represent).
    deadline: Option<Instant>,
    /// The time it was given, for the message.
    allowance: Duration,
}

impl Resuming {
    fn fail(&self, kind: io::ErrorKind, what: String) -> io::Error {
        io::Error::new(
            kind,
            format!("{}: reading at byte {}: {what}", self.url, self.offset),
        )
    }
}

impl Read for Resuming {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(self.fail(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the download passed its deadline of {}s (the time given to one \
                         download: --http-timeout for each attempt, and its length at \
                         {} KiB/s)",
                        self.allowance.as_secs(),
                        MIN_STREAM_RATE >> 10
                    ),
                ));
            }
            // One byte past the bound is enough to know that the body is too long.
            let room = self.max_bytes.map_or(buf.len() as u64, |m| {
                m.saturating_sub(self.offset).saturating_add(1)
            });
            let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
            match self.inner.read(&mut buf[..want]) {
                Ok(n) => {
                    self.offset += n as u64;
                    if let Some(m) = self.max_bytes.filter(|&m| self.offset > m) {
                        return Err(self.fail(
                            io::ErrorKind::InvalidData,
                            format!("the body is longer than the {m} bytes its narinfo declares"),
                        ));
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // A request cut by its own timeout after bytes arrived is how a long
                    // download goes on piece by piece; anything else is a failure.
                    let cut = matches!(
                        e.kind(),
                        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                    ) && self.offset > self.resumed_at;
                    if !cut {
                        if self.failures >= self.client.config.retries {
                            return Err(self.fail(
                                e.kind(),
                                format!("{e} (resumed {} time(s))", self.failures),
                            ));
                        }
                        std::thread::sleep(self.client.backoff(self.failures));
                        self.failures += 1;
                    }
                    self.resumed_at = self.offset;
                    match self.client.open_at(&self.url, self.offset, self.deadline) {
                        Ok(Some(r)) => self.inner = r,
                        Ok(None) => {
                            return Err(io::Error::new(
                                io::ErrorKind::NotFound,
                                format!("{}: gone (404) while being read", self.url),
                            ))
                        }
                        Err(fe) => return Err(io::Error::other(fe.to_string())),
                    }
                }
            }
        }
    }
}

//! [`HttpClient`]: the client of one run (its configuration, the narinfos it knows, the
//! narinfo database opened on first need), its requests, retries and redirects, and the
//! URL helpers every part of the client shares. The resumed NAR streams
//! (`stream.rs`), the narinfos remembered (`memo.rs`) and the pipelined walk
//! (`batch.rs`) are `impl HttpClient` blocks of their own.

use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rustc_hash::FxHashMap;

use super::narinfo_db::{self, NarinfoDb};

/// How the client talks to caches.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Time allowed for a request, from connecting to the end of the body; a request
    /// that takes longer is retried. A NAR download cut by it goes on with a `Range`
    /// request from where it stopped, so large NARs still arrive.
    pub timeout: Duration,
    /// How many times a failed request is retried (5xx, 408, 429, connection errors).
    pub retries: u32,
    /// The wait before the first retry; each further retry waits twice as long.
    pub backoff: Duration,
    /// How many requests run at once (and connections kept alive per host).
    pub connections: usize,
    /// Directory of the narinfo cache; `None`: narinfos are fetched every run.
    pub narinfo_cache: Option<PathBuf>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            timeout: Duration::from_secs(30),
            retries: 4,
            backoff: Duration::from_millis(100),
            connections: 16,
            narinfo_cache: None,
        }
    }
}

/// A request that failed for good (after the retries), naming the URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{url}: {message}")]
pub struct FetchError {
    /// The URL requested.
    pub url: String,
    /// What went wrong, with the number of attempts when retried.
    pub message: String,
}

/// A narinfo text and the cache it came from.
#[derive(Debug, Clone)]
pub struct CachedNarinfo {
    /// The cache's base URL (no trailing `/`).
    pub base: Arc<str>,
    /// The narinfo as served.
    pub text: Arc<str>,
}

/// The HTTP client of one run.
pub struct HttpClient {
    pub(super) agent: ureq::Agent,
    pub(super) config: HttpConfig,
    /// narinfos known this run, by hash part.
    pub(super) memo: Mutex<FxHashMap<String, CachedNarinfo>>,
    /// narinfos fetched this run and not yet written to the database.
    pub(super) unsaved: Mutex<Vec<narinfo_db::Row>>,
    /// The narinfo cache, opened (and its directory created) when the run first needs
    /// it, never before: a run that fails early leaves nothing on disk. `None` inside:
    /// no cache, or it could not be opened (see `db_problem`).
    pub(super) db: OnceLock<Option<Mutex<NarinfoDb>>>,
    /// The cache of each path of a closure read from its record, sorted by hash part.
    pub(super) origins: Mutex<Vec<([u8; 32], Arc<str>)>>,
    /// Why the narinfo cache is not used, when it could not be opened.
    pub(super) db_problem: OnceLock<String>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The longest narinfo read (a path with tens of thousands of references fits).
pub const MAX_NARINFO: u64 = 16 << 20;

/// The `User-Agent` of every request.
pub(super) const USER_AGENT: &str = concat!("nixcut/", env!("CARGO_PKG_VERSION"));

/// How many redirects one request follows.
pub const MAX_REDIRECTS: u32 = 8;

impl HttpClient {
    /// A client with this configuration; the narinfo cache is opened (and created) when
    /// first used.
    pub fn new(config: HttpConfig) -> HttpClient {
        let connections = config.connections.max(1);
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(config.timeout)
            .timeout_read(config.timeout)
            .timeout_write(config.timeout)
            .max_idle_connections(connections * 2)
            .max_idle_connections_per_host(connections)
            // Followed by `request`, which refuses schemes other than http(s).
            .redirects(0)
            .user_agent(USER_AGENT)
            .build();
        HttpClient {
            agent,
            config,
            memo: Mutex::new(FxHashMap::default()),
            unsaved: Mutex::new(Vec::new()),
            origins: Mutex::new(Vec::new()),
            db: OnceLock::new(),
            db_problem: OnceLock::new(),
        }
    }

    /// The narinfo cache, opened on the first call.
    pub(super) fn db(&self) -> Option<&Mutex<NarinfoDb>> {
        self.db
            .get_or_init(|| {
                let dir = self.config.narinfo_cache.as_ref()?;
                match NarinfoDb::open(dir) {
                    Ok(db) => Some(Mutex::new(db)),
                    Err(e) => {
                        let _ = self.db_problem.set(e);
                        None
                    }
                }
            })
            .as_ref()
    }

    /// The configuration.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// Whether narinfos (and closure records) are kept in a narinfo cache.
    pub fn has_cache(&self) -> bool {
        self.db().is_some()
    }

    /// Why the narinfo cache is not in use although a directory was given.
    pub fn cache_problem(&self) -> Option<&str> {
        self.db_problem.get().map(String::as_str)
    }

    /// GET `url` and read the whole body (at most `limit` bytes). `Ok(None)` on 404 or
    /// 410. A body cut short is fetched again, like any other transient failure.
    pub fn get_bytes(&self, url: &str, limit: u64) -> Result<Option<Vec<u8>>, FetchError> {
        self.with_retries(url, |attempt_url| {
            let Some(resp) = self.request(attempt_url, 0, self.config.timeout)? else {
                return Ok(None);
            };
            let mut body = Vec::new();
            resp.into_reader()
                .take(limit + 1)
                .read_to_end(&mut body)
                .map_err(|e| Attempt::Retry(format!("reading the body: {e}")))?;
            if body.len() as u64 > limit {
                return Err(Attempt::Fatal(format!(
                    "the body is larger than {limit} bytes"
                )));
            }
            Ok(Some(body))
        })
    }

    /// GET `url` as UTF-8 text (at most `limit` bytes); `Ok(None)` on 404 or 410.
    pub fn get_text(&self, url: &str, limit: u64) -> Result<Option<String>, FetchError> {
        match self.get_bytes(url, limit)? {
            None => Ok(None),
            Some(bytes) => utf8_text(url, bytes).map(Some),
        }
    }

    /// One request, following redirects to http(s) URLs; `Ok(None)` on 404/410.
    pub(super) fn request(
        &self,
        url: &str,
        offset: u64,
        timeout: Duration,
    ) -> Result<Option<ureq::Response>, Attempt> {
        let mut current = url.to_string();
        for _ in 0..=MAX_REDIRECTS {
            let resp = self.request_once(&current, offset, timeout)?;
            let Some(resp) = resp else { return Ok(None) };
            if !(300..400).contains(&resp.status()) {
                return Ok(Some(resp));
            }
            current = redirect_target(&current, &resp)?;
        }
        Err(Attempt::Fatal(format!(
            "more than {MAX_REDIRECTS} redirects (the last to {})",
            printable_url(&current)
        )))
    }

    /// One request to `url`, no redirect followed.
    pub(super) fn request_once(
        &self,
        url: &str,
        offset: u64,
        timeout: Duration,
    ) -> Result<Option<ureq::Response>, Attempt> {
        // A deadline for the whole request: the agent's read timeout is not applied to
        // connections taken from its pool (ureq 2), so a stalled server would never be
        // noticed on a kept-alive connection. A long NAR download cut by it resumes.
        let mut req = self.agent.get(url).timeout(timeout);
        if offset > 0 {
            req = req.set("Range", &format!("bytes={offset}-"));
        }
        match req.call() {
            Ok(resp) => Ok(Some(resp)),
            Err(ureq::Error::Status(404 | 410, _)) => Ok(None),
            Err(ureq::Error::Status(code, resp)) => {
                let what = format!("HTTP {code} {}", resp.status_text());
                if retryable(code) {
                    Err(Attempt::Retry(what))
                } else {
                    Err(Attempt::Fatal(what))
                }
            }
            Err(ureq::Error::Transport(t)) => {
                use ureq::ErrorKind as K;
                let what = transport_message(&t);
                match t.kind() {
                    K::InvalidUrl
                    | K::UnknownScheme
                    | K::InsecureRequestHttpsOnly
                    | K::InvalidProxyUrl
                    | K::ProxyUnauthorized
                    | K::TooManyRedirects => Err(Attempt::Fatal(what)),
                    _ => Err(Attempt::Retry(what)),
                }
            }
        }
    }

    /// Run `attempt` until it succeeds, fails for good, or the retries are used up,
    /// waiting `backoff · 2^n` between attempts.
    pub(super) fn with_retries<T>(
        &self,
        url: &str,
        mut attempt: impl FnMut(&str) -> Result<T, Attempt>,
    ) -> Result<T, FetchError> {
        let mut n = 0u32;
        loop {
            match attempt(url) {
                Ok(v) => return Ok(v),
                Err(Attempt::Fatal(message)) => {
                    return Err(FetchError {
                        url: url.to_string(),
                        message,
                    })
                }
                Err(Attempt::Retry(message)) if n >= self.config.retries => {
                    return Err(FetchError {
                        url: url.to_string(),
                        message: gave_up(&message, n + 1),
                    });
                }
                Err(Attempt::Retry(_)) => {
                    std::thread::sleep(self.backoff(n));
                    n += 1;
                }
            }
        }
    }

    /// The wait before retry `n` (0-based).
    pub(super) fn backoff(&self, n: u32) -> Duration {
        self.config.backoff.saturating_mul(1u32 << n.min(10))
    }
}

/// `<base>/<hash>.narinfo`.
pub fn narinfo_url(base: &str, hash: &str) -> String {
    format!("{base}/{hash}.narinfo")
}

/// A cache URL as the base the client joins file names to: no trailing `/`.
pub fn normalize_base(url: &str) -> String {
    url.trim_end_matches('/').to_string()
}

/// Whether `s` is an `http://` or `https://` URL.
pub fn is_http_url(s: &str) -> bool {
    let lower = s.get(..8).map(str::to_ascii_lowercase).unwrap_or_default();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// Where a 3xx answer to `from` sends the request: its `Location`, resolved against
/// `from`, when that is an http(s) URL.
pub(super) fn redirect_target(from: &str, resp: &ureq::Response) -> Result<String, Attempt> {
    let code = resp.status();
    let Some(location) = resp.header("Location") else {
        return Err(Attempt::Fatal(format!(
            "HTTP {code} redirect without a Location"
        )));
    };
    let next = url::Url::parse(from)
        .and_then(|base| base.join(location))
        .map_err(|e| {
            Attempt::Fatal(format!(
                "HTTP {code} redirect to `{}`, which is not a URL ({e})",
                printable_url(location)
            ))
        })?;
    if !matches!(next.scheme(), "http" | "https") {
        return Err(Attempt::Fatal(format!(
            "HTTP {code} redirect to `{}`: only http and https URLs are followed",
            printable_url(location)
        )));
    }
    Ok(next.to_string())
}

/// A URL from a server, fit for a message: at most 200 characters, control and
/// bidirectional characters escaped.
pub(super) fn printable_url(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == 200 {
            out.push('…');
            break;
        }
        if c.is_control() || crate::store::is_terminal_hazard(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether an answer with this status is a failed attempt worth repeating (a server
/// error, a timeout or too many requests), for the full client and the pipeline alike.
pub(super) fn retryable(code: u16) -> bool {
    code >= 500 || code == 408 || code == 429
}

/// The message of the last failure of `tries` attempts.
pub(super) fn gave_up(message: &str, tries: u32) -> String {
    format!(
        "{message} ({tries} attempt{})",
        if tries == 1 { "" } else { "s" }
    )
}

/// A body as text, or the error naming `url`.
pub(super) fn utf8_text(url: &str, bytes: Vec<u8>) -> Result<String, FetchError> {
    String::from_utf8(bytes).map_err(|e| FetchError {
        url: url.to_string(),
        message: format!(
            "not UTF-8 text (invalid byte at {})",
            e.utf8_error().valid_up_to()
        ),
    })
}

/// How one attempt ended, when it did not succeed.
pub(super) enum Attempt {
    /// Worth trying again (5xx, connection error, body cut short).
    Retry(String),
    /// Trying again would not help (4xx, bad URL, oversized body).
    Fatal(String),
}

/// A transport error without the URL (the caller names it once).
pub(super) fn transport_message(t: &ureq::Transport) -> String {
    let mut s = t.kind().to_string();
    if let Some(m) = t.message() {
        s.push_str(": ");
        s.push_str(m);
    }
    if let Some(src) = std::error::Error::source(t) {
        s.push_str(": ");
        s.push_str(&src.to_string());
    }
    s
}

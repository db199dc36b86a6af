//! HTTP(S) transport for binary caches: one [`HttpClient`] per process, shared by the
//! loader that walks a closure's narinfos (`crate::load::http_cache`) and the file
//! source that streams NARs and `.ls` listings (`crate::source::HttpSource`).
//!
//! The client keeps connections alive (a pool of up to [`HttpConfig::connections`] per
//! host), gives every read a timeout, and retries with exponential backoff on 5xx,
//! 408, 429 and connection errors, at most [`HttpConfig::retries`] times; a 404 (or
//! 410) is an answer ("not here"), not an error. Bodies read whole (narinfos, listings)
//! are re-fetched when the connection drops mid-body; streamed bodies (NARs) resume
//! with a `Range` request from the byte they stopped at ([`HttpClient::stream`]), but
//! never past the length the caller declares, and within one deadline and one retry
//! budget for the whole download. Redirects are followed here, not by ureq: only to
//! `http:` and `https:` URLs, at most [`MAX_REDIRECTS`] hops.
//!
//! narinfos are immutable, so those fetched are remembered in memory for the life of
//! the process and, when the caller gives a directory, in a small SQLite database
//! there keyed by cache URL and hash ([`narinfo_db`]), so a second run asks the network
//! for none of them; beside them, one opaque record per closure walked (the loader's
//! parsed closure), by cache list and root. TLS is rustls (no OpenSSL). Nothing here
//! knows Nix formats.
//!
//! A walk's narinfos from `http://` caches go another way ([`HttpClient::fetch_narinfos`]):
//! batches of requests pipelined on a few connections (`pipeline` says why), under the
//! same retry policy and with the same messages; what that reader does not follow (a
//! redirect, an odd answer, a connection that never answers) is asked again here.

mod narinfo_db;
mod pipeline;

use std::collections::VecDeque;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use narinfo_db::NarinfoDb;
use rustc_hash::FxHashMap;

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
    agent: ureq::Agent,
    config: HttpConfig,
    /// narinfos known this run, by hash part.
    memo: Mutex<FxHashMap<String, CachedNarinfo>>,
    /// narinfos fetched this run and not yet written to the database.
    unsaved: Mutex<Vec<narinfo_db::Row>>,
    /// The narinfo cache, opened (and its directory created) when the run first needs
    /// it, never before: a run that fails early leaves nothing on disk. `None` inside:
    /// no cache, or it could not be opened (see `db_problem`).
    db: OnceLock<Option<Mutex<NarinfoDb>>>,
    /// The cache of each path of a closure read from its record, sorted by hash part.
    origins: Mutex<Vec<([u8; 32], Arc<str>)>>,
    /// Why the narinfo cache is not used, when it could not be opened.
    db_problem: OnceLock<String>,
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
const USER_AGENT: &str = concat!("nixcut/", env!("CARGO_PKG_VERSION"));

/// What became of one narinfo: its text, `None` when the cache does not have it, or
/// the error that ended the attempts.
pub type NarinfoResult = Result<Option<CachedNarinfo>, FetchError>;

/// The pipelined connections of one walk worker (one per `http://` cache, opened on
/// first use and kept between batches), for [`HttpClient::fetch_narinfos`].
#[derive(Default)]
pub struct Pipes {
    open: Vec<(Arc<str>, Option<pipeline::Origin>, Option<pipeline::Conn>)>,
}

impl Pipes {
    /// The origin of `base` (`None`: not pipelined) and its open connection.
    fn slot(&mut self, base: &Arc<str>) -> (Option<pipeline::Origin>, &mut Option<pipeline::Conn>) {
        let i = match self.open.iter().position(|(b, ..)| b == base) {
            Some(i) => i,
            None => {
                let origin = pipeline::Origin::of(base, USER_AGENT);
                self.open.push((Arc::clone(base), origin, None));
                self.open.len() - 1
            }
        };
        let (_, origin, conn) = &mut self.open[i];
        (origin.clone(), conn)
    }
}

/// How one narinfo fared in a pipelined round.
enum Piped {
    /// Settled: a text, not there, or an error no retry mends.
    Done(NarinfoResult),
    /// A failed attempt worth repeating (5xx, 408, 429, cut, timed out): the message.
    Retry(String),
    /// For the full client to ask (a redirect, an answer the reader does not follow,
    /// a connection that never answered).
    Elsewhere,
}

/// How many redirects one request follows.
pub const MAX_REDIRECTS: u32 = 8;

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
    fn db(&self) -> Option<&Mutex<NarinfoDb>> {
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

    /// One request, following redirects to http(s) URLs; `Ok(None)` on 404/410.
    fn request(
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
    fn request_once(
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
    fn with_retries<T>(
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
    fn backoff(&self, n: u32) -> Duration {
        self.config.backoff.saturating_mul(1u32 << n.min(10))
    }

    /// The narinfo for `hash` as known this run or recorded in the narinfo cache for the
    /// cache at `base`; `None` when it has to be fetched.
    pub fn known_narinfo(&self, base: &Arc<str>, hash: &str) -> Option<CachedNarinfo> {
        if let Some(hit) = self.memo_get(hash) {
            return Some(hit);
        }
        let db = self.db()?;
        let text = db
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(base, hash)?;
        let hit = CachedNarinfo {
            base: Arc::clone(base),
            text: Arc::from(text),
        };
        self.memo_lock().insert(hash.to_string(), hit.clone());
        Some(hit)
    }

    /// The narinfo for `hash` known this run, from whichever cache.
    pub fn memo_get(&self, hash: &str) -> Option<CachedNarinfo> {
        self.memo_lock().get(hash).cloned()
    }

    /// Fetch `<base>/<hash>.narinfo` from the network (no cache consulted); `Ok(None)`
    /// when the cache does not have it. A text fetched is remembered for [`Self::save`].
    pub fn fetch_narinfo(
        &self,
        base: &Arc<str>,
        hash: &str,
    ) -> Result<Option<CachedNarinfo>, FetchError> {
        let url = narinfo_url(base, hash);
        let Some(text) = self.get_text(&url, MAX_NARINFO)? else {
            return Ok(None);
        };
        Ok(Some(CachedNarinfo {
            base: Arc::clone(base),
            text: Arc::from(text),
        }))
    }

    /// Whether [`Self::fetch_narinfos`] pipelines requests to `base` (an `http://`
    /// URL without credentials or query); otherwise it asks one narinfo at a time.
    pub fn pipelines(base: &str) -> bool {
        pipeline::Origin::of(base, USER_AGENT).is_some()
    }

    /// [`Self::fetch_narinfo`] for each of `hashes`, in order, over `pipes`: the
    /// requests go out back to back on one connection and the answers are read in
    /// order (HTTP/1.1 pipelining); requests that a closing connection left unanswered
    /// are sent again on a new one, not counted as failures. Each narinfo has the retry
    /// policy of a single request ([`HttpConfig::retries`], the backoff, the same
    /// messages); what the pipeline does not follow is asked by the full client, and a
    /// cache that [`Self::pipelines`] refuses is asked one narinfo at a time.
    ///
    /// `None` for a narinfo not asked: the work stopped at another's error (which is
    /// there), or `stop` was set.
    pub fn fetch_narinfos(
        &self,
        pipes: &mut Pipes,
        base: &Arc<str>,
        hashes: &[&str],
        stop: &AtomicBool,
    ) -> Vec<Option<NarinfoResult>> {
        let mut out: Vec<Option<NarinfoResult>> = vec![None; hashes.len()];
        let (origin, conn) = pipes.slot(base);
        let mut elsewhere: Vec<usize> = Vec::new();
        match origin {
            None => elsewhere.extend(0..hashes.len()),
            Some(origin) => {
                let mut round: Vec<usize> = (0..hashes.len()).collect();
                let mut failures = 0u32;
                while !round.is_empty() && !stop.load(Ordering::Relaxed) {
                    let mut retry = Vec::new();
                    for (i, p) in self.pipe_round(&origin, conn, base, hashes, &round, stop) {
                        match p {
                            Piped::Done(r) => out[i] = Some(r),
                            Piped::Retry(message) => retry.push((i, message)),
                            Piped::Elsewhere => elsewhere.push(i),
                        }
                    }
                    if out.iter().any(|r| matches!(r, Some(Err(_)))) {
                        return out;
                    }
                    failures += 1;
                    if retry.is_empty() {
                        break;
                    }
                    if failures > self.config.retries {
                        for (i, message) in retry {
                            out[i] = Some(Err(FetchError {
                                url: narinfo_url(base, hashes[i]),
                                message: gave_up(&message, failures),
                            }));
                        }
                        return out;
                    }
                    // Each narinfo left failed `failures` times: the wait a single
                    // request has before its next attempt.
                    std::thread::sleep(self.backoff(failures - 1));
                    round = retry.into_iter().map(|(i, _)| i).collect();
                }
                elsewhere.sort_unstable();
            }
        }
        for i in elsewhere {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let r = self.fetch_narinfo(base, hashes[i]);
            let failed = r.is_err();
            out[i] = Some(r);
            if failed {
                break;
            }
        }
        out
    }

    /// One attempt at each of `round` (indices into `hashes`) over pipelined
    /// connections to `origin`, the open one first; requests left unanswered go again
    /// on a new connection. Every index comes back once, unless `stop` is set.
    fn pipe_round(
        &self,
        origin: &pipeline::Origin,
        conn: &mut Option<pipeline::Conn>,
        base: &Arc<str>,
        hashes: &[&str],
        round: &[usize],
        stop: &AtomicBool,
    ) -> Vec<(usize, Piped)> {
        use pipeline::ReadError;
        let mut done = Vec::with_capacity(round.len());
        let mut queue: VecDeque<usize> = round.iter().copied().collect();
        while !queue.is_empty() && !stop.load(Ordering::Relaxed) {
            let fresh = conn.is_none();
            let c = match conn {
                Some(c) => c,
                None => match pipeline::Conn::open(origin, self.config.timeout) {
                    Ok(c) => conn.insert(c),
                    Err(_) => {
                        // The full client connects again, and words the error.
                        done.extend(queue.drain(..).map(|i| (i, Piped::Elsewhere)));
                        break;
                    }
                },
            };
            let names: Vec<String> = queue
                .iter()
                .map(|&i| format!("{}.narinfo", hashes[i]))
                .collect();
            if c.send(origin, names.iter().map(String::as_str)).is_err() {
                *conn = None;
                if fresh {
                    done.extend(queue.pop_front().map(|i| (i, Piped::Elsewhere)));
                }
                continue;
            }
            let mut answered = false;
            for _ in 0..names.len() {
                let Some(&i) = queue.front() else { break };
                let read = c.read(MAX_NARINFO);
                if !matches!(read, Err(ReadError::Closed)) {
                    queue.pop_front();
                }
                let (piped, keep) = match read {
                    Ok(resp) => {
                        answered = true;
                        let keep = !resp.close;
                        (self.piped_answer(base, hashes[i], resp), keep)
                    }
                    Err(ReadError::Closed) => {
                        // Closed between answers: the rest go again on a new connection.
                        // A new one that answered nothing hands its first request to the
                        // full client, so that every round ends.
                        *conn = None;
                        if fresh && !answered {
                            done.extend(queue.pop_front().map(|i| (i, Piped::Elsewhere)));
                        }
                        break;
                    }
                    Err(ReadError::Cut { part, error }) => {
                        (Piped::Retry(cut_message(part, error)), false)
                    }
                    Err(ReadError::TooLarge { status: 200 }) => (
                        Piped::Done(Err(FetchError {
                            url: narinfo_url(base, hashes[i]),
                            message: format!("the body is larger than {MAX_NARINFO} bytes"),
                        })),
                        false,
                    ),
                    Err(ReadError::TooLarge { .. } | ReadError::Unexpected(_)) => {
                        (Piped::Elsewhere, false)
                    }
                };
                done.push((i, piped));
                if !keep {
                    *conn = None;
                    break;
                }
            }
        }
        done
    }

    /// What an answer to the request for `hash` means.
    fn piped_answer(&self, base: &Arc<str>, hash: &str, resp: pipeline::Response) -> Piped {
        match resp.status {
            200 => {
                let url = || narinfo_url(base, hash);
                Piped::Done(utf8_text(&url(), resp.body).map(|text| {
                    Some(CachedNarinfo {
                        base: Arc::clone(base),
                        text: Arc::from(text),
                    })
                }))
            }
            404 | 410 => Piped::Done(Ok(None)),
            // As the full client words it.
            code if retryable(code) => Piped::Retry(format!("HTTP {code} {}", resp.reason)),
            _ => Piped::Elsewhere,
        }
    }

    /// Remember a narinfo that parsed: for this run and, when `fetched` from the network,
    /// for [`Self::save`] to write.
    pub fn remember(&self, hash: &str, n: &CachedNarinfo, fetched: bool) {
        if !fetched {
            return; // known already: in the memo since it was looked up
        }
        self.memo_lock().insert(hash.to_string(), n.clone());
        if self.db().is_some() {
            self.unsaved
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((n.base.clone(), hash.to_string(), n.text.clone()));
        }
    }

    /// Write the narinfos fetched since the last call into the narinfo cache (one
    /// transaction). A cache that cannot be written only costs speed next time; the
    /// problem is returned for a warning.
    pub fn save(&self) -> Result<(), String> {
        let Some(db) = self.db() else {
            return Ok(());
        };
        let mut batch =
            std::mem::take(&mut *self.unsaved.lock().unwrap_or_else(|e| e.into_inner()));
        if batch.is_empty() {
            return Ok(());
        }
        // In key order: the rows go into the table's B-tree in sequence instead of at
        // random places (a package set's 280,000 narinfos were written 3× faster so).
        batch.sort_unstable_by(|a, b| (&*a.0, &a.1).cmp(&(&*b.0, &b.1)));
        db.lock().unwrap_or_else(|e| e.into_inner()).put(&batch)
    }

    /// Forget the narinfos fetched since the last [`Self::save`] (a walk that failed):
    /// none of them reaches the narinfo cache, nor stays known this run.
    pub fn discard_unsaved(&self) {
        let batch = std::mem::take(&mut *self.unsaved.lock().unwrap_or_else(|e| e.into_inner()));
        let mut memo = self.memo_lock();
        for (_, hash, _) in &batch {
            memo.remove(hash.as_str());
        }
    }

    /// `read` of the record of the closure of `root` walked through `bases` (in that
    /// order), as [`Self::save_closure_record`] wrote it; `None` when there is none (or
    /// no cache). The record is read in place, without a copy.
    pub fn with_closure_record<T>(
        &self,
        bases: &[Arc<str>],
        root: &str,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Option<T> {
        let db = self.db()?;
        db.lock()
            .unwrap_or_else(|e| e.into_inner())
            .with_closure(&closure_key(bases), root, read)
    }

    /// Keep `record` for the closure of `root` walked through `bases`. A cache that
    /// cannot be written only costs speed next time; the problem is returned.
    pub fn save_closure_record(
        &self,
        bases: &[Arc<str>],
        root: &str,
        record: &[u8],
    ) -> Result<(), String> {
        let Some(db) = self.db() else {
            return Ok(());
        };
        db.lock()
            .unwrap_or_else(|e| e.into_inner())
            .put_closure(&closure_key(bases), root, record)
    }

    /// Which cache each path's narinfo comes from (hash part, index into `bases`), for a
    /// closure read from its record: [`Self::narinfo`] finds the narinfos there when a
    /// NAR is wanted, without a walk having put them in memory.
    pub fn set_origins(&self, bases: &[Arc<str>], origins: &[([u8; 32], u32)]) {
        let mut v = self.origins.lock().unwrap_or_else(|e| e.into_inner());
        v.reserve(origins.len());
        v.extend(
            origins
                .iter()
                .filter_map(|(h, i)| Some((*h, Arc::clone(bases.get(*i as usize)?)))),
        );
        // Usually one record, already in hash order: the sort only checks that. A hash
        // recorded twice (two closures) keeps its first cache.
        v.sort_by_key(|e| e.0);
        v.dedup_by(|later, first| later.0 == first.0);
    }

    /// The cache the narinfo of `hash` comes from: known this run, or from a record.
    pub fn origin(&self, hash: &str) -> Option<Arc<str>> {
        if let Some(n) = self.memo_get(hash) {
            return Some(n.base);
        }
        let key: [u8; 32] = hash.as_bytes().try_into().ok()?;
        let v = self.origins.lock().unwrap_or_else(|e| e.into_inner());
        let i = v.binary_search_by(|e| e.0.cmp(&key)).ok()?;
        Some(Arc::clone(&v[i].1))
    }

    /// The narinfo of `hash` for the file source: known this run, else from the cache
    /// it came from ([`Self::origin`]): the narinfo cache, else that cache over the
    /// network. `None` when the path is unknown or its narinfo cannot be had.
    pub fn narinfo(&self, hash: &str) -> Option<CachedNarinfo> {
        if let Some(n) = self.memo_get(hash) {
            return Some(n);
        }
        let base = self.origin(hash)?;
        let known = self.known_narinfo(&base, hash);
        self.end_lookups();
        if let Some(n) = known {
            return Some(n);
        }
        let n = self.fetch_narinfo(&base, hash).ok()??;
        self.memo_lock().insert(hash.to_string(), n.clone());
        Some(n)
    }

    /// Done looking narinfos up for now: let other processes write the cache.
    pub fn end_lookups(&self) {
        if let Some(Some(db)) = self.db.get() {
            db.lock().unwrap_or_else(|e| e.into_inner()).end_read();
        }
    }

    fn memo_lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<String, CachedNarinfo>> {
        self.memo.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The key of a closure record: the cache list, in order.
fn closure_key(bases: &[Arc<str>]) -> String {
    bases.iter().map(|b| &**b).collect::<Vec<_>>().join("\n")
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
fn redirect_target(from: &str, resp: &ureq::Response) -> Result<String, Attempt> {
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
fn printable_url(s: &str) -> String {
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
fn retryable(code: u16) -> bool {
    code >= 500 || code == 408 || code == 429
}

/// The message of the last failure of `tries` attempts.
fn gave_up(message: &str, tries: u32) -> String {
    format!(
        "{message} ({tries} attempt{})",
        if tries == 1 { "" } else { "s" }
    )
}

/// What went wrong when a pipelined answer was cut, in the full client's words (ureq 2:
/// a transport error, with the line it was reading; a body read short).
fn cut_message(part: pipeline::Part, error: Option<io::Error>) -> String {
    use pipeline::Part;
    match (part, error) {
        (Part::Body, None) => {
            "reading the body: response body closed before all bytes were read".into()
        }
        (Part::Body, Some(e)) => format!("reading the body: {e}"),
        (_, None) => "Network Error: Unexpected EOF".into(),
        (Part::StatusLine, Some(e)) => {
            format!("Network Error: Network Error: Error encountered in the status line: {e}")
        }
        (Part::Header, Some(e)) => {
            format!("Network Error: Network Error: Error encountered in a header: {e}")
        }
    }
}

/// A body as text, or the error naming `url`.
fn utf8_text(url: &str, bytes: Vec<u8>) -> Result<String, FetchError> {
    String::from_utf8(bytes).map_err(|e| FetchError {
        url: url.to_string(),
        message: format!(
            "not UTF-8 text (invalid byte at {})",
            e.utf8_error().valid_up_to()
        ),
    })
}

/// How one attempt ended, when it did not succeed.
enum Attempt {
    /// Worth trying again (5xx, connection error, body cut short).
    Retry(String),
    /// Trying again would not help (4xx, bad URL, oversized body).
    Fatal(String),
}

type BodyReader = Box<dyn Read + Send + Sync + 'static>;

/// A transport error without the URL (the caller names it once).
fn transport_message(t: &ureq::Transport) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert!(is_http_url("http://x"));
        assert!(is_http_url("HTTPS://x/y"));
        assert!(!is_http_url("file:///x"));
        assert!(!is_http_url("/nix/store/x"));
        assert_eq!(normalize_base("http://h/c//"), "http://h/c");
        assert_eq!(narinfo_url("http://h", "abc"), "http://h/abc.narinfo");
    }

    #[test]
    fn https_is_spoken() {
        // Nothing listens on port 1: the request fails to connect, rather than being
        // refused for its scheme (TLS is compiled in).
        let c = HttpClient::new(HttpConfig {
            retries: 0,
            ..HttpConfig::default()
        });
        let e = c.get_text("https://127.0.0.1:1/x", 10).unwrap_err();
        assert_eq!(e.url, "https://127.0.0.1:1/x");
        assert!(e.message.contains("Connection Failed"), "{e}");
        assert!(e.message.contains("(1 attempt)"), "{e}");
    }

    #[test]
    fn closure_records_are_kept_by_cache_list_and_root() {
        let dir = tempfile::tempdir().unwrap();
        let bases: Vec<Arc<str>> = vec![Arc::from("http://a"), Arc::from("http://b")];
        let config = HttpConfig {
            narinfo_cache: Some(dir.path().to_path_buf()),
            ..HttpConfig::default()
        };
        let c = HttpClient::new(config.clone());
        c.save_closure_record(&bases, "h1", b"record").unwrap();
        let again = HttpClient::new(config);
        let read = |c: &HttpClient, bases: &[Arc<str>], root: &str| {
            c.with_closure_record(bases, root, <[u8]>::to_vec)
        };
        assert_eq!(read(&again, &bases[..1], "h1"), None, "another list");
        assert_eq!(read(&again, &bases, "h2"), None, "another root");
        assert_eq!(read(&again, &bases, "h1").as_deref(), Some(&b"record"[..]));
        let no_cache = HttpClient::new(HttpConfig::default());
        assert_eq!(read(&no_cache, &bases, "h1"), None);
    }

    #[test]
    fn the_source_finds_narinfos_through_recorded_origins() {
        let dir = tempfile::tempdir().unwrap();
        let bases: Vec<Arc<str>> = vec![Arc::from("http://a"), Arc::from("http://b")];
        let config = HttpConfig {
            narinfo_cache: Some(dir.path().to_path_buf()),
            ..HttpConfig::default()
        };
        let h = "x71ahacbysflg2pf8638mdh69871353b";
        let c = HttpClient::new(config.clone());
        let n = CachedNarinfo {
            base: Arc::clone(&bases[1]),
            text: Arc::from("StorePath: x\n"),
        };
        c.remember(h, &n, true);
        c.save().unwrap();
        let again = HttpClient::new(config);
        assert!(again.origin(h).is_none());
        let key: [u8; 32] = h.as_bytes().try_into().unwrap();
        again.set_origins(&bases, &[(key, 1), ([b'0'; 32], 7)]);
        assert_eq!(again.origin(h).as_deref(), Some("http://b"));
        let got = again.narinfo(h).unwrap();
        assert_eq!((&*got.base, &*got.text), ("http://b", "StorePath: x\n"));
    }

    #[test]
    fn backoff_doubles() {
        let c = HttpClient::new(HttpConfig::default());
        assert_eq!(c.backoff(0), Duration::from_millis(100));
        assert_eq!(c.backoff(3), Duration::from_millis(800));
    }
}

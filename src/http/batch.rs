//! A walk's narinfos from `http://` caches, pipelined ([`HttpClient::fetch_narinfos`]):
//! batches of requests back to back on a few kept connections (`super::pipeline` reads
//! the answers and says why), under the retry policy and with the messages of the full
//! client; what the pipeline does not follow (a redirect, an odd answer, a connection
//! that never answers) is asked again by the full client (`super`).

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{
    gave_up, narinfo_url, pipeline, retryable, utf8_text, CachedNarinfo, FetchError, HttpClient,
    MAX_NARINFO, USER_AGENT,
};

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

impl HttpClient {
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

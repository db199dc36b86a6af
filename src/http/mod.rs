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
//!
//! `client.rs` holds the client, its requests, retries and redirects; `stream.rs` the
//! resumed NAR streams, `memo.rs` the narinfos and closure records remembered,
//! `batch.rs` the pipelined walk.

mod batch;
mod client;
mod memo;
mod narinfo_db;
mod pipeline;
mod stream;

pub use batch::{NarinfoResult, Pipes};
use client::{gave_up, retryable, utf8_text, Attempt, USER_AGENT};
pub use client::{
    is_http_url, narinfo_url, normalize_base, CachedNarinfo, FetchError, HttpClient, HttpConfig,
    MAX_NARINFO, MAX_REDIRECTS,
};
pub use stream::{StreamBound, MIN_STREAM_RATE};

#[cfg(test)]
mod tests {
    use super::client::*;
    use std::time::Duration;

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
    fn backoff_doubles() {
        let c = HttpClient::new(HttpConfig::default());
        assert_eq!(c.backoff(0), Duration::from_millis(100));
        assert_eq!(c.backoff(3), Duration::from_millis(800));
    }
}

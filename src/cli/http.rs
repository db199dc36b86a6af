//! The HTTP binary-cache options of the command line (`--cache`, `--http-*`,
//! `--no-cache`) turned into the library's plain [`HttpInputs`]: one [`HttpClient`] per
//! process, made the first time an input needs it and shared by every load and by the
//! file source, with its narinfo cache under `$XDG_CACHE_HOME/nixcut/narinfo`.

use std::sync::{Arc, OnceLock};

use nixcut::http::{is_http_url, HttpClient, HttpConfig};
use nixcut::load::http_cache::{HttpInputs, WalkProgress};
use nixcut::load::LoadOptions;

use super::args::GlobalArgs;
use super::{cache_home, Progress};

static CLIENT: OnceLock<Arc<HttpClient>> = OnceLock::new();

/// When `input` is read over HTTP (caches given, or a URL), fill `opts.http`; returns
/// the progress bar of the narinfo walk, for the caller to clear once loaded.
pub(super) fn wire(g: &GlobalArgs, input: &str, opts: &mut LoadOptions) -> Option<Arc<Progress>> {
    if g.caches.is_empty() && !is_http_url(input) {
        return None;
    }
    let client = CLIENT.get_or_init(|| {
        Arc::new(HttpClient::new(HttpConfig {
            timeout: g.http_timeout,
            retries: g.http_retries,
            connections: usize::from(g.http_connections),
            narinfo_cache: if g.no_cache {
                None
            } else {
                cache_home().map(|h| h.join("nixcut").join("narinfo"))
            },
            ..HttpConfig::default()
        }))
    });
    let bar = Progress::walk(g, "fetching narinfos").map(Arc::new);
    let progress = bar.clone().map(|b| {
        let f: WalkProgress = Arc::new(move |done, known| b.set(done, known));
        f
    });
    opts.http = HttpInputs {
        caches: g.caches.clone(),
        client: Some(Arc::clone(client)),
        progress,
    };
    bar
}

/// The client, once an input has been read over HTTP.
pub(super) fn client_in_use() -> Option<&'static Arc<HttpClient>> {
    CLIENT.get()
}

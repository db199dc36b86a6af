//! Loading over HTTP: the `--cache` URLs and the run's one `HttpClient`
//! (made by [`Config`]) put into the library's plain [`HttpInputs`] for each input read
//! over HTTP, with a progress bar for the narinfo walk.

use std::sync::Arc;

use nixcut::http::is_http_url;
use nixcut::load::http_cache::{HttpInputs, WalkProgress};
use nixcut::load::LoadOptions;

use super::config::Config;
use super::progress::Progress;

/// When `input` is read over HTTP (caches given, or a URL), fill `opts.http`; returns
/// the progress bar of the narinfo walk, for the caller to clear once loaded.
pub(super) fn wire(cfg: &Config, input: &str, opts: &mut LoadOptions) -> Option<Arc<Progress>> {
    if cfg.caches.is_empty() && !is_http_url(input) {
        return None;
    }
    let bar = Progress::walk(cfg, "fetching narinfos").map(Arc::new);
    let progress = bar.clone().map(|b| {
        let f: WalkProgress = Arc::new(move |done, known| b.set(done, known));
        f
    });
    opts.http = HttpInputs {
        caches: cfg.caches.clone(),
        client: cfg.http.clone(),
        progress,
    };
    bar
}

//! A binary cache over HTTP(S): the closure of one root, walked narinfo by narinfo.
//!
//! The input is either `URL/<hash>.narinfo` or, with caches given (`--cache URL`, tried
//! in order like Nix's substituters), a store path, base name or bare hash. Each cache's
//! `nix-cache-info` is read first: its `StoreDir` is the store directory (a mismatch
//! with `--store-dir`, or between caches, is an error). The walk then fetches narinfos
//! concurrently: when every cache is plain `http://`, [`PIPE_CONNECTIONS`] workers
//! (at most [`HttpConfig::connections`]) each take up to [`PIPE_DEPTH`] queued
//! narinfos at once and pipeline their requests on one connection
//! ([`HttpClient::fetch_narinfos`]); otherwise a pool of [`HttpConfig::connections`]
//! workers asks one narinfo at a time over the client's kept-alive connections.
//! narinfos already known (this run, or the narinfo cache) are taken on the walking
//! thread without a request. A path that no cache has is an error naming its hash and
//! the path that references it.
//!
//! A finished walk is kept in the narinfo cache as one record (the parsed closure,
//! `super::closure_record`) keyed by the cache list and the root's hash; the next load
//! of that root reads the record instead of walking, after the one `nix-cache-info`
//! request per cache (that file may change, narinfos and closures do not), and tells
//! the client which cache each path came from, for the file source to find NARs by.
//!
//! narinfos are parsed by `crate::store::narinfo` (worded by
//! `binary_cache::parse_narinfo`), so a malformed one is an error
//! naming its URL and line. The result is a [`Closure`] of kind
//! [`SourceKind::HttpCache`]; the NARs are not touched here (see
//! `crate::source::HttpSource`, which finds them through the same client).
//!
//! [`HttpConfig::connections`]: crate::http::HttpConfig::connections

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use super::binary_cache::{parse_cache_info, parse_narinfo, NarInfo};
use super::closure_record::{self, Decoded};
use super::{LoadError, LoadOptions};
use crate::http::{
    is_http_url, narinfo_url, normalize_base, CachedNarinfo, FetchError, HttpClient, HttpConfig,
    Pipes,
};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::store::{
    is_nix32_byte, Closure, LoadWarning, SourceKind, StoreDir, StorePath, HASH_LEN,
};

/// How many connections a walk pipelines narinfo requests on (at most
/// `--http-connections`): on a loopback nginx, 4 kept both cores busy, and more only
/// added context switches.
pub const PIPE_CONNECTIONS: usize = 4;

/// The most narinfo requests a worker sends at once on its connection. 64 requests
/// (about 8 KiB) fit in the socket buffers, so a batch's one write never waits for the
/// server to read while it waits for us to read its answers.
pub const PIPE_DEPTH: usize = 64;

pub use super::options::{HttpInputs, WalkProgress};

/// Whether `input` is to be read from an HTTP cache: a URL, or (with caches given) a
/// store path, base name or hash that is not a file here.
pub fn wants(input: &str, opts: &LoadOptions) -> bool {
    if is_http_url(input) {
        return true;
    }
    if opts.http.caches.is_empty() {
        return false;
    }
    if is_hash(input) || (!input.contains('/') && StorePath::from_base_name(input).is_ok()) {
        return !Path::new(input).exists();
    }
    // A full store path: its last component is a base name and it lies in a directory.
    input.starts_with('/')
        && input
            .rsplit('/')
            .next()
            .is_some_and(|b| StorePath::from_base_name(b).is_ok())
}

/// What the user named as the root.
enum RootSpec {
    /// A bare hash part (from `URL/<hash>.narinfo` or typed).
    Hash(String),
    /// A base name `<hash>-<name>`.
    Base(StorePath),
    /// A full store path, checked against the cache's store directory.
    Full(String),
}

impl RootSpec {
    fn hash(&self) -> &str {
        match self {
            RootSpec::Hash(h) => h,
            RootSpec::Base(p) => p.hash_part(),
            RootSpec::Full(s) => s
                .rsplit('/')
                .next()
                .and_then(|b| b.get(..HASH_LEN))
                .unwrap_or(""),
        }
    }
}

fn is_hash(s: &str) -> bool {
    s.len() == HASH_LEN && s.bytes().all(is_nix32_byte)
}

/// Load the closure of `input` from the HTTP caches (see the module docs).
pub fn load(input: &str, opts: &LoadOptions) -> Result<Closure, LoadError> {
    let (spec, named_base) = root_spec(input)?;
    let mut caches = Caches::connect(cache_bases(named_base, opts), opts, input)?;
    let root_hash = spec.hash().to_string();
    let want_root = wanted_root(&spec, &caches.sd, input)?;
    // A closure walked before is one record in the narinfo cache: read it instead of
    // walking (a record that does not read is walked again; damage says so).
    let recorded = caches.recorded(&root_hash, |problem| LoadWarning::RecordDamaged {
        of: root_hash.clone(),
        set: false,
        problem,
    });
    if let Some(rec) = recorded {
        let mut closure = rec.closure;
        caches.put_warnings_first(&mut closure);
        check_root(&closure, &root_hash, want_root.as_ref(), input)?;
        super::refuse_size_overflow(&closure, Path::new(input))?;
        return Ok(closure);
    }
    let result = caches.walk(opts).run(&root_hash, input);
    caches.client.end_lookups();
    // The narinfos a walk fetched are kept only when the whole walk holds: one that
    // failed (a wrong name, a 404 among the references, sizes past 2^64 - 1) keeps
    // nothing, so that the fixed server is asked again next run.
    let assembled = result.and_then(|(infos, root_base)| {
        let (mut closure, cache_of) = assemble(infos, root_base, &caches.sd, &caches.bases);
        closure.declared_roots = vec![walked_root(&closure, &root_hash, input)?];
        check_root(&closure, &root_hash, want_root.as_ref(), input)?;
        // Sizes past 2^64 - 1 are refused as from every other loader.
        super::refuse_size_overflow(&closure, Path::new(input))?;
        Ok((closure, cache_of))
    });
    let (mut closure, cache_of) = caches.keep_if_whole(assembled)?;
    // Recorded with the walk's own warnings only: those of this run (a cache that
    // could not be written) are not the closure's.
    caches.record(&closure, &cache_of, &root_hash);
    caches.put_warnings_first(&mut closure);
    Ok(closure)
}

/// What the user named as the root, and the cache base URL it names (for a
/// `URL/<hash>.narinfo`).
fn root_spec(input: &str) -> Result<(RootSpec, Option<String>), LoadError> {
    if !is_http_url(input) {
        let spec = if is_hash(input) {
            RootSpec::Hash(input.to_string())
        } else if let Ok(p) = StorePath::from_base_name(input) {
            RootSpec::Base(p)
        } else {
            RootSpec::Full(input.to_string())
        };
        return Ok((spec, None));
    }
    let (base, file) = input
        .trim_end_matches('/')
        .rsplit_once('/')
        .unwrap_or(("", ""));
    let hash = file.strip_suffix(".narinfo").filter(|h| is_hash(h));
    match hash {
        Some(h) if base.contains("://") && !base.ends_with('/') && !base.ends_with(':') => {
            Ok((RootSpec::Hash(h.to_string()), Some(normalize_base(base))))
        }
        _ => Err(LoadError::Invalid {
            path: PathBuf::from(input),
            message: "a cache URL as ROOT must name a narinfo (`URL/<hash>.narinfo`); to \
                      look a store path up in a cache, pass `--cache URL` and the store path"
                .into(),
        }),
    }
}

/// The caches to walk, in order: the one the input names, then `--cache`, each once.
fn cache_bases(named: Option<String>, opts: &LoadOptions) -> Vec<String> {
    let mut bases: Vec<String> = named.into_iter().collect();
    for c in &opts.http.caches {
        let b = normalize_base(c);
        if !bases.contains(&b) {
            bases.push(b);
        }
    }
    bases
}

/// The store path the user named as the root, when named by more than a hash.
fn wanted_root(
    spec: &RootSpec,
    sd: &StoreDir,
    input: &str,
) -> Result<Option<StorePath>, LoadError> {
    Ok(match spec {
        RootSpec::Hash(_) => None,
        RootSpec::Base(p) => Some(p.clone()),
        RootSpec::Full(s) => Some(sd.parse_path(s).map_err(|e| LoadError::Invalid {
            path: PathBuf::from(input),
            message: format!("not a store path of the caches' store directory {sd}: {e}"),
        })?),
    })
}

/// The path of a walked closure whose hash is `root_hash`.
fn walked_root(closure: &Closure, root_hash: &str, input: &str) -> Result<StorePath, LoadError> {
    closure
        .paths
        .keys()
        .find(|p| p.hash_part() == root_hash)
        .cloned()
        .ok_or_else(|| LoadError::Invalid {
            path: PathBuf::from(input),
            message: format!("the walk lost the root {root_hash}"),
        })
}

/// Which cache each path came from: an index into the cache list, by hash part.
type CacheOf = FxHashMap<[u8; HASH_LEN], u32>;

/// The caches one load walks, through one client: the store directory they declare,
/// and what this run warns of so far (not the closure's own warnings).
struct Caches {
    client: Arc<HttpClient>,
    bases: Vec<Arc<str>>,
    sd: StoreDir,
    warnings: Vec<LoadWarning>,
}

impl Caches {
    /// The client (the options' or a new one) and the store directory the caches
    /// declare.
    fn connect(bases: Vec<String>, opts: &LoadOptions, input: &str) -> Result<Caches, LoadError> {
        if bases.is_empty() {
            return Err(LoadError::Invalid {
                path: PathBuf::from(input),
                message: "no binary cache given (`--cache URL`)".into(),
            });
        }
        let client = match &opts.http.client {
            Some(c) => Arc::clone(c),
            None => Arc::new(HttpClient::new(HttpConfig::default())),
        };
        let mut warnings = Vec::new();
        // Opening the narinfo cache (now, when the walk needs it) says whether it works.
        let _ = client.has_cache();
        if let Some(p) = client.cache_problem() {
            warnings.push(LoadWarning::NarinfoCacheUnused {
                problem: p.to_string(),
            });
        }
        let sd = store_dir(&client, &bases, opts, &mut warnings)?;
        Ok(Caches {
            client,
            bases: bases.into_iter().map(Arc::from).collect(),
            sd,
            warnings,
        })
    }

    /// The closure recorded under `key` in the narinfo cache, when there is a sound one
    /// (the client then knows which cache each path came from); a damaged record is a
    /// warning, made by `damaged` from what is wrong.
    fn recorded(
        &mut self,
        key: &str,
        damaged: impl FnOnce(String) -> LoadWarning,
    ) -> Option<closure_record::Recorded> {
        let recorded = self.client.with_closure_record(&self.bases, key, |b| {
            closure_record::decode(b, self.bases.len(), &self.sd)
        })?;
        match recorded {
            Ok(Decoded::Fresh(rec)) => {
                self.client.set_origins(&self.bases, &rec.caches);
                Some(rec)
            }
            Ok(Decoded::Stale) => None,
            Err(e) => {
                self.warnings.push(damaged(e));
                None
            }
        }
    }

    /// A walk through these caches.
    fn walk<'a>(&'a self, opts: &'a LoadOptions) -> Walk<'a> {
        Walk {
            client: &self.client,
            bases: &self.bases,
            sd: &self.sd,
            progress: opts.http.progress.as_ref(),
        }
    }

    /// The narinfos a walk fetched are written to the narinfo cache only when the walk
    /// and the checks on its closure (`assembled`) hold; otherwise they are dropped, so
    /// that a fixed server is asked again next run. A cache that cannot be written is a
    /// warning.
    fn keep_if_whole<T>(&mut self, assembled: Result<T, LoadError>) -> Result<T, LoadError> {
        match assembled {
            Ok(a) => {
                if let Err(e) = self.client.save() {
                    self.warnings
                        .push(LoadWarning::NarinfoCacheNotSaved { problem: e });
                }
                Ok(a)
            }
            Err(e) => {
                self.client.discard_unsaved();
                Err(e)
            }
        }
    }

    /// Keep `closure` (one root, its own warnings only) as a record under `key`, when
    /// there is a narinfo cache; one that cannot be written is a warning.
    fn record(&mut self, closure: &Closure, cache_of: &CacheOf, key: &str) {
        if !self.client.has_cache() {
            return;
        }
        // `None` (not recordable) cannot happen for a finished walk; it would only mean
        // walking again next time.
        if let Some(record) =
            closure_record::encode(closure, |p| cache_of.get(p.hash_bytes()).copied())
        {
            if let Err(e) = self.client.save_closure_record(&self.bases, key, &record) {
                self.warnings
                    .push(LoadWarning::NarinfoCacheNotSaved { problem: e });
            }
        }
    }

    /// This run's warnings before the closure's own.
    fn put_warnings_first(&mut self, closure: &mut Closure) {
        let own = std::mem::take(&mut closure.warnings);
        closure.warnings = std::mem::take(&mut self.warnings);
        closure.warnings.extend(own);
    }
}

/// The union of the closures of `roots` (a package set; `origin` names it in
/// messages), walked once: a narinfo shared by many closures is fetched once, and
/// narinfos known from the narinfo cache are not fetched at all. The closure's
/// declared roots are `roots`, in their order.
pub fn load_roots(
    roots: &[StorePath],
    origin: &str,
    opts: &LoadOptions,
) -> Result<Closure, LoadError> {
    let mut caches = Caches::connect(cache_bases(None, opts), opts, origin)?;
    // The union walked before is one record, keyed by the set of roots.
    let key = roots_key(roots);
    let recorded = caches.recorded(&key, |problem| LoadWarning::RecordDamaged {
        of: origin.to_string(),
        set: true,
        problem,
    });
    if let Some(rec) = recorded {
        let mut closure = rec.closure;
        caches.put_warnings_first(&mut closure);
        closure.declared_roots = roots.to_vec();
        closure.origin = origin.to_string();
        opts.timings
            .step("http: the walked union read from its record");
        return Ok(closure);
    }
    let jobs: Vec<(String, Option<StorePath>)> = roots
        .iter()
        .map(|r| (r.hash_part().to_string(), Some(r.clone())))
        .collect();
    let result = caches.walk(opts).run_many(&jobs, origin);
    opts.timings.step("http: narinfo walk");
    caches.client.end_lookups();
    // As for one root: the narinfos are kept only when the whole walk holds (no
    // failure, sizes within 2^64 - 1), so a fixed server is asked again next run.
    let assembled = result.and_then(|(infos, _)| {
        let (closure, cache_of) = assemble(infos, origin.to_string(), &caches.sd, &caches.bases);
        super::refuse_size_overflow(&closure, Path::new(origin))?;
        Ok((closure, cache_of))
    });
    let (mut closure, cache_of) = caches.keep_if_whole(assembled)?;
    // A record holds one root; the set's roots are put back when it is read.
    closure.declared_roots = roots.iter().take(1).cloned().collect();
    caches.record(&closure, &cache_of, &key);
    opts.timings.step("http: narinfo cache written");
    closure.declared_roots = roots.to_vec();
    caches.put_warnings_first(&mut closure);
    Ok(closure)
}

/// The narinfo cache's key of the union of the closures of `roots`: a digest of
/// their sorted hash parts, apart from any root's own hash.
fn roots_key(roots: &[StorePath]) -> String {
    use sha2::{Digest, Sha256};
    let mut hashes: Vec<&str> = roots.iter().map(StorePath::hash_part).collect();
    hashes.sort_unstable();
    hashes.dedup();
    let mut h = Sha256::new();
    for x in hashes {
        h.update(x.as_bytes());
        h.update(b"\n");
    }
    let digest = h.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("set-{hex}")
}

/// The closure of a finished walk (every narinfo's path, with the narinfos' warnings
/// as its own; no roots yet) and which cache each path came from (index into
/// `bases`).
fn assemble(
    infos: Vec<(NarInfo, Arc<str>)>,
    origin: String,
    sd: &StoreDir,
    bases: &[Arc<str>],
) -> (Closure, CacheOf) {
    let mut closure = Closure::new(sd.clone(), SourceKind::HttpCache, origin);
    let mut cache_of = CacheOf::default();
    for (n, base) in infos {
        if let Some(i) = bases.iter().position(|b| *b == base) {
            cache_of.insert(*n.info.path.hash_bytes(), i as u32);
        }
        closure.warnings.extend(n.warnings);
        closure.insert(n.info);
    }
    (closure, cache_of)
}

/// The closure's root is the path the user named (when named by more than a hash).
fn check_root(
    closure: &Closure,
    root_hash: &str,
    want: Option<&StorePath>,
    input: &str,
) -> Result<(), LoadError> {
    let (Some(w), Some(root)) = (want, closure.declared_roots.first()) else {
        return Ok(());
    };
    if w == root {
        return Ok(());
    }
    let sd = &closure.store_dir;
    Err(LoadError::Invalid {
        path: PathBuf::from(input),
        message: format!(
            "the caches' narinfo for hash {root_hash} describes {}, not {}",
            sd.display(root),
            sd.display(w)
        ),
    })
}

/// The store directory all caches agree on (and `--store-dir`, when given).
fn store_dir(
    client: &HttpClient,
    bases: &[String],
    opts: &LoadOptions,
    warnings: &mut Vec<LoadWarning>,
) -> Result<StoreDir, LoadError> {
    let mut found: Option<(StoreDir, String)> = None;
    for base in bases {
        let url = format!("{base}/nix-cache-info");
        let Some(text) = client.get_text(&url, 1 << 20)? else {
            warnings.push(LoadWarning::NoCacheInfo { url });
            continue;
        };
        let Some(sd) = parse_cache_info(&text, Path::new(&url))? else {
            continue;
        };
        if let Some(given) = &opts.store_dir {
            if &sd != given {
                return Err(LoadError::Invalid {
                    path: PathBuf::from(&url),
                    message: format!(
                        "the cache's store directory is {sd}, but the store directory asked for \
                         (--store-dir, or a package set's paths) is {given}"
                    ),
                });
            }
        }
        match &found {
            Some((other, other_url)) if other != &sd => {
                return Err(LoadError::Invalid {
                    path: PathBuf::from(&url),
                    message: format!(
                        "the cache's store directory is {sd}, but {other_url} says {other}"
                    ),
                })
            }
            Some(_) => {}
            None => found = Some((sd, url)),
        }
    }
    Ok(match found {
        Some((sd, _)) => sd,
        None => opts.store_dir_or_default(),
    })
}

/// One closure walk.
struct Walk<'a> {
    client: &'a Arc<HttpClient>,
    bases: &'a [Arc<str>],
    sd: &'a StoreDir,
    progress: Option<&'a WalkProgress>,
}

/// Up to `depth` queued jobs: waits for the first, then takes what is queued. None
/// when the walk is over.
fn take_jobs(rx: &mpsc::Receiver<Job>, depth: usize) -> Vec<Job> {
    let Ok(first) = rx.recv() else {
        return Vec::new();
    };
    let mut jobs = vec![first];
    while jobs.len() < depth {
        match rx.try_recv() {
            Ok(j) => jobs.push(j),
            Err(_) => break,
        }
    }
    jobs
}

/// The jobs with what was found for them, settled answers first and failures last (the
/// walk keeps the narinfos before it stops at a failure). Jobs not asked (after a
/// failure) are left out; without a failure among them, which would leave the walk
/// waiting for ever, they fail.
fn answered(jobs: Vec<Job>, found: Vec<Option<Found>>, base: &str) -> Vec<(Job, Found)> {
    let ends = found
        .iter()
        .any(|f| matches!(f, Some(Found::Failed(_) | Found::Missing)));
    let mut out: Vec<(Job, Found)> = jobs
        .into_iter()
        .zip(found)
        .filter_map(|(j, f)| match f {
            Some(f) => Some((j, f)),
            None if ends => None,
            None => {
                let failed = Found::Failed(FetchError {
                    url: narinfo_url(base, &j.hash),
                    message: "the HTTP client did not ask for it".into(),
                });
                Some((j, failed))
            }
        })
        .collect();
    out.sort_by_key(|(_, f)| !matches!(f, Found::Narinfo(_)));
    out
}

/// A narinfo to find: its hash, the store path a reference names (the root may be a
/// bare hash), and who references it with the URL of its narinfo.
struct Job {
    hash: String,
    want: Option<StorePath>,
    referrer: Option<(StorePath, String)>,
}

/// Every narinfo of a closure with the cache it came from, and the base URL that had
/// the root.
type Walked = (Vec<(NarInfo, Arc<str>)>, String);

/// What a worker found for a job.
enum Found {
    Narinfo(CachedNarinfo),
    Missing,
    Failed(FetchError),
}

impl Walk<'_> {
    /// Every narinfo of the closure of `root_hash`, and the base URL that had the root.
    fn run(&self, root_hash: &str, input: &str) -> Result<Walked, LoadError> {
        let root = [(root_hash.to_string(), None)];
        self.run_many(&root, input)
    }

    /// Every narinfo of the union of the closures of `roots` (hash, and the store path
    /// when known), each fetched once, and the base URL that had the first root.
    fn run_many(
        &self,
        roots: &[(String, Option<StorePath>)],
        input: &str,
    ) -> Result<Walked, LoadError> {
        let connections = self.client.config().connections.max(1);
        let pipelined = self.bases.iter().all(|b| HttpClient::pipelines(b));
        let (workers, depth) = if pipelined {
            (connections.min(PIPE_CONNECTIONS), PIPE_DEPTH)
        } else {
            (connections, 1)
        };
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let job_rx = Mutex::new(job_rx);
        let (done_tx, done_rx) = mpsc::channel::<Vec<(Job, Found)>>();
        // Set when the walk is over (done or failed): workers stop asking.
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..workers {
                let done_tx = done_tx.clone();
                let (job_rx, stop) = (&job_rx, &stop);
                s.spawn(move || {
                    let mut pipes = Pipes::default();
                    loop {
                        let jobs = match job_rx.lock() {
                            Ok(rx) => take_jobs(&rx, depth),
                            Err(_) => return,
                        };
                        if jobs.is_empty() {
                            return;
                        }
                        // A panic in the transport must not leave the walk waiting for
                        // answers that never come: it is these jobs' failure (and their
                        // connections are not used again).
                        let hashes: Vec<String> = jobs.iter().map(|j| j.hash.clone()).collect();
                        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            self.fetch(&hashes, &mut pipes, stop)
                        }));
                        let found = found.unwrap_or_else(|_| {
                            pipes = Pipes::default();
                            let failed = |h: &String| {
                                Found::Failed(FetchError {
                                    url: narinfo_url(&self.bases[0], h),
                                    message: "the HTTP client failed (a panic)".into(),
                                })
                            };
                            hashes.iter().map(|h| Some(failed(h))).collect()
                        });
                        if done_tx.send(answered(jobs, found, &self.bases[0])).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(done_tx);
            // Dropping the job sender (on return) stops the workers.
            let job_tx = job_tx;
            let walked = self.drive(roots, input, &job_tx, &done_rx);
            stop.store(true, Ordering::Relaxed);
            walked
        })
    }

    /// The walking thread: hands unknown narinfos to the workers, parses what comes back.
    fn drive(
        &self,
        roots: &[(String, Option<StorePath>)],
        input: &str,
        jobs: &mpsc::Sender<Job>,
        done: &mpsc::Receiver<Vec<(Job, Found)>>,
    ) -> Result<Walked, LoadError> {
        let mut seen: FxHashSet<String> = FxHashSet::default();
        let mut ready: VecDeque<(Job, CachedNarinfo, bool)> = VecDeque::new();
        let mut in_flight = 0usize;
        let mut out: Vec<(NarInfo, Arc<str>)> = Vec::new();
        let mut root_base = String::new();
        let submit =
            |job: Job, ready: &mut VecDeque<(Job, CachedNarinfo, bool)>, in_flight: &mut usize| {
                match self.known(&job.hash) {
                    Some(n) => ready.push_back((job, n, false)),
                    None => {
                        // The workers outlive the walk; a send cannot fail before it ends.
                        let _ = jobs.send(job);
                        *in_flight += 1;
                    }
                }
            };
        for (hash, want) in roots {
            if seen.insert(hash.clone()) {
                let job = Job {
                    hash: hash.clone(),
                    want: want.clone(),
                    referrer: None,
                };
                submit(job, &mut ready, &mut in_flight);
            }
        }
        loop {
            while let Some((job, n, fetched)) = ready.pop_front() {
                let url = narinfo_url(&n.base, &job.hash);
                let parsed = parse_narinfo(&n.text, Path::new(&url), self.sd)?;
                let named = job
                    .want
                    .as_ref()
                    .map_or(parsed.info.path.hash_part() == job.hash, |w| {
                        *w == parsed.info.path
                    });
                if !named {
                    let asked = match &job.want {
                        Some(w) => self.sd.display(w),
                        None => format!("hash {}", job.hash),
                    };
                    return Err(LoadError::Invalid {
                        path: PathBuf::from(&url),
                        message: format!(
                            "it describes {}, not {asked}",
                            self.sd.display(&parsed.info.path),
                        ),
                    });
                }
                self.client.remember(&job.hash, &n, fetched);
                if job.referrer.is_none() && root_base.is_empty() {
                    root_base = n.base.to_string();
                }
                for r in &parsed.info.references {
                    if seen.insert(r.hash_part().to_string()) {
                        let next = Job {
                            hash: r.hash_part().to_string(),
                            want: Some(r.clone()),
                            referrer: Some((parsed.info.path.clone(), url.clone())),
                        };
                        submit(next, &mut ready, &mut in_flight);
                    }
                }
                out.push((parsed, Arc::clone(&n.base)));
                if let Some(p) = self.progress {
                    p(out.len() as u64, seen.len() as u64);
                }
            }
            if in_flight == 0 {
                return Ok((out, root_base));
            }
            let Ok(answers) = done.recv() else {
                return Err(LoadError::Invalid {
                    path: PathBuf::from(input),
                    message: "the narinfo workers stopped".into(),
                });
            };
            for (job, found) in answers {
                in_flight -= 1;
                match found {
                    Found::Narinfo(n) => ready.push_back((job, n, true)),
                    Found::Failed(e) => return Err(e.into()),
                    Found::Missing => return Err(self.missing(&job, input)),
                }
            }
        }
    }

    /// A narinfo known without a request: this run, or the narinfo cache, in cache order.
    fn known(&self, hash: &str) -> Option<CachedNarinfo> {
        if let Some(n) = self.client.memo_get(hash) {
            if self.bases.iter().any(|b| **b == *n.base) {
                return Some(n);
            }
        }
        self.bases
            .iter()
            .find_map(|b| self.client.known_narinfo(b, hash))
    }

    /// Ask each cache in turn for the narinfos of `hashes` (those not found in one
    /// go to the next). `None` for a hash not asked because another failed.
    fn fetch(&self, hashes: &[String], pipes: &mut Pipes, stop: &AtomicBool) -> Vec<Option<Found>> {
        let mut found: Vec<Option<Found>> = (0..hashes.len()).map(|_| None).collect();
        let mut left: Vec<usize> = (0..hashes.len()).collect();
        for base in self.bases {
            if left.is_empty() {
                break;
            }
            let asked: Vec<&str> = left.iter().map(|&i| hashes[i].as_str()).collect();
            let answers = self.client.fetch_narinfos(pipes, base, &asked, stop);
            let mut next = Vec::new();
            let mut failed = false;
            for (i, a) in left.into_iter().zip(answers) {
                match a {
                    Some(Ok(Some(n))) => found[i] = Some(Found::Narinfo(n)),
                    Some(Ok(None)) => next.push(i),
                    Some(Err(e)) => {
                        found[i] = Some(Found::Failed(e));
                        failed = true;
                    }
                    None => {}
                }
            }
            if failed {
                // The walk ends at the failure: the rest need not be asked.
                return found;
            }
            left = next;
        }
        for i in left {
            found[i] = Some(Found::Missing);
        }
        found
    }

    /// The error for a narinfo no cache has.
    fn missing(&self, job: &Job, input: &str) -> LoadError {
        let tried: Vec<String> = self
            .bases
            .iter()
            .map(|b| narinfo_url(b, &job.hash))
            .collect();
        match &job.referrer {
            None => LoadError::Invalid {
                path: PathBuf::from(input),
                message: format!(
                    "no cache has a narinfo for {} (404 from {})",
                    job.hash,
                    tried.join(", ")
                ),
            },
            Some((from, url)) => LoadError::Invalid {
                path: PathBuf::from(url),
                message: format!(
                    "{} references {}, but no cache has its narinfo (404 from {})",
                    self.sd.display(from),
                    job.want
                        .as_ref()
                        .map_or_else(|| job.hash.clone(), |w| self.sd.display(w)),
                    tried.join(", ")
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_inputs_go_to_the_caches() {
        let none = LoadOptions::default();
        let with = LoadOptions {
            http: HttpInputs {
                caches: vec!["http://127.0.0.1:1".into()],
                ..HttpInputs::default()
            },
            ..LoadOptions::default()
        };
        let h = "x71ahacbysflg2pf8638mdh69871353b";
        assert!(wants(&format!("http://c/{h}.narinfo"), &none));
        assert!(!wants(h, &none));
        assert!(wants(h, &with));
        assert!(wants(&format!("{h}-libfoo-3.2"), &with));
        assert!(wants(&format!("/nix/store/{h}-libfoo-3.2"), &with));
        assert!(!wants("closure.json", &with));
        assert!(!wants("./result", &with));
    }

    #[test]
    fn a_cache_url_without_a_narinfo_is_refused_by_name() {
        for bad in ["http://c", "http://c/", "http://c/nix-cache-info"] {
            let e = load(bad, &LoadOptions::default()).unwrap_err().to_string();
            assert!(e.starts_with(bad.trim_end_matches('/')), "{e}");
            assert!(e.contains("URL/<hash>.narinfo"), "{e}");
        }
    }

    #[test]
    fn no_cache_no_load() {
        let e = load("x71ahacbysflg2pf8638mdh69871353b", &LoadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("--cache URL"), "{e}");
    }
}

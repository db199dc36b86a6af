//! The one conversion of the command line and the environment into plain options: a
//! [`Config`] is built once per run from clap's global flags and the variables nixcut
//! and the local Nix read (`NIX_STORE_DIR`, `NIX_STATE_DIR`, `NIXCUT_NO_STORE_DB`,
//! `NIXCUT_TIMINGS`, `NO_COLOR`, `XDG_CACHE_HOME`/`HOME`, GitHub Actions'
//! `GITHUB_STEP_SUMMARY` and `GITHUB_ACTIONS`), and handed to every command. Nothing
//! below it reads the environment or sees clap's types; the HTTP client is made here,
//! once, when an input may be read over HTTP.

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::Arc;

use nixcut::evidence::ScanCache;
use nixcut::http::{is_http_url, HttpClient, HttpConfig};
use nixcut::load::LoadOptions;
use nixcut::render::{Format, Style};
use nixcut::store::StoreDir;
use nixcut::timing::Timings;

use super::args::{Command, FormatArg, GlobalArgs};

/// Everything a command takes from the command line's global flags and the
/// environment, read once.
#[derive(Debug, Clone)]
pub struct Config {
    /// `--format`.
    pub format: Format,
    /// Width, colour and JSON indentation of the output.
    pub style: Style,
    /// `--quiet`: no warnings on stderr.
    pub quiet: bool,
    /// `--root` (the first; only `store` takes several).
    pub root: Option<String>,
    /// Every `--root` given.
    pub roots: Vec<String>,
    /// `--store-root`.
    pub store_root: Option<PathBuf>,
    /// `--rules FILE`.
    pub rules_file: Option<PathBuf>,
    /// How inputs are read (`opts.http` is filled per input by `http::wire`).
    pub load: LoadOptions,
    /// `--cache URL`s, in order.
    pub caches: Vec<String>,
    /// The one HTTP client of the run: made when an input may be read over HTTP.
    pub http: Option<Arc<HttpClient>>,
    /// `--no-cache`: neither read nor write the caches.
    pub no_cache: bool,
    /// `<cache home>/nixcut` with its symlinks resolved, the cache home being
    /// `$XDG_CACHE_HOME`, else `$HOME/.cache` (relative values ignored); `None` without
    /// one, or when it is in a store (nixcut never writes into a store: the run goes on
    /// without caches, with a warning). Not created here.
    pub cache_dir: Option<PathBuf>,
    /// What reading the environment found wrong but worked around (a cache directory
    /// or `$TMPDIR` in a store), for the caller to print.
    pub warnings: Vec<String>,
    /// `$GITHUB_STEP_SUMMARY`, when set and not empty.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_ACTIONS=true`: failures are also `::error` annotations.
    pub github_actions: bool,
    /// Step timings on stderr (`NIXCUT_TIMINGS=1`), passed to the library.
    pub timings: Timings,
}

impl Config {
    /// Read the global flags and the environment; `command` says which inputs may be
    /// read over HTTP.
    pub fn new(g: &GlobalArgs, command: &Command) -> Config {
        let timings = if env_flag("NIXCUT_TIMINGS") {
            Timings::on()
        } else {
            Timings::off()
        };
        let load = LoadOptions {
            store_dir: g.store_dir.as_deref().map(StoreDir::new),
            store_root: g.store_root.clone(),
            no_store_db: env_flag(nixcut::load::store_db::NO_STORE_DB_ENV),
            nix_store_dir: std::env::var("NIX_STORE_DIR")
                .ok()
                .filter(|d| !d.is_empty()),
            nix_state_dir: std::env::var_os("NIX_STATE_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            timings: timings.clone(),
            ..LoadOptions::default()
        };
        // Temporary files (large NAR entries spooled by the scanner, a piped input's
        // copy) never go into a store: a $TMPDIR that resolves into one is dropped for
        // this run, before any thread is started, so /tmp is used.
        let mut warnings = Vec::new();
        if let Some(warning) = super::guard::tmpdir_in_store(&load) {
            warnings.push(warning);
            std::env::remove_var("TMPDIR");
        }
        let cache_dir = if g.no_cache {
            None
        } else {
            cache_home().and_then(|home| match super::guard::cache_dir(&load, &home) {
                Ok(dir) => Some(dir),
                Err(warning) => {
                    warnings.push(warning);
                    None
                }
            })
        };
        let over_http = !g.caches.is_empty() || inputs(command).iter().any(|i| is_http_url(i));
        let http = over_http.then(|| {
            Arc::new(HttpClient::new(HttpConfig {
                timeout: g.http_timeout,
                retries: g.http_retries,
                connections: usize::from(g.http_connections),
                narinfo_cache: cache_dir.as_ref().map(|d| d.join("narinfo")),
                ..HttpConfig::default()
            }))
        });
        Config {
            format: format_of(g.format),
            style: style_for(g),
            quiet: g.quiet,
            root: g.root.first().cloned(),
            roots: g.root.clone(),
            store_root: g.store_root.clone(),
            rules_file: g.rules.clone(),
            load,
            caches: g.caches.clone(),
            http,
            no_cache: g.no_cache,
            cache_dir,
            warnings,
            step_summary: std::env::var_os("GITHUB_STEP_SUMMARY")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            github_actions: std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true"),
            timings,
        }
    }

    /// The scan cache: `<cache dir>/scan` (`None` with `no_cache`, or without a cache
    /// directory).
    pub fn scan_cache(&self, no_cache: bool) -> Option<ScanCache> {
        if no_cache {
            return None;
        }
        Some(ScanCache::at(self.cache_dir.as_ref()?.join("scan")))
    }
}

/// Whether an environment variable is set to something other than empty or `0`.
fn env_flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The library's format for `--format`.
fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Table => Format::Table,
        FormatArg::Json => Format::Json,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Html => Format::Html,
        FormatArg::Dot => Format::Dot,
    }
}

/// Every input a command loads (ROOT, PATH, OLD, NEW, OTHER, baselines, `--graph`).
fn inputs(command: &Command) -> Vec<&str> {
    let mut v: Vec<&String> = Vec::new();
    match command {
        Command::Why(a) => v.push(&a.input),
        Command::Snapshot(a) => v.push(&a.input),
        Command::Diff(a) => v.extend([&a.old, &a.new].into_iter().chain(&a.graphs)),
        Command::Check(a) => {
            v.push(&a.input);
            v.extend(a.baseline.iter().chain(&a.against).chain(&a.graphs));
        }
        Command::Refs(a) => v.extend(a.paths.iter().chain(&a.closure)),
        Command::Split(a) => v.extend(std::iter::once(&a.path).chain(&a.for_root)),
        Command::Gpu(a) => v.push(&a.input),
        Command::Browse(a) => v.push(&a.input),
        Command::Rules(_) => {}
        Command::Store(a) => v.extend(&a.input),
    }
    v.into_iter().map(String::as_str).collect()
}

fn style_for(g: &GlobalArgs) -> Style {
    let tty = io::stdout().is_terminal();
    let color = match g.color.as_str() {
        "always" => true,
        "never" => false,
        _ => tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    // Tables fit the terminal; a pipe, a file, or a terminal that reports no usable
    // width (a pseudo-terminal with 0 columns, as a Nix builder gets) gets 120 columns.
    let width = if tty {
        comfy_table::Table::new().width().filter(|&w| w >= 40)
    } else {
        None
    };
    Style {
        width: Some(width.unwrap_or(120)),
        color,
        pretty_json: tty,
        long: false,
    }
}

/// `$XDG_CACHE_HOME`, else `$HOME/.cache`; relative values are ignored, as the XDG
/// base-directory specification says.
fn cache_home() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|v| v.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| h.is_absolute())
                .map(|h| h.join(".cache"))
        })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::args::Cli;
    use super::Config;

    fn config(args: &[&str]) -> Config {
        let cli = Cli::try_parse_from(args).expect("valid command line");
        Config::new(&cli.global, &cli.command)
    }

    #[test]
    fn the_http_client_is_made_only_when_an_input_may_come_over_http() {
        // --no-cache: the client opens no narinfo cache (tests never touch ~/.cache).
        let file = config(&["nixcut", "--no-cache", "why", "closure.json"]);
        assert!(file.http.is_none());
        let url = config(&["nixcut", "--no-cache", "why", "https://c.example/x.narinfo"]);
        assert!(url.http.is_some());
        let cache = config(&[
            "nixcut",
            "--no-cache",
            "--cache",
            "https://c.example",
            "gpu",
            "x",
        ]);
        assert!(cache.http.is_some());
        assert_eq!(cache.caches, ["https://c.example"]);
        let baseline = config(&[
            "nixcut",
            "--no-cache",
            "check",
            "a.json",
            "--baseline",
            "http://c.example/y.narinfo",
        ]);
        assert!(baseline.http.is_some());
    }

    #[test]
    fn global_flags_become_plain_options() {
        let c = config(&[
            "nixcut",
            "--no-cache",
            "--quiet",
            "--format",
            "json",
            "--root",
            "rocblas",
            "--store-dir",
            "/gnu/store",
            "rules",
        ]);
        assert!(c.quiet && c.no_cache);
        assert_eq!(c.format, nixcut::render::Format::Json);
        assert_eq!(c.root.as_deref(), Some("rocblas"));
        assert_eq!(
            c.load.store_dir.as_ref().map(|d| d.as_str()),
            Some("/gnu/store")
        );
        // --no-cache: no scan cache, whatever the cache home.
        assert!(c.scan_cache(c.no_cache).is_none());
    }
}

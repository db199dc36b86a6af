//! How inputs are read ([`LoadOptions`]): the store directory, where its files
//! physically are, which `nix` to ask, and how much of one input may be read.

use std::path::PathBuf;

use crate::store::StoreDir;

use std::sync::Arc;

use crate::http::HttpClient;

/// How to read inputs: which store directory the paths are in, where its files
/// physically are, and which `nix` to ask about the live store.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The logical store directory (`--store-dir`). `None`: take it from the input when
    /// the input says, else `/nix/store`.
    pub store_dir: Option<StoreDir>,
    /// Where the store directory's files physically are (`--store-root`): the store
    /// directory `D` is found at `<store_root>/D`. `None`: at `D` itself.
    pub store_root: Option<PathBuf>,
    /// The `nix` binary used to query the live store.
    pub nix: NixCommand,
    /// Never read the local store database; always ask `nix` (the binary sets it
    /// from `NIXCUT_NO_STORE_DB=1`). See [`store_db`].
    pub no_store_db: bool,
    /// The local Nix's store directory (the binary passes `$NIX_STORE_DIR`); `None`:
    /// `/nix/store`. Only the store database of that directory is read.
    pub nix_store_dir: Option<String>,
    /// The local Nix's state directory (the binary passes `$NIX_STATE_DIR`); `None`:
    /// `/nix/var/nix`.
    pub nix_state_dir: Option<PathBuf>,
    /// The most bytes read from one input file or stream; `None`:
    /// [`DEFAULT_MAX_INPUT_BYTES`].
    pub max_input_bytes: Option<u64>,
    /// Binary caches over HTTP (`--cache URL`) and the client to reach them.
    pub http: HttpInputs,
    /// Where the loading steps report their times (`NIXCUT_TIMINGS`).
    pub timings: crate::timing::Timings,
    /// The roots the command asks about (`--root`), as the user named them. A dataset
    /// too large to hold whole (a narinfo dataset in Parquet) is then read as their
    /// closure only; every other input ignores them. Empty: the whole input.
    pub roots: Vec<String>,
}

/// The most bytes nixcut reads from one input file or stream: 2 GiB, thirty times the
/// `nix path-info --json -r` of a 100,000-path closure. Endless or huge inputs
/// (`/dev/zero`, a disk image that begins like JSON) stop here instead of filling memory.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 2 << 30;

/// How standard input (`-`) is named in messages.
pub(super) const STDIN_NAME: &str = "standard input";

impl LoadOptions {
    /// The store directory to use when the input does not name one.
    pub fn store_dir_or_default(&self) -> StoreDir {
        self.store_dir.clone().unwrap_or_default()
    }

    /// The cap on bytes read from one input.
    pub fn max_input(&self) -> u64 {
        self.max_input_bytes.unwrap_or(DEFAULT_MAX_INPUT_BYTES)
    }

    /// Where the store directory's files are on this machine.
    pub fn physical_store_dir(&self) -> PathBuf {
        crate::store::physical_path(
            self.store_root.as_deref(),
            self.store_dir_or_default().as_str(),
        )
    }
}

/// Called during the walk with (narinfos read, paths known so far).
pub type WalkProgress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// The HTTP side of [`LoadOptions`]: which caches, and the client to reach them.
#[derive(Clone, Default)]
pub struct HttpInputs {
    /// Base URLs of the caches to look store paths up in, in order (`--cache`).
    pub caches: Vec<String>,
    /// The client (shared with the file source); `None`: a default one per load.
    pub client: Option<Arc<HttpClient>>,
    /// Progress of the narinfo walk.
    pub progress: Option<WalkProgress>,
}

impl std::fmt::Debug for HttpInputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpInputs")
            .field("caches", &self.caches)
            .field("client", &self.client)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// The `nix` program to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NixCommand {
    /// The program: a name looked up in `PATH` or a path.
    pub program: PathBuf,
}

impl Default for NixCommand {
    fn default() -> Self {
        NixCommand {
            program: PathBuf::from("nix"),
        }
    }
}

impl NixCommand {
    /// A command for `program`.
    pub fn new(program: impl Into<PathBuf>) -> NixCommand {
        NixCommand {
            program: program.into(),
        }
    }
}

//! clap definitions. `--help` is the user's manual: every option says what it is for.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Explain what makes a Nix closure big, show which references are needed at run
/// time, and gate closure size in CI.
///
/// Inputs (ROOT, PATH, OLD, NEW, OTHER) may be: a store path or a symlink to one
/// (`./result`, read from the store's database, read-only, or else through the local
/// `nix`; NIXCUT_NO_STORE_DB=1 always asks `nix`); a `nix path-info --json -r` file of
/// any Nix version; a closureInfo directory or its `registration` file; a `nix-store
/// --dump-db` dump; an `exportReferencesGraph` file or structured-attrs `.attrs.json`;
/// `nix-store --query --graph` output; a binary cache directory; with `--cache URL`, a
/// store path, base name or hash in a binary cache over HTTP(S), or `URL/<hash>.narinfo`.
/// The format is detected from the content. `-` reads standard input; pipes and process substitution
/// (`<(nix path-info --json -r …)`) are read as streams.
#[derive(Debug, Parser)]
#[command(name = "nixcut", version, max_term_width = 100)]
#[command(after_help = "Examples:
  nixcut why ./result                         what makes this closure big
  nixcut why closure.json --top 10            the ten paths that free the most if dropped
  nixcut why ./result /nix/store/…-rocblas    every chain from the root to rocblas
  nixcut why closure.json --format json       the whole report as JSON (evidence for the first 25)
  nixcut why ./result --format json --evidence-paths all   evidence for every path
  nixcut refs ./result                        where each reference of ./result sits, with verdicts
  nixcut refs --closure ./result --format json  the evidence of every path in the closure
  nixcut refs --closure ./result --explain /nix/store/…/lib/rocblas/library/…_gfx90a.co
                                              does ./result ever open that file, and how
  nixcut why ./result --format html > closure.html   a treemap to open in a browser
  nixcut split rocblas --for ./result         outputs rocblas could be split into, and the Nix code
  nixcut split rocblas --for ./result --gpu-targets gfx1030  keep one GPU architecture
  nixcut snapshot ./result -o base.json       freeze a baseline for CI
  nixcut diff base.json ./result              what changed, by package
  nixcut check ./result --baseline base.json --max-growth 5%
  nixcut check rocm.json --against cuda.json --max-ratio 2
  nixcut rules --rules my-rules.toml          the classification rules in force
  nixcut why --cache https://cache.example.org /nix/store/…-llama-cpp-rocm
                                              the same, from a binary cache over HTTPS

Environment: NO_COLOR (no colour), NIXCUT_STORE_DIR (as --store-dir), XDG_CACHE_HOME
(the caches), NIXCUT_NO_STORE_DB=1 (ask `nix`, not the store's database),
NIXCUT_TIMINGS=1 (each step's time, page faults and peak memory on stderr).

Exit status: 0 success, 1 a check failed, 2 an error (bad input, bad usage).")]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// `--help` headings of the options every command takes, so that a subcommand's own
/// options come first and the shared ones are set apart.
const GLOBAL: &str = "Options of every command";
const HTTP: &str = "Binary caches over HTTP (every command)";

/// Options every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Output format: table, json and markdown for every command; html (one
    /// self-contained page) for why, diff, split and gpu; dot (Graphviz) for why. A
    /// command refuses a format it does not have before doing any work.
    #[arg(long, global = true, help_heading = GLOBAL, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,

    /// In an input holding several roots, use this one: a store path or `./result-x`
    /// symlink, base name, hash (or its first characters) or unique package name
    /// (`rocblas`). Without it, every path nothing else references is a root.
    /// `nixcut store` takes it several times: each a GC root to add (a store path).
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "NAME")]
    pub root: Vec<String>,

    /// The logical store directory of the input (its paths start with it).
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "DIR", env = "NIXCUT_STORE_DIR")]
    pub store_dir: Option<String>,

    /// Where the store's files physically are (a chroot store or a mounted image):
    /// `<store-root>/<store-dir>/<hash>-<name>`. Store paths there are read from
    /// `<store-root>/nix/var/nix/db/db.sqlite`, read-only, without running `nix`.
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "DIR")]
    pub store_root: Option<PathBuf>,

    /// Colour: auto (only on a terminal, and not when NO_COLOR is set), always, never.
    #[arg(long, global = true, help_heading = GLOBAL, default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,

    /// Do not print warnings on stderr.
    #[arg(long, short, global = true, help_heading = GLOBAL)]
    pub quiet: bool,

    /// File-class rules to use ahead of the built-in ones (TOML `[[class]]` rows with
    /// `name`, `under`/`name_is`/`name_ends_with`/`name_starts_with` and `class`; see
    /// `nixcut rules --help`). A user rule overrides a built-in class.
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "FILE")]
    pub rules: Option<PathBuf>,

    /// Neither read nor write the caches under $XDG_CACHE_HOME/nixcut (file scans, and
    /// the narinfos and walked closures of HTTP binary caches).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub no_cache: bool,

    /// Look store paths up in this binary cache over HTTP(S) (repeatable: tried in
    /// order, like Nix's substituters). ROOT (and PATH, OLD, NEW, OTHER) may then be a
    /// store path, base name `<hash>-<name>` or hash; a file input is still read as a
    /// file. A ROOT given as `URL/<hash>.narinfo` needs no --cache. narinfos are fetched
    /// concurrently and cached under $XDG_CACHE_HOME/nixcut/narinfo with a record of
    /// each closure walked (a second run reads it and asks only for `nix-cache-info`);
    /// NARs and `.ls` listings only when file-level evidence is asked for (`why`: the
    /// referrers of the first 25 paths, see --evidence-paths), streamed, never unpacked.
    #[arg(long = "cache", global = true, help_heading = HTTP, value_name = "URL", value_parser = parse_cache_url)]
    pub caches: Vec<String>,

    /// HTTP: seconds a request may take before it is retried (a NAR download taking
    /// longer goes on from where it stopped, with a Range request).
    #[arg(long, global = true, help_heading = HTTP, value_name = "SECONDS", default_value = "30", value_parser = parse_seconds)]
    pub http_timeout: std::time::Duration,

    /// HTTP: how many times a request is retried after a 5xx answer or a connection
    /// error (with exponential backoff from 0.1 s).
    #[arg(long, global = true, help_heading = HTTP, value_name = "N", default_value_t = 4)]
    pub http_retries: u32,

    /// HTTP: how many requests run at once (connections are kept alive).
    #[arg(long, global = true, help_heading = HTTP, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub http_connections: u16,
}

fn parse_cache_url(s: &str) -> Result<String, String> {
    let lower = s.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
        .ok_or_else(|| {
            format!("`{s}` is not an http:// or https:// URL (a cache directory is given as ROOT itself)")
        })?;
    if rest.trim_matches('/').is_empty() {
        return Err(format!("`{s}` names no host"));
    }
    Ok(s.to_string())
}

fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('s')
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if v.is_finite() && v > 0.0 && v < 1e6 {
        Ok(std::time::Duration::from_secs_f64(v))
    } else {
        Err(format!("`{s}` must be a positive number of seconds"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Aligned table for a terminal.
    Table,
    /// The JSON contract (every document has `schema_version`).
    Json,
    /// GitHub-flavoured Markdown, for CI summaries and pull requests.
    Markdown,
    /// One self-contained HTML page (why, diff, split, gpu): `why` as a treemap, `diff`
    /// and `gpu` as bars, `split` as the package now and its outputs.
    Html,
    /// A Graphviz digraph (why only): pipe into `dot -Tsvg`.
    Dot,
    /// JSON lines, one record per store path (refs --paths-from only; see
    /// docs/cache-study.md).
    Jsonl,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// How big is the closure and what makes it so; or every chain from ROOT to TARGET.
    ///
    /// For each path: its NAR size, its closure size, and its added size — the bytes
    /// that would leave the closure if that path went (its subtree in the dominator
    /// tree of the reference graph) — ranked, with the shortest chain from the root.
    /// With TARGET: every reference chain from ROOT to TARGET, as a tree.
    Why(WhyArgs),
    /// Freeze ROOT's closure into a baseline file for `check --baseline` and `diff`.
    ///
    /// The file is versioned JSON (`"kind": "nixcut-snapshot"`): the root, every path
    /// with NAR size, NAR hash, closure size and references, the store directory and
    /// where it was taken from. Every command accepts it as an input. It is written
    /// atomically: an existing file is replaced only once the new one is complete (a
    /// symlink is followed and its target replaced; a FIFO or a device such as
    /// /dev/stdout is written in place; a directory or a store object is refused).
    /// The file is always JSON (`--format` does not apply); the same closure always
    /// gives the same bytes, so a committed baseline changes only when the closure does.
    Snapshot(SnapshotArgs),
    /// What changed between two closures, by package and version, ranked by effect.
    ///
    /// Paths added, removed and rebuilt, grouped by package (`gcc-12.2.0-lib` is
    /// package gcc, version 12.2.0, output lib) with version changes in the notation
    /// of `nix store diff-closures` (`rocblas: 5.7.1 → 6.0.0`). Packages are ranked by
    /// impact: what their new paths bring in beyond OLD (added size, so a new path
    /// that drags in 2 GiB counts 2 GiB) minus what their old paths brought.
    ///
    /// `--root` picks the root in both OLD and NEW (a package name such as
    /// `llama-cpp-rocm` matches on both sides).
    ///
    /// OLD and NEW may be package sets (files of store paths, one a line, such as a
    /// channel's `store-paths`, plain, .xz or .zst; nix-eval-jobs or Hydra job lines;
    /// a nixpkgs-review directory): then every root's closure before and after,
    /// matched by package name and output, the roots added and removed, and the
    /// causes, packages added, removed, grown or shrunk summed over roots (see
    /// docs/package-sets.md).
    Diff(DiffArgs),
    /// A CI gate on closure size: exit 0 pass, 1 fail, 2 error.
    ///
    /// Criteria combine; all must pass. On failure the report names the paths that
    /// make the excess, ranked by added size over what the baseline or OTHER shares.
    /// The Markdown report is appended to --summary FILE, or to $GITHUB_STEP_SUMMARY
    /// when that is set; under GitHub Actions (GITHUB_ACTIONS=true) each failure is
    /// also printed as an `::error` annotation.
    ///
    /// `--root` picks the root of ROOT only; the baseline and OTHER use their own roots
    /// (a snapshot's recorded root, or the paths nothing else references).
    Check(CheckArgs),
    /// File-level evidence of each reference: which file, at which byte offset, what
    /// kind of place (RUNPATH, DT_NEEDED, a __FILE__ string, a symlink, a cmake file…)
    /// and a first verdict (runtime, gpu:<arch>, unknown, dev, doc, removable).
    ///
    /// Files come from the local store (or --store-root) or the NARs of a binary cache.
    /// Results are cached per store path under $XDG_CACHE_HOME/nixcut.
    Refs(RefsArgs),
    /// The classification rules in force, each with its name: file classes (the
    /// user's `--rules FILE` rows first, marked `user`), evidence kinds of files, and
    /// verdicts.
    ///
    /// A rules file holds `[[class]]` rows; the first matching row wins, and the
    /// user's rows come before the built-in ones:
    ///
    ///   [[class]]
    ///   name = "my/keep-tools"        # required, unique; shown with every class it gives
    ///   under = ["share/tools/"]      # directories relative to the store path
    ///   name_ends_with = [".sh"]      # also: name_is, name_starts_with (all must hold)
    ///   class = "bin"                 # out bin lib dev static doc man info debug
    ///                                 # gpu:<arch> gpu-generic removable
    ///
    /// Errors name the file, line and column.
    #[command(verbatim_doc_comment)]
    Rules(RulesArgs),

    /// The outputs PATH could be split into, with exact sizes and references, what
    /// ROOT's closure becomes (--for), the actions and the Nix code to do it.
    ///
    /// Every file goes to one output by its class (out, bin, dev, static, doc, man,
    /// debug). Removable evidence (unused RUNPATH entries, __FILE__ strings, debug info,
    /// manifests, dangling symlinks) is cut by the actions and makes no edge.
    ///
    /// The code is in nixpkgs' terms: what stdenv's multiple-outputs hooks do by
    /// themselves once `outputs` names dev or doc (moving include, lib/cmake,
    /// lib/pkgconfig, share/doc, share/man; patching .pc includedir=; writing dev's
    /// propagated-build-inputs) is left to them, text is replaced with --replace-quiet.
    ///
    /// With --gpu-targets, the other GPU architectures are not built:
    /// `(PKG.override { gpuTargets = [ … ]; }).overrideAttrs …`, their files left out of
    /// the prediction; with --per-target-outputs they get one output each instead.
    ///
    ///   nixcut split rocblas --for ./result
    ///   nixcut split rocblas --for ./result --gpu-targets gfx1030
    ///   nixcut split rocblas --for ./result --gpu-targets gfx1030 --per-target-outputs
    #[command(verbatim_doc_comment)]
    Split(SplitArgs),

    /// What each GPU architecture costs in ROOT's closure: bytes in per-architecture
    /// files and inside fat binaries, bytes every architecture needs, and what the
    /// closure would weigh with only --gpu-targets.
    ///
    /// Per-architecture files are Tensile and hipBLASLt kernels, bare code objects,
    /// single-target bundles, per-architecture databases and cubins (decided by content, then by
    /// the architecture in the name). Fat binaries are ELF files whose .hip_fatbin
    /// holds clang offload bundles (plain or CCOB-compressed) or whose .nv_fatbin holds
    /// CUDA cubins and PTX, and bundle files for several targets; their code objects
    /// are counted per target from the headers, without reading the code. xnack and
    /// sramecc variants are grouped under their base architecture (gfx90a).
    ///
    /// Every byte of the closure is counted once: the architectures, generic GPU
    /// data and host bytes add up to the closure size.
    ///
    ///   nixcut gpu ./result
    ///   nixcut gpu ./result --gpu-targets gfx1030          # one AMD GPU
    ///   nixcut gpu ./result --gpu-targets 8.6,sm_90        # CUDA capabilities
    ///
    /// With --gpu-targets, the other architectures' files are dropped (with the store
    /// paths nothing then refers to), fat binaries are estimated as rebuilt with fewer
    /// targets (the report says "estimated"), and the remedies say what to set in
    /// nixpkgs: gpuTargets for rocmPackages, cudaCapabilities for CUDA.
    #[command(verbatim_doc_comment)]
    Gpu(GpuArgs),
    /// Browse ROOT's closure in the terminal: referrers, sizes, references, evidence.
    ///
    /// Three panes: the paths that refer to the selected path (left), the selected
    /// path with its NAR size, closure size, added size (what would leave the closure
    /// with it, as `why` computes it) and verdict (middle), and its references, largest
    /// added size first (right). Below them, the evidence of the highlighted edge (file,
    /// offset, kind, as `refs` shows it) and a shortest chain from ROOT.
    ///
    /// Keys: j/k or arrows move, Enter/l descends, Backspace/h goes back, Tab switches
    /// to the referrers, / searches by name (n/N), w = `why ROOT TARGET` of the
    /// selection, g = its GPU table, s = its split proposal, d OTHER = diff against
    /// another closure (marks + > < ~ -), ? help, q quit.
    ///
    /// Sizes appear at once; file evidence is scanned in the background (the selection
    /// first) and fills in as it comes, counted in the status line. NO_COLOR (or
    /// --color never) draws without colour: the marks and reverse video say it all.
    ///
    /// Examples:
    ///   nixcut browse ./result
    ///   nixcut browse examples/rocm-world-cache          # a binary-cache directory
    ///   nixcut browse ./result --dump-screen 80x24,/rocblas,Enter,w
    #[command(verbatim_doc_comment)]
    Browse(BrowseArgs),
    /// The whole store: every GC root with its closure and what deleting it alone
    /// would free, the bytes several roots share, and what no root keeps.
    ///
    /// Input: the local store (default), `--store-root DIR` (a chroot store or a
    /// mounted image: DIR/nix/var/nix/db/db.sqlite, its roots under
    /// DIR/nix/var/nix/gcroots and DIR/nix/var/nix/profiles, links resolved inside
    /// DIR), a directory given as INPUT (the same), a db.sqlite file, or a
    /// `nix path-info --json --all` file (any Nix version's shape). GC roots are found
    /// as Nix's collector finds them (direct links, indirect `auto/` roots, profiles);
    /// `--root PATH` and `--roots-from FILE` add roots (FILE: what
    /// `nix-store --gc --print-roots` prints, or store paths one a line).
    ///
    /// "alone frees" is what deleting that one link would let `nix-store --gc` free:
    /// the paths it keeps alive that no other root keeps. Two links to one path free
    /// nothing alone. Liveness follows references plus, as Nix does by default, each
    /// output's deriver (keep-derivations); see --keep-derivations/--keep-outputs.
    /// Read-only: the database is opened read-only, links are read, never followed out
    /// of the store root. The paths it names work with why, refs and split.
    ///
    /// Examples:
    ///   nixcut store                                  # the local store
    ///   nixcut store --store-root /mnt                # a mounted system's store
    ///   nixcut store all.json --roots-from roots.txt  # nix path-info --json --all
    ///   nixcut store --format html > store.html       # a treemap
    #[command(verbatim_doc_comment)]
    Store(StoreArgs),
}

#[derive(Debug, Args)]
pub struct BrowseArgs {
    /// The closure: a store path, `./result`, or a file or directory (see `nixcut --help`).
    #[arg(value_name = "ROOT")]
    pub input: String,
    /// Print one screen instead of opening the terminal UI: draw at WIDTHxHEIGHT, apply
    /// the comma-separated KEYS (names: Enter, Esc, Tab, Backspace, Up, Down, Left,
    /// Right, PageUp, PageDown, Home, End, Space, Comma; anything else is typed), wait
    /// for the reports and evidence they ask for, and print the last frame as text.
    #[arg(long, value_name = "WxH[,KEYS]")]
    pub dump_screen: Option<String>,
    /// Chains `w` shows at most (as `why ROOT TARGET --max-chains`).
    #[arg(long, value_name = "N", default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_chains: u64,
    /// Scan no files: sizes and graph only.
    #[arg(long)]
    pub no_evidence: bool,
}

#[derive(Debug, Args)]
pub struct GpuArgs {
    /// The closure: a store path, `./result`, or a file or directory (see `nixcut --help`).
    #[arg(value_name = "ROOT")]
    pub input: String,
    /// Keep only these GPU targets (comma-separated): AMD processors (gfx1030,
    /// gfx90a:xnack+ counts as gfx90a) and CUDA architectures (sm_90, or nixpkgs'
    /// cudaCapabilities spelling 9.0). An architecture nixcut does not know is an error
    /// naming the nearest known ones.
    #[arg(long, value_name = "TARGETS", value_delimiter = ',')]
    pub gpu_targets: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SplitArgs {
    /// The package to split: a store path or `./result-x` symlink, or (with --for) a
    /// base name, hash, hash prefix or package name of a path in ROOT's closure. A name
    /// several paths match is an error listing them.
    #[arg(value_name = "PATH")]
    pub path: String,
    /// Also say what this consumer's closure becomes (any input form).
    #[arg(long = "for", value_name = "ROOT")]
    pub for_root: Option<String>,
    /// Keep only these GPU architectures in ROOT's closure (comma-separated, e.g.
    /// gfx1030,gfx1100): the package is rebuilt with these `gpuTargets` (the others'
    /// files are not built). An architecture nixcut does not know is an error naming
    /// the nearest known ones.
    #[arg(long, value_name = "ARCHS", value_delimiter = ',')]
    pub gpu_targets: Vec<String>,
    /// With --gpu-targets: the other architectures' files go to one output each
    /// (moved, not rebuilt), as nixpkgs' per-target packages do.
    #[arg(long, requires = "gpu_targets")]
    pub per_target_outputs: bool,
    /// Neither read nor write the scan cache.
    #[arg(long)]
    pub no_cache: bool,
    /// The package's expression (its default.nix: `{ lib, stdenv, … }:
    /// stdenv.mkDerivation …`): also write the split into it, as a unified diff with
    /// headers a/FILE and b/FILE (apply with `patch -p1` in this directory), or with
    /// FILE's base name when FILE is absolute or has `..` (apply in FILE's directory).
    #[arg(long = "expr", value_name = "FILE")]
    pub expr: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct RulesArgs {}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// The closure: a store path, `./result`, or a file or directory (see `nixcut --help`).
    // Not named `root`: that id belongs to the global `--root`.
    #[arg(value_name = "ROOT")]
    pub input: String,
    /// Where to write the snapshot (`-` for standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: String,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The old closure (any input form, e.g. a snapshot).
    pub old: String,
    /// The new closure.
    pub new: String,
    /// Show the first N packages and summarise the rest (default 25 in tables, all in
    /// JSON).
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub top: Option<usize>,
    /// Show every changed package.
    #[arg(long)]
    pub all: bool,
    /// For package sets (files of store paths, one a line): where their closures are
    /// described (a `nix path-info --json -r` file of the union, a binary cache
    /// directory; repeatable, merged). Default: --cache URL, else the local store.
    /// See docs/package-sets.md.
    #[arg(long = "graph", value_name = "INPUT")]
    pub graphs: Vec<String>,
    /// For package sets: list only the roots whose closure size changed (and those in
    /// one set only); the others are still counted.
    #[arg(long)]
    pub changed_only: bool,
    #[command(flatten)]
    pub comment: CommentArgs,
}

/// `--comment` and its options, for `diff` and `check`.
#[derive(Debug, Args)]
pub struct CommentArgs {
    /// Write the Markdown as a pull-request comment: a stable first line
    /// (`<!-- nixcut:comment id=ID -->`), the verdict, the total and the largest cause
    /// in the first lines, the rest folded and counted to fit GitHub's 65,536
    /// characters. `diff` writes it on standard output (Markdown); `check` writes it to
    /// --summary FILE (replacing the file) and keeps --format for standard output.
    #[arg(long)]
    pub comment: bool,
    /// The id on the comment's first line, by which a bot finds and updates its own
    /// comment (letters, digits, `.`, `_`, `-`; default `closure-size`).
    #[arg(long, value_name = "ID", requires = "comment")]
    pub comment_id: Option<String>,
    /// Where the JSON report is (a CI artifact's URL): the comment links every folded
    /// or left-out row to it.
    #[arg(long, value_name = "URL", requires = "comment")]
    pub artifact_url: Option<String>,
}

#[derive(Debug, Args)]
#[command(group(
    clap::ArgGroup::new("criteria")
        .required(true)
        .multiple(true)
        .args(["baseline", "against", "max_size"])
))]
pub struct CheckArgs {
    /// The closure to check (any input form; `--root` picks one of several roots).
    #[arg(value_name = "ROOT")]
    pub input: String,
    /// Compare with this baseline: a `nixcut snapshot` file or any other input.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<String>,
    /// How much the closure may grow over the baseline: a percentage (`5%`, or a bare
    /// number) or a size with a unit, as for --max-size (`10MiB`, `50MB`). Default 5%.
    #[arg(long, value_name = "G", requires = "baseline")]
    pub max_growth: Option<String>,
    /// With package sets (ROOT and --baseline files of store paths): how much the
    /// closures of every root, summed, may grow (`2%`, or a size): roots only in NEW
    /// count as growth, roots only in OLD as shrinkage.
    #[arg(long, value_name = "G", requires = "baseline")]
    pub max_total_growth: Option<String>,
    /// With package sets: the largest closure a root only in NEW may have (a size, as
    /// for --max-size).
    #[arg(long, value_name = "SIZE", requires = "baseline")]
    pub max_new_root_size: Option<String>,
    /// For package sets: where their closures are described (as for `diff --graph`).
    #[arg(long = "graph", value_name = "INPUT")]
    pub graphs: Vec<String>,
    /// For package sets: list only the roots whose closure size changed (and those in
    /// one set only).
    #[arg(long)]
    pub changed_only: bool,
    /// Compare with another closure (e.g. the CUDA build of the same program).
    #[arg(long, value_name = "OTHER", requires = "max_ratio")]
    pub against: Option<String>,
    /// With --against: how many times OTHER's closure size ROOT's may be (`2`, `1.5`).
    #[arg(long, value_name = "R", requires = "against", value_parser = parse_ratio)]
    pub max_ratio: Option<f64>,
    /// An absolute budget for the closure size: bytes, or a number with a unit taken as
    /// written: KiB, MiB, GiB, TiB, PiB, EiB (and a bare K, M, G, T, P, E, as Nix
    /// prints sizes) are powers of 1024; kB, MB, GB, TB, PB, EB are powers of 1000
    /// (GB = 10^9 bytes). `500M`, `1.5GiB`, `20GB`; at most 2^64 - 1 bytes.
    #[arg(long, value_name = "SIZE")]
    pub max_size: Option<String>,
    /// How many paths to list per criterion.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Check inputs whose references leave them (`nix path-info --json` without `-r`)
    /// instead of refusing them: their sizes are lower bounds, so the gate may pass
    /// when the real closure would not.
    #[arg(long)]
    pub allow_partial: bool,
    /// Append the Markdown report to FILE (default: $GITHUB_STEP_SUMMARY when set);
    /// with --comment, write the pull-request comment there instead.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    #[command(flatten)]
    pub comment: CommentArgs,
}

fn parse_ratio(s: &str) -> Result<f64, String> {
    let r: f64 = s
        .trim()
        .trim_end_matches(['x', '×'])
        .parse()
        .map_err(|_| format!("`{s}` is not a number (e.g. 2 or 1.5)"))?;
    if r.is_finite() && r > 0.0 {
        Ok(r)
    } else {
        Err(format!("`{s}` must be a positive number"))
    }
}

#[derive(Debug, Args)]
pub struct RefsArgs {
    /// Store paths (or `./result`, or closure files) whose references to explain.
    #[arg(value_name = "PATH", required_unless_present_any = ["closure", "paths_from"])]
    pub paths: Vec<String>,
    /// Explain every path in the closure of ROOT (any input form).
    #[arg(long, value_name = "ROOT", conflicts_with = "paths")]
    pub closure: Option<String>,
    /// Also look for the hashes of every path in the loaded closure, not only the
    /// registered references (finds what Nix would register after a rebuild).
    #[arg(long)]
    pub discover: bool,
    /// List at most N evidence items per reference (all are counted).
    #[arg(long, value_name = "N")]
    pub max_evidence: Option<usize>,
    /// With --closure ROOT: show the chain of loads by which ROOT reaches FILE (a full
    /// path inside the store, e.g. a Tensile kernel file), or say that it does not.
    #[arg(long, value_name = "FILE", requires = "closure")]
    pub explain: Option<String>,
    /// Study every store path listed in FILE (`-`: standard input) with `--format
    /// jsonl`: one JSON record per path (docs/cache-study.md). A line is a store path,
    /// base name, hash or `URL/<hash>.narinfo`, optionally after a release label and a
    /// tab (`24.05<TAB>/nix/store/…`); empty lines and `#` lines are skipped. Each path
    /// is judged on its own, as `refs PATH` does; one that fails (a missing narinfo, a
    /// corrupt NAR) gives a record with `error`, and the run goes on.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["paths", "closure"])]
    pub paths_from: Option<String>,
    /// With --paths-from: study only shard K of N (0 <= K < N), the list's entries
    /// number i (counted from 0, skipped lines not counted) with i mod N = K.
    #[arg(long, value_name = "K/N", requires = "paths_from", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// With --paths-from: append the records to FILE (not standard output), one batch
    /// at a time; a rerun skips the entries FILE holds, and FILE.done is written when
    /// every entry of the shard is in FILE.
    #[arg(long, value_name = "FILE", requires = "paths_from")]
    pub output: Option<PathBuf>,
    /// With --paths-from: how many entries are studied at once, between two writes
    /// (what an interrupted run loses at most).
    #[arg(long, value_name = "N", requires = "paths_from", default_value_t = 32,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub batch: u64,
}

/// `--shard K/N`: the K-th of N shards, counted from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// K.
    pub index: u64,
    /// N.
    pub count: u64,
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}` is not K/N (e.g. 0/8)"))?;
    let num = |x: &str| {
        x.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{s}`: `{x}` is not a number"))
    };
    let (index, count) = (num(k)?, num(n)?);
    if count == 0 || index >= count {
        return Err(format!(
            "`{s}`: K must be below N and N at least 1 (shards are 0/N to {}/N)",
            count.saturating_sub(1)
        ));
    }
    Ok(Shard { index, count })
}

#[derive(Debug, Args)]
pub struct WhyArgs {
    /// The closure: a store path, `./result`, or a file or directory (see `nixcut --help`).
    #[arg(value_name = "ROOT")]
    pub input: String,
    /// Show every chain to this path: a store path or `./result-x` symlink, base name,
    /// hash (or its first characters) or package name.
    pub target: Option<String>,
    /// With TARGET: show at most N chains (depth first; a repeated path stands for every
    /// chain through it) and count the rest.
    #[arg(long, value_name = "N", requires = "target",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_chains: Option<u64>,
    /// List at most N paths of each path's chain from ROOT, in every format (default
    /// 32): a longer chain keeps ROOT and its last N - 1 paths, and JSON counts the
    /// paths left out (`chain_omitted`).
    #[arg(long, value_name = "N", conflicts_with = "target",
          value_parser = clap::value_parser!(u64).range(2..))]
    pub max_chain_length: Option<u64>,
    /// Show the first N paths and summarise the rest in one row (default 25 in tables,
    /// all in JSON).
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub top: Option<usize>,
    /// Show every path.
    #[arg(long)]
    pub all: bool,
    /// What to rank by.
    #[arg(long, value_enum, default_value_t = SortArg::Added)]
    pub sort: SortArg,
    /// Do not scan files for evidence, even when they are available (graph only).
    #[arg(long)]
    pub no_evidence: bool,
    /// Tables in full: every path's chain from ROOT and every scanned referrer's
    /// evidence (the default is one line per path with the main reason it is kept).
    #[arg(long)]
    pub long: bool,
    /// For each shown path, scan at most N of its referrers for evidence.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub evidence_referrers: usize,
    /// Scan for evidence only the referrers of the first N ranked paths, in every
    /// format (default: the --top N given, else 25, the rows of a default table); `all`
    /// for every shown path. The other paths are listed without it: `--format json`
    /// still has every path, and `evidence_paths` says how many lead with evidence.
    /// Over HTTP each referrer scanned is a NAR download.
    #[arg(long, value_name = "N|all", value_parser = parse_evidence_paths)]
    pub evidence_paths: Option<EvidencePaths>,
}

/// `--evidence-paths`: a count, or every shown path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidencePaths {
    /// The first N ranked paths.
    First(usize),
    /// Every shown path.
    All,
}

fn parse_evidence_paths(s: &str) -> Result<EvidencePaths, String> {
    if s == "all" {
        return Ok(EvidencePaths::All);
    }
    s.parse()
        .map(EvidencePaths::First)
        .map_err(|_| format!("`{s}` is neither a number nor `all`"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    /// Added size: what leaving the path out would free.
    Added,
    /// Closure size: the path and everything it references.
    Closure,
    /// NAR size of the path alone.
    Nar,
}

#[derive(Debug, Args)]
pub struct StoreArgs {
    /// A store root directory, a db.sqlite file, or a `nix path-info --json --all`
    /// file (default: the local store, or --store-root).
    #[arg(value_name = "INPUT")]
    pub input: Option<String>,
    /// Add the roots listed in FILE: `LINK -> /nix/store/...` lines (the output of
    /// `nix-store --gc --print-roots`) or store paths, one a line; `-` for stdin.
    #[arg(long, value_name = "FILE")]
    pub roots_from: Vec<PathBuf>,
    /// Do not look for GC roots in the store's gcroots and profiles directories (only
    /// --root and --roots-from count).
    #[arg(long)]
    pub no_gc_roots: bool,
    /// Whether a live output keeps its deriver (.drv) alive, as Nix's
    /// `keep-derivations` (Nix's default: true).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub keep_derivations: bool,
    /// Whether a live derivation keeps its outputs alive, as Nix's `keep-outputs`
    /// (Nix's default: false; nix-direnv users set it).
    #[arg(long, value_name = "BOOL", default_value_t = false, action = clap::ArgAction::Set)]
    pub keep_outputs: bool,
    /// List the first N roots by what each alone frees (default 25, in every format);
    /// `rest` sums the others. Ranking is one linear pass; only the listed roots'
    /// closures are computed.
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub top: Option<usize>,
    /// List every root with its closure. Each closure is a walk (256 roots share one),
    /// so on a store whose roots all reach most of it this costs far more than the
    /// ranking: minutes for a million roots.
    #[arg(long)]
    pub all: bool,
}

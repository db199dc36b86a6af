//! nixcut: explain what makes a Nix closure big, prove with file-level evidence which
//! references are needed at run time, and gate closure size in CI.
//!
//! Layers, each importing only layers named before it: `store` (vocabulary, no I/O) and
//! `timing`; `http` (the binary caches' client); `load` (inputs → [`store::Closure`])
//! and `source` (where files come from: a store tree or a binary cache's NARs); `elf`
//! (facts of ELF files) and `classify` (the rules); `scan` (hashes in bytes, with `elf`
//! facts and the kind rules of `classify`); `evidence` (typed per-path evidence and its
//! cache; verdicts from `classify`); `reach` (what a consumer loads at run time); `graph`
//! (dominators, added size); `report` (the JSON contract: facts); `analysis` (one report
//! per command); `render` (one module per format: the English and the Nix); `browse` (the
//! terminal UI: draws what the analyses compute and the renderers write). No two files
//! import each other, directly or in a circle. `tests/modules.rs` checks both from the
//! source. Only the binary (`src/main.rs`, `src/cli/`) reads flags and the environment.

pub mod analysis;
pub mod browse;
pub mod classify;
pub mod elf;
pub mod evidence;
pub mod graph;
pub mod http;
pub mod load;
pub mod reach;
pub mod render;
pub mod report;
pub mod scan;
pub mod source;
pub mod store;
pub mod timing;

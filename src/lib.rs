//! nixcut: explain what makes a Nix closure big, prove with file-level evidence which
//! references are needed at run time, and gate closure size in CI.
//!
//! Layers, with dependencies pointing one way:
//! `store` (vocabulary) ← `load` (inputs → [`store::Closure`]) ← `graph` (reachability,
//! dominators, added size) ← `analysis` (one report per command) → `report` (the JSON
//! contract) ← `render` (table, JSON, Markdown).

pub mod analysis;
pub mod classify;
pub mod elf;
pub mod evidence;
pub mod graph;
pub mod http;
pub mod load;
pub mod render;
pub mod report;
pub mod scan;
pub mod source;
pub mod store;

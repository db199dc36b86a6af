//! Classification as data: the evidence kinds of the SPEC ([`EvidenceKind`]), the file
//! rules that give a kind to hits outside ELF files ([`kinds`]), and the byte helpers
//! that cut and escape evidence details ([`text`]).
//!
//! The ELF classifier (`crate::elf`) and the walkers (`crate::scan`) use these; nothing
//! here does I/O.

mod gpu_arch;
mod kind;
pub mod kinds;
pub mod text;
mod verdict;

pub use gpu_arch::arch_of_name;
pub use kind::{EvidenceKind, UnknownKind};
pub use kinds::{file_rule, FileFacts, FileRule, Matcher, Place, FILE_RULES};
pub use verdict::{kind_rules, kind_verdict, strongest, KindRule, Verdict};

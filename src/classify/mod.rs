//! The one rule engine: every rule that turns a fact into an evidence kind or a verdict
//! lives here, as data, and names itself with a [`RuleId`].
//!
//! - [`EvidenceKind`]: the kinds of the SPEC (JSON `kind`).
//! - [`file_rules`]: file rules, the kind of a hit outside an analysed ELF file (by place,
//!   path, then contents).
//! - `elf`: ELF rules, the kind of a hit inside an ELF file, from `crate::elf`'s facts
//!   ([`classify_hit`]).
//! - [`ClassRules`]: file classes (`lib`, `dev`, `gpu:<arch>` …), what each file of a
//!   store path is for, by content, then path and name.
//! - [`parse_rules_file`]: a user's TOML rules file (`--rules FILE`), whose class rules
//!   go ahead of the built-in ones.
//! - [`verdict_rules`]: the verdict of one hit ([`hit_verdict`]: kind rows plus the
//!   symlink refinements, dangling and per-GPU-architecture names) and of a reference
//!   from its hits ([`reference_verdict`]: strongest wins, GPU architectures merged).
//! - [`DataDirRule`]: the data directories a library opens beside itself, where its
//!   strings do not say (the fallback of `crate::reach`; `[[data_dir]]` in a rules file).
//! - [`GpuTarget`]: a GPU target (vendor, base architecture, features), every spelling
//!   of one read in one place; [`GPU_LIBRARIES`]: the one table of GPU libraries (their
//!   nixpkgs attribute and option, the data they open and its environment variable,
//!   their class rules, code-object and index names, data extensions).
//! - [`split_rules`]: what `split` does with one hit (keep it, drop a RUNPATH entry,
//!   `remove-references-to`, delete the file), by verdict, kind and class.
//! - [`HitDetail`]: what a hit's surroundings say (the library, the search directory,
//!   the bytes around it), typed; its `Display` is the `detail` of reports.
//! - [`text`]: byte helpers that cut and escape evidence details.
//!
//! Every stage is a pure function of facts: the walkers (`crate::scan`) call the kind
//! rules while the bytes are at hand (a NAR stream cannot be read twice), the evidence
//! layer (`crate::evidence`) calls the verdict rules. Nothing here does I/O.

mod class;
mod data_dir;
mod detail;
mod elf;
mod evidence_kind;
pub mod file_rules;
mod gpu_arch;
mod gpu_libs;
mod rule;
mod rules_file;
mod split_policy;
pub mod text;
mod verdict;

pub use class::{
    ClassFacts, ClassMatcher, ClassOf, ClassRule, ClassRules, EntryType, FileClass, CLASS_OUT,
};
pub use data_dir::{builtin_data_dirs, data_dir_rules, merge_data_dirs, DataBase, DataDirRule};
pub use detail::{Excerpt, HitDetail, SearchDirHit, SearchTag, SearchUse};
pub use elf::{
    classify_hit, names_source_path, HitClass, ELF_HIT_RULES, SOURCE_EXTENSIONS, STRING_CAP,
};
pub use evidence_kind::{EvidenceKind, UnknownKind};
pub use file_rules::{file_rule, FileFacts, FileRule, Matcher, Region, FILE_RULES};
pub use gpu_arch::{
    arch_of_cu_name, arch_of_name, base_arch, is_gpu_arch_name, is_known_gpu_arch,
    known_arch_range, known_gpu_archs, nearest_gpu_archs, GpuTarget, GpuTargets, GpuVendor,
};
pub use gpu_libs::{
    code_object_extensions, data_extensions, gpu_library, is_build_inventory, is_index_name,
    is_lazy_index_name, is_library_code_object, library_of_data_dir, scan_fingerprint,
    ArchDatabases, CodeObjects, GpuLibrary, GpuOption, IndexFiles, LibraryData, GPU_LIBRARIES,
};
pub use rule::RuleId;
pub use rules_file::{class_rules_from_file, parse_data_dirs, parse_rules_file, RulesFileError};
pub use split_policy::{
    split_policy, split_rules, SplitCondition, SplitEffect, SplitFacts, SplitRule,
};
pub use verdict::{
    hit_verdict, reference_verdict, verdict_rules, FileClassName, Gives, HitCondition, HitFacts,
    Verdict, VerdictRule, NO_EVIDENCE,
};

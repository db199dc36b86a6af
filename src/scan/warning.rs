//! [`ScanWarning`]: what went wrong with one entry of a scanned store path (or with the
//! NAR stream around it) while the scan went on without it. Facts only: which entry,
//! which step, and the operating system's or parser's own message; the English is
//! `crate::render::words::scan`'s. Warnings are stored in the scan cache as they are.

use serde::{Deserialize, Serialize};

use super::RelPath;

/// A problem the scan of one store path got past.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScanWarning {
    /// A problem with one entry (file, directory or symlink).
    Entry {
        /// The entry, inside the store path.
        file: RelPath,
        /// What went wrong.
        problem: EntryProblem,
    },
    /// Bytes after the end of a NAR stream were ignored.
    TrailingBytes {
        /// The NAR (file or label).
        nar: String,
        /// How many.
        bytes: u64,
    },
}

impl ScanWarning {
    /// A problem with the entry `file`.
    pub fn entry(file: &RelPath, problem: EntryProblem) -> ScanWarning {
        ScanWarning::Entry {
            file: file.clone(),
            problem,
        }
    }

    /// Whether the warning is about the GPU code in a file (headers of a fat binary or
    /// a bundle that could not be read whole).
    pub fn is_gpu_code(&self) -> bool {
        matches!(
            self,
            ScanWarning::Entry {
                problem: EntryProblem::ElfGpuCode(_) | EntryProblem::BundleGpuCode(_),
                ..
            }
        )
    }
}

/// What went wrong with one entry; the strings are the messages of the operating
/// system or of the parser, never read by code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryProblem {
    /// The symlink's target could not be read (store tree).
    CannotReadSymlink(String),
    /// The directory's names could not be read (store tree).
    CannotList(String),
    /// The directory could not be opened (store tree).
    CannotListDirectory(String),
    /// The entry's metadata could not be read (store tree).
    CannotStat(String),
    /// A FIFO, socket or device (`what`), which a NAR cannot hold: not opened.
    Special {
        /// `FIFO`, `socket`, `device` …
        what: String,
    },
    /// The file could not be opened (store tree).
    CannotOpen(String),
    /// Reading the file failed at `offset` (store tree).
    ReadError {
        /// Where the read started.
        offset: u64,
        /// The error.
        error: String,
    },
    /// No temporary file to hold a large ELF file of a NAR for analysis.
    NoSpoolFile(String),
    /// Writing a NAR's ELF file to its temporary file failed.
    CannotSpool(String),
    /// Reading back a NAR's spooled ELF file failed.
    CannotRereadSpool(String),
    /// A part of the ELF file's headers could not be read (the parser's message).
    Elf(String),
    /// The GPU code sections of an ELF file could not be read whole.
    ElfGpuCode(String),
    /// A standalone GPU code bundle could not be read whole.
    BundleGpuCode(String),
    /// The file starts like ELF but is not: its hits were classified as plain bytes.
    NotElf(String),
    /// Hits beyond the per-file cap: counted, not reported.
    CappedHits {
        /// Hits not reported.
        more: u64,
        /// The cap per file.
        cap: usize,
    },
}

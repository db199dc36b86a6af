//! The words of the `rules` report: its headings.

use std::fmt::Write as _;

use crate::report::RulesReport;

pub(crate) fn class_heading(r: &RulesReport) -> String {
    let mut s = String::from("File classes (first match wins");
    match &r.rules_file {
        Some(f) => {
            let _ = write!(s, "; rules from {f} come first");
        }
        None => s.push_str("; no --rules file"),
    }
    s.push(')');
    s
}

pub(crate) const ELF_HEADING: &str =
    "Evidence kinds of hits inside analysed ELF files (first match wins)";
pub(crate) const DATA_DIR_HEADING: &str = "Data directories a library opens beside itself, where its strings do not name them (reaching the library reaches them)";
pub(crate) const KIND_HEADING: &str =
    "Evidence kinds of hits outside analysed ELF files (first match wins)";
pub(crate) const VERDICT_HEADING: &str = "Verdicts of single hits (first match wins; a reference takes the strongest: runtime > gpu > unknown > dev > doc > removable)";

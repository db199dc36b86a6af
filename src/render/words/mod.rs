//! The words of every report: what each fact says in English, one module per report,
//! shared by the text formats (`table`, `markdown`) and, for the few facts the JSON
//! contract carries as sentences (check failures, every report's warnings, diff
//! version changes), by JSON too: their `Serialize` impls live here and write the same
//! sentence (`crate::report` explains why).

pub(crate) mod check;
pub(crate) mod comment;
pub(crate) mod diff;
pub(crate) mod evidence;
pub(crate) mod gpu;
pub(crate) mod load;
pub(crate) mod refs;
pub(crate) mod rules;
pub(crate) mod set_diff;
pub(crate) mod split;
pub(crate) mod store;
pub(crate) mod why;

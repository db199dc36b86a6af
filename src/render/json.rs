//! The JSON format: the report structs serialised as they are (`crate::report` is the
//! contract; `tests/json_contract.rs` pins it), indented on a terminal and compact in
//! a pipe, one document per run. The sentences the contract carries as strings are
//! written by the `Serialize` impls in `crate::render::words`.

use std::io::{self, Write};

use serde::Serialize;

use super::{Report, Style};

/// Write `report` as one JSON document and a newline.
pub(super) fn render(report: Report<'_>, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    match report {
        Report::Why(r) => write(r, style, out),
        Report::WhyChains(r) => write(r, style, out),
        Report::Refs(r) => write(r, style, out),
        Report::Diff(r) => write(r, style, out),
        Report::Check(r) => write(r, style, out),
        Report::Split(r) => write(r, style, out),
    }
}

fn write<T: Serialize>(doc: &T, style: &Style, out: &mut dyn Write) -> io::Result<()> {
    if style.pretty_json {
        serde_json::to_writer_pretty(&mut *out, doc).map_err(io::Error::other)?;
    } else {
        serde_json::to_writer(&mut *out, doc).map_err(io::Error::other)?;
    }
    writeln!(out)
}

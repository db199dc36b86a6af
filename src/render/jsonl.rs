//! JSON lines (`--format jsonl`): one compact JSON object per line, for streams of
//! records (`refs --paths-from`, one [`RefsRecord`] per store path). A whole report has
//! no JSON-lines form: it is one document (`--format json`).

use std::io::{self, Write};

use super::report::{unsupported, Report};
use crate::report::RefsRecord;

/// A whole report: refused (`--format jsonl` is for record streams).
pub(super) fn render(report: Report<'_>, _out: &mut dyn Write) -> io::Result<()> {
    let command = match report {
        Report::Why(_) | Report::WhyChains(_) => "why",
        Report::Refs(_) => "refs",
        Report::Diff(_) | Report::SetDiff(_) => "diff",
        Report::Check(_) => "check",
        Report::Split(_) => "split",
        Report::Gpu(_) => "gpu",
        Report::Rules(_) => "rules",
        Report::Store(_) => "store",
    };
    Err(unsupported("jsonl", command))
}

/// Write `record` as one line: compact JSON, then `\n` (no newline inside: JSON escapes
/// them in strings).
pub fn record(record: &RefsRecord, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, record).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RecordStage;

    #[test]
    fn a_record_is_one_line_even_with_newlines_in_its_strings() {
        let r = RefsRecord::failed(
            "x\ny".into(),
            Some("24.05".into()),
            None,
            RecordStage::Load,
            "two\nlines".into(),
        );
        let mut out = Vec::new();
        record(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches('\n').count(), 1);
        assert!(text.ends_with('\n'));
        let back: RefsRecord = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(back, r);
    }
}

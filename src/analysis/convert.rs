//! The edge between the typed evidence layer and the JSON contract: [`PathEvidence`]
//! becomes the `refs` report's [`RefsPath`], a [`Reference`] a [`RefEntry`] or a `why`
//! hop ([`HopEvidence`]). Strings are made here and nowhere earlier.

use crate::evidence::{JudgedHit, PathEvidence, Reference, ScanStatus};
use crate::report::{EvidenceDetail, EvidenceItem, HopEvidence, RefEntry, RefsPath};
use crate::store::StoreDir;

/// One hit as the report shows it: its verdict rule, with the rule that gave the kind
/// in parentheses.
pub(crate) fn evidence_item(h: &JudgedHit) -> EvidenceItem {
    EvidenceItem {
        file: h.fact.file.to_string(),
        offset: h.fact.location.offset(),
        kind: h.fact.kind,
        detail: EvidenceDetail::Hit(h.fact.detail.clone()),
        verdict: h.verdict.clone(),
        file_class: h.place.class.clone(),
        reached: h.place.reached,
        rule: if h.fact.kind_rule.is_empty() {
            h.rule.to_string()
        } else {
            format!("{} ({})", h.rule, h.fact.kind_rule)
        },
    }
}

/// A reference with at most `max_items` evidence items (all counted).
pub(crate) fn ref_entry(sd: &StoreDir, r: &Reference, max_items: Option<usize>) -> RefEntry {
    let listed = r.hits.len().min(max_items.unwrap_or(usize::MAX));
    RefEntry {
        omitted: r.hit_count() - listed as u64,
        path: sd.display(&r.target),
        verdict: r.verdict.clone(),
        rule: r.rule.to_string(),
        registered: r.registered,
        self_reference: r.self_reference,
        evidence_count: r.hit_count(),
        capped: r.capped,
        kinds: r
            .kinds
            .iter()
            .map(|(k, n)| (k.as_str().to_string(), *n))
            .collect(),
        evidence: r
            .hits
            .iter()
            .take(max_items.unwrap_or(usize::MAX))
            .map(evidence_item)
            .collect(),
    }
}

/// A store path's evidence as a `refs` report entry.
pub(crate) fn refs_path(sd: &StoreDir, e: &PathEvidence, max_items: Option<usize>) -> RefsPath {
    let (scanned, cached, files, bytes) = match e.status {
        ScanStatus::Scanned {
            files,
            bytes,
            cached,
        } => (true, cached, files, bytes),
        ScanStatus::NotScanned => (false, false, 0, 0),
    };
    RefsPath {
        path: sd.display(&e.path),
        scanned,
        cached,
        files_scanned: files,
        bytes_scanned: bytes,
        references: e
            .references
            .iter()
            .map(|r| ref_entry(sd, r, max_items))
            .collect(),
        warnings: e.warnings.clone(),
    }
}

/// How `from` refers to one of its references, for a `why` hop.
pub(crate) fn hop(
    sd: &StoreDir,
    from: &PathEvidence,
    r: &Reference,
    max_items: usize,
) -> HopEvidence {
    let entry = ref_entry(sd, r, Some(max_items));
    HopEvidence {
        referrer: sd.display(&from.path),
        verdict: entry.verdict,
        rule: entry.rule,
        kinds: entry.kinds,
        evidence: entry.evidence,
    }
}

//! One store path as one [`RefsRecord`] (`nixcut refs --paths-from FILE --format
//! jsonl`): the path scanned once through the caller's file source, its references
//! judged as `nixcut refs PATH` judges them (no consumer: the path on its own), and its
//! GPU bytes per architecture counted from the same scan's entries as `nixcut gpu`
//! counts them (`super::gpu::account`). Cost: one NAR read of the path; the references'
//! `.ls` listings where a RUNPATH or symlink must be resolved.

use super::convert::refs_path;
use super::gpu::account;
use super::refs::RefsOptions;
use crate::evidence::{Collector, NotScanned};
use crate::report::{RecordRef, RecordStage, RefsRecord};
use crate::store::{Closure, StorePath};

/// The record of `path`, a path of `c`, for the list entry `input` (labelled `release`).
pub fn refs_record(
    c: &Closure,
    path: &StorePath,
    opts: &RefsOptions,
    input: String,
    release: Option<String>,
) -> RefsRecord {
    let sd = &c.store_dir;
    let info = c.paths.get(path);
    let collector = Collector::new(c, opts.files.source(), opts.cache.as_ref())
        .rules(&opts.rules)
        .discover(opts.discover);
    let mut record = RefsRecord::failed(
        input,
        release,
        Some(sd.display(path)),
        RecordStage::Nar,
        String::new(),
    );
    record.nar_hash = info.and_then(|i| i.nar_hash.as_ref()).map(|h| h.to_sri());
    record.nar_size = info.and_then(|i| i.nar_size);
    record.file_size = info.and_then(|i| i.download_size);
    // One path in, one out; were there none, the record would say the NAR failed.
    let Some(scanned) = collector.scan(std::slice::from_ref(path), None).pop() else {
        return record;
    };
    let gpu = match &scanned.result {
        Ok((sp, _)) => Some(account(&sp.entries)),
        Err(why) => {
            if let Some(e) = record.error.as_mut() {
                e.message = not_scanned(why);
            }
            None
        }
    };
    if let Some(a) = gpu {
        record.error = None;
        record.gpu = a
            .archs
            .iter()
            .map(|(k, s)| (k.clone(), s.bytes()))
            .collect();
        record.gpu_generic_bytes = a.generic_bytes;
    }
    let evidence = collector.derive(scanned, None);
    // The hits themselves are not listed: a record counts them per kind.
    let rp = refs_path(sd, &evidence, Some(0));
    record.scanned = rp.scanned;
    record.bytes_scanned = rp.bytes_scanned;
    record.warnings = rp.warnings;
    record.references = evidence
        .references
        .iter()
        .zip(rp.references)
        .map(|(r, e)| RecordRef {
            nar_size: c.paths.get(&r.target).and_then(|i| i.nar_size),
            path: e.path,
            verdict: e.verdict,
            rule: e.rule,
            registered: e.registered,
            self_reference: e.self_reference,
            evidence_count: e.evidence_count,
            kinds: e.kinds,
        })
        .collect();
    record
}

/// Why a path was not scanned, in the words of the source.
fn not_scanned(why: &NotScanned) -> String {
    match why {
        NotScanned::FilesUnavailable => "no file source: the NARs are not available".into(),
        NotScanned::Missing(m) => format!("the NAR is missing: {m}"),
        NotScanned::Failed(m) => m.clone(),
    }
}

//! Turning one entry's hits into [`FileScan`] and [`HitFact`]s, shared by the tree and
//! NAR walkers so that both classify identically: the walkers only differ in where the
//! bytes come from (a [`ByteSource`] over a file on disk, or over what a NAR stream
//! left in memory).

use crate::classify::classify_hit;
use crate::classify::file_rules::{hit_detail, CONTEXT_WINDOW};
use crate::classify::text::{looks_like_text, TEXT_SNIFF_LEN};
use crate::classify::{
    data_extensions, file_rule, is_build_inventory, is_index_name, FileFacts, HitDetail, Region,
};
use crate::elf::{
    has_bundle_magic, has_elf_magic, index_loads, manifest_names, names_in_data, ByteSource,
    ElfFacts, GpuCode, MAX_INDEX,
};
use crate::store::HASH_LEN;

use super::{
    ElfFactsWhen, EntryProblem, FileScan, FileType, HitFact, IndexFile, LocatedHit, Location,
    ReferenceScanner, RelPath, Resolver, ScanOptions, ScanWarning, StreamResult, HEAD_LEN,
};

/// Whether a walker must keep a regular file of `size` bytes at `path` whole while it
/// streams (its text is kept: [`config_text`]).
pub(crate) fn keeps_text(path: &RelPath, size: u64) -> bool {
    size <= super::MAX_CONFIG_TEXT && super::is_config_file(path.as_bytes())
}

/// The whole text of a build-configuration file, read through `source`; `None` for
/// other files, larger ones, or when fewer bytes than `size` can be read.
fn config_text<S: ByteSource + ?Sized>(
    path: &RelPath,
    size: u64,
    source: Option<&S>,
) -> Option<Vec<u8>> {
    if !keeps_text(path, size) {
        return None;
    }
    let bytes = source?.read_vec(0, size as usize).ok()?;
    (bytes.len() as u64 == size).then_some(bytes)
}

/// What the walkers know about the store path as a whole.
#[derive(Clone, Copy)]
pub(crate) struct Context<'a> {
    pub scanner: &'a ReferenceScanner,
    pub opts: &'a ScanOptions<'a>,
    /// The logical absolute path of the store path, for `$ORIGIN`.
    pub logical_root: Option<&'a str>,
    pub resolver: Option<&'a Resolver<'a>>,
}

/// One analysed entry.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub file: FileScan,
    pub evidence: Vec<(u32, HitFact)>,
    pub warnings: Vec<ScanWarning>,
}

/// Hits in an entry's own name.
pub(crate) fn name_hits(scanner: &ReferenceScanner, path: &RelPath) -> Vec<LocatedHit> {
    if path.is_root() {
        return Vec::new();
    }
    scanner
        .scan_slice(path.name())
        .into_iter()
        .map(|h| LocatedHit {
            location: Location::FileName { offset: h.offset },
            candidate: h.candidate,
        })
        .collect()
}

fn name_evidence(path: &RelPath, hits: &[LocatedHit], executable: bool) -> Vec<(u32, HitFact)> {
    let rule = file_rule(&FileFacts {
        path: path.as_bytes(),
        place: Region::FileName,
        executable,
        head: &[],
    });
    hits.iter()
        .map(|h| {
            let fact = HitFact {
                file: path.clone(),
                location: h.location,
                kind: rule.kind,
                kind_rule: rule.name,
                detail: HitDetail::Name(path.name().to_vec()),
                target_exists: None,
            };
            (h.candidate, fact)
        })
        .collect()
}

fn entry(path: RelPath, file_type: FileType, size: u64, hits: Vec<LocatedHit>) -> FileScan {
    FileScan {
        path,
        file_type,
        size,
        symlink_target: None,
        is_elf: false,
        hits,
        capped_hits: 0,
        elf: None,
        head: Vec::new(),
        bundle: None,
        index: None,
        config_text: None,
    }
}

/// A directory: only its name can hold hits.
pub(crate) fn directory(ctx: &Context<'_>, path: RelPath) -> Outcome {
    let hits = name_hits(ctx.scanner, &path);
    let evidence = name_evidence(&path, &hits, false);
    Outcome {
        file: entry(path, FileType::Directory, 0, hits),
        evidence,
        warnings: Vec::new(),
    }
}

/// A symlink: its name and its target.
pub(crate) fn symlink(ctx: &Context<'_>, path: RelPath, target: Vec<u8>) -> Outcome {
    let mut hits = name_hits(ctx.scanner, &path);
    let mut evidence = name_evidence(&path, &hits, false);
    let rule = file_rule(&FileFacts {
        path: path.as_bytes(),
        place: Region::SymlinkTarget,
        executable: false,
        head: &[],
    });
    for h in ctx.scanner.scan_slice(&target) {
        let location = Location::SymlinkTarget { offset: h.offset };
        hits.push(LocatedHit {
            location,
            candidate: h.candidate,
        });
        let fact = HitFact {
            file: path.clone(),
            location,
            kind: rule.kind,
            kind_rule: rule.name,
            detail: HitDetail::SymlinkTarget(target.clone()),
            target_exists: None,
        };
        evidence.push((h.candidate, fact));
    }
    let mut file = entry(path, FileType::Symlink, target.len() as u64, hits);
    file.symlink_target = Some(target);
    Outcome {
        file,
        evidence,
        warnings: Vec::new(),
    }
}

/// What a walker read from a regular file.
pub(crate) struct Contents<'a, S: ?Sized> {
    /// The first bytes (up to `TEXT_SNIFF_LEN`, all of them for shorter files).
    pub head: &'a [u8],
    /// The content scan.
    pub scan: StreamResult,
    /// Random access to the bytes classification needs, when they can be read.
    pub source: Option<&'a S>,
}

/// What an index or a build inventory names, read through `source` (small files only;
/// which names are either is the GPU library table's).
fn index_file<S: ByteSource + ?Sized>(
    path: &RelPath,
    size: u64,
    is_elf: bool,
    source: Option<&S>,
) -> Option<IndexFile> {
    let name = path.name();
    let index = is_index_name(name);
    if is_elf || size > MAX_INDEX || !(index || is_build_inventory(name)) {
        return None;
    }
    let bytes = source?.read_vec(0, size as usize).ok()?;
    if index {
        index_loads(&bytes).map(IndexFile::Loads)
    } else {
        Some(IndexFile::Lists(manifest_names(&bytes)))
    }
}

/// The ELF facts of a file with hits (or of every ELF file when asked), its search
/// directories resolved from where it sits; problems reading them go to `warnings`.
fn elf_facts<S: ByteSource + ?Sized>(
    ctx: &Context<'_>,
    path: &RelPath,
    src: &S,
    warnings: &mut Vec<ScanWarning>,
) -> Option<ElfFacts> {
    let origin = ctx.logical_root.map(|root| {
        let parent = path.parent();
        if parent.is_empty() {
            root.to_string()
        } else {
            format!("{root}/{}", String::from_utf8_lossy(parent))
        }
    });
    match ElfFacts::parse(src, origin.as_deref()) {
        Ok(mut f) => {
            (f.dlopen, f.data_paths) = names_in_data(&f, src, data_extensions());
            if let Some(resolve) = ctx.resolver {
                f.resolve_needed(&|lib: &str| resolve(lib.as_bytes()));
            }
            let elf = f.warnings.iter().map(|w| EntryProblem::Elf(w.clone()));
            let gpu = (f.gpu.warnings.iter()).map(|w| EntryProblem::ElfGpuCode(w.clone()));
            warnings.extend(elf.chain(gpu).map(|p| ScanWarning::entry(path, p)));
            Some(f)
        }
        Err(e) => {
            warnings.push(ScanWarning::entry(
                path,
                EntryProblem::NotElf(e.to_string()),
            ));
            None
        }
    }
}

/// A standalone offload bundle: its entries' sizes from its header (positional reads;
/// a streamed file offers its first bytes, `head`).
fn standalone_bundle<S: ByteSource + ?Sized>(
    path: &RelPath,
    head: &[u8],
    source: Option<&S>,
    warnings: &mut Vec<ScanWarning>,
) -> GpuCode {
    let g = match source {
        Some(src) => GpuCode::detect_bundle_file(src),
        None => GpuCode::detect_bundle_file(head),
    };
    warnings.extend(
        (g.warnings.iter())
            .map(|w| ScanWarning::entry(path, EntryProblem::BundleGpuCode(w.clone()))),
    );
    g
}

/// A regular file: its name and its contents, ELF-analysed when it has hits.
pub(crate) fn regular<S: ByteSource + ?Sized>(
    ctx: &Context<'_>,
    path: RelPath,
    executable: bool,
    size: u64,
    contents: Contents<'_, S>,
    mut warnings: Vec<ScanWarning>,
) -> Outcome {
    let mut hits = name_hits(ctx.scanner, &path);
    let mut evidence = name_evidence(&path, &hits, executable);
    let head = &contents.head[..contents.head.len().min(TEXT_SNIFF_LEN)];
    let is_elf = has_elf_magic(head);
    let content_hits = &contents.scan.hits;

    let want_facts = !content_hits.is_empty() || ctx.opts.elf_facts == ElfFactsWhen::Always;
    let facts = match (is_elf, want_facts, contents.source) {
        (true, true, Some(src)) => elf_facts(ctx, &path, src, &mut warnings),
        _ => None,
    };
    let bundle = (!is_elf && has_bundle_magic(head))
        .then(|| standalone_bundle(&path, head, contents.source, &mut warnings));

    let rule = file_rule(&FileFacts {
        path: path.as_bytes(),
        place: Region::Contents,
        executable,
        head,
    });
    let is_text = looks_like_text(head);
    for h in content_hits {
        let location = Location::Contents { offset: h.offset };
        hits.push(LocatedHit {
            location,
            candidate: h.candidate,
        });
        let (kind, detail, rule_name) = match (&facts, contents.source) {
            (Some(f), Some(src)) => {
                let c = classify_hit(f, h.offset, src);
                (c.kind, c.detail, c.rule)
            }
            (_, Some(src)) => {
                // Exactly the window the NAR walker captures around a hit.
                let lo = h.offset.saturating_sub(CONTEXT_WINDOW as u64);
                let hi = h.offset + (HASH_LEN + CONTEXT_WINDOW) as u64;
                let detail = match src.read_vec(lo, (hi - lo) as usize) {
                    Ok(w) => hit_detail(is_text, &w, (h.offset - lo) as usize, HASH_LEN),
                    Err(_) => HitDetail::Unreadable,
                };
                (rule.kind, detail, rule.name)
            }
            (_, None) => (rule.kind, HitDetail::Unreadable, rule.name),
        };
        let fact = HitFact {
            file: path.clone(),
            location,
            kind,
            kind_rule: rule_name,
            detail,
            target_exists: None,
        };
        evidence.push((h.candidate, fact));
    }
    if contents.scan.capped > 0 {
        let problem = EntryProblem::CappedHits {
            more: contents.scan.capped,
            cap: ctx.scanner.max_hits_per_file(),
        };
        warnings.push(ScanWarning::entry(&path, problem));
    }
    let file_type = if executable {
        FileType::Executable
    } else {
        FileType::Regular
    };
    let mut file = entry(path, file_type, size, hits);
    file.is_elf = is_elf;
    file.capped_hits = contents.scan.capped;
    file.elf = facts;
    file.head = head[..head.len().min(HEAD_LEN)].to_vec();
    file.bundle = bundle;
    file.index = index_file(&file.path, size, is_elf, contents.source);
    file.config_text = config_text(&file.path, size, contents.source);
    Outcome {
        file,
        evidence,
        warnings,
    }
}

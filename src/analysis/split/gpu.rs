//! The GPU side of a split: per architecture its files, bytes and what only they refer
//! to, and what moved GPU files need to be found again (a rebuild with fewer
//! `gpuTargets`, the library's variable from the GPU library table, a symlink back).

use std::collections::{BTreeMap, HashMap};

use super::is_gpu_output;
use super::plan::{Place, Plan, OUT};
use crate::classify::{library_of_data_dir, EntryType, FileClass};
use crate::evidence::PathEvidence;
use crate::report::{ArchRow, DataDirJoin, GpuRebuild, NixCode, Remedy, RemedyOption};
use crate::store::Closure;

/// Per GPU architecture: its files, their bytes, what only they refer to.
pub(super) fn archs(c: &Closure, ev: &PathEvidence, p: &Plan, targets: &[String]) -> Vec<ArchRow> {
    let entries = &ev.entries;
    let mut rows: BTreeMap<String, ArchRow> = BTreeMap::new();
    let mut file_arch: HashMap<&[u8], &str> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        let FileClass::Gpu(t) = &e.class else {
            continue;
        };
        let a = &t.base;
        let not_built = p.gpu_drops.get(a).is_some_and(|d| d.contains(&i));
        if e.entry == EntryType::Directory || (p.place[i] == Place::Deleted && !not_built) {
            continue;
        }
        file_arch.insert(e.path.as_bytes(), a);
        let output = match p.place[i] {
            Place::Output(o) => p.outputs[o].clone(),
            _ if not_built => String::new(),
            _ => OUT.to_string(),
        };
        let r = rows.entry(a.clone()).or_insert_with(|| ArchRow {
            arch: a.clone(),
            files: 0,
            bytes: 0,
            referenced_bytes: 0,
            output,
            kept: targets.is_empty() || targets.contains(a),
        });
        r.files += 1;
        r.bytes += e.size;
    }
    for r in &ev.references {
        if r.target == ev.path {
            continue;
        }
        let mut only: Option<&str> = None;
        let mut single = true;
        for h in &r.hits {
            match file_arch.get(h.fact.file.as_bytes()) {
                Some(a) if only.is_none_or(|o| o == *a) => only = Some(a),
                _ => single = false,
            }
        }
        if let (true, Some(a)) = (single, only) {
            if let Some(row) = rows.get_mut(a) {
                row.referenced_bytes +=
                    c.paths.get(&r.target).and_then(|i| i.nar_size).unwrap_or(0);
            }
        }
    }
    rows.into_values().collect()
}

/// What moved GPU files need to be found again (rocm-runtime.md, "Rules", point 5).
pub(super) fn remedies(ev: &PathEvidence, p: &Plan, targets: &[String]) -> Vec<Remedy> {
    let pname = crate::store::parse_package_name(ev.path.name()).pname;
    let mut v = Vec::new();
    for (o, name) in p.outputs.iter().enumerate() {
        if !is_gpu_output(name) {
            continue;
        }
        let mut dirs: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        for (i, e) in ev.entries.iter().enumerate() {
            if p.place[i] == Place::Output(o) {
                *dirs.entry(e.path.parent().to_vec()).or_default() += 1;
            }
        }
        let Some((dir, _)) = dirs.into_iter().max_by_key(|(_, n)| *n) else {
            continue;
        };
        let dir = String::from_utf8_lossy(&dir).into_owned();
        let lib = library_of_data_dir(&dir);
        let mut options = vec![RemedyOption::Rebuild {
            rebuild: NixCode::Facts(GpuRebuild::GpuTargets {
                attribute: pname.to_string(),
                targets: targets.to_vec(),
            }),
        }];
        if let Some((_, var)) = lib {
            options.push(RemedyOption::EnvVar {
                name: var.to_string(),
                value: NixCode::Facts(DataDirJoin {
                    package: pname.to_string(),
                    output: name.clone(),
                    directory: dir.clone(),
                }),
            });
        }
        options.push(RemedyOption::SymlinkBack);
        v.push(Remedy {
            output: name.clone(),
            directory: dir,
            library: lib.and_then(|(l, _)| l.data).map(|d| d.name.to_string()),
            options,
        });
    }
    v
}

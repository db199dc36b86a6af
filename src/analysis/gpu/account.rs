//! How one store path's bytes divide among GPU architectures ([`account`]): a
//! per-architecture file goes to its architecture whole, a fat binary's code objects to
//! their targets' base architectures, the rest to generic or host bytes.

use std::collections::{BTreeMap, BTreeSet};

use crate::classify::{base_arch, EntryType, FileClass};
use crate::elf::{DeviceContainer, DeviceObject};
use crate::evidence::EntryFact;

/// How one entry's bytes divide among architectures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryGpu<'a> {
    /// Host code or data: no GPU bytes.
    Host,
    /// The whole entry belongs to one base architecture.
    PerArch(String),
    /// Data every architecture needs.
    Generic,
    /// Code objects of several targets inside one file: each part's `stored` bytes go
    /// to its base architecture; the rest of the file is host code (`host_elf`) or
    /// generic (a multi-target bundle file).
    Fat {
        host_elf: bool,
        parts: Vec<(String, &'a DeviceObject)>,
    },
}

/// How [`EntryFact`] `e`'s bytes divide among architectures: its device code first
/// (content), then its class.
pub fn entry_gpu(e: &EntryFact) -> EntryGpu<'_> {
    if matches!(e.entry, EntryType::Regular | EntryType::Executable) && !e.device.is_empty() {
        let parts: Vec<(String, &DeviceObject)> =
            e.device.iter().map(|d| (base_arch(&d.target), d)).collect();
        let whole = e
            .device
            .iter()
            .all(|d| d.container == DeviceContainer::CodeObject);
        let host_elf = e.elf.is_some() && !whole;
        let mut bases: Vec<&str> = parts.iter().map(|(b, _)| b.as_str()).collect();
        bases.sort_unstable();
        bases.dedup();
        if !host_elf && bases.len() == 1 {
            return EntryGpu::PerArch(bases[0].to_string());
        }
        return EntryGpu::Fat { host_elf, parts };
    }
    if e.entry == EntryType::Directory {
        return EntryGpu::Host;
    }
    match &e.class {
        FileClass::Gpu(a) => EntryGpu::PerArch(a.base.clone()),
        FileClass::GpuGeneric => EntryGpu::Generic,
        _ => EntryGpu::Host,
    }
}

/// One architecture's share of one store path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArchShare {
    pub file_bytes: u64,
    pub elf_bytes: u64,
    pub code_bytes: u64,
    pub files: u64,
    pub links: u64,
    pub targets: BTreeSet<String>,
}

impl ArchShare {
    /// Bytes of files and code objects.
    pub fn bytes(&self) -> u64 {
        self.file_bytes.saturating_add(self.elf_bytes)
    }
}

/// What one store path's entries hold for each architecture.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Account {
    pub archs: BTreeMap<String, ArchShare>,
    pub generic_bytes: u64,
    pub generic_files: u64,
    pub fat_binaries: u64,
}

impl Account {
    /// Bytes of every architecture.
    pub fn gpu_bytes(&self) -> u64 {
        self.archs
            .values()
            .fold(0, |acc, s| acc.saturating_add(s.bytes()))
    }
}

/// Account for the entries of one store path. Never more than the entries' sizes:
/// parts of a fat binary that claim more than the file holds are capped at it.
pub fn account(entries: &[EntryFact]) -> Account {
    let mut a = Account::default();
    for e in entries {
        let is_link = e.entry == EntryType::Symlink;
        match entry_gpu(e) {
            EntryGpu::Host => {}
            EntryGpu::PerArch(arch) => {
                let s = a.archs.entry(arch).or_default();
                if is_link {
                    s.links += 1;
                } else {
                    s.file_bytes = s.file_bytes.saturating_add(e.size);
                    s.files += 1;
                    s.targets.extend(e.device.iter().map(|d| d.target.clone()));
                    s.code_bytes = e
                        .device
                        .iter()
                        .fold(s.code_bytes, |acc, d| acc.saturating_add(d.code));
                }
            }
            EntryGpu::Generic => {
                if !is_link {
                    a.generic_bytes = a.generic_bytes.saturating_add(e.size);
                    a.generic_files += 1;
                }
            }
            EntryGpu::Fat { host_elf, parts } => {
                a.fat_binaries += 1;
                let mut left = e.size;
                let mut seen: BTreeSet<&str> = BTreeSet::new();
                for (arch, d) in &parts {
                    let stored = d.stored.min(left);
                    left -= stored;
                    let s = a.archs.entry(arch.clone()).or_default();
                    s.elf_bytes = s.elf_bytes.saturating_add(stored);
                    s.code_bytes = s.code_bytes.saturating_add(d.code);
                    s.targets.insert(d.target.clone());
                    if seen.insert(arch) {
                        s.files += 1;
                    }
                }
                if !host_elf {
                    a.generic_bytes = a.generic_bytes.saturating_add(left);
                    a.generic_files += 1;
                }
            }
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::super::after::cut;
    use super::*;
    use std::collections::HashSet;

    fn e(path: &str, entry: EntryType, size: u64, class: FileClass) -> EntryFact {
        EntryFact::bare(path, entry, size, class)
    }

    fn obj(target: &str, container: DeviceContainer, stored: u64, code: u64) -> DeviceObject {
        DeviceObject {
            target: target.into(),
            container,
            stored,
            code,
        }
    }

    #[test]
    fn every_byte_is_counted_once() {
        let mut fat = e("lib/libk.so", EntryType::Regular, 10_000, FileClass::Lib);
        fat.elf = Some(Default::default());
        fat.device = vec![
            obj("gfx90a:xnack+", DeviceContainer::Offload, 3000, 3000),
            obj("gfx90a:xnack-", DeviceContainer::Offload, 2000, 2000),
            obj("gfx1030", DeviceContainer::Offload, 1000, 1000),
        ];
        let mut bundle2 = e("lib/k.co", EntryType::Regular, 500, FileClass::GpuGeneric);
        bundle2.device = vec![
            obj("gfx900", DeviceContainer::Compressed, 200, 800),
            obj("gfx1030", DeviceContainer::Compressed, 100, 400),
        ];
        let mut bare = e("lib/k-gfx906.co", EntryType::Regular, 77, FileClass::Lib);
        bare.device = vec![obj("gfx906:xnack-", DeviceContainer::CodeObject, 77, 77)];
        let entries = vec![
            e("", EntryType::Directory, 0, FileClass::Out),
            fat,
            bundle2,
            bare,
            e(
                "lib/x_gfx942.dat",
                EntryType::Regular,
                40,
                FileClass::Gpu("gfx942".into()),
            ),
            e(
                "lib/link_gfx942",
                EntryType::Symlink,
                9,
                FileClass::Gpu("gfx942".into()),
            ),
            e(
                "lib/Library.dat",
                EntryType::Regular,
                60,
                FileClass::GpuGeneric,
            ),
            e("bin/tool", EntryType::Executable, 1234, FileClass::Bin),
        ];
        let a = account(&entries);
        assert_eq!(a.archs["gfx90a"].elf_bytes, 5000);
        assert_eq!(a.archs["gfx90a"].files, 1);
        assert_eq!(
            a.archs["gfx90a"].targets.iter().collect::<Vec<_>>(),
            ["gfx90a:xnack+", "gfx90a:xnack-"]
        );
        assert_eq!(a.archs["gfx1030"].elf_bytes, 1100);
        assert_eq!(a.archs["gfx1030"].code_bytes, 1400);
        assert_eq!(a.archs["gfx900"].elf_bytes, 200);
        assert_eq!(a.archs["gfx906"].file_bytes, 77);
        assert_eq!(a.archs["gfx942"].file_bytes, 40);
        assert_eq!(a.archs["gfx942"].links, 1);
        // The bundle's header and the generic Tensile file.
        assert_eq!(a.generic_bytes, 200 + 60);
        assert_eq!(a.fat_binaries, 2);
        assert_eq!(a.gpu_bytes(), 5000 + 1100 + 200 + 77 + 40);

        let kept: HashSet<&str> = ["gfx1030"].into_iter().collect();
        let k = cut(&entries, 99_999, &kept);
        assert!(k.estimated);
        assert_eq!(k.files_dropped, 3); // bare, x_gfx942.dat, the link
        assert_eq!(k.objects_dropped, 3); // two gfx90a, one gfx900
        assert!(!k.whole);
        assert!(k.size_after < 99_999 - 5000 - 200 - 77 - 40 + 64);
    }

    #[test]
    fn lying_headers_never_count_more_than_the_file() {
        let mut fat = e("lib/libk.so", EntryType::Regular, 100, FileClass::Lib);
        fat.elf = Some(Default::default());
        fat.device = vec![
            obj("gfx90a", DeviceContainer::Offload, u64::MAX, 5),
            obj("gfx1030", DeviceContainer::Offload, 70, 70),
        ];
        let a = account(&[fat]);
        assert_eq!(a.gpu_bytes(), 100);
    }
}

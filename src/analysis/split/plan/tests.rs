use super::*;
use crate::classify::RuleId;
use crate::evidence::{EntryFact, HitFact, HitPlace, Reference, ScanStatus};
use crate::scan::{Location, RelPath};

const PKG: &str = "00000000000000000000000000000000-pkg-1.0";
const DEP: &str = "11111111111111111111111111111111-dep-1.0";

fn entry(path: &str, entry: EntryType, size: u64, class: FileClass) -> EntryFact {
    EntryFact::bare(path, entry, size, class)
}

fn hit(file: &str, kind: EvidenceKind, verdict: Verdict, detail: &str) -> JudgedHit {
    JudgedHit {
        fact: HitFact {
            file: RelPath::from_bytes(file.as_bytes().to_vec()),
            location: Location::Contents { offset: 7 },
            kind,
            kind_rule: RuleId::new("test"),
            detail: crate::classify::HitDetail::Excerpt(crate::classify::Excerpt::whole(
                detail.as_bytes(),
            )),
            target_exists: None,
        },
        place: HitPlace {
            class: FileClass::Out,
            reached: None,
        },
        verdict,
        rule: RuleId::new("test"),
    }
}

fn reference(target: &str, hits: Vec<JudgedHit>) -> Reference {
    Reference {
        target: StorePath::from_base_name(target).unwrap(),
        registered: true,
        self_reference: target == PKG,
        verdict: Verdict::Unknown,
        rule: RuleId::new("test"),
        capped: 0,
        kinds: BTreeMap::new(),
        hits,
    }
}

/// lib/libp.so (lib), lib/cmake/p/p.cmake (dev, naming $out/include and dep),
/// include/p.h (dev).
fn package(lib_hits: Vec<JudgedHit>) -> PathEvidence {
    use EntryType::{Directory as D, Regular as R};
    let me = format!("/nix/store/{PKG}");
    let mut dep_hits = lib_hits;
    dep_hits.push(hit(
        "lib/cmake/p/p.cmake",
        EvidenceKind::BuildConfig,
        Verdict::Dev,
        "/nix/store/11111111111111111111111111111111-dep-1.0/lib",
    ));
    PathEvidence {
        path: StorePath::from_base_name(PKG).unwrap(),
        status: ScanStatus::Scanned {
            files: 6,
            bytes: 0,
            cached: false,
        },
        references: vec![
            reference(DEP, dep_hits),
            reference(
                PKG,
                vec![hit(
                    "lib/cmake/p/p.cmake",
                    EvidenceKind::BuildConfig,
                    Verdict::Dev,
                    &format!("set(INC \"{me}/include\")"),
                )],
            ),
        ],
        warnings: Vec::new(),
        entries: vec![
            entry("", D, 0, FileClass::Out),
            entry("include", D, 0, FileClass::Dev),
            entry("include/p.h", R, 10, FileClass::Dev),
            entry("lib", D, 0, FileClass::Out),
            entry("lib/cmake", D, 0, FileClass::Dev),
            entry("lib/cmake/p", D, 0, FileClass::Dev),
            entry("lib/cmake/p/p.cmake", R, 100, FileClass::Dev),
            entry("lib/libp.so", R, 1000, FileClass::Lib),
        ],
    }
}

#[test]
fn files_go_to_their_class_outputs_and_self_references_land_by_sub_path() {
    let ev = package(Vec::new());
    let p = plan(&ev, &[]);
    assert_eq!(p.outputs, ["out", "dev"]);
    let dep = StorePath::from_base_name(DEP).unwrap();
    let me = StorePath::from_base_name(PKG).unwrap();
    // dev refers to dep and (through $out/include) to itself; out to nothing.
    assert!(p.references[0].is_empty());
    assert_eq!(p.references[1].get(&(dep, None)), Some(&1));
    assert_eq!(p.references[1].get(&(me, Some(1))), Some(&1));
    // The cmake file grows by "-dev" once the build writes $dev/include.
    let dev_tree = [
        (&b""[..], EntryType::Directory, 0),
        (b"include", EntryType::Directory, 0),
        (b"include/p.h", EntryType::Regular, 10),
        (b"lib", EntryType::Directory, 0),
        (b"lib/cmake", EntryType::Directory, 0),
        (b"lib/cmake/p", EntryType::Directory, 0),
        (b"lib/cmake/p/p.cmake", EntryType::Regular, 104),
    ];
    assert_eq!(p.sizes[1], nar_size_of(dev_tree.into_iter()));
    let out_tree = [
        (&b""[..], EntryType::Directory, 0),
        (b"lib", EntryType::Directory, 0),
        (b"lib/libp.so", EntryType::Regular, 1000),
    ];
    assert_eq!(p.sizes[0], nar_size_of(out_tree.into_iter()));
}

#[test]
fn a_source_path_is_removed_only_where_every_hit_of_it_is_removable() {
    let source = || {
        hit(
            "lib/libp.so",
            EvidenceKind::ElfSourcePath,
            Verdict::Removable,
            "/nix/store/11111111111111111111111111111111-dep-1.0/src/p.c",
        )
    };
    let p = plan(&package(vec![source()]), &[]);
    let dep = StorePath::from_base_name(DEP).unwrap();
    assert_eq!(p.remove_refs.get(&dep).map(|(f, _)| f.len()), Some(1));
    assert!(p.references[0].is_empty());
    // The same file also needs dep at run time: remove-references-to would break it.
    let needed = hit(
        "lib/libp.so",
        EvidenceKind::ElfNeeded,
        Verdict::Runtime,
        "/nix/store/11111111111111111111111111111111-dep-1.0/lib supplies libd.so",
    );
    let p = plan(&package(vec![source(), needed]), &[]);
    assert!(p.remove_refs.is_empty());
    assert_eq!(p.references[0].get(&(dep, None)), Some(&2));
}

/// issue 19, item 7: a JIT's include directory (an ELF string `<dep>/include`) and
/// a script a launcher passes to its interpreter (`<dep>/share/app/main.py`) are
/// not `__FILE__` strings: split keeps the reference and says why.
#[test]
fn an_include_directory_named_by_a_library_is_kept() {
    let dir = hit(
        "lib/libp.so",
        EvidenceKind::ElfSourcePath,
        Verdict::Removable,
        "/nix/store/11111111111111111111111111111111-dep-1.0/include",
    );
    let script = hit(
        "lib/libp.so",
        EvidenceKind::ElfSourcePath,
        Verdict::Removable,
        "/nix/store/11111111111111111111111111111111-dep-1.0/share/app/main.py",
    );
    for (h, named) in [(dir, "include"), (script, "share/app/main.py")] {
        let p = plan(&package(vec![h]), &[]);
        assert!(p.remove_refs.is_empty(), "{:?}", p.remove_refs);
        let dep = StorePath::from_base_name(DEP).unwrap();
        assert_eq!(p.references[0].get(&(dep, None)), Some(&1));
        assert!(
            p.warnings.iter().any(|w| matches!(
                w,
                SplitWarning::KeptForRunTime { target, sub, .. }
                    if target.ends_with("-dep-1.0") && sub == named
            )),
            "{:?}",
            p.warnings
        );
    }
}

#[test]
fn sub_paths_stop_at_the_first_byte_that_cannot_be_in_a_path() {
    let target = StorePath::from_base_name(PKG).unwrap();
    let h = hit(
        "x",
        EvidenceKind::Text,
        Verdict::Unknown,
        &format!("see \"/nix/store/{PKG}/lib/a.so\" and more"),
    );
    assert_eq!(sub_path(&h, &target), b"lib/a.so");
    let bare = hit(
        "x",
        EvidenceKind::Text,
        Verdict::Unknown,
        &format!("/nix/store/{PKG}"),
    );
    assert!(sub_path(&bare, &target).is_empty());
}

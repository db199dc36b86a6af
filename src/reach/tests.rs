//! Reachability on hand-made inventories: each test is one loader rule.

use super::*;
use crate::classify::FileClass;
use crate::evidence::{ElfLink, SearchDir};

const SD: &str = "/nix/store";

fn sp(c: char, name: &str) -> StorePath {
    let hash: String = std::iter::repeat_n(c, 32).collect();
    StorePath::from_base_name(&format!("{hash}-{name}")).unwrap()
}

fn abs(p: &StorePath, rel: &str) -> String {
    format!("{SD}/{p}/{rel}")
}

fn e(path: &str, entry: EntryType) -> EntryFact {
    EntryFact::bare(path, entry, 1, FileClass::Out)
}

fn dir(path: &str) -> EntryFact {
    e(path, EntryType::Directory)
}

fn file(path: &str) -> EntryFact {
    e(path, EntryType::Regular)
}

fn link(path: &str, target: &str) -> EntryFact {
    let mut x = e(path, EntryType::Symlink);
    x.symlink_target = Some(target.as_bytes().to_vec());
    x
}

fn elf(path: &str, needed: &[&str], search: &[(SearchTag, String)], dlopen: &[&str]) -> EntryFact {
    let mut x = e(path, EntryType::Regular);
    x.elf = Some(ElfLink {
        interpreter: None,
        needed: needed.iter().map(|s| s.to_string()).collect(),
        soname: None,
        search: search
            .iter()
            .map(|(tag, d)| SearchDir {
                tag: *tag,
                dir: Some(d.clone()),
            })
            .collect(),
        dlopen: dlopen.iter().map(|s| s.to_string()).collect(),
        data_paths: Vec::new(),
    });
    x
}

struct World {
    sd: StoreDir,
    paths: Vec<(StorePath, Vec<EntryFact>)>,
}

impl World {
    fn inv(&self) -> Inventory<'_> {
        Inventory::new(&self.sd, self.paths.iter().map(|(p, e)| (p, e.as_slice())))
    }
}

fn reached_names(w: &World, from: (usize, &str)) -> Vec<String> {
    let inv = w.inv();
    let start = inv
        .file(
            from.0 as u32,
            &RelPath::from_bytes(from.1.as_bytes().to_vec()),
        )
        .unwrap();
    let r = reach(&inv, [start]);
    let mut v: Vec<String> = (0..w.paths.len() as u32)
        .flat_map(|p| inv.files_of(p).collect::<Vec<_>>())
        .filter(|f| r.contains(*f))
        .map(|f| inv.display(f).replace(SD, ""))
        .collect();
    v.sort();
    v
}

fn has(v: &[String], p: &StorePath, rel: &str) -> bool {
    let want = format!("/{p}/{rel}");
    v.contains(&want)
}

#[test]
fn runpath_applies_to_own_needed_only_rpath_is_inherited() {
    let app = sp('a', "app");
    let mid_rp = sp('b', "mid-runpath");
    let mid_r = sp('c', "mid-rpath");
    let leaf = sp('d', "leaf");
    let w = World {
        sd: StoreDir::new(SD),
        paths: vec![
            (
                app.clone(),
                vec![
                    dir(""),
                    dir("bin"),
                    elf(
                        "bin/app",
                        &["libmidrp.so", "libmidr.so"],
                        &[
                            (SearchTag::Rpath, abs(&mid_rp, "lib")),
                            (SearchTag::Rpath, abs(&mid_r, "lib")),
                            (SearchTag::Rpath, abs(&leaf, "lib")),
                        ],
                        &[],
                    ),
                ],
            ),
            (
                mid_rp.clone(),
                vec![
                    dir(""),
                    dir("lib"),
                    // Has a RUNPATH (elsewhere): the app's RPATH is not searched for its
                    // libleaf.so, so it is not found.
                    elf(
                        "lib/libmidrp.so",
                        &["libleaf.so"],
                        &[(SearchTag::Runpath, abs(&mid_rp, "nothing"))],
                        &[],
                    ),
                ],
            ),
            (
                mid_r.clone(),
                vec![
                    dir(""),
                    dir("lib"),
                    // No RUNPATH: the app's RPATH is inherited and finds libleaf2.so.
                    elf("lib/libmidr.so", &["libleaf2.so"], &[], &[]),
                ],
            ),
            (
                leaf.clone(),
                vec![
                    dir(""),
                    dir("lib"),
                    file("lib/libleaf.so"),
                    file("lib/libleaf2.so"),
                ],
            ),
        ],
    };
    let v = reached_names(&w, (0, "bin/app"));
    assert!(has(&v, &mid_rp, "lib/libmidrp.so"), "{v:?}");
    assert!(has(&v, &mid_r, "lib/libmidr.so"), "{v:?}");
    assert!(has(&v, &leaf, "lib/libleaf2.so"), "RPATH inherited: {v:?}");
    assert!(
        !has(&v, &leaf, "lib/libleaf.so"),
        "RUNPATH is not inherited: {v:?}"
    );
}

#[test]
fn symlinked_lib_dir_scripts_cycles_dlopen_and_data_dirs() {
    let app = sp('a', "app");
    let libs = sp('b', "libs");
    let real = sp('c', "real");
    let sh = sp('d', "bash");
    let tool = sp('f', "tool");
    let lonely = sp('g', "lonely");
    let blas = sp('h', "rocblas");
    let w = World {
        sd: StoreDir::new(SD),
        paths: vec![
            (
                app.clone(),
                vec![
                    dir(""),
                    dir("bin"),
                    {
                        let mut s = e("bin/run", EntryType::Executable);
                        s.shebang = Some(abs(&sh, "bin/sh").into_bytes());
                        s.names = vec![abs(&tool, "bin/tool").into_bytes()];
                        s
                    },
                    elf(
                        "bin/app",
                        &["libreal.so", "librocblas.so"],
                        &[
                            (SearchTag::Runpath, abs(&libs, "lib")),
                            (SearchTag::Runpath, abs(&blas, "lib")),
                        ],
                        &["libplugin.so.1"],
                    ),
                ],
            ),
            // lib -> the real package's lib: the library is found through the symlink.
            (libs.clone(), vec![dir(""), link("lib", &abs(&real, "lib"))]),
            (
                real.clone(),
                vec![
                    dir(""),
                    dir("lib"),
                    // A cycle: libreal needs itself through its own RUNPATH.
                    elf(
                        "lib/libreal.so",
                        &["libreal.so"],
                        &[(SearchTag::Runpath, abs(&real, "lib"))],
                        &[],
                    ),
                    link("lib/libplugin.so.1", "libplugin.so.1.0"),
                    file("lib/libplugin.so.1.0"),
                    file("lib/unused.so"),
                ],
            ),
            (sh.clone(), vec![dir(""), dir("bin"), file("bin/sh")]),
            (
                tool.clone(),
                vec![dir(""), dir("bin"), file("bin/tool"), file("bin/other")],
            ),
            (
                lonely.clone(),
                vec![dir(""), dir("lib"), file("lib/liblonely.so")],
            ),
            (
                blas.clone(),
                vec![
                    dir(""),
                    dir("lib"),
                    file("lib/librocblas.so"),
                    dir("lib/rocblas"),
                    dir("lib/rocblas/library"),
                    file("lib/rocblas/library/Library_gfx90a.dat"),
                    file("lib/other.txt"),
                ],
            ),
        ],
    };
    let v = reached_names(&w, (0, ""));
    assert!(
        has(&v, &real, "lib/libreal.so"),
        "through the symlinked lib dir: {v:?}"
    );
    assert!(has(&v, &libs, "lib"), "the symlink itself: {v:?}");
    assert!(
        has(&v, &real, "lib/libplugin.so.1.0"),
        "dlopen by soname, via a symlink: {v:?}"
    );
    assert!(!has(&v, &real, "lib/unused.so"), "{v:?}");
    assert!(has(&v, &sh, "bin/sh"), "shebang: {v:?}");
    assert!(has(&v, &tool, "bin/tool"), "a path the script names: {v:?}");
    assert!(!has(&v, &tool, "bin/other"), "{v:?}");
    assert!(
        v.iter().all(|x| !x.contains("lonely")),
        "nobody loads it: {v:?}"
    );
    assert!(
        has(&v, &blas, "lib/rocblas/library/Library_gfx90a.dat"),
        "rocBLAS' data directory beside the library: {v:?}"
    );
    assert!(!has(&v, &blas, "lib/other.txt"), "{v:?}");

    // The chain that reaches the kernel file.
    let inv = w.inv();
    let start = inv.file(0, &RelPath::root()).unwrap();
    let r = reach(&inv, [start]);
    let k = inv
        .file(
            6,
            &RelPath::from_bytes(&b"lib/rocblas/library/Library_gfx90a.dat"[..]),
        )
        .unwrap();
    let chain: Vec<String> = r
        .chain(k)
        .iter()
        .map(|(f, why)| format!("{} {why:?}", inv.display(*f).replace(SD, "")))
        .collect();
    assert!(chain[0].ends_with("EntryPoint"), "{chain:?}");
    assert!(
        chain
            .iter()
            .any(|c| c.contains("DataDir(RuleId(\"data/rocblas-tensile\"))")),
        "{chain:?}"
    );
}

#[test]
fn resolve_handles_dotdot_loops_and_outside_paths() {
    let a = sp('a', "a");
    let w = World {
        sd: StoreDir::new(SD),
        paths: vec![(
            a.clone(),
            vec![
                dir(""),
                dir("lib"),
                file("lib/x"),
                link("lib/up", "../lib/x"),
                link("lib/l1", "l2"),
                link("lib/l2", "l1"),
                link("lib/out", "/etc/passwd"),
            ],
        )],
    };
    let inv = w.inv();
    let x = inv.file(0, &RelPath::from_bytes(&b"lib/x"[..])).unwrap();
    assert_eq!(
        inv.resolve(abs(&a, "lib/up").as_bytes()).map(|r| r.0),
        Some(x)
    );
    assert_eq!(
        inv.resolve(abs(&a, "lib/../lib/./x").as_bytes())
            .map(|r| r.0),
        Some(x)
    );
    assert!(inv.resolve(abs(&a, "lib/l1").as_bytes()).is_none(), "loop");
    assert!(
        inv.resolve(abs(&a, "lib/out").as_bytes()).is_none(),
        "outside the store"
    );
    assert!(inv.resolve(b"/etc/passwd").is_none());
    assert!(inv.resolve(abs(&a, "lib/missing").as_bytes()).is_none());
}

#[test]
fn data_strings_reach_directories_and_pattern_files_but_never_the_librarys_own_dir() {
    let app = sp('a', "app");
    let blas = sp('b', "fastblas");
    let mut lib = elf("lib/libfast.so", &[], &[], &[]);
    if let Some(l) = lib.elf.as_mut() {
        l.data_paths = ["fast/library", "idx_%s.dat", "../lib", "missing/dir"]
            .map(String::from)
            .to_vec();
    }
    let w = World {
        sd: StoreDir::new(SD),
        paths: vec![
            (
                app.clone(),
                vec![
                    dir(""),
                    elf(
                        "app",
                        &["libfast.so"],
                        &[(SearchTag::Runpath, abs(&blas, "lib"))],
                        &[],
                    ),
                ],
            ),
            (
                blas.clone(),
                vec![
                    dir(""),
                    dir("lib"),
                    lib,
                    file("lib/other.so"),
                    dir("lib/fast"),
                    dir("lib/fast/library"),
                    file("lib/fast/library/idx_gfx90a.dat"),
                    file("lib/fast/library/k_gfx90a.co"),
                ],
            ),
        ],
    };
    let v = reached_names(&w, (0, ""));
    assert!(has(&v, &blas, "lib/fast/library/k_gfx90a.co"), "{v:?}");
    assert!(
        !has(&v, &blas, "lib/other.so"),
        "`../lib` is not a data dir: {v:?}"
    );
    let inv = w.inv();
    let r = reach(&inv, [inv.file(0, &RelPath::root()).unwrap()]);
    let why = |rel: &str| {
        let f = inv
            .file(1, &RelPath::from_bytes(rel.as_bytes().to_vec()))
            .unwrap();
        r.chain(f).last().unwrap().1.clone()
    };
    assert_eq!(
        why("lib/fast/library/idx_gfx90a.dat"),
        Why::DataString("idx_%s.dat".into()),
        "the pattern names the index before the directory's contents are reached"
    );
    assert_eq!(why("lib/fast/library/k_gfx90a.co"), Why::Inside);
    assert_eq!(
        why("lib/fast/library"),
        Why::DataString("fast/library".into())
    );
    assert!(matches_pattern(b"idx_%s.dat", b"a/idx_gfx90a.dat"));
    assert!(matches_pattern(b"lib/%s.co", b"lib/x.co"));
    assert!(!matches_pattern(b"lib/%s.co", b"lib/a/x.co"));
    assert!(!matches_pattern(b"idx_%s.dat", b"idx_.dat"));
}

/// issue 31, item 11: a data directory is resolved inside the store path it is counted
/// from. A library at its store path's top with a row climbing `..` into another store
/// path (`../<hash>-secrets/keys`) reaches nothing there; `share` beside it is reached.
#[test]
fn a_data_dir_never_leaves_the_store_path_it_is_resolved_in() {
    let app = sp('a', "app");
    let lib = sp('b', "libx");
    let other = sp('c', "secrets");
    let w = World {
        sd: StoreDir::new(SD),
        paths: vec![
            (
                app.clone(),
                vec![
                    dir(""),
                    dir("bin"),
                    elf(
                        "bin/app",
                        &["libx.so"],
                        &[(SearchTag::Runpath, abs(&lib, ""))],
                        &[],
                    ),
                ],
            ),
            (
                lib.clone(),
                vec![dir(""), file("libx.so"), dir("share"), file("share/data")],
            ),
            (other.clone(), vec![dir(""), dir("keys"), file("keys/k")]),
        ],
    };
    let rule = DataDirRule {
        id: RuleId::intern("my/escape"),
        library: "libx.so".into(),
        base: DataBase::RealPath,
        dirs: vec![format!("../{other}/keys"), "share".into()],
    };
    let inv = w.inv();
    let start = inv
        .file(0, &RelPath::from_bytes(b"bin/app".to_vec()))
        .unwrap();
    let r = reach_with(&inv, [start], std::slice::from_ref(&rule));
    let reached: Vec<String> = (0..w.paths.len() as u32)
        .flat_map(|p| inv.files_of(p).collect::<Vec<_>>())
        .filter(|f| r.contains(*f))
        .map(|f| inv.display(f).replace(SD, ""))
        .collect();
    assert!(has(&reached, &lib, "share/data"), "{reached:?}");
    assert!(!has(&reached, &other, "keys/k"), "{reached:?}");
}

/// rocBLAS 5.5 as Debian builds it: `/rocblas/2.47.0/library` joined to the library's
/// directory, `/Library.dat` joined to that, and beside that non-lazy master (too
/// large to decode) every code object of a processor opened on that processor only;
/// a `<dir>/<processor>/` sub-directory and all below it on that processor only; a
/// name piece and a processor (`/Library_lazy_` + `gfx1100` + `.dat`) too.
#[test]
fn a_non_lazy_master_opens_each_processors_code_objects_on_that_processor() {
    let app = sp('a', "app");
    let blas = sp('b', "rocblas");
    let mut lib = elf("lib/librocblas.so.0", &[], &[], &[]);
    if let Some(l) = lib.elf.as_mut() {
        l.data_paths = [
            "/rocblas/2.47.0/library",
            "/Library.dat",
            "/Library_lazy_",
            "*co",
        ]
        .map(String::from)
        .to_vec();
    }
    let d = "lib/rocblas/2.47.0/library";
    let mut master = file(&format!("{d}/Library.dat"));
    master.size = crate::elf::MAX_INDEX + 1;
    let w = World {
        sd: StoreDir::new(SD),
        paths: vec![
            (
                app.clone(),
                vec![
                    dir(""),
                    elf(
                        "app",
                        &["librocblas.so.0"],
                        &[(SearchTag::Runpath, abs(&blas, "lib"))],
                        &[],
                    ),
                ],
            ),
            (
                blas.clone(),
                vec![
                    dir(""),
                    dir("lib"),
                    lib,
                    dir("lib/rocblas"),
                    dir("lib/rocblas/2.47.0"),
                    dir(d),
                    file(&format!("{d}/Kernels.so-000-gfx90a-xnack+.hsaco")),
                    master,
                    file(&format!("{d}/Library_gfx1030.co")),
                    file(&format!("{d}/Library_lazy_gfx1100.dat")),
                    file(&format!("{d}/notes.txt")),
                    dir(&format!("{d}/gfx908")),
                    file(&format!("{d}/gfx908/k.bin")),
                ],
            ),
        ],
    };
    let inv = w.inv();
    let r = reach(&inv, [inv.file(0, &RelPath::root()).unwrap()]);
    let on = |rel: &str| {
        let f = inv
            .file(1, &RelPath::from_bytes(format!("{d}/{rel}").into_bytes()))
            .unwrap();
        assert!(r.contains(f), "{rel} is reached");
        r.processors(f)
            .map(|s| s.iter().cloned().collect::<Vec<_>>().join(","))
            .unwrap_or_else(|| "every".into())
    };
    assert_eq!(on("Library.dat"), "every");
    assert_eq!(on("Library_gfx1030.co"), "gfx1030");
    assert_eq!(on("Kernels.so-000-gfx90a-xnack+.hsaco"), "gfx90a");
    assert_eq!(on("Library_lazy_gfx1100.dat"), "gfx1100");
    assert_eq!(on("gfx908"), "gfx908");
    assert_eq!(on("gfx908/k.bin"), "gfx908");
    // The directory is reached as a whole; a file no rule narrows is opened everywhere.
    assert_eq!(on("notes.txt"), "every");
    let f = inv
        .file(
            1,
            &RelPath::from_bytes(format!("{d}/Library_gfx1030.co").into_bytes()),
        )
        .unwrap();
    match r.chain(f).last().unwrap().1.clone() {
        Why::Processor { processor, pattern } => {
            assert_eq!(processor, "gfx1030");
            assert_eq!(
                pattern,
                "/rocblas/2.47.0/library + /*gfx1030*co, the code objects non-lazy Library.dat loads"
            );
        }
        w => panic!("{w:?}"),
    }
}

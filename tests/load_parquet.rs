//! Narinfo datasets in Parquet (`src/load/narinfo_parquet.rs`).
//!
//! 1. Files written by a real producer: the ROCm test world copied into a binary cache
//!    with `nix copy`, its narinfos written by DuckDB (`COPY … TO … (FORMAT parquet)`,
//!    tests/narinfo_parquet.py, PyPI `duckdb` in a virtualenv cached under
//!    `target/py-duckdb`) in every layout nixcut reads; loaded by nixcut and compared
//!    with the same cache read through its narinfos, path by path, and by `why`'s and
//!    `diff`'s JSON. Skips without Nix or DuckDB, unless `NIXCUT_REQUIRE_NIX=1`.
//! 2. Hostile files (truncated, a column missing, of the wrong type, nulls, bad store
//!    paths) written with the `parquet` crate's own writer: errors naming the file, the
//!    row group, the row and the column.
//! 3. A property test: random closures written in random row groups and layouts load
//!    back as written, whole and as the closure of a random root.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

use common::*;
use nixcut::load::{load, LoadError, LoadOptions};
use nixcut::store::{Closure, SourceKind};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use proptest::prelude::*;
use serde_json::Value;

/// The DuckDB release the producer tests use.
const DUCKDB: &str = "duckdb==1.4.4";

/// A Python with DuckDB: a virtualenv under `target/py-duckdb`, made (and `duckdb`
/// installed from PyPI) on first use. `None` after saying why when it cannot be had;
/// under `NIXCUT_REQUIRE_NIX=1` that is a failure instead.
fn duckdb_python(test: &str) -> Option<PathBuf> {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let venv = repo().join("target/py-duckdb");
    let python = venv.join("bin/python");
    let works = || {
        Command::new(&python)
            .args(["-c", "import duckdb"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !works() {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .is_ok_and(|o| o.status.success())
            && Command::new(&python)
                .args(["-m", "pip", "install", "--quiet", DUCKDB])
                .output()
                .is_ok_and(|o| o.status.success());
        if !made || !works() {
            let why = format!(
                "cannot make a virtualenv with `pip install {DUCKDB}` at {}",
                venv.display()
            );
            if std::env::var("NIXCUT_REQUIRE_NIX").as_deref() == Ok("1") {
                panic!("{test}: {why} (NIXCUT_REQUIRE_NIX=1)");
            }
            eprintln!("SKIP {test}: {why}; set NIXCUT_REQUIRE_NIX=1 to make this a failure");
            return None;
        }
    }
    Some(python)
}

/// The ROCm world's closure as a binary cache made by `nix copy`, once.
fn world_cache() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let w = rocm_world();
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}?compression=xz", dir.path().display());
        nix_stdout("nix", &["copy", "--to", &url, &w.root]);
        dir
    })
    .path()
}

/// Write `cache`'s narinfos to `out` with DuckDB (see tests/narinfo_parquet.py).
fn duckdb_write(python: &Path, cache: &Path, out: &Path, layout: &[&str]) {
    let o = Command::new(python)
        .arg(repo().join("tests/narinfo_parquet.py"))
        .arg(cache)
        .arg(out)
        .args(layout)
        .output()
        .expect("run tests/narinfo_parquet.py");
    assert!(
        o.status.success(),
        "narinfo_parquet.py {layout:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A closure's facts, by full path: NAR size, references, deriver, download size and
/// NAR hash.
type Facts = BTreeMap<
    String,
    (
        Option<u64>,
        Vec<String>,
        Option<String>,
        Option<u64>,
        String,
    ),
>;

fn facts(c: &Closure) -> Facts {
    c.paths
        .values()
        .map(|i| {
            (
                c.store_dir.display(&i.path),
                (
                    i.nar_size,
                    i.references
                        .iter()
                        .map(|r| c.store_dir.display(r))
                        .collect(),
                    i.deriver.as_ref().map(|d| c.store_dir.display(d)),
                    i.download_size,
                    i.nar_hash
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default(),
                ),
            )
        })
        .collect()
}

fn with_roots(roots: &[&str]) -> LoadOptions {
    LoadOptions {
        roots: roots.iter().map(|r| r.to_string()).collect(),
        ..LoadOptions::default()
    }
}

/// `why`'s JSON without `source` (which says where the closure came from).
fn why_json(input: &str, root: &str) -> Value {
    let mut v = json(&[
        "why",
        "--format",
        "json",
        "--no-evidence",
        input,
        "--root",
        root,
    ]);
    v.as_object_mut().unwrap().remove("source");
    v
}

#[test]
fn duckdb_datasets_load_as_the_binary_cache_they_were_written_from() {
    let test = "duckdb_datasets_load_as_the_binary_cache_they_were_written_from";
    if !nix_or_skip(test) {
        return;
    }
    let Some(python) = duckdb_python(test) else {
        return;
    };
    let cache = world_cache();
    let root = rocm_world().root.clone();
    let from_narinfos = load(cache.to_str().unwrap(), &LoadOptions::default()).unwrap();
    assert_eq!(from_narinfos.source, SourceKind::BinaryCache);
    assert!(
        from_narinfos.paths.len() > 20,
        "{}",
        from_narinfos.paths.len()
    );
    let want = facts(&from_narinfos);
    let want_why = why_json(cache.to_str().unwrap(), "llama-cpp-rocm");
    let tmp = tempfile::tempdir().unwrap();
    let layouts: [&[&str]; 5] = [
        &["list", "full", "zstd", "122880"],
        &["string", "base", "snappy", "122880"],
        &["string", "full", "uncompressed", "2048"],
        // A partitioned dataset: a directory of files.
        &["list", "base", "gzip", "2048", "3"],
        &["list", "full", "snappy", "2048", "2"],
    ];
    for layout in layouts {
        let out = tmp.path().join(layout.join("-"));
        duckdb_write(&python, cache, &out, layout);
        let input = out.to_str().unwrap();
        // Whole, and as the closure of the root (named by path, package name, hash).
        let whole = load(input, &LoadOptions::default()).unwrap();
        assert_eq!(whole.source, SourceKind::NarinfoDataset, "{layout:?}");
        assert!(
            whole.warnings.is_empty(),
            "{layout:?}: {:?}",
            whole.warnings
        );
        assert_eq!(facts(&whole), want, "{layout:?}");
        let hash = &Path::new(&root).file_name().unwrap().to_str().unwrap()[..32];
        for query in [root.as_str(), "llama-cpp-rocm", hash] {
            let c = load(input, &with_roots(&[query])).unwrap();
            assert_eq!(facts(&c), want, "{layout:?} --root {query}");
        }
        // A path inside the closure: its own closure only.
        let hipblas = rocm_world().path("hipblas");
        let sub = load(input, &with_roots(&["hipblas"])).unwrap();
        let sub_want =
            facts(&from_narinfos.restrict_to(&[from_narinfos.select_root(hipblas).unwrap()]));
        assert_eq!(facts(&sub), sub_want, "{layout:?} --root hipblas");
        assert!(sub.paths.len() < whole.paths.len());
        // The commands: `why` gives the same JSON, `diff` against the cache no change.
        assert_eq!(why_json(input, "llama-cpp-rocm"), want_why, "{layout:?}");
        let d = json(&[
            "diff",
            "--format",
            "json",
            "--root",
            "llama-cpp-rocm",
            cache.to_str().unwrap(),
            input,
        ]);
        assert_eq!(d["old"]["closure_size"], d["new"]["closure_size"], "{d}");
        assert_eq!(
            d["packages"].as_array().map(Vec::len),
            Some(0),
            "{layout:?}: {d}"
        );
    }
}

/// A value of a test column.
#[derive(Debug, Clone)]
enum Values {
    Text(Vec<Option<String>>),
    /// A `list<string>`: a null list, or elements that may be null.
    List(Vec<Option<Vec<Option<String>>>>),
    I64(Vec<Option<i64>>),
    I32(Vec<Option<i32>>),
}

/// One column of a test file: its name and values, and whether it is `required`.
#[derive(Debug, Clone)]
struct Col {
    name: &'static str,
    required: bool,
    values: Values,
}

impl Col {
    fn schema(&self) -> String {
        let rep = if self.required {
            "required"
        } else {
            "optional"
        };
        let n = self.name;
        match self.values {
            Values::Text(_) => format!("{rep} binary {n} (UTF8);"),
            Values::List(_) => format!(
                "{rep} group {n} (LIST) {{ repeated group list {{ optional binary element (UTF8); }} }}"
            ),
            Values::I64(_) => format!("{rep} int64 {n};"),
            Values::I32(_) => format!("{rep} int32 {n};"),
        }
    }
}

/// Write `cols` (of equal length) to `path` with the `parquet` crate's writer, in row
/// groups of `group` rows.
fn write_parquet(path: &Path, cols: &[Col], group: usize) {
    let fields: Vec<String> = cols.iter().map(Col::schema).collect();
    let schema =
        Arc::new(parse_message_type(&format!("message m {{ {} }}", fields.join(" "))).unwrap());
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(File::create(path).unwrap(), schema, props).unwrap();
    let rows = match &cols[0].values {
        Values::Text(v) => v.len(),
        Values::List(v) => v.len(),
        Values::I64(v) => v.len(),
        Values::I32(v) => v.len(),
    };
    let mut start = 0;
    while start < rows || (rows == 0 && start == 0) {
        let end = (start + group.max(1)).min(rows);
        let mut rg = w.next_row_group().unwrap();
        for col in cols {
            let mut cw = rg.next_column().unwrap().unwrap();
            let opt = !col.required;
            let flat_def = |present: bool| i16::from(present);
            match &col.values {
                Values::Text(v) => {
                    let part = &v[start..end];
                    let vals: Vec<ByteArray> = part
                        .iter()
                        .flatten()
                        .map(|s| ByteArray::from(s.as_str()))
                        .collect();
                    let def: Vec<i16> = part.iter().map(|x| flat_def(x.is_some())).collect();
                    cw.typed::<ByteArrayType>()
                        .write_batch(&vals, opt.then_some(&def[..]), None)
                        .unwrap();
                }
                Values::I64(v) => {
                    let part = &v[start..end];
                    let vals: Vec<i64> = part.iter().flatten().copied().collect();
                    let def: Vec<i16> = part.iter().map(|x| flat_def(x.is_some())).collect();
                    cw.typed::<Int64Type>()
                        .write_batch(&vals, opt.then_some(&def[..]), None)
                        .unwrap();
                }
                Values::I32(v) => {
                    let part = &v[start..end];
                    let vals: Vec<i32> = part.iter().flatten().copied().collect();
                    let def: Vec<i16> = part.iter().map(|x| flat_def(x.is_some())).collect();
                    cw.typed::<Int32Type>()
                        .write_batch(&vals, opt.then_some(&def[..]), None)
                        .unwrap();
                }
                Values::List(v) => {
                    // Levels of `optional group (LIST) { repeated group list { optional
                    // element } }`: 0 a null list, 1 an empty one, 2 a null element, 3 a
                    // value (one less each when the list itself is required).
                    let base = i16::from(opt);
                    let (mut vals, mut def, mut rep) = (Vec::new(), Vec::new(), Vec::new());
                    for list in &v[start..end] {
                        match list {
                            None => {
                                def.push(0);
                                rep.push(0);
                            }
                            Some(items) if items.is_empty() => {
                                def.push(base);
                                rep.push(0);
                            }
                            Some(items) => {
                                for (i, item) in items.iter().enumerate() {
                                    rep.push(i16::from(i > 0));
                                    match item {
                                        Some(s) => {
                                            def.push(base + 2);
                                            vals.push(ByteArray::from(s.as_str()));
                                        }
                                        None => def.push(base + 1),
                                    }
                                }
                            }
                        }
                    }
                    cw.typed::<ByteArrayType>()
                        .write_batch(&vals, Some(&def), Some(&rep))
                        .unwrap();
                }
            }
            cw.close().unwrap();
        }
        rg.close().unwrap();
        start = end;
        if rows == 0 {
            break;
        }
    }
    w.close().unwrap();
}

fn hash(i: usize) -> String {
    // 32 nix32 characters, distinct for every i below 32^3, all starting `00000`.
    let alphabet = b"0123456789abcdfghijklmnpqrsvwxyz";
    let mut h = vec![b'0'; 32];
    h[31] = alphabet[i % 32];
    h[30] = alphabet[(i / 32) % 32];
    h[29] = alphabet[(i / 1024) % 32];
    String::from_utf8(h).unwrap()
}

fn base(i: usize) -> String {
    format!("{}-pkg{i}-1.0", hash(i))
}

/// A small valid dataset: `n` paths, path i referring to i+1 and i+2, in row groups
/// of `group`.
fn chain(n: usize) -> Vec<Col> {
    vec![
        Col {
            name: "StorePath",
            required: false,
            values: Values::Text(
                (0..n)
                    .map(|i| Some(format!("/nix/store/{}", base(i))))
                    .collect(),
            ),
        },
        Col {
            name: "References",
            required: false,
            values: Values::List(
                (0..n)
                    .map(|i| Some((i + 1..(i + 3).min(n)).map(|j| Some(base(j))).collect()))
                    .collect(),
            ),
        },
        Col {
            name: "NarSize",
            required: false,
            values: Values::I64((0..n).map(|i| Some(100 + i as i64)).collect()),
        },
    ]
}

fn load_err(path: &Path) -> String {
    let e = load(path.to_str().unwrap(), &LoadOptions::default()).unwrap_err();
    assert!(
        matches!(e, LoadError::Parquet { .. } | LoadError::Invalid { .. }),
        "{e:?}"
    );
    e.to_string()
}

fn set(cols: &mut [Col], name: &str, values: Values) {
    cols.iter_mut().find(|c| c.name == name).unwrap().values = values;
}

#[test]
fn a_valid_file_in_several_row_groups_loads_whole_and_by_root() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("chain.parquet");
    write_parquet(&p, &chain(50), 7);
    let whole = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap();
    assert_eq!(whole.paths.len(), 50);
    assert!(whole.warnings.is_empty(), "{:?}", whole.warnings);
    // The closure of path 40 is 40..50, read from the last two row groups.
    let c = load(p.to_str().unwrap(), &with_roots(&["pkg40"])).unwrap();
    let names: BTreeSet<String> = c.paths.keys().map(|p| p.name().to_string()).collect();
    let want: BTreeSet<String> = (40..50).map(|i| format!("pkg{i}-1.0")).collect();
    assert_eq!(names, want);
    // Detected by content: the same file without the extension, and a directory.
    let renamed = dir.path().join("data");
    std::fs::copy(&p, &renamed).unwrap();
    assert_eq!(
        load(renamed.to_str().unwrap(), &LoadOptions::default())
            .unwrap()
            .paths
            .len(),
        50
    );
    let e = load(p.to_str().unwrap(), &with_roots(&["nothing-here"]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("chain.parquet") && e.contains("`nothing-here`"),
        "{e}"
    );
    // A name most rows share is refused instead of loading them all.
    let e = load(p.to_str().unwrap(), &with_roots(&["00000"]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("matches more than"), "{e}");
}

#[test]
fn damaged_files_name_the_file_and_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.parquet");
    write_parquet(&good, &chain(30), 10);
    let bytes = std::fs::read(&good).unwrap();
    // Cut anywhere: never a panic, always an error naming the file.
    for cut in [4, 5, 100, bytes.len() / 2, bytes.len() - 9, bytes.len() - 1] {
        let p = dir.path().join(format!("cut-{cut}.parquet"));
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let e = load_err(&p);
        assert!(e.contains(&format!("cut-{cut}.parquet")), "{e}");
    }
    // Bytes flipped inside the data pages (the footer intact).
    for at in [20, 60, 150] {
        let mut b = bytes.clone();
        for x in &mut b[at..at + 8] {
            *x ^= 0x5a;
        }
        let p = dir.path().join(format!("flip-{at}.parquet"));
        std::fs::write(&p, &b).unwrap();
        match load(p.to_str().unwrap(), &LoadOptions::default()) {
            Ok(c) => assert!(c.paths.len() <= 30),
            Err(e) => assert!(e.to_string().contains(&format!("flip-{at}.parquet")), "{e}"),
        }
    }
    // Read from a pipe: refused, saying why.
    let (code, _, err) = decode(
        nixcut()
            .args(["why", "-"])
            .stdin(File::open(&good).unwrap())
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("Parquet file") && err.contains("regular file"),
        "{err}"
    );
}

#[test]
fn bad_columns_and_values_name_row_group_row_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let case = |name: &str, cols: Vec<Col>| {
        let p = dir.path().join(format!("{name}.parquet"));
        write_parquet(&p, &cols, 10);
        let e = load_err(&p);
        assert!(e.contains(&format!("{name}.parquet")), "{e}");
        e
    };
    // A missing column, with the columns there are.
    let e = case(
        "no-refs",
        chain(30)
            .into_iter()
            .filter(|c| c.name != "References")
            .collect(),
    );
    assert!(
        e.contains("no `References` column") && e.contains("StorePath, NarSize"),
        "{e}"
    );
    // Wrong types.
    let mut cols = chain(30);
    set(
        &mut cols,
        "NarSize",
        Values::Text((0..30).map(|i| Some(i.to_string())).collect()),
    );
    let e = case("size-text", cols);
    assert!(
        e.contains("column `NarSize`") && e.contains("expected sizes (integers)"),
        "{e}"
    );
    let mut cols = chain(30);
    set(
        &mut cols,
        "StorePath",
        Values::I32((0..30).map(Some).collect()),
    );
    let e = case("path-int", cols);
    assert!(
        e.contains("column `StorePath`") && e.contains("INT32"),
        "{e}"
    );
    // A null store path in the second row group: row 13.
    let mut cols = chain(30);
    let Values::Text(v) = &mut cols[0].values else {
        unreachable!()
    };
    v[13] = None;
    let e = case("null-path", cols);
    assert!(
        e.contains("row group 1, row 13, column `StorePath`: the store path is null"),
        "{e}"
    );
    // A bad store path and a bad reference, in the third.
    let mut cols = chain(30);
    let Values::Text(v) = &mut cols[0].values else {
        unreachable!()
    };
    v[25] = Some("/nix/store/not-a-hash".into());
    let e = case("bad-path", cols);
    assert!(
        e.contains("row group 2, row 25, column `StorePath`: expected a store path"),
        "{e}"
    );
    let mut cols = chain(30);
    let Values::List(v) = &mut cols[1].values else {
        unreachable!()
    };
    v[21] = Some(vec![Some("/etc/passwd".into())]);
    let e = case("bad-ref", cols);
    assert!(
        e.contains("row group 2, row 21, column `References`"),
        "{e}"
    );
    // A null reference; a negative size.
    let mut cols = chain(30);
    let Values::List(v) = &mut cols[1].values else {
        unreachable!()
    };
    v[3] = Some(vec![Some(base(4)), None]);
    let e = case("null-ref", cols);
    assert!(
        e.contains("row group 0, row 3, column `References`: a reference is null"),
        "{e}"
    );
    let mut cols = chain(30);
    set(
        &mut cols,
        "NarSize",
        Values::I64(
            (0..30)
                .map(|i| Some(if i == 17 { -5 } else { 1 }))
                .collect(),
        ),
    );
    let e = case("negative", cols);
    assert!(
        e.contains("row group 1, row 17, column `NarSize`") && e.contains("-5"),
        "{e}"
    );
    // With a root, the same errors from the index pass or the walk.
    let mut cols = chain(30);
    let Values::List(v) = &mut cols[1].values else {
        unreachable!()
    };
    v[28] = Some(vec![Some("x".into())]);
    let p = dir.path().join("bad-ref-root.parquet");
    write_parquet(&p, &cols, 10);
    let e = load(p.to_str().unwrap(), &with_roots(&["pkg27"]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("row group 2, row 28, column `References`"),
        "{e}"
    );
    // Nulls that are allowed: a null or empty reference list, a null size (a warning).
    let mut cols = chain(30);
    let Values::List(v) = &mut cols[1].values else {
        unreachable!()
    };
    v[29] = None;
    v[28] = Some(Vec::new());
    set(
        &mut cols,
        "NarSize",
        Values::I64((0..30).map(|i| (i != 5).then_some(1)).collect()),
    );
    let p = dir.path().join("nulls.parquet");
    write_parquet(&p, &cols, 10);
    let c = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap();
    assert_eq!(c.paths.len(), 30);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
}

/// A random closure: `n` paths, references to later paths only (a DAG), sizes.
fn closures() -> impl Strategy<Value = (Vec<Vec<usize>>, Vec<u32>)> {
    (1usize..60).prop_flat_map(|n| {
        (
            (0..n)
                .map(|i| {
                    proptest::collection::btree_set(i..n, 0..4)
                        .prop_map(|s| s.into_iter().collect())
                })
                .collect::<Vec<_>>(),
            proptest::collection::vec(any::<u32>(), n),
        )
    })
}

proptest! {
    #![proptest_config(proptest_config(48, 200))]

    /// Written with random row groups, in either reference layout and either path
    /// spelling, a closure loads back as written; with a root, as its closure.
    #[test]
    fn round_trip((refs, sizes) in closures(), group in 1usize..20, list in any::<bool>(), full in any::<bool>(), root in any::<prop::sample::Index>()) {
        let n = refs.len();
        let name = |i: usize| if full { format!("/nix/store/{}", base(i)) } else { base(i) };
        let cols = vec![
            Col { name: "store_path", required: true, values: Values::Text((0..n).map(|i| Some(name(i))).collect()) },
            Col {
                name: "references",
                required: false,
                values: if list {
                    Values::List(refs.iter().map(|r| Some(r.iter().map(|&j| Some(name(j))).collect())).collect())
                } else {
                    Values::Text(refs.iter().map(|r| Some(r.iter().map(|&j| name(j)).collect::<Vec<_>>().join(" "))).collect())
                },
            },
            Col { name: "nar_size", required: true, values: Values::I64(sizes.iter().map(|&s| Some(i64::from(s))).collect()) },
        ];
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.parquet");
        write_parquet(&p, &cols, group);
        let c = load(p.to_str().unwrap(), &LoadOptions::default()).unwrap();
        let got: BTreeMap<String, (Option<u64>, BTreeSet<String>)> = c
            .paths
            .values()
            .map(|i| {
                let refs = i.references.iter().map(|r| r.name().to_string()).collect();
                (i.path.name().to_string(), (i.nar_size, refs))
            })
            .collect();
        let want: BTreeMap<String, (Option<u64>, BTreeSet<String>)> = (0..n)
            .map(|i| {
                let refs = refs[i].iter().map(|&j| format!("pkg{j}-1.0")).collect();
                (format!("pkg{i}-1.0"), (Some(u64::from(sizes[i])), refs))
            })
            .collect();
        prop_assert_eq!(got, want);
        // The closure of one root, by a brute-force walk.
        let r = root.index(n);
        let mut keep = BTreeSet::new();
        let mut stack = vec![r];
        while let Some(i) = stack.pop() {
            if keep.insert(i) {
                stack.extend(&refs[i]);
            }
        }
        let sub = load(p.to_str().unwrap(), &with_roots(&[&base(r)])).unwrap();
        let got: BTreeSet<String> = sub.paths.keys().map(|p| p.name().to_string()).collect();
        let want: BTreeSet<String> = keep.iter().map(|i| format!("pkg{i}-1.0")).collect();
        prop_assert_eq!(got, want);
    }
}

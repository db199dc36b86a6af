//! The analysis is pure (docs/development.md): `src/analysis/` computes reports from
//! what was gathered above it and touches no file system or environment itself; files
//! come through `src/source/` (the `FileSource` trait and its helpers).

use std::path::Path;

/// What reading files, directories or the environment looks like in Rust source.
const IMPURE: &[&str] = &[
    "std::fs",
    "fs::read",
    "fs::metadata",
    "symlink_metadata",
    "read_dir",
    "read_link",
    "File::open",
    "OpenOptions",
    "std::env",
    "env::var",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src/analysis") {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// issue 31, item 12: `src/analysis/split/cycles.rs` read the package's configuration
/// files itself (`std::fs::read`, `symlink_metadata`). No analysis file outside its
/// tests names a file-system or environment call.
#[test]
fn analysis_reads_no_file_and_no_environment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/analysis");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 10, "{files:?}");
    let mut found = Vec::new();
    for f in files {
        if f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("read a source file");
        // The code before the file's test module.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or("");
            for word in IMPURE.iter().filter(|w| line.contains(*w)) {
                found.push(format!("{}:{}: {word}", f.display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "analysis does I/O:\n{}", found.join("\n"));
}

//! The NAR walker against Nix's own NAR writer: `nix-store --dump` of a directory tree
//! (non-UTF-8 names, symlinks, a script, a 3 MiB text file with hashes across the 1 MiB
//! read blocks, an ELF program with a RUNPATH) scans exactly like the tree itself, and
//! the computed NAR size is the dump's length.

mod common;

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::process::Command;

use common::*;
use nixcut::scan::{scan_nar, scan_store_path, ReferenceScanner, ScanOptions};
use nixcut::store::{StoreDir, StorePath};

const SELF: &str = "9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq";
const H1: &str = "1b9p07z77phvv2hf6gm9f28syp39f039";
const H2: &str = "2c9p07z77phvv2hf6gm9f28syp39f039";

fn write(root: &Path, rel: &str, data: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, data).unwrap();
}

fn tree(root: &Path) {
    write(
        root,
        "bin/run",
        format!("#!/nix/store/{H1}-bash/bin/sh\nexec /nix/store/{H2}-x/bin/y\n").as_bytes(),
    );
    fs::set_permissions(root.join("bin/run"), fs::Permissions::from_mode(0o755)).unwrap();
    write(
        root,
        "share/doc/pkg/README",
        format!("see /nix/store/{H2}-docs\n").as_bytes(),
    );
    write(root, &format!("share/{H2}-named"), b"plain");
    fs::create_dir_all(root.join("lib")).unwrap();
    symlink(
        format!("/nix/store/{H1}-other/lib/libz.so"),
        root.join("lib/libz.so"),
    )
    .unwrap();
    symlink("nowhere", root.join("lib/dangling")).unwrap();
    let odd = root
        .join("share")
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    fs::write(odd, format!("x {H1}").as_bytes()).unwrap();
    let mut big = vec![b'x'; 3 << 20];
    for (i, at) in [(1usize << 20) - 10, (2 << 20) - 32, (2 << 20) + 100, 5]
        .into_iter()
        .enumerate()
    {
        big[at - 1] = b'\n';
        big[at..at + 32].copy_from_slice(if i % 2 == 0 { H1 } else { H2 }.as_bytes());
    }
    write(root, "share/big.txt", &big);
    let src = root.join("prog.c");
    fs::write(
        &src,
        format!("const char *s = \"/nix/store/{H2}-data/x\";\nint main(void) {{ return s[0]; }}\n"),
    )
    .unwrap();
    let ok = Command::new("cc")
        .arg("-o")
        .arg(root.join("bin/prog"))
        .arg(&src)
        .arg(format!(
            "-Wl,-rpath,/nix/store/{H1}-foo/lib:/nix/store/{SELF}-pkg/lib"
        ))
        .status()
        .is_ok_and(|s| s.success());
    fs::remove_file(src).unwrap();
    assert!(ok, "cc failed (building this crate needs a C compiler too)");
}

#[test]
fn nar_from_nix_store_dump_matches_directory() {
    if !nix_or_skip("nar_from_nix_store_dump_matches_directory") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let base = format!("{SELF}-pkg");
    let root = tmp.path().join("nix/store").join(&base);
    tree(&root);
    let dump = nix_cmd("nix-store")
        .arg("--dump")
        .arg(&root)
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let nar = dump.stdout;

    let p = StorePath::from_base_name(&base).unwrap();
    let scanner = ReferenceScanner::from_hashes([SELF, H1, H2].iter().map(|h| {
        let mut a = [0u8; 32];
        a.copy_from_slice(h.as_bytes());
        a
    }));
    let resolve = |abs: &[u8]| String::from_utf8_lossy(abs).contains(H1);
    let opts = ScanOptions {
        resolver: Some(&resolve),
        ..ScanOptions::default()
    };
    let logical = format!("/nix/store/{base}");
    let from_dir =
        scan_store_path(&StoreDir::default(), Some(tmp.path()), &p, &scanner, &opts).unwrap();
    let from_nar = scan_nar(&nar[..], "dump", Some(&logical), &scanner, &opts).unwrap();
    assert_eq!(from_dir.files, from_nar.files);
    assert_eq!(from_dir.evidence, from_nar.evidence);
    assert_eq!(from_dir.nar_size, Some(nar.len() as u64));
    assert_eq!(from_nar.nar_size, Some(nar.len() as u64));
    assert!(from_nar
        .files
        .iter()
        .any(|f| f.path.as_bytes() == b"share/caf\xe9"));
    assert!(from_nar.evidence.len() >= 8, "{:?}", from_nar.evidence);
}

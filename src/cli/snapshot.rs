//! `nixcut snapshot ROOT -o FILE`: load, build the snapshot (`nixcut::analysis`), and
//! write it where `-o` says, without destroying what is there.
//!
//! What `-o FILE` names decides how it is written ([`Destination`]): a regular file, or
//! nothing yet, is replaced atomically (a temporary file in the same directory, synced,
//! then renamed over it, so a crash or a full disk leaves the old baseline whole); a
//! symlink is followed to its target, which is replaced the same way (the link stays);
//! a FIFO or a character device (`/dev/stdout`, `/dev/null`, a terminal) is written in
//! place, as a shell's `>` would; a directory, socket or block device is refused. `-`
//! is standard output. File I/O lives here, not in the analysis, which only builds the
//! [`Snapshot`](nixcut::report::Snapshot) value.

use std::io::{self, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};

use super::args::SnapshotArgs;
use super::config::Config;
use super::guard::{refuse_store_object, write_output, WriteMode};
use super::output::{print_warnings, printable};
use super::{load_input, Outcome};
use nixcut::analysis::{self, SnapshotOptions};
use nixcut::render::short_path;
use nixcut::report::Snapshot;
use nixcut::store::format_size;

pub(super) fn run(cfg: &Config, a: &SnapshotArgs) -> Result<Outcome> {
    // Where it goes is checked before the (possibly long) load.
    let dest = destination(&a.output)?;
    if let Destination::Replace(file) | Destination::InPlace(file) = &dest {
        refuse_store_object(&cfg.load, file, "snapshot", &[])?;
    }
    let closure = load_input(cfg, &a.input)?;
    let snap = analysis::snapshot(
        &closure,
        &SnapshotOptions {
            root: super::root_query(cfg, &closure)?,
        },
    )
    .with_context(|| format!("cannot snapshot `{}`", a.input))?;
    print_warnings(&closure.warnings, cfg.quiet);
    let bytes = to_bytes(&snap)?;
    match &dest {
        // A closed pipe surfaces as an `io::Error` of kind BrokenPipe, which `main`
        // treats as success, like every other command.
        Destination::Stdout => {
            write_stdout(&bytes).context("cannot write the snapshot to standard output")?
        }
        // Checked again where the write happens, with the input's store directory too.
        Destination::Replace(file) => write_output(
            &cfg.load,
            file,
            "snapshot",
            WriteMode::Replace,
            &bytes,
            &[&closure.store_dir],
        )?,
        Destination::InPlace(file) => write_output(
            &cfg.load,
            file,
            "snapshot",
            WriteMode::InPlace,
            &bytes,
            &[&closure.store_dir],
        )?,
    }
    if dest != Destination::Stdout && !cfg.quiet {
        let _ = writeln!(
            io::stderr(),
            "nixcut: wrote {}: {} ({} paths, closure {})",
            printable(&a.output),
            short_path(&snap.root),
            snap.path_count,
            format_size(snap.closure_size)
        );
    }
    Ok(Outcome::Success)
}

/// The snapshot as it is written: pretty JSON and a final newline.
fn to_bytes(s: &Snapshot) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(s).context("cannot serialise the snapshot")?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn write_stdout(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// How `-o` is written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Destination {
    /// `-`.
    Stdout,
    /// A regular file or nothing yet (symlinks already followed): replaced atomically.
    Replace(PathBuf),
    /// A FIFO or character device: opened and written, never renamed over.
    InPlace(PathBuf),
}

/// Decide how to write `output`, following symlinks (at most 40, as the kernel does).
fn destination(output: &str) -> Result<Destination> {
    // `/dev/stdout` is this process's standard output whatever it is (a pipe, a
    // terminal, a file opened for appending): write to it, never resolve and replace.
    if matches!(
        output,
        "-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1"
    ) {
        return Ok(Destination::Stdout);
    }
    if output.is_empty() {
        return Err(anyhow!(
            "-o: the output file name is empty (use `-` for standard output)"
        ));
    }
    let mut cur = PathBuf::from(output);
    for _ in 0..40 {
        let meta = match std::fs::symlink_metadata(&cur) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Destination::Replace(cur)),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot write snapshot {}", cur.display()))
            }
        };
        let ft = meta.file_type();
        // What the kernel reaches through the link: `/dev/fd/N` and `/proc/…/fd/N` of a
        // pipe are links whose text (`pipe:[…]`) names no file, but they open.
        if ft.is_symlink() {
            if let Ok(target) = std::fs::metadata(&cur) {
                let tt = target.file_type();
                if tt.is_fifo() || tt.is_char_device() {
                    return Ok(Destination::InPlace(cur));
                }
            }
        }
        if ft.is_symlink() {
            let target = std::fs::read_link(&cur)
                .with_context(|| format!("cannot read the symlink {}", cur.display()))?;
            cur = match cur.parent() {
                Some(dir) if target.is_relative() => dir.join(target),
                _ => target,
            };
            continue;
        }
        if ft.is_file() {
            return Ok(Destination::Replace(cur));
        }
        if ft.is_fifo() || ft.is_char_device() {
            return Ok(Destination::InPlace(cur));
        }
        let what = if ft.is_dir() {
            "a directory"
        } else if ft.is_socket() {
            "a socket"
        } else if ft.is_block_device() {
            "a block device"
        } else {
            "neither a file, a FIFO nor a character device"
        };
        return Err(anyhow!(
            "cannot write snapshot {}: it is {what}; name a file (or `-` for standard output)",
            cur.display()
        ));
    }
    Err(anyhow!(
        "cannot write snapshot {output}: too many levels of symbolic links"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The guard's atomic replacement (what `-o FILE` uses), with no store around.
    fn replace_atomically(file: &Path, bytes: &[u8]) -> anyhow::Result<()> {
        write_output(
            &nixcut::load::LoadOptions::default(),
            file,
            "snapshot",
            WriteMode::Replace,
            bytes,
            &[],
        )
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_regular_file_is_replaced_and_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("base.json");
        std::fs::write(&f, "old").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        let dest = destination(f.to_str().unwrap()).unwrap();
        assert_eq!(dest, Destination::Replace(f.clone()));
        replace_atomically(&f, b"new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new\n");
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(names(dir.path()), vec!["base.json"]);
        // A new file is readable by others.
        let g = dir.path().join("fresh.json");
        replace_atomically(&g, b"x").unwrap();
        let mode = std::fs::metadata(&g).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a non-empty directory: the rename fails after the data was
        // written to the temporary file.
        let target = dir.path().join("base.json");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), "old").unwrap();
        assert!(replace_atomically(&target, b"new").is_err());
        assert_eq!(std::fs::read_to_string(target.join("keep")).unwrap(), "old");
        assert_eq!(names(dir.path()), vec!["base.json"], "temporary file left");
        // And `destination` refuses a directory before anything is loaded.
        let e = destination(target.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("base.json") && e.contains("a directory"), "{e}");
    }

    #[test]
    fn symlinks_are_followed_to_what_they_name() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        // Dangling: the target is what gets created.
        assert_eq!(
            destination(link.to_str().unwrap()).unwrap(),
            Destination::Replace(real.clone())
        );
        std::fs::write(&real, "x").unwrap();
        let chain = dir.path().join("chain.json");
        std::os::unix::fs::symlink(&link, &chain).unwrap();
        assert_eq!(
            destination(chain.to_str().unwrap()).unwrap(),
            Destination::Replace(real)
        );
        let looped = dir.path().join("loop");
        std::os::unix::fs::symlink("loop", &looped).unwrap();
        let e = destination(looped.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("too many levels of symbolic links"), "{e}");
    }

    #[test]
    fn fifos_and_stdout_are_written_in_place() {
        assert_eq!(destination("-").unwrap(), Destination::Stdout);
        // Names, not files: nothing under /dev is looked at.
        assert_eq!(destination("/dev/stdout").unwrap(), Destination::Stdout);
        assert_eq!(destination("/dev/fd/1").unwrap(), Destination::Stdout);
        assert!(destination("").is_err());
        // A FIFO in a temporary directory (tests never touch /dev).
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(st.success());
        assert_eq!(
            destination(fifo.to_str().unwrap()).unwrap(),
            Destination::InPlace(fifo.clone())
        );
        // A symlink to a FIFO is written through, in place.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        assert_eq!(
            destination(link.to_str().unwrap()).unwrap(),
            Destination::InPlace(link)
        );
    }
}

//! The input of `nixcut store`: a whole store and its GC roots, from a store's database
//! (the live store, `--store-root DIR`, a directory given as the input, or a
//! `db.sqlite` file) or from a `nix path-info --json --all` file.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::gc_roots::{find_roots, GcRootScan};
use super::store_db::{self, StoreDb};
use super::{whole_json, LoadError, LoadOptions};
use crate::store::WholeStore;

/// The first bytes of every SQLite database.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// A whole store, and its GC roots when the input is a store (a file has none: roots
/// come from `--root` and `--roots-from`).
#[derive(Debug)]
pub struct WholeInput {
    /// The paths.
    pub store: WholeStore,
    /// The roots found in the store's GC root directories.
    pub gc_roots: Option<GcRootScan>,
    /// The database or file read.
    pub file: PathBuf,
}

/// Load `input` (`None`: the store `opts` describes: `--store-root`, else the local
/// store). `tick` is called with rows or bytes read so far.
pub fn load_whole(
    input: Option<&str>,
    opts: &LoadOptions,
    tick: &dyn Fn(u64),
) -> Result<WholeInput, LoadError> {
    let (db, fs_root, state) = match input {
        None => {
            let db = store_db::location(opts).ok_or_else(|| LoadError::UnknownFormat {
                path: PathBuf::from(opts.store_dir_or_default().as_str()),
                seen: "a store directory that is not the local store's, without --store-root"
                    .into(),
            })?;
            match &opts.store_root {
                Some(root) => (db, root.clone(), "/nix/var/nix".to_string()),
                None => {
                    let state = db
                        .parent()
                        .and_then(Path::parent)
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_else(|| "/nix/var/nix".into());
                    (db, PathBuf::from("/"), state)
                }
            }
        }
        Some(path) => {
            let p = Path::new(path);
            let meta = std::fs::metadata(p).map_err(|e| LoadError::io(p, e))?;
            if meta.is_dir() {
                let db = p.join("nix/var/nix/db/db.sqlite");
                if !db.is_file() {
                    return Err(LoadError::UnknownFormat {
                        path: p.to_path_buf(),
                        seen: "a directory without nix/var/nix/db/db.sqlite".into(),
                    });
                }
                (db, p.to_path_buf(), "/nix/var/nix".to_string())
            } else {
                let mut f = std::fs::File::open(p).map_err(|e| LoadError::io(p, e))?;
                let mut head = [0u8; 16];
                let n = read_up_to(&mut f, &mut head).map_err(|e| LoadError::io(p, e))?;
                if n == 16 && &head == SQLITE_MAGIC {
                    let db = StoreDb::open_under_store_root(p)?;
                    let store =
                        db.whole_store(&opts.store_dir_or_default(), tick, &opts.timings)?;
                    return Ok(WholeInput {
                        store,
                        gc_roots: None,
                        file: p.to_path_buf(),
                    });
                }
                let given = opts.store_dir.as_ref().map(|_| opts.store_dir_or_default());
                let store = whole_json::read(
                    p,
                    std::io::Cursor::new(head[..n].to_vec()).chain(f),
                    given.as_ref(),
                    tick,
                )?;
                return Ok(WholeInput {
                    store,
                    gc_roots: None,
                    file: p.to_path_buf(),
                });
            }
        }
    };
    // The root walk (system calls) beside the database read (one core of SQLite).
    let store_dir = opts.store_dir_or_default();
    let (store, gc_roots) = std::thread::scope(|scope| {
        let walk = scope.spawn(|| find_roots(&fs_root, &state, &store_dir));
        let store = StoreDb::open_under_store_root(&db)
            .and_then(|d| d.whole_store(&store_dir, tick, &opts.timings));
        let roots = walk
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (store, roots)
    });
    let store = store?;
    opts.timings.step("GC roots (walked beside the database)");
    Ok(WholeInput {
        store,
        gc_roots: Some(gc_roots),
        file: db,
    })
}

fn read_up_to(f: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

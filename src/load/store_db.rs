//! The local store's own database (`db.sqlite`), read directly and read-only.
//!
//! Nix keeps what it knows about every valid store path in an SQLite database:
//! `ValidPaths(id, path, hash, registrationTime, deriver, narSize, ultimate, sigs, ca)`
//! and the reference graph `Refs(referrer, reference)`. Reading the closure of a path
//! from there takes two indexed look-ups per path, with no process spawned and no
//! closure sizes computed by Nix (`nix path-info -S` sums them itself, which is slow on
//! big closures), so it is much faster than asking the `nix` command, even for a tiny
//! closure (5 ms instead of 55 ms for `nixcut why` of the ROCm test world). It also
//! works where `nix` cannot be used at all: a chroot store or a mounted image under
//! `--store-root` keeps its database at `<store-root>/nix/var/nix/db/db.sqlite`, and
//! pointing `nix` at it would make Nix create or upgrade files there.
//!
//! The database is opened with `SQLITE_OPEN_READ_ONLY` (never created, never written:
//! no writing pragmas, no journal-mode change) and a short busy timeout, so a store
//! that Nix is busy writing makes the caller fall back to `nix` rather than wait. The
//! schema is checked before the query; anything unexpected is an error that the caller
//! (`super::live`) treats as "use `nix` instead". As for any reader of a WAL database,
//! SQLite may create the `-shm`/`-wal` side files next to the database if they are
//! missing and the directory is writable; the database file itself is not touched.
//! A store under `--store-root` on read-only media, where those files cannot be
//! created, has its database opened as immutable (`?immutable=1`): nothing can write
//! it there.
//!
//! What Nix records is taken as Nix reports it: references include self-references,
//! a NULL `narSize` is 0 (as `nix path-info` prints it), a NULL `ultimate` is false.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use rustc_hash::{FxHashMap, FxHashSet};

use super::{LoadError, LoadOptions};
use crate::store::{
    Closure, LoadWarning, NarHash, PathInfo, SourceKind, StoreDir, StorePath, WholeStore,
    WholeStoreBuilder, NO_PATH,
};

/// The binary's environment variable for [`LoadOptions::no_store_db`]: a non-empty
/// value other than `0` never reads the store database and always asks `nix`. The
/// library reads no environment itself; `src/cli/` turns this into the option.
pub const NO_STORE_DB_ENV: &str = "NIXCUT_NO_STORE_DB";

/// How long to wait for a lock held by a writing Nix before giving up (and falling
/// back to `nix`).
const BUSY_TIMEOUT: Duration = Duration::from_secs(2);

/// The database of the store `opts` describes, or `None` when there is none to read:
/// the store directory is not the one the local Nix uses.
///
/// Under `--store-root` it is `<store-root>/nix/var/nix/db/db.sqlite`, where Nix keeps
/// a chroot store's state. Otherwise it is `<state dir>/db/db.sqlite` (the local
/// Nix's state directory, [`LoadOptions::nix_state_dir`], default `/nix/var/nix`), and
/// only when the logical store directory is the local store's
/// ([`LoadOptions::nix_store_dir`], default `/nix/store`).
pub fn location(opts: &LoadOptions) -> Option<PathBuf> {
    location_with(
        opts,
        opts.nix_store_dir.as_deref(),
        opts.nix_state_dir.as_deref(),
    )
}

fn location_with(
    opts: &LoadOptions,
    nix_store_dir: Option<&str>,
    nix_state_dir: Option<&Path>,
) -> Option<PathBuf> {
    if let Some(root) = &opts.store_root {
        return Some(root.join("nix/var/nix/db/db.sqlite"));
    }
    let local = StoreDir::new(
        nix_store_dir
            .filter(|d| !d.is_empty())
            .unwrap_or("/nix/store"),
    );
    if opts.store_dir_or_default() != local {
        return None;
    }
    let state = nix_state_dir
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("/nix/var/nix"));
    Some(state.join("db/db.sqlite"))
}

/// An error about the database `file`.
fn db_error(file: &Path, message: impl std::fmt::Display) -> LoadError {
    LoadError::StoreDb {
        path: file.to_path_buf(),
        message: message.to_string(),
    }
}

/// The columns read from `ValidPaths`, and whether each is required; an optional one
/// is read as NULL when an old schema lacks it.
const VALID_PATHS_COLUMNS: [(&str, bool); 9] = [
    ("id", true),
    ("path", true),
    ("hash", true),
    ("registrationTime", true),
    ("deriver", true),
    ("narSize", true),
    ("ultimate", false),
    ("sigs", false),
    ("ca", false),
];

/// A store database opened read-only.
pub struct StoreDb {
    conn: Connection,
    file: PathBuf,
    /// Opened as immutable (read-only media): further connections open so too.
    immutable: bool,
    busy_timeout: Duration,
    /// What is selected for `ultimate`, `sigs` and `ca`: the column, or `NULL` when
    /// an old schema lacks it.
    optional: [String; 3],
}

impl StoreDb {
    /// Open the live store's database `file` read-only and check its schema. The file
    /// must exist: it is never created.
    pub fn open(file: &Path) -> Result<StoreDb, LoadError> {
        StoreDb::open_with(file, BUSY_TIMEOUT, false)
    }

    /// Open the database `file` of a store under `--store-root`, as [`StoreDb::open`];
    /// one that cannot be opened so because it is on read-only media (a WAL database
    /// whose `-shm`/`-wal` files cannot be created) is opened as immutable, since
    /// nothing can write it there either.
    pub fn open_under_store_root(file: &Path) -> Result<StoreDb, LoadError> {
        StoreDb::open_with(file, BUSY_TIMEOUT, true)
    }

    fn open_with(
        file: &Path,
        busy_timeout: Duration,
        immutable_if_read_only_media: bool,
    ) -> Result<StoreDb, LoadError> {
        match std::fs::metadata(file) {
            Ok(m) if m.is_file() => {}
            Ok(_) => return Err(db_error(file, "not a regular file")),
            Err(e) => return Err(LoadError::io(file, e)),
        }
        let (conn, immutable) = match connect(file, busy_timeout, false) {
            Ok(c) => (c, false),
            Err(e) if immutable_if_read_only_media && cannot_open(&e) => (
                connect(file, busy_timeout, true)
                    .map_err(|e2| db_error(file, format!("{e}; as immutable: {e2}")))?,
                true,
            ),
            Err(e) => return Err(db_error(file, e)),
        };
        let mut db = StoreDb {
            conn,
            file: file.to_path_buf(),
            immutable,
            busy_timeout,
            optional: Default::default(),
        };
        db.check_schema()?;
        Ok(db)
    }

    /// The database file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    fn columns(&self, table: &str) -> Result<Vec<String>, LoadError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM pragma_table_info(?1)")
            .map_err(|e| db_error(&self.file, e))?;
        let names = stmt
            .query_map([table], |row| row.get::<_, String>(0))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| db_error(&self.file, e))?;
        Ok(names)
    }

    /// Check that `ValidPaths` and `Refs` have the columns read, and note which
    /// optional ones are absent.
    fn check_schema(&mut self) -> Result<(), LoadError> {
        let valid = self.columns("ValidPaths")?;
        let mut optional = Vec::new();
        for (col, required) in VALID_PATHS_COLUMNS {
            let present = valid.iter().any(|c| c.eq_ignore_ascii_case(col));
            if present && !required {
                optional.push(col.to_string());
            } else if !present && required {
                return Err(db_error(
                    &self.file,
                    format!(
                        "not a Nix store database: table ValidPaths has no column `{col}` \
                         (it has [{}])",
                        valid.join(", ")
                    ),
                ));
            } else if !present {
                optional.push("NULL".to_string());
            }
        }
        let refs = self.columns("Refs")?;
        for col in ["referrer", "reference"] {
            if !refs.iter().any(|c| c.eq_ignore_ascii_case(col)) {
                return Err(db_error(
                    &self.file,
                    format!(
                        "not a Nix store database: table Refs has no column `{col}` \
                         (it has [{}])",
                        refs.join(", ")
                    ),
                ));
            }
        }
        for (slot, expr) in self.optional.iter_mut().zip(optional) {
            *slot = expr;
        }
        Ok(())
    }

    /// The closure of `root` (a full store path in `store_dir`), or `None` when the
    /// database does not list `root` as valid.
    ///
    /// A walk of the reference graph with two prepared statements (a path's row by
    /// id, its references by id), in one read transaction, hence one consistent
    /// snapshot of the database. On a 100,000-path database (700,000 references) this
    /// takes 0.4 s for a closure of the whole store and 0.19 s for half of it, about
    /// half the time of one recursive `WITH … UNION` query doing the same; a
    /// 30-path closure takes half a millisecond either way.
    pub fn closure(&self, root: &str, store_dir: &StoreDir) -> Result<Option<Closure>, LoadError> {
        let file = &self.file;
        let err = |e: rusqlite::Error| db_error(file, e);
        // Released (rolled back: nothing was written) when dropped.
        let tx = self.conn.unchecked_transaction().map_err(err)?;
        let root_id: Option<i64> = tx
            .query_row("SELECT id FROM ValidPaths WHERE path = ?1", [root], |r| {
                r.get(0)
            })
            .optional()
            .map_err(err)?;
        let Some(root_id) = root_id else {
            return Ok(None);
        };
        let mut row_of = tx
            .prepare(&format!(
                "SELECT path, hash, registrationTime, deriver, narSize, {}, {}, {} \
                 FROM ValidPaths WHERE id = ?1",
                self.optional[0], self.optional[1], self.optional[2]
            ))
            .map_err(err)?;
        let mut refs_of = tx
            .prepare("SELECT reference FROM Refs WHERE referrer = ?1")
            .map_err(err)?;

        let mut closure = Closure::new(store_dir.clone(), SourceKind::LiveStore, root);
        let mut ids: FxHashMap<i64, StorePath> = FxHashMap::default();
        // Each path with its references as ids, resolved once every path is known.
        let mut pending: Vec<(PathInfo, Vec<i64>)> = Vec::new();
        // (id, the path that referred to it), depth first.
        let mut todo: Vec<(i64, Option<i64>)> = vec![(root_id, None)];
        let mut seen: FxHashSet<i64> = FxHashSet::default();
        seen.insert(root_id);
        while let Some((id, from)) = todo.pop() {
            let mut rows = row_of.query([id]).map_err(err)?;
            let Some(row) = rows.next().map_err(err)? else {
                let referrer = from
                    .and_then(|f| ids.get(&f))
                    .map(|p| store_dir.display(p))
                    .unwrap_or_else(|| root.to_string());
                return Err(db_error(
                    file,
                    format!("{referrer}: reference to id {id}, which is not a valid path"),
                ));
            };
            let info = self.path_info(row, store_dir, &mut closure.warnings)?;
            let refs = refs_of
                .query_map([id], |r| r.get::<_, i64>(0))
                .and_then(|rows| rows.collect::<Result<Vec<i64>, _>>())
                .map_err(err)?;
            for &r in &refs {
                if seen.insert(r) {
                    todo.push((r, Some(id)));
                }
            }
            ids.insert(id, info.path.clone());
            pending.push((info, refs));
        }
        for (mut info, refs) in pending {
            // Every reference was visited, so every id is known.
            info.references = refs.iter().filter_map(|r| ids.get(r).cloned()).collect();
            closure.insert(info);
        }
        closure.declared_roots = vec![ids[&root_id].clone()];
        Ok(Some(closure))
    }

    /// Every valid path of the database with its size, references and deriver, for
    /// `nixcut store`, in one read transaction (one consistent snapshot).
    ///
    /// Three scans: `ValidPaths` by id (paths are numbered in that order), `Refs` in
    /// the order of its primary key (referrer, reference), a covering index, so each
    /// referrer's list arrives whole and in path order, and the derivers and
    /// derivation outputs joined on the path index inside SQLite. Memory: the
    /// [`WholeStore`] plus an id map (4 bytes per id up to the largest, or a hash map
    /// when ids are sparse). `tick` is called with the rows read so far.
    pub fn whole_store(
        &self,
        store_dir: &StoreDir,
        tick: &dyn Fn(u64),
        timings: &crate::timing::Timings,
    ) -> Result<WholeStore, LoadError> {
        let file = &self.file;
        let err = |e: rusqlite::Error| db_error(file, e);
        let tx = self.conn.unchecked_transaction().map_err(err)?;
        let (count, max_id): (i64, Option<i64>) = tx
            .query_row("SELECT count(*), max(id) FROM ValidPaths", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(err)?;
        let ids = IdMap::new(count.max(0) as usize, max_id.unwrap_or(0));
        let mut ids = ids;
        let mut b = WholeStoreBuilder::new(
            store_dir.clone(),
            file.display().to_string(),
            count.max(0) as usize,
        );
        let prefix = format!("{}/", store_dir.as_str());
        let mut rows_read = 0u64;
        let mut derivers = Derivers::default();
        {
            let mut stmt = tx
                .prepare("SELECT id, path, narSize, deriver FROM ValidPaths ORDER BY id")
                .map_err(err)?;
            let mut rows = stmt.query([]).map_err(err)?;
            while let Some(row) = rows.next().map_err(err)? {
                let id: i64 = row.get(0).map_err(err)?;
                let path = match row.get_ref(1).map_err(err)? {
                    ValueRef::Text(t) => t,
                    other => {
                        return Err(db_error(
                            file,
                            format!(
                                "ValidPaths row id {id}: path is {:?}, not text",
                                other.data_type()
                            ),
                        ))
                    }
                };
                let base = path
                    .strip_prefix(prefix.as_bytes())
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .ok_or_else(|| {
                        db_error(
                            file,
                            format!(
                                "ValidPaths row id {id}: `{}` is not a path in the store directory `{}`",
                                crate::store::sanitize(&String::from_utf8_lossy(path), 200),
                                store_dir.as_str()
                            ),
                        )
                    })?;
                StorePath::check_base_name(base)
                    .map_err(|e| db_error(file, format!("ValidPaths row id {id}: {e}")))?;
                let size: Option<i64> = row.get(2).map_err(err)?;
                let v = b.add_name(base.as_bytes());
                b.describe(v, size.unwrap_or(0).max(0) as u64, NO_PATH);
                if let ValueRef::Text(d) = row.get_ref(3).map_err(err)? {
                    if let Some(d) = d.strip_prefix(prefix.as_bytes()) {
                        derivers.names.extend_from_slice(d);
                        derivers.of.push((v, derivers.names.len() as u64));
                    }
                }
                if size.is_none() {
                    b.issues().missing_sizes += 1;
                }
                ids.insert(id, v);
                rows_read += 1;
                if rows_read % 65536 == 0 {
                    tick(rows_read);
                }
            }
        }
        timings.step("store database: paths");
        rows_read = self.read_references(&ids, &mut b, rows_read, tick)?;
        timings.step("store database: references");
        let has_outputs = tx
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'DerivationOutputs'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(err)?
            > 0;
        if has_outputs {
            let mut stmt = tx
                .prepare(
                    "SELECT o.drv, v.id FROM DerivationOutputs o JOIN ValidPaths v ON v.path = o.path",
                )
                .map_err(err)?;
            let mut outputs = Vec::new();
            let mut rows = stmt.query([]).map_err(err)?;
            while let Some(row) = rows.next().map_err(err)? {
                let (d, v): (i64, i64) = (row.get(0).map_err(err)?, row.get(1).map_err(err)?);
                if let (Some(d), Some(v)) = (ids.get(d), ids.get(v)) {
                    outputs.push((d, v));
                }
            }
            b.set_outputs(outputs);
        }
        timings.step("store database: derivation outputs");
        tick(rows_read);
        let mut store = b.finish();
        timings.step("store database: the path arrays");
        derivers.resolve(&mut store);
        timings.step("store database: derivers");
        Ok(store)
    }

    /// Every `Refs` row into `b`, mapped through `ids`: the referrer ids split into one
    /// range per core, each range scanned on its own connection (SQLite runs one query
    /// on one core; the references are most of a store's rows). Each range is its own
    /// read transaction: a path registered while they run is not in `ids`, and its
    /// rows are counted as dangling references (a warning), never as a wrong size.
    fn read_references(
        &self,
        ids: &IdMap,
        b: &mut WholeStoreBuilder,
        rows_before: u64,
        tick: &dyn Fn(u64),
    ) -> Result<u64, LoadError> {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let file = &self.file;
        let (lo, hi): (Option<i64>, Option<i64>) = self
            .conn
            .query_row("SELECT min(referrer), max(referrer) FROM Refs", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(|e| db_error(file, e))?;
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Ok(rows_before);
        };
        let ranges = id_ranges(lo, hi, rayon::current_num_threads().clamp(1, 16));
        let rows = AtomicU64::new(rows_before);
        let stop = AtomicBool::new(false);
        let (busy, immutable) = (self.busy_timeout, self.immutable);
        let (rows_ref, stop_ref) = (&rows, &stop);
        // Every range but the first on a connection of its own.
        let scan_other = move |range: (i64, Option<i64>)| -> Result<RefPart, LoadError> {
            let conn = connect(file, busy, immutable).map_err(|e| db_error(file, e))?;
            let part = scan_references(&conn, file, ids, range, rows_ref, stop_ref, None);
            if part.is_err() {
                stop_ref.store(true, Ordering::Relaxed);
            }
            part
        };
        let parts: Vec<Result<RefPart, LoadError>> = std::thread::scope(|scope| {
            let others: Vec<_> = ranges[1..]
                .iter()
                .map(|&r| scope.spawn(move || scan_other(r)))
                .collect();
            let first = scan_references(&self.conn, file, ids, ranges[0], &rows, &stop, Some(tick));
            if first.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            while others.iter().any(|h| !h.is_finished()) {
                tick(rows.load(Ordering::Relaxed));
                std::thread::sleep(Duration::from_millis(100));
            }
            std::iter::once(first)
                .chain(others.into_iter().map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                }))
                .collect()
        });
        for part in parts {
            let part = part?;
            b.issues().dangling_references += part.dangling;
            b.append_lists(part.lists, part.flat);
            if b.reference_count() >= u32::MAX as usize {
                return Err(db_error(file, "more than 4,294,967,294 references"));
            }
        }
        let total = rows.load(Ordering::Relaxed);
        tick(total);
        Ok(total)
    }

    /// A `ValidPaths` row: path, hash, registrationTime, deriver, narSize, ultimate,
    /// sigs, ca.
    fn path_info(
        &self,
        row: &rusqlite::Row<'_>,
        store_dir: &StoreDir,
        warnings: &mut Vec<LoadWarning>,
    ) -> Result<PathInfo, LoadError> {
        let file = &self.file;
        let col = |i: usize| row.get_ref(i).map_err(|e| db_error(file, e));
        let path_text =
            text(col(0)?).ok_or_else(|| db_error(file, "ValidPaths: a `path` that is not text"))?;
        let path = store_dir
            .parse_path(path_text)
            .map_err(|e| db_error(file, format!("ValidPaths: {e}")))?;
        let mut info = PathInfo::new(path);
        info.nar_hash = text(col(1)?).map(NarHash::parse);
        info.registration_time = int(col(2)?).and_then(|t| u64::try_from(t).ok());
        if let Some(d) = text(col(3)?).filter(|d| !d.is_empty()) {
            match store_dir.parse_path_or_base(d) {
                Ok(dp) => info.deriver = Some(dp),
                Err(e) => warnings.push(LoadWarning::DeriverIgnored {
                    file: file.display().to_string(),
                    line: None,
                    path: Some(path_text.to_string()),
                    error: e.to_string(),
                }),
            }
        }
        // Nix reads a NULL narSize as 0, and prints that.
        let size = int(col(4)?).unwrap_or(0);
        info.nar_size = Some(
            u64::try_from(size)
                .map_err(|_| db_error(file, format!("{path_text}: negative narSize {size}")))?,
        );
        info.ultimate = Some(int(col(5)?).unwrap_or(0) != 0);
        info.signatures = text(col(6)?)
            .map(|s| s.split_whitespace().map(String::from).collect())
            .unwrap_or_default();
        info.ca = text(col(7)?).filter(|s| !s.is_empty()).map(String::from);
        Ok(info)
    }
}

/// Database ids (`ValidPaths.id`) to path numbers: a vector indexed by id when ids are
/// dense (Nix numbers rows from 1 and reuses none, so a store that collected garbage
/// has gaps), a hash map when the largest id is far beyond the row count.
enum IdMap {
    Dense(Vec<u32>),
    Sparse(FxHashMap<i64, u32>),
}

impl IdMap {
    fn new(count: usize, max_id: i64) -> IdMap {
        if max_id >= 0 && (max_id as u64) <= 4 * count as u64 + 1024 {
            IdMap::Dense(vec![NO_PATH; max_id as usize + 1])
        } else {
            IdMap::Sparse(FxHashMap::default())
        }
    }

    fn insert(&mut self, id: i64, v: u32) {
        match self {
            IdMap::Dense(d) => {
                if let Some(slot) = usize::try_from(id).ok().and_then(|i| d.get_mut(i)) {
                    *slot = v;
                }
            }
            IdMap::Sparse(m) => {
                m.insert(id, v);
            }
        }
    }

    fn get(&self, id: i64) -> Option<u32> {
        match self {
            IdMap::Dense(d) => usize::try_from(id)
                .ok()
                .and_then(|i| d.get(i))
                .copied()
                .filter(|&v| v != NO_PATH),
            IdMap::Sparse(m) => m.get(&id).copied(),
        }
    }
}

/// Each path's `deriver` column as read (base names in one arena), resolved to path
/// numbers once every path is known: a join on the path index inside SQLite costs a
/// B-tree search per path (23 s for 4.3 million paths), a hash index in memory a
/// fraction of a second. A deriver that is not a valid path stays [`NO_PATH`], as in
/// the join.
#[derive(Default)]
struct Derivers {
    names: Vec<u8>,
    /// (path, end of its deriver's name in `names`).
    of: Vec<(u32, u64)>,
}

impl Derivers {
    fn resolve(self, store: &mut WholeStore) {
        use rayon::prelude::*;
        if self.of.is_empty() {
            return;
        }
        let index = store.hash_index();
        let found: Vec<(u32, u32)> = (0..self.of.len())
            .into_par_iter()
            .filter_map(|k| {
                let start = if k == 0 { 0 } else { self.of[k - 1].1 as usize };
                let (v, end) = self.of[k];
                let name = std::str::from_utf8(&self.names[start..end as usize]).ok()?;
                let d = store.find(&index, name)?;
                (store.base_name(d) == name).then_some((v, d))
            })
            .collect();
        for (v, d) in found {
            store.deriver[v as usize] = d;
        }
    }
}

/// `lo..=hi` (any ids a file may hold, `i64::MIN` to `i64::MAX` included) in at most
/// `parts` ranges `[from, to)`, in order; the last ends past `hi` (`None`: unbounded).
fn id_ranges(lo: i64, hi: i64, parts: usize) -> Vec<(i64, Option<i64>)> {
    let (lo, hi) = (i128::from(lo), i128::from(hi));
    let span = (hi - lo) / parts.max(1) as i128 + 1;
    let mut out = Vec::new();
    let mut from = lo;
    while from <= hi {
        let to = from + span;
        // Every bound below `hi` fits in an i64; past it, the range is open.
        let end = (to <= hi).then_some(to as i64);
        out.push((from as i64, end));
        from = to;
    }
    out
}

/// The reference lists of one range of referrer ids: `(referrer, start, len)` into
/// `flat`, as [`WholeStoreBuilder::append_lists`] takes them.
struct RefPart {
    lists: Vec<(u32, u32, u32)>,
    flat: Vec<u32>,
    dangling: u64,
}

/// `Refs` rows with `from <= referrer < to`, in referrer order, mapped through `ids`;
/// `rows` counts the rows read by every range, `tick` (on the calling thread) is told
/// that count, `stop` says another range failed.
fn scan_references(
    conn: &Connection,
    file: &Path,
    ids: &IdMap,
    (from, to): (i64, Option<i64>),
    rows_read: &std::sync::atomic::AtomicU64,
    stop: &std::sync::atomic::AtomicBool,
    tick: Option<&dyn Fn(u64)>,
) -> Result<RefPart, LoadError> {
    use std::sync::atomic::Ordering;
    let err = |e: rusqlite::Error| db_error(file, e);
    let mut part = RefPart {
        lists: Vec::new(),
        flat: Vec::new(),
        dangling: 0,
    };
    // Two statements rather than `?2 IS NULL OR …`, which SQLite cannot use to end the
    // index range.
    let (stmt, bounds) = match to {
        Some(to) => (
            conn.prepare(
                "SELECT referrer, reference FROM Refs WHERE referrer >= ?1 AND referrer < ?2 \
                 ORDER BY referrer, reference",
            ),
            vec![from, to],
        ),
        None => (
            conn.prepare(
                "SELECT referrer, reference FROM Refs WHERE referrer >= ?1 \
                 ORDER BY referrer, reference",
            ),
            vec![from],
        ),
    };
    let mut stmt = stmt.map_err(err)?;
    let mut rows = stmt
        .query(rusqlite::params_from_iter(bounds))
        .map_err(err)?;
    let mut current: Option<(u32, u32)> = None;
    let mut n = 0u64;
    while let Some(row) = rows.next().map_err(err)? {
        let (referrer, reference): (i64, i64) =
            (row.get(0).map_err(err)?, row.get(1).map_err(err)?);
        n += 1;
        if n % 65536 == 0 {
            let total = rows_read.fetch_add(65536, Ordering::Relaxed) + 65536;
            if let Some(tick) = tick {
                tick(total);
            }
            if stop.load(Ordering::Relaxed) {
                break;
            }
        }
        let (Some(v), Some(w)) = (ids.get(referrer), ids.get(reference)) else {
            part.dangling += 1;
            continue;
        };
        if current.is_none_or(|(c, _)| c != v) {
            if let Some((c, start)) = current {
                let len = part.flat.len() as u32 - start;
                part.lists.push((c, start, len));
            }
            current = Some((v, part.flat.len() as u32));
        }
        if v != w {
            part.flat.push(w);
        }
        if part.flat.len() >= u32::MAX as usize - 1 {
            return Err(db_error(file, "more than 4,294,967,294 references"));
        }
    }
    if let Some((c, start)) = current {
        let len = part.flat.len() as u32 - start;
        part.lists.push((c, start, len));
    }
    rows_read.fetch_add(n % 65536, Ordering::Relaxed);
    Ok(part)
}

/// Open `file` read-only (as an immutable database: no locks, no `-shm`, when
/// `immutable`) and read from it once, since SQLite opens files lazily.
fn connect(file: &Path, busy_timeout: Duration, immutable: bool) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = if immutable {
        Connection::open_with_flags(
            format!("file:{}?immutable=1", uri_path(file)),
            flags | OpenFlags::SQLITE_OPEN_URI,
        )?
    } else {
        Connection::open_with_flags(file, flags)?
    };
    conn.busy_timeout(busy_timeout)?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
    Ok(conn)
}

/// Whether SQLite could not open the files it needs (or could not initialise a
/// read-only `-shm`).
fn cannot_open(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly))
}

/// `path` for a `file:` URI: every byte but unreserved ones and `/` percent-encoded.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn text(v: ValueRef<'_>) -> Option<&str> {
    match v {
        ValueRef::Text(t) => std::str::from_utf8(t).ok(),
        _ => None,
    }
}

fn int(v: ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => Some(i),
        _ => None,
    }
}

/// The closure of `root` (a full store path in `store_dir`) from the database `file`;
/// `None` when the database does not list `root` as valid.
pub fn read_closure(
    file: &Path,
    root: &str,
    store_dir: &StoreDir,
) -> Result<Option<Closure>, LoadError> {
    StoreDb::open(file)?.closure(root, store_dir)
}

/// [`read_closure`] for the database of a store under `--store-root`, which may be on
/// read-only media (see [`StoreDb::open_under_store_root`]).
pub fn read_closure_under_store_root(
    file: &Path,
    root: &str,
    store_dir: &StoreDir,
) -> Result<Option<Closure>, LoadError> {
    StoreDb::open_under_store_root(file)?.closure(root, store_dir)
}

/// The tables of the schema this reader expects: Nix 2.x's schema 10
/// (`src/libstore/schema.sql`), as a real store's `sqlite_master` holds them. Public
/// for the tests and benchmarks that write store databases.
pub const NIX_SCHEMA_TABLES: &str = "
CREATE TABLE ValidPaths (
    id               integer primary key autoincrement not null,
    path             text unique not null,
    hash             text not null,
    registrationTime integer not null,
    deriver          text,
    narSize          integer,
    ultimate         integer, -- null implies \"false\"
    sigs             text, -- space-separated
    ca               text -- if not null, an assertion that the path is content-addressed; see ValidPathInfo
);
CREATE TABLE Refs (
    referrer  integer not null,
    reference integer not null,
    primary key (referrer, reference),
    foreign key (referrer) references ValidPaths(id) on delete cascade,
    foreign key (reference) references ValidPaths(id) on delete restrict
);
CREATE TRIGGER DeleteSelfRefs before delete on ValidPaths
  begin
    delete from Refs where referrer = old.id and reference = old.id;
  end;
CREATE TABLE DerivationOutputs (
    drv  integer not null,
    id   text not null, -- symbolic output id, usually \"out\"
    path text not null,
    primary key (drv, id),
    foreign key (drv) references ValidPaths(id) on delete cascade
);
CREATE INDEX IndexDerivationOutputs on DerivationOutputs(path);
";

/// Nix's secondary indexes on `Refs` (a writer of many rows creates them after the
/// rows: one sort each instead of millions of random inserts).
pub const NIX_SCHEMA_REF_INDEXES: &str = "
CREATE INDEX IndexReferrer on Refs(referrer);
CREATE INDEX IndexReference on Refs(reference);
";

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn id_ranges_cover_every_id_once_even_at_the_ends_of_i64() {
        for (lo, hi, parts) in [
            (1, 1, 2),
            (1, 2, 2),
            (1, 1000, 2),
            (5, 7, 16),
            (i64::MIN, i64::MAX, 2),
            (i64::MIN, i64::MIN + 3, 2),
            (i64::MAX - 3, i64::MAX, 3),
            (-10, 10, 1),
        ] {
            let r = id_ranges(lo, hi, parts);
            assert!(!r.is_empty() && r.len() <= parts, "{lo} {hi}: {r:?}");
            assert_eq!(r[0].0, lo);
            assert_eq!(r.last().unwrap().1, None, "the last range is open");
            for w in r.windows(2) {
                assert_eq!(w[0].1, Some(w[1].0), "contiguous: {r:?}");
                assert!(w[0].0 < w[1].0);
            }
            assert!(r
                .iter()
                .all(|&(from, to)| from <= hi && to.is_none_or(|t| t <= hi)));
        }
    }

    pub(crate) const APP: &str = "cb57q9mwx8761wyzrb6ypijgajriigag-app-1.0";
    pub(crate) const LIB: &str = "x71ahacbysflg2pf8638mdh69871353b-libfoo-3.2";
    pub(crate) const BASE: &str = "9fm8cfjwd9nhpc06bz4fdgmc4gwdi2dq-base-0.1";
    const DRV: &str = "k0c0d60n2dqnb396hj717yvk0y17kx6h-app-1.0.drv";
    pub(crate) const OTHER: &str = "lrsdjl8hd0y74jkglzbhlzf1hcjm5h2a-other-2";
    pub(crate) const HASH: &str =
        "sha256:5bbaf0a3542900772de7d1314a3dd000d8b8893dabe963f1edacb72654efd293";

    /// id, base name, deriver, narSize, ultimate, sigs, ca.
    type Row<'a> = (
        i64,
        &'a str,
        Option<&'a str>,
        i64,
        Option<i64>,
        Option<&'a str>,
        Option<&'a str>,
    );

    /// A store database at `dir/db.sqlite` in `store_dir`, written through its own
    /// connection (a test fixture, never the real store's database): app → lib →
    /// base, app → app, app → base; `other` is valid and outside the closure.
    pub(crate) fn fixture_db(dir: &Path, store_dir: &str) -> PathBuf {
        let file = dir.join("db.sqlite");
        let conn = Connection::open(&file).unwrap();
        conn.execute_batch(NIX_SCHEMA_TABLES).unwrap();
        conn.execute_batch(NIX_SCHEMA_REF_INDEXES).unwrap();
        let rows: [Row; 4] = [
            (
                1,
                BASE,
                Some(""),
                100,
                None,
                Some("cache.nixos.org-1:abc= other:def="),
                None,
            ),
            (
                2,
                LIB,
                None,
                2000,
                Some(0),
                None,
                Some("fixed:r:sha256:1b8m03r63zqhnjf7l5wnldhh7c134ap5vpj0850ymkq1iyzicy5s"),
            ),
            (3, APP, Some(DRV), 30000, Some(1), Some(""), Some("")),
            (4, OTHER, None, 7, Some(1), None, None),
        ];
        for (id, base, deriver, size, ultimate, sigs, ca) in rows {
            let deriver = deriver.map(|d| {
                if d.is_empty() {
                    String::new()
                } else {
                    format!("{store_dir}/{d}")
                }
            });
            conn.execute(
                "INSERT INTO ValidPaths VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                rusqlite::params![
                    id,
                    format!("{store_dir}/{base}"),
                    HASH,
                    1_700_000_000 + id,
                    deriver,
                    size,
                    ultimate,
                    sigs,
                    ca
                ],
            )
            .unwrap();
        }
        for (from, to) in [(3, 3), (3, 2), (3, 1), (2, 1), (4, 1)] {
            conn.execute("INSERT INTO Refs VALUES (?1, ?2)", [from, to])
                .unwrap();
        }
        file
    }

    fn sp(base: &str) -> StorePath {
        StorePath::from_base_name(base).unwrap()
    }

    fn read(file: &Path, base: &str) -> Result<Option<Closure>, LoadError> {
        read_closure(file, &format!("/nix/store/{base}"), &StoreDir::default())
    }

    #[test]
    fn reads_the_closure_with_every_field() {
        let dir = tempfile::tempdir().unwrap();
        let file = fixture_db(dir.path(), "/nix/store");
        let before = std::fs::read(&file).unwrap();
        let c = read(&file, APP).unwrap().unwrap();
        assert_eq!(c.source, SourceKind::LiveStore);
        assert_eq!(c.origin, format!("/nix/store/{APP}"));
        assert_eq!(c.declared_roots, vec![sp(APP)]);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let keys: Vec<String> = c.paths.keys().map(|p| p.to_string()).collect();
        let mut want = vec![APP, LIB, BASE];
        want.sort_by_key(|b| sp(b));
        assert_eq!(keys, want);
        assert!(c.missing_references().is_empty());

        let app = &c.paths[&sp(APP)];
        let mut refs = vec![sp(APP), sp(LIB), sp(BASE)];
        refs.sort();
        assert_eq!(app.references, refs, "self-reference kept");
        assert_eq!(app.nar_size, Some(30000));
        assert_eq!(app.nar_hash.as_ref().unwrap(), &NarHash::parse(HASH));
        assert!(matches!(app.nar_hash, Some(NarHash::Sha256(_))));
        assert_eq!(app.deriver, Some(sp(DRV)));
        assert_eq!(app.registration_time, Some(1_700_000_003));
        assert_eq!(app.ultimate, Some(true));
        assert!(app.signatures.is_empty());
        assert_eq!(app.ca, None);
        assert_eq!(app.reported_closure_size, None);

        let base = &c.paths[&sp(BASE)];
        assert_eq!(base.deriver, None, "empty deriver");
        assert_eq!(base.ultimate, Some(false), "NULL ultimate is false");
        assert_eq!(
            base.signatures,
            vec![
                "cache.nixos.org-1:abc=".to_string(),
                "other:def=".to_string()
            ]
        );
        assert!(base.references.is_empty());

        let lib = &c.paths[&sp(LIB)];
        assert_eq!(lib.references, vec![sp(BASE)]);
        assert!(lib.ca.as_deref().unwrap().starts_with("fixed:r:sha256:"));
        assert_eq!(lib.deriver, None);

        // Only read.
        assert_eq!(std::fs::read(&file).unwrap(), before);
    }

    #[test]
    fn a_closure_below_the_top_and_an_unknown_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = fixture_db(dir.path(), "/nix/store");
        let c = read(&file, LIB).unwrap().unwrap();
        assert_eq!(c.paths.len(), 2);
        assert!(!c.paths.contains_key(&sp(APP)));
        let c = read(&file, OTHER).unwrap().unwrap();
        assert_eq!(c.paths.len(), 2);
        assert!(read(&file, "0000000000000000000000000000000g-absent-1")
            .unwrap()
            .is_none());
    }

    #[test]
    fn another_store_dir() {
        let dir = tempfile::tempdir().unwrap();
        let file = fixture_db(dir.path(), "/gnu/store");
        let sd = StoreDir::new("/gnu/store");
        let c = read_closure(&file, &format!("/gnu/store/{APP}"), &sd)
            .unwrap()
            .unwrap();
        assert_eq!(c.store_dir, sd);
        assert_eq!(c.paths.len(), 3);
        assert_eq!(c.paths[&sp(APP)].deriver, Some(sp(DRV)));
    }

    #[test]
    fn errors_name_the_database() {
        let dir = tempfile::tempdir().unwrap();
        // Missing: not created.
        let missing = dir.path().join("missing.sqlite");
        let e = read(&missing, APP).unwrap_err();
        assert!(matches!(e, LoadError::Io { .. }), "{e}");
        assert!(e.to_string().contains("missing.sqlite"), "{e}");
        assert!(!missing.exists());

        // Not a database.
        let junk = dir.path().join("junk.sqlite");
        std::fs::write(&junk, "this is not sqlite, just some text\n".repeat(100)).unwrap();
        let e = read(&junk, APP).unwrap_err();
        assert!(matches!(e, LoadError::StoreDb { .. }), "{e}");
        assert!(e.to_string().contains("junk.sqlite"), "{e}");

        // A database of something else.
        let other = dir.path().join("other.sqlite");
        Connection::open(&other)
            .unwrap()
            .execute_batch(
                "CREATE TABLE ValidPaths (id integer, path text);
                 CREATE TABLE Refs (referrer integer, reference integer);",
            )
            .unwrap();
        let e = read(&other, APP).unwrap_err();
        assert!(e.to_string().contains("other.sqlite"), "{e}");
        assert!(e.to_string().contains("no column `hash`"), "{e}");
        let e = StoreDb::open(dir.path()).err().unwrap();
        assert!(e.to_string().contains("not a regular file"), "{e}");

        // A database without the tables.
        let empty = dir.path().join("empty.sqlite");
        Connection::open(&empty)
            .unwrap()
            .execute_batch("CREATE TABLE t (x integer);")
            .unwrap();
        let e = read(&empty, APP).unwrap_err();
        assert!(matches!(e, LoadError::StoreDb { .. }), "{e}");
        assert!(e.to_string().contains("empty.sqlite"), "{e}");
    }

    #[test]
    fn dangling_references_and_bad_paths_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let file = fixture_db(dir.path(), "/nix/store");
        let conn = Connection::open(&file).unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF; INSERT INTO Refs VALUES (2, 99);")
            .unwrap();
        let e = read(&file, LIB).unwrap_err();
        assert!(e.to_string().contains("reference to id 99"), "{e}");
        // A path outside the store directory read.
        let e =
            read_closure(&file, &format!("/nix/store/{OTHER}"), &StoreDir::new("/x")).unwrap_err();
        assert!(matches!(e, LoadError::StoreDb { .. }), "{e}");
    }

    #[test]
    fn an_old_schema_without_optional_columns() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("old.sqlite");
        let conn = Connection::open(&file).unwrap();
        conn.execute_batch(
            "CREATE TABLE ValidPaths (id integer primary key, path text, hash text,
                 registrationTime integer, deriver text, narSize integer);
             CREATE TABLE Refs (referrer integer, reference integer);",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO ValidPaths VALUES (1, ?1, ?2, 5, NULL, NULL)",
            [format!("/nix/store/{BASE}"), HASH.to_string()],
        )
        .unwrap();
        let c = read(&file, BASE).unwrap().unwrap();
        let base = &c.paths[&sp(BASE)];
        assert_eq!(base.nar_size, Some(0), "NULL narSize is 0, as Nix reads it");
        assert_eq!((base.ultimate, base.ca.as_ref()), (Some(false), None));
    }

    #[test]
    fn a_locked_database_is_an_error_not_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        let file = fixture_db(dir.path(), "/nix/store");
        let db = StoreDb::open_with(&file, Duration::from_millis(50), false).unwrap();
        let writer = Connection::open(&file).unwrap();
        writer.execute_batch("BEGIN EXCLUSIVE").unwrap();
        let e = db
            .closure(&format!("/nix/store/{APP}"), &StoreDir::default())
            .unwrap_err();
        assert!(e.to_string().contains("db.sqlite"), "{e}");
        writer.execute_batch("ROLLBACK").unwrap();
        assert!(db
            .closure(&format!("/nix/store/{APP}"), &StoreDir::default())
            .unwrap()
            .is_some());
    }

    #[test]
    fn read_only_media_under_a_store_root() {
        let top = tempfile::tempdir().unwrap();
        // Characters that mean something in a URI.
        let dir = top.path().join("a ?#%b");
        std::fs::create_dir(&dir).unwrap();
        let file = fixture_db(&dir, "/nix/store");
        Connection::open(&file)
            .unwrap()
            .execute_batch("PRAGMA journal_mode = WAL;")
            .unwrap();
        // As on read-only media: SQLite cannot open its `-wal` file.
        std::fs::create_dir(dir.join("db.sqlite-wal")).unwrap();
        let before = std::fs::read(&file).unwrap();
        let root = format!("/nix/store/{APP}");
        let e = read_closure(&file, &root, &StoreDir::default()).unwrap_err();
        assert!(e.to_string().contains("a ?#%b/db.sqlite"), "{e}");
        let c = read_closure_under_store_root(&file, &root, &StoreDir::default())
            .unwrap()
            .unwrap();
        assert_eq!(c.paths.len(), 3);
        assert_eq!(std::fs::read(&file).unwrap(), before);
        assert_eq!(uri_path(Path::new("/a b/%?#/ü")), "/a%20b/%25%3F%23/%C3%BC");
    }

    #[test]
    fn where_the_database_is() {
        let default = LoadOptions::default();
        let at = |o: &LoadOptions, store: Option<&str>, state: Option<&str>| {
            location_with(o, store, state.map(Path::new))
        };
        assert_eq!(
            at(&default, None, None),
            Some(PathBuf::from("/nix/var/nix/db/db.sqlite"))
        );
        assert_eq!(
            at(&default, None, Some("/s")),
            Some(PathBuf::from("/s/db/db.sqlite"))
        );
        assert_eq!(
            at(&default, Some(""), Some("")),
            Some(PathBuf::from("/nix/var/nix/db/db.sqlite"))
        );
        // Another store directory than the local store's: no database.
        assert_eq!(at(&default, Some("/gnu/store"), None), None);
        let gnu = LoadOptions {
            store_dir: Some(StoreDir::new("/gnu/store/")),
            ..LoadOptions::default()
        };
        assert_eq!(at(&gnu, None, None), None);
        assert_eq!(
            at(&gnu, Some("/gnu/store"), Some("/var/guix")),
            Some(PathBuf::from("/var/guix/db/db.sqlite"))
        );
        // A store root has its own, wherever the local one is.
        let rooted = LoadOptions {
            store_root: Some(PathBuf::from("/mnt/img")),
            ..LoadOptions::default()
        };
        assert_eq!(
            at(&rooted, Some("/other"), Some("/s")),
            Some(PathBuf::from("/mnt/img/nix/var/nix/db/db.sqlite"))
        );
    }
}

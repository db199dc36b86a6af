//! The narinfo cache: narinfo texts by cache URL and hash part, in one SQLite file
//! (`narinfo-v1.sqlite`) in the directory the caller chooses (the binary uses
//! `$XDG_CACHE_HOME/nixcut/narinfo`).
//!
//! A narinfo never changes for a given cache and hash, so entries never expire; only
//! narinfos that parsed are written, and a reader parses them again (a damaged entry is
//! fetched anew). Beside them, one record per closure walked, keyed by the cache list
//! and the root's hash (a closure never changes either, since its narinfos do not):
//! the parsed closure in the loader's binary form (`crate::load::closure_record`,
//! framed by `crate::store::frame`; opaque here), so a warm run reads one row instead of one per path.
//! One file rather than one file per narinfo: a warm run of a
//! 20,000-path closure reads it in a few dozen milliseconds (one read transaction,
//! memory-mapped), and a cold run writes it in one transaction. Several processes may
//! share it: the file is in WAL mode, so that a run reading it for the length of a walk
//! never blocks another's write (with a rollback journal a concurrent run's commit
//! waited for every reader and gave up with "database is locked"), and writes take
//! the write lock when they begin (`BEGIN IMMEDIATE`), where the busy timeout waits
//! for it, rather than upgrading a read lock, which SQLite refuses at once.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, Transaction, TransactionBehavior};

const FILE: &str = "narinfo-v1.sqlite";

/// One entry to write: cache base URL, hash part, narinfo text.
pub(super) type Row = (Arc<str>, String, Arc<str>);

/// An open narinfo cache.
pub(super) struct NarinfoDb {
    conn: Connection,
    /// Whether a read transaction is open (lookups share one: no lock per lookup, and
    /// the page cache stays valid between them).
    reading: bool,
}

/// Whether an error says the file is damaged (rather than, say, unwritable).
fn is_damage(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode as C;
    matches!(
        e.sqlite_error_code(),
        Some(C::DatabaseCorrupt | C::NotADatabase)
    )
}

fn open_file(file: &Path) -> Result<NarinfoDb, rusqlite::Error> {
    let conn = Connection::open_with_flags(
        file,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(10))?;
    // Reads go through a memory map (no copy per page); writes come in one transaction
    // per run, so the rollback journal is cheap and readers always read the main file.
    let _ = conn.pragma_update(None, "mmap_size", 1i64 << 30);
    // A cache needs no durability: no fsync (a crash of the process is still rolled
    // back by the journal; a power loss may damage the file, which `open` replaces).
    let _ = conn.pragma_update(None, "synchronous", "OFF");
    // Readers and a writer at once (see the module docs). A file that cannot switch
    // (another process holds it in the old mode) still works, as before.
    let _ = conn.pragma_update(None, "journal_mode", "WAL");
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS narinfo (
             cache TEXT NOT NULL,
             hash TEXT NOT NULL,
             text TEXT NOT NULL,
             PRIMARY KEY (cache, hash)
         ) WITHOUT ROWID;
         CREATE TABLE IF NOT EXISTS closure_record (
             caches TEXT NOT NULL,
             root TEXT NOT NULL,
             record BLOB NOT NULL,
             UNIQUE (caches, root)
         );",
    )?;
    // Earlier versions packed each closure's narinfo texts in a table of their own,
    // which nothing reads any more: dropped once (checked first, so that an ordinary
    // open never takes a write lock).
    let old: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'closure'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)?;
    if old {
        conn.execute_batch("DROP TABLE closure")?;
    }
    Ok(NarinfoDb {
        conn,
        reading: false,
    })
}

impl NarinfoDb {
    /// Open (creating) the cache in `dir`; `Err` says why it cannot be used. A file
    /// that is not a sound database (damaged by a power loss: writes are not synced) is
    /// replaced by an empty one.
    pub(super) fn open(dir: &Path) -> Result<NarinfoDb, String> {
        let file = dir.join(FILE);
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", file.display());
        std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        match open_file(&file) {
            Err(e) if is_damage(&e) => {
                let _ = std::fs::remove_file(&file);
                for side in ["journal", "wal", "shm"] {
                    let _ = std::fs::remove_file(dir.join(format!("{FILE}-{side}")));
                }
                open_file(&file).map_err(|e| fail(&e))
            }
            r => r.map_err(|e| fail(&e)),
        }
    }

    /// The narinfo of `hash` in the cache at `base`, if recorded.
    pub(super) fn get(&mut self, base: &str, hash: &str) -> Option<String> {
        if !self.reading {
            self.reading = self.conn.execute_batch("BEGIN").is_ok();
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT text FROM narinfo WHERE cache = ?1 AND hash = ?2")
            .ok()?;
        stmt.query_row(params![base, hash], |r| r.get::<_, String>(0))
            .ok()
    }

    /// Run `body` in one write transaction, after ending the lookups' read one.
    fn write(
        &mut self,
        body: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<()>,
    ) -> Result<(), String> {
        self.end_read();
        let fail = |e: rusqlite::Error| format!("cannot write the narinfo cache: {e}");
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        body(&tx).map_err(fail)?;
        tx.commit().map_err(fail)
    }

    /// Record narinfos (cache, hash, text) in one transaction.
    pub(super) fn put(&mut self, batch: &[Row]) -> Result<(), String> {
        self.write(|tx| {
            let mut stmt = tx.prepare_cached(
                "INSERT OR REPLACE INTO narinfo (cache, hash, text) VALUES (?1, ?2, ?3)",
            )?;
            for (base, hash, text) in batch {
                stmt.execute(params![&**base, hash, &**text])?;
            }
            Ok(())
        })
    }

    /// The record of the closure of `root` as walked through `caches`.
    #[cfg(test)]
    pub(super) fn get_closure(&mut self, caches: &str, root: &str) -> Option<Vec<u8>> {
        self.with_closure(caches, root, <[u8]>::to_vec)
    }

    /// `read` of the record of the closure of `root` as walked through `caches`, read
    /// where SQLite holds it (a record is megabytes: no copy).
    pub(super) fn with_closure<T>(
        &mut self,
        caches: &str,
        root: &str,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Option<T> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT record FROM closure_record WHERE caches = ?1 AND root = ?2")
            .ok()?;
        stmt.query_row(params![caches, root], |r| {
            Ok(read(r.get_ref(0)?.as_blob()?))
        })
        .ok()
    }

    /// Record a closure (replacing an earlier record).
    pub(super) fn put_closure(
        &mut self,
        caches: &str,
        root: &str,
        record: &[u8],
    ) -> Result<(), String> {
        self.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO closure_record (caches, root, record) VALUES (?1, ?2, ?3)",
                params![caches, root, record],
            )
            .map(drop)
        })
    }

    /// End the read transaction of the lookups, if one is open.
    pub(super) fn end_read(&mut self) {
        if std::mem::take(&mut self.reading) {
            let _ = self.conn.execute_batch("COMMIT");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_survive_reopening_and_are_keyed_by_cache() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = NarinfoDb::open(dir.path()).unwrap();
        assert_eq!(db.get("http://a", "h1"), None);
        db.put(&[(
            Arc::from("http://a"),
            "h1".into(),
            Arc::from("StorePath: x\n"),
        )])
        .unwrap();
        drop(db);
        let mut db = NarinfoDb::open(dir.path()).unwrap();
        assert_eq!(db.get("http://a", "h1").as_deref(), Some("StorePath: x\n"));
        assert_eq!(db.get("http://b", "h1"), None);
    }

    #[test]
    fn closures_are_keyed_by_cache_list_and_root() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = NarinfoDb::open(dir.path()).unwrap();
        db.put_closure("http://a", "r", b"packed").unwrap();
        assert_eq!(
            db.get_closure("http://a", "r").as_deref(),
            Some(&b"packed"[..])
        );
        assert_eq!(db.get_closure("http://a\nhttp://b", "r"), None);
        assert_eq!(db.get_closure("http://a", "s"), None);
    }

    #[test]
    fn the_old_packed_closure_table_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        {
            let c = Connection::open(dir.path().join(FILE)).unwrap();
            c.execute_batch(
                "CREATE TABLE closure (caches TEXT, root TEXT, narinfos BLOB, UNIQUE (caches, root));
                 INSERT INTO closure VALUES ('http://a', 'r', x'00');",
            )
            .unwrap();
        }
        let mut db = NarinfoDb::open(dir.path()).unwrap();
        assert_eq!(db.get_closure("http://a", "r"), None);
        let n: i64 = db
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'closure'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 0);
    }

    #[test]
    fn a_damaged_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE),
            b"this is not a database at all, really, not even close to one",
        )
        .unwrap();
        let mut db = NarinfoDb::open(dir.path()).unwrap();
        assert_eq!(db.get("http://a", "h1"), None);
        db.put(&[(Arc::from("http://a"), "h1".into(), Arc::from("x"))])
            .unwrap();
    }

    #[test]
    fn an_unusable_directory_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, b"").unwrap();
        let Err(e) = NarinfoDb::open(&file.join("sub")) else {
            panic!("a directory below a file cannot be made");
        };
        assert!(e.contains("plain-file"), "{e}");
    }
}

//! The narinfo cache: narinfo texts by cache URL and hash part, in one SQLite file
//! (`narinfo-v1.sqlite`) in the directory the caller chooses (the binary uses
//! `$XDG_CACHE_HOME/nixcut/narinfo`).
//!
//! A narinfo never changes for a given cache and hash, so entries never expire; only
//! narinfos that parsed are written, and a reader parses them again (a damaged entry is
//! fetched anew). One file rather than one file per narinfo: a warm run of a
//! 20,000-path closure reads it in a few dozen milliseconds, and a cold run writes it
//! in one transaction. Several processes may share it (WAL mode, a busy timeout).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags};

const FILE: &str = "narinfo-v1.sqlite";

/// One entry to write: cache base URL, hash part, narinfo text.
pub(super) type Row = (Arc<str>, String, Arc<str>);

/// An open narinfo cache.
pub(super) struct NarinfoDb {
    conn: Connection,
}

impl NarinfoDb {
    /// Open (creating) the cache in `dir`; `Err` says why it cannot be used.
    pub(super) fn open(dir: &Path) -> Result<NarinfoDb, String> {
        let file = dir.join(FILE);
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", file.display());
        std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        let conn = Connection::open_with_flags(
            &file,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| fail(&e))?;
        conn.busy_timeout(Duration::from_secs(10))
            .map_err(|e| fail(&e))?;
        // WAL lets readers run while another process writes; not every file system
        // supports it, and the cache works without it.
        let _ = conn.pragma_update(None, "journal_mode", "WAL");
        let _ = conn.pragma_update(None, "synchronous", "NORMAL");
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS narinfo (
                 cache TEXT NOT NULL,
                 hash TEXT NOT NULL,
                 text TEXT NOT NULL,
                 PRIMARY KEY (cache, hash)
             ) WITHOUT ROWID;",
        )
        .map_err(|e| fail(&e))?;
        Ok(NarinfoDb { conn })
    }

    /// The narinfo of `hash` in the cache at `base`, if recorded.
    pub(super) fn get(&self, base: &str, hash: &str) -> Option<String> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT text FROM narinfo WHERE cache = ?1 AND hash = ?2")
            .ok()?;
        stmt.query_row(params![base, hash], |r| r.get::<_, String>(0))
            .ok()
    }

    /// Record narinfos (cache, hash, text) in one transaction.
    pub(super) fn put(&mut self, batch: &[Row]) -> Result<(), String> {
        let fail = |e: rusqlite::Error| format!("cannot write the narinfo cache: {e}");
        let tx = self.conn.transaction().map_err(fail)?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO narinfo (cache, hash, text) VALUES (?1, ?2, ?3)",
                )
                .map_err(fail)?;
            for (base, hash, text) in batch {
                stmt.execute(params![&**base, hash, &**text])
                    .map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)
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
        let db = NarinfoDb::open(dir.path()).unwrap();
        assert_eq!(db.get("http://a", "h1").as_deref(), Some("StorePath: x\n"));
        assert_eq!(db.get("http://b", "h1"), None);
    }

    #[test]
    fn a_damaged_file_is_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE),
            b"this is not a database at all, really",
        )
        .unwrap();
        let e = NarinfoDb::open(dir.path()).err().unwrap();
        assert!(e.contains(FILE), "{e}");
    }
}

//! `nixcut refs --paths-from FILE --format jsonl [--shard K/N] [--output FILE]`: one
//! record per listed store path, streamed (docs/cache-study.md).
//!
//! The list is read once, keeping only the shard's entries. They are studied a batch at
//! a time (`--batch N`, concurrently within a batch), each batch with a fresh HTTP
//! client, so that the narinfos remembered in memory are those of one batch's closures,
//! not of the whole list: memory grows with the shard's list and one batch, never with
//! the records written. Each batch's records go out in one write: appended to
//! `--output FILE`, or to standard output. A rerun with the same `--output` reads FILE
//! back, drops a torn last line (a write cut by a crash), and skips every entry already
//! there; `FILE.done` is written once every entry of the shard is in FILE, and a run
//! that finds it does nothing.

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;

use super::args::{RefsArgs, Shard};
use super::config::Config;
use super::escape::printable;
use super::guard::{write_output, WriteMode};
use super::Outcome;
use nixcut::analysis;
use nixcut::classify::ClassRules;
use nixcut::http::HttpClient;
use nixcut::load::http_cache::HttpInputs;
use nixcut::render::{jsonl, Format};
use nixcut::report::{RecordStage, RefsRecord, SCHEMA_VERSION};
use nixcut::source;

/// One entry of the list: the path as given and its release label (together, what a
/// resumed run matches records by).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    release: Option<String>,
    input: String,
}

/// Run `refs --paths-from LIST`.
pub(super) fn run(cfg: &Config, a: &RefsArgs, list: &str, rules: ClassRules) -> Result<Outcome> {
    if cfg.format != Format::Jsonl {
        bail!("`refs --paths-from` writes one JSON record per path: pass `--format jsonl`");
    }
    let shard = a.shard.unwrap_or(Shard { index: 0, count: 1 });
    let entries = read_list(list, shard)?;
    let total = entries.len();
    let mut done: HashSet<(Option<String>, String)> = HashSet::new();
    if let Some(out) = &a.output {
        if done_marker(out).exists() {
            note(
                cfg,
                &format!(
                    "{} is complete ({} exists): nothing to do",
                    shown(out),
                    shown(&done_marker(out))
                ),
            );
            return Ok(Outcome::Success);
        }
        done = written(cfg, out)?;
    }
    let todo: Vec<&Entry> = entries
        .iter()
        .filter(|e| !done.contains(&(e.release.clone(), e.input.clone())))
        .collect();
    let skipped = total - todo.len();
    drop(done);
    let http = cfg
        .http
        .as_ref()
        .map(|c| c.config().clone())
        .unwrap_or_default();
    let (mut studied, mut failed) = (0usize, 0usize);
    for batch in todo.chunks(usize::try_from(a.batch).unwrap_or(usize::MAX)) {
        let client = Arc::new(HttpClient::new(http.clone()));
        let records: Vec<RefsRecord> = batch
            .par_iter()
            .map(|e| study(cfg, a, &rules, &client, e))
            .collect();
        let mut bytes = Vec::new();
        for r in &records {
            jsonl::record(r, &mut bytes)?;
        }
        failed += records.iter().filter(|r| r.error.is_some()).count();
        studied += records.len();
        match &a.output {
            Some(out) => write_output(
                &cfg.load,
                out,
                "the records file",
                WriteMode::Append,
                &bytes,
                &[],
            )?,
            None => {
                let mut stdout = io::stdout().lock();
                stdout.write_all(&bytes)?;
                stdout.flush()?;
            }
        }
    }
    if let Some(out) = &a.output {
        let marker = serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "shard": format!("{}/{}", shard.index, shard.count),
            "entries": total,
        });
        write_output(
            &cfg.load,
            &done_marker(out),
            "the shard's done marker",
            WriteMode::Replace,
            format!("{marker}\n").as_bytes(),
            &[],
        )?;
    }
    note(
        cfg,
        &format!(
            "refs: {studied} of the shard's {total} entries studied ({failed} with an error), \
             {skipped} already written"
        ),
    );
    Ok(Outcome::Success)
}

/// The record of one entry: its closure loaded over HTTP through `client`, then the
/// path judged on its own.
fn study(
    cfg: &Config,
    a: &RefsArgs,
    rules: &ClassRules,
    client: &Arc<HttpClient>,
    e: &Entry,
) -> RefsRecord {
    let mut opts = cfg.load.clone();
    opts.http = HttpInputs {
        caches: cfg.caches.clone(),
        client: Some(Arc::clone(client)),
        progress: None,
    };
    // The entry's store path when the entry is one, so a failed record still names it.
    let named = cfg
        .load
        .store_dir_or_default()
        .parse_path(e.input.trim())
        .ok()
        .map(|p| p.to_string());
    let failed = |stage, message: String| {
        RefsRecord::failed(
            e.input.clone(),
            e.release.clone(),
            named.clone(),
            stage,
            message,
        )
    };
    let closure = match nixcut::load::load(&e.input, &opts) {
        Ok(c) => c,
        Err(err) => return failed(RecordStage::Load, err.to_string()),
    };
    let Some(root) = closure.declared_roots.first().cloned() else {
        return failed(
            RecordStage::Load,
            "the entry names no store path (a store path, base name, hash or narinfo URL \
             with --cache)"
                .into(),
        );
    };
    let refs = analysis::RefsOptions {
        discover: a.discover,
        files: source::locate_with(&closure, cfg.store_root.as_deref(), Some(client)),
        cache: cfg.scan_cache(cfg.no_cache),
        rules: rules.clone(),
        ..Default::default()
    };
    analysis::refs_record(&closure, &root, &refs, e.input.clone(), e.release.clone())
}

/// The shard's entries of the list `list` (`-`: standard input).
fn read_list(list: &str, shard: Shard) -> Result<Vec<Entry>> {
    let reader: Box<dyn Read> = if list == "-" {
        Box::new(io::stdin())
    } else {
        Box::new(
            std::fs::File::open(list)
                .with_context(|| format!("cannot open the path list {}", printable(list)))?,
        )
    };
    parse_list(BufReader::new(reader), list, shard)
}

/// Parse a path list (see the module docs), keeping entry i when i mod N = K.
fn parse_list(reader: impl BufRead, name: &str, shard: Shard) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    let mut i: u64 = 0;
    for (n, line) in reader.split(b'\n').enumerate() {
        let line =
            line.with_context(|| format!("cannot read the path list {}", printable(name)))?;
        let at = || format!("{}, line {}", printable(name), n + 1);
        let line = std::str::from_utf8(&line)
            .map_err(|_| anyhow!("{}: not UTF-8 text", at()))?
            .trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let (release, input) = match line.split_once('\t') {
            Some((r, p)) => (Some(r.trim()), p.trim()),
            None => (None, line.trim()),
        };
        if input.is_empty() || input.contains('\t') || release.is_some_and(str::is_empty) {
            bail!(
                "{}: expected `PATH` or `RELEASE<TAB>PATH`, found `{}`",
                at(),
                printable(line)
            );
        }
        if i % shard.count == shard.index {
            entries.push(Entry {
                release: release.map(str::to_string),
                input: input.to_string(),
            });
        }
        i += 1;
    }
    Ok(entries)
}

/// What a resumed run reads of each record written: the entry it is for.
#[derive(serde::Deserialize)]
struct WrittenKey {
    schema_version: u32,
    input: String,
    #[serde(default)]
    release: Option<String>,
}

/// `FILE.done`.
fn done_marker(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_os_string();
    s.push(".done");
    PathBuf::from(s)
}

/// The entries `out` already holds a record of. A last line cut short (no newline: a
/// write interrupted) is dropped from the file; any other line that is not a record
/// is an error naming its line.
fn written(cfg: &Config, out: &Path) -> Result<HashSet<(Option<String>, String)>> {
    let mut done = HashSet::new();
    let bytes = match std::fs::read(out) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(done),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", shown(out))),
    };
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    for (n, line) in bytes[..whole].split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let r: WrittenKey = serde_json::from_slice(line).map_err(|e| {
            anyhow!(
                "{}, line {}: not a record of `refs --format jsonl` ({e}); move the file away to start over",
                shown(out),
                n + 1
            )
        })?;
        if r.schema_version != SCHEMA_VERSION {
            bail!(
                "{}, line {}: a record of schema_version {}, not {SCHEMA_VERSION} (another \
                 nixcut wrote it); move the file away to start over",
                shown(out),
                n + 1,
                r.schema_version
            );
        }
        done.insert((r.release, r.input));
    }
    if whole < bytes.len() {
        note(
            cfg,
            &format!(
                "{}: dropping a last line cut short ({} bytes) by an interrupted run",
                shown(out),
                bytes.len() - whole
            ),
        );
        write_output(
            &cfg.load,
            out,
            "the records file",
            WriteMode::Replace,
            &bytes[..whole],
            &[],
        )?;
    }
    Ok(done)
}

fn shown(p: &Path) -> String {
    printable(&p.display().to_string()).into_owned()
}

/// A line on standard error, unless `--quiet`.
fn note(cfg: &Config, msg: &str) {
    if !cfg.quiet {
        let _ = writeln!(io::stderr(), "nixcut: {msg}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, index: u64, count: u64) -> Result<Vec<Entry>> {
        parse_list(text.as_bytes(), "list", Shard { index, count })
    }

    #[test]
    fn shards_take_every_nth_entry_and_together_the_whole_list() {
        let text = "# a comment\n/nix/store/a-x\n\n24.05\t/nix/store/b-y\nc\nd\ne\n";
        let all = parse(text, 0, 1).unwrap();
        assert_eq!(all.len(), 5);
        assert_eq!(all[1].release.as_deref(), Some("24.05"));
        assert_eq!(all[1].input, "/nix/store/b-y");
        let mut union = Vec::new();
        for k in 0..3 {
            let s = parse(text, k, 3).unwrap();
            assert!(s.iter().all(|e| {
                let i = all.iter().position(|x| x == e).unwrap() as u64;
                i % 3 == k
            }));
            union.extend(s);
        }
        assert_eq!(union.len(), all.len());
    }

    #[test]
    fn a_malformed_line_is_an_error_naming_its_line() {
        let e = parse("a\n\tb\n", 0, 1).unwrap_err().to_string();
        assert!(e.contains("list, line 2"), "{e}");
        let e = parse("a\nr\tb\tc\n", 0, 1).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }
}

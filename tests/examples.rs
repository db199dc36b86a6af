//! The shipped examples as a new user runs them: the README's quick start on the binary
//! cache directory of the ROCm test world (`examples/rocm-world-cache/`), with no Nix
//! needed, and the follow-up commands it names.
//!
//! Every figure README.md and examples/README.md print about the examples (path counts,
//! NAR, closure and added sizes, the symlinks that hold a Tensile group in, the
//! architectures of its files, the CI gate's ratio) is computed here from the examples'
//! own files, without nixcut: the narinfos' `NarSize` and `References`, the NAR listings
//! (`.ls`, what `nix copy … write-nar-listing=true` wrote beside them), the path-info JSON
//! files. A wrong number in a README or in the tool fails a test.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{human, nix_human, nixcut, repo};
use serde_json::Value;

const CACHE: &str = "examples/rocm-world-cache";

/// One store path of an example: its NAR size, its references (full store paths; a
/// path's own path among them is dropped) and, for the binary cache, its NAR listing.
struct Node {
    nar_size: u64,
    refs: BTreeSet<String>,
    listing: Value,
}

/// An example's store paths by full store path.
type Graph = BTreeMap<String, Node>;

/// The binary cache: one `<hash>.narinfo` (`Key: value` lines) and one `<hash>.ls` (JSON)
/// per store path.
fn cache_graph() -> Graph {
    let dir = repo().join(CACHE);
    let mut g = Graph::new();
    for e in std::fs::read_dir(&dir).expect("the example cache") {
        let p = e.expect("dir entry").path();
        if p.extension().is_none_or(|x| x != "narinfo") {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("narinfo");
        let field = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix(": ")))
                .unwrap_or_else(|| panic!("{}: no {k}", p.display()))
                .to_string()
        };
        let path = field("StorePath");
        let refs = field("References")
            .split_whitespace()
            .map(|b| format!("/nix/store/{b}"))
            .filter(|r| *r != path)
            .collect();
        let ls = std::fs::read_to_string(p.with_extension("ls")).expect("the .ls listing");
        let node = Node {
            nar_size: field("NarSize").parse().expect("NarSize"),
            refs,
            listing: serde_json::from_str(&ls).expect("the .ls is JSON"),
        };
        g.insert(path, node);
    }
    g
}

/// A `nix path-info --json -r -S` file of either shape (an object keyed by store path,
/// or an array with `path`); also every path's `closureSize`, as Nix wrote it.
fn path_info_graph(file: &str) -> (Graph, BTreeMap<String, u64>) {
    let text = std::fs::read_to_string(repo().join(file)).expect(file);
    let v: Value = serde_json::from_str(&text).expect("JSON");
    let entries: Vec<(String, &Value)> = match &v {
        Value::Object(m) => m.iter().map(|(k, e)| (k.clone(), e)).collect(),
        Value::Array(a) => a
            .iter()
            .map(|e| (e["path"].as_str().expect("path").to_string(), e))
            .collect(),
        _ => panic!("{file}: neither object nor array"),
    };
    let mut g = Graph::new();
    let mut nix_closure = BTreeMap::new();
    for (path, e) in entries {
        let refs = e["references"]
            .as_array()
            .expect("references")
            .iter()
            .map(|r| r.as_str().expect("a reference").to_string())
            .filter(|r| *r != path)
            .collect();
        nix_closure.insert(
            path.clone(),
            e["closureSize"].as_u64().expect("closureSize"),
        );
        let node = Node {
            nar_size: e["narSize"].as_u64().expect("narSize"),
            refs,
            listing: Value::Null,
        };
        g.insert(path, node);
    }
    (g, nix_closure)
}

/// The name part of a store path (`rocblas-5.7.1`).
fn name(path: &str) -> &str {
    let base = path.rsplit('/').next().unwrap_or(path);
    base.get(33..).unwrap_or(base)
}

/// The store path named `n` (exactly one).
fn by_name<'a>(g: &'a Graph, n: &str) -> &'a str {
    let found: Vec<&String> = g.keys().filter(|p| name(p) == n).collect();
    assert_eq!(found.len(), 1, "paths named {n}: {found:?}");
    found[0]
}

/// The one path no other path references.
fn root(g: &Graph) -> String {
    let referenced: BTreeSet<&String> = g.values().flat_map(|n| &n.refs).collect();
    let roots: Vec<&String> = g.keys().filter(|p| !referenced.contains(p)).collect();
    assert_eq!(roots.len(), 1, "roots: {roots:?}");
    roots[0].clone()
}

/// The paths reachable from `from` through references, never entering `avoid`.
fn reach<'a>(g: &'a Graph, from: &'a str, avoid: Option<&str>) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from];
    while let Some(p) = todo.pop() {
        if Some(p) == avoid || !seen.insert(p) {
            continue;
        }
        let node = g
            .get(p)
            .unwrap_or_else(|| panic!("{p} is referenced but not in the example"));
        todo.extend(node.refs.iter().map(String::as_str));
    }
    seen
}

fn size_of(g: &Graph, paths: &BTreeSet<&str>) -> u64 {
    paths.iter().map(|p| g[*p].nar_size).sum()
}

/// Closure size: the NAR sizes of every path reachable from `p`, each counted once.
fn closure(g: &Graph, p: &str) -> u64 {
    size_of(g, &reach(g, p, None))
}

/// Added size: what leaves `root`'s closure with `p` (the root's is its whole closure).
fn added(g: &Graph, root: &str, p: &str) -> u64 {
    if p == root {
        return closure(g, root);
    }
    closure(g, root) - size_of(g, &reach(g, root, Some(p)))
}

/// A file's text with every run of white space one space (prose wraps anywhere).
fn words(file: &str) -> String {
    let text = std::fs::read_to_string(repo().join(file)).expect(file);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every non-directory entry of a NAR listing: (path inside the store path, the entry).
fn entries(listing: &Value) -> Vec<(String, &Value)> {
    fn walk<'a>(n: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
        if n["type"] == "directory" {
            for (k, c) in n["entries"].as_object().into_iter().flatten() {
                walk(c, format!("{at}/{k}"), out);
            }
        } else {
            out.push((at, n));
        }
    }
    let mut out = Vec::new();
    walk(&listing["root"], String::new(), &mut out);
    out
}

/// The AMD GPU architectures a file name carries (`…_gfx90a-xnack+.hsaco` → gfx90a).
fn archs_in_name(file: &str) -> BTreeSet<String> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let mut out = BTreeSet::new();
    let mut rest = name;
    while let Some(i) = rest.find("gfx") {
        let tail = &rest[i + 3..];
        let n = tail
            .find(|c: char| !c.is_ascii_digit() && !('a'..='f').contains(&c))
            .unwrap_or(tail.len());
        if n > 0 {
            out.insert(format!("gfx{}", &tail[..n]));
        }
        rest = &tail[n..];
    }
    out
}

/// The symlinks of `from`'s listing whose target lies in store path `into`, with the
/// target.
fn links_into<'a>(g: &'a Graph, from: &str, into: &str) -> Vec<(String, &'a str)> {
    entries(&g[from].listing)
        .into_iter()
        .filter(|(_, e)| e["type"] == "symlink")
        .filter_map(|(at, e)| {
            let t = e["target"].as_str()?;
            t.starts_with(&format!("{into}/")).then_some((at, t))
        })
        .collect()
}

/// The quick start's console block of README.md: the command after `$ ` and the lines
/// it shows (up to a line `…`).
fn quick_start() -> (String, Vec<String>) {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let start = readme
        .find("## Quick start")
        .expect("a Quick start section");
    let block = &readme[start..];
    let block = &block[block.find("```console").expect("a console block") + 10..];
    let block = &block[..block.find("```").expect("the end of the block")];
    let mut lines = block.lines().filter(|l| !l.is_empty());
    let cmd = lines
        .next()
        .and_then(|l| l.strip_prefix("$ "))
        .expect("the block starts with `$ nixcut …`")
        .to_string();
    let shown = lines
        .take_while(|l| l.trim() != "…")
        .map(str::to_string)
        .collect();
    (cmd, shown)
}

/// Run a README command line as written (words split on spaces, no quoting in it), from
/// the repository root.
fn run_as_written(cmd: &str) -> (i32, String, String) {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    assert_eq!(words[0], "nixcut", "{cmd}");
    let out = nixcut()
        .current_dir(repo())
        .args(&words[1..])
        .env_remove("NIX_STATE_DIR")
        .output()
        .expect("run nixcut");
    common::decode(out)
}

fn json_of(cmd: &str) -> Value {
    let (code, out, err) = run_as_written(cmd);
    assert_eq!(code, 0, "{cmd}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{cmd}: {e}\n{out}"))
}

#[test]
fn the_quick_start_prints_file_level_evidence_as_the_readme_shows() {
    let (cmd, shown) = quick_start();
    assert!(cmd.contains(CACHE), "{cmd}");
    let (code, out, err) = run_as_written(&cmd);
    assert_eq!(code, 0, "{cmd}: {err}");
    // Every line the README shows is what the command prints (the README is not stale).
    for l in &shown {
        assert!(
            out.lines().any(|o| o == l),
            "README shows a line the command does not print:\n{l}\n--- printed:\n{out}"
        );
    }
    assert!(!out.contains("graph-level only"), "{out}");

    // And what it shows is what the cache holds: the headline …
    let g = cache_graph();
    let root = root(&g);
    let in_closure = reach(&g, &root, None);
    assert_eq!(in_closure.len(), g.len(), "the cache is one closure");
    assert_eq!(
        shown[0],
        format!(
            "{}: closure {} in {} paths",
            name(&root),
            human(closure(&g, &root)),
            g.len()
        )
    );
    // … the rows: the paths ranked by added size, with their added, closure and NAR
    // sizes …
    let mut ranked: Vec<(u64, &str)> = g.keys().map(|p| (added(&g, &root, p), &p[..])).collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let rows: Vec<&String> = shown
        .iter()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(rows.len() >= 5, "{shown:?}");
    for (i, row) in rows.iter().enumerate() {
        let t: Vec<&str> = row.split_whitespace().collect();
        let path = ranked[i].1;
        assert_eq!(t[0], (i + 1).to_string(), "{row}");
        assert_eq!(t[7], name(path), "rank {}: {row}", i + 1);
        assert_eq!(format!("{} {}", t[1], t[2]), human(ranked[i].0), "{row}");
        assert_eq!(
            format!("{} {}", t[3], t[4]),
            human(closure(&g, path)),
            "{row}"
        );
        assert_eq!(
            format!("{} {}", t[5], t[6]),
            human(g[path].nar_size),
            "{row}"
        );
        // … each "kept by" names a path that references this one …
        let Some(arrow) = t.iter().position(|w| *w == "←") else {
            assert_eq!(t[8], "(root)", "{row}");
            assert_eq!(path, root);
            continue;
        };
        let referrer = by_name(&g, t[arrow + 1].trim_end_matches(':'));
        assert!(g[referrer].refs.contains(path), "{row}");
        // … and the symlink evidence is the listing's symlinks into the path, onto
        // files of the architectures the verdict names.
        if t.get(arrow + 3) == Some(&"symlink") {
            let links = links_into(&g, referrer, path);
            assert_eq!(t[arrow + 2], links.len().to_string(), "{row}");
            let archs: BTreeSet<String> =
                links.iter().flat_map(|(_, t)| archs_in_name(t)).collect();
            assert!(
                links.iter().all(|(_, t)| archs_in_name(t).len() == 1),
                "every link is onto one architecture's file: {links:?}"
            );
            let first = archs.first().expect("architectures");
            let verdict = t[arrow - 1];
            let listed: Vec<String> = archs.iter().cloned().collect();
            assert!(
                verdict == format!("gpu:{first},+{}", archs.len() - 1)
                    || verdict == format!("gpu:{}", listed.join(",")),
                "{row}: the links are onto {archs:?}"
            );
        }
    }
    // The prose around the block: the cache's size and the symlink count.
    let readme = words("README.md");
    let bytes: u64 = std::fs::read_dir(repo().join(CACHE))
        .unwrap()
        .chain(std::fs::read_dir(repo().join(CACHE).join("nar")).unwrap())
        .map(|e| e.unwrap().metadata().unwrap())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    let said = format!(
        "`{CACHE}/`: {} store paths, their narinfos and xz-compressed NARs, {:.1} MB)",
        g.len(),
        bytes as f64 / 1e6
    );
    assert!(readme.contains(&said), "README.md should say: {said}");
    let gfx90 = by_name(&g, "rocblas-tensile-gfx90-5.7.1");
    let rocblas = by_name(&g, "rocblas-5.7.1");
    let said = format!(
        "`rocblas-tensile-gfx90` is held by {} symlinks in rocblas",
        links_into(&g, rocblas, gfx90).len()
    );
    assert!(readme.contains(&said), "README.md should say: {said}");
    let examples = words("examples/README.md");
    let said = format!(
        "{} paths, {} of NARs, {:.1} MB of files)",
        g.len(),
        human(closure(&g, &root)),
        bytes as f64 / 1e6
    );
    assert!(
        examples.contains(&said),
        "examples/README.md should say: {said}"
    );
}

#[test]
fn why_on_the_shipped_cache_gives_every_path_the_sizes_its_narinfos_give() {
    let g = cache_graph();
    let root = root(&g);
    let v = json_of(&format!("nixcut why {CACHE} --format json"));
    assert_eq!(v["root"], root.as_str());
    assert_eq!(v["path_count"], g.len());
    assert_eq!(v["closure_size"], closure(&g, &root));
    let rows = v["paths"].as_array().expect("paths");
    assert_eq!(rows.len(), g.len());
    for r in rows {
        let p = r["path"].as_str().expect("path");
        assert_eq!(r["nar_size"], g[p].nar_size, "{p}");
        assert_eq!(r["closure_size"], closure(&g, p), "{p}");
        assert_eq!(r["added_size"], added(&g, &root, p), "{p}");
    }
}

/// Bytes and files per GPU architecture of the files under rocBLAS' data directory
/// (`lib/rocblas/library/`) of every listing, by the architecture in the file's name:
/// arch -> (bytes of regular files, regular files, symlinks).
fn tensile_archs(g: &Graph) -> BTreeMap<String, (u64, u64, u64)> {
    let mut out: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    for node in g.values() {
        for (at, e) in entries(&node.listing) {
            if !at.starts_with("/lib/rocblas/library/") {
                continue;
            }
            let archs = archs_in_name(&at);
            assert!(archs.len() <= 1, "{at}");
            let Some(a) = archs.into_iter().next() else {
                continue;
            };
            let row = out.entry(a).or_default();
            if e["type"] == "regular" {
                row.0 += e["size"].as_u64().expect("size");
                row.1 += 1;
            } else {
                row.2 += 1;
            }
        }
    }
    out
}

#[test]
fn gpu_on_the_shipped_cache_counts_each_architecture_as_the_listings_do() {
    let g = cache_graph();
    let root = root(&g);
    let v = json_of(&format!(
        "nixcut gpu {CACHE} --gpu-targets gfx1030 --format json"
    ));
    assert_eq!(v["closure_size"], closure(&g, &root), "{v}");
    assert_eq!(v["path_count"], g.len(), "{v}");
    assert_eq!(v["unscanned_bytes"], 0, "{v}");
    // Per architecture: the Tensile files' bytes and counts, and the symlinks to them.
    // `files` also counts each library whose fat binary holds code for the architecture
    // (`elf_bytes`): in this closure one, rocsparse's, for the four it is built for.
    let want = tensile_archs(&g);
    let got: BTreeMap<String, (u64, u64, u64)> = v["archs"]
        .as_array()
        .expect("archs")
        .iter()
        .map(|a| {
            let n = |k: &str| a[k].as_u64().unwrap_or_else(|| panic!("{k}: {a}"));
            let fat = u64::from(n("elf_bytes") > 0);
            (
                a["arch"].as_str().unwrap().to_string(),
                (n("file_bytes"), n("files") - fat, n("links")),
            )
        })
        .collect();
    assert_eq!(got, want);
    let elf: u64 = v["archs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["elf_bytes"].as_u64().unwrap())
        .sum();
    let files: u64 = want.values().map(|r| r.0).sum();
    assert_eq!(v["gpu_bytes"], files + elf, "{v}");
    // Keeping gfx1030: every other architecture dropped; the Tensile groups holding no
    // gfx1030 file leave the closure, and nothing else does.
    let dropped: BTreeSet<&str> = v["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let others: BTreeSet<&str> = want
        .keys()
        .map(String::as_str)
        .filter(|a| *a != "gfx1030")
        .collect();
    assert_eq!(dropped, others);
    assert_eq!(v["kept"], serde_json::json!(["gfx1030"]));
    let leave: BTreeSet<&str> = g
        .iter()
        .filter(|(_, n)| {
            let files: Vec<(String, &Value)> = entries(&n.listing);
            !files.is_empty()
                && files.iter().all(|(at, _)| {
                    let a = archs_in_name(at);
                    at.starts_with("/lib/rocblas/library/")
                        && !a.is_empty()
                        && !a.contains("gfx1030")
                })
        })
        .map(|(p, _)| &p[..])
        .collect();
    let removed: BTreeSet<&str> = v["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(removed, leave);
    assert_eq!(v["path_count_after"], g.len() - leave.len(), "{v}");
    let remedies = v["remedies"].as_array().expect("remedies");
    assert!(!remedies.is_empty(), "{v}");
    for r in remedies {
        assert_eq!(r["value"], serde_json::json!(["gfx1030"]), "{r}");
    }
    // rocBLAS' own symlinks onto the dropped architectures' files go.
    let rocblas = by_name(&g, "rocblas-5.7.1");
    let changed = v["changed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == rocblas)
        .expect("rocblas changes");
    let links: usize = entries(&g[rocblas].listing)
        .iter()
        .filter(|(at, e)| {
            let a = archs_in_name(at);
            e["type"] == "symlink" && !a.is_empty() && !a.contains("gfx1030")
        })
        .count();
    assert_eq!(changed["files_dropped"], links, "{changed}");
}

#[test]
fn split_on_the_shipped_cache_proposes_outputs_that_add_up() {
    let g = cache_graph();
    let root = root(&g);
    let rocblas = by_name(&g, "rocblas-5.7.1").to_string();
    let v = json_of(&format!("nixcut split rocblas --for {CACHE} --format json"));
    assert_eq!(v["package"], rocblas.as_str());
    assert_eq!(v["package_size"], g[&rocblas].nar_size);
    let outputs = v["outputs"].as_array().expect("outputs");
    let names: Vec<&str> = outputs.iter().filter_map(|o| o["name"].as_str()).collect();
    assert!(names.contains(&"out") && names.contains(&"dev"), "{v}");
    // Every file and symlink of rocblas goes to one output, or is deleted.
    let files: u64 = outputs.iter().map(|o| o["files"].as_u64().unwrap()).sum();
    let deleted = v["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "delete")
        .count() as u64;
    assert_eq!(
        files + deleted,
        entries(&g[&rocblas].listing).len() as u64,
        "{v}"
    );
    // The consumer's closure after: rocblas replaced by the outputs it needs, with their
    // references; what no longer is reachable leaves.
    let f = &v["for"];
    assert_eq!(f["closure_size_before"], closure(&g, &root));
    assert_eq!(f["path_count_before"], g.len());
    let needed: Vec<&Value> = f["outputs_needed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            outputs
                .iter()
                .find(|o| o["name"] == *n)
                .expect("a needed output is an output")
        })
        .collect();
    let mut after = Graph::new();
    for (p, n) in &g {
        let refs = if *p == rocblas {
            needed
                .iter()
                .flat_map(|o| o["references"].as_array().unwrap())
                .filter(|r| r["output"].is_null())
                .map(|r| r["path"].as_str().unwrap().to_string())
                .filter(|r| *r != rocblas)
                .collect()
        } else {
            n.refs.clone()
        };
        let size = if *p == rocblas {
            needed.iter().map(|o| o["size"].as_u64().unwrap()).sum()
        } else {
            n.nar_size
        };
        after.insert(
            p.clone(),
            Node {
                nar_size: size,
                refs,
                listing: Value::Null,
            },
        );
    }
    let kept = reach(&after, &root, None);
    let removed: BTreeSet<&str> = f["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let gone: BTreeSet<&str> = g
        .keys()
        .map(String::as_str)
        .filter(|p| !kept.contains(p))
        .collect();
    assert_eq!(removed, gone, "{f}");
    assert_eq!(f["path_count_after"], kept.len());
    assert_eq!(f["closure_size_after"], size_of(&after, &kept), "{f}");
}

#[test]
fn every_quick_start_follow_up_command_runs() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let start = readme
        .find("## Quick start")
        .expect("a Quick start section");
    let end = start
        + readme[start..]
            .find("## Commands")
            .expect("Commands after it");
    let section = &readme[start..end];
    let mut n = 0;
    for line in section.lines().filter(|l| l.starts_with("nixcut ")) {
        let cmd = line.split('#').next().unwrap().trim();
        let (code, out, err) = run_as_written(cmd);
        assert_eq!(code, 0, "{cmd}: {err}");
        // A closure the comment gives a size for is that size.
        let comment = line.split('#').nth(1).unwrap_or("");
        if let Some(file) = cmd
            .strip_prefix("nixcut why ")
            .filter(|f| f.ends_with(".json"))
        {
            let (g, _) = path_info_graph(file);
            let root = root(&g);
            let size = human(closure(&g, &root));
            assert!(comment.contains(&size), "{line}: the closure is {size}");
            let head = format!("{}: closure {size} in {} paths", name(&root), g.len());
            assert_eq!(out.lines().next(), Some(head.as_str()), "{cmd}");
        }
        n += 1;
    }
    assert!(n >= 3, "the quick start names its follow-up commands");
}

/// The reconstructed path-info files: the sizes both READMEs print, and what `why`
/// says of every path.
#[test]
fn the_reconstructed_closures_are_the_sizes_the_readmes_print() {
    let readme = words("README.md");
    let examples = std::fs::read_to_string(repo().join("examples/README.md")).unwrap();
    let mut sizes = BTreeMap::new();
    let mut graphs = Vec::new();
    for file in [
        "examples/llama-cpp-rocm.json",
        "examples/llama-cpp-cuda.json",
    ] {
        let (g, nix_closure) = path_info_graph(file);
        let root = root(&g);
        let size = closure(&g, &root);
        // The file's own closureSize fields are the closures of its graph.
        for p in g.keys() {
            assert_eq!(nix_closure[p], closure(&g, p), "{file}: {p}");
        }
        // examples/README.md's table of files: paths, root, root closure.
        let base = file.rsplit('/').next().unwrap();
        let row = examples
            .lines()
            .find(|l| l.starts_with(&format!("| `{base}` |")))
            .unwrap_or_else(|| panic!("examples/README.md has no row for {base}"));
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_eq!(cells[2], g.len().to_string(), "{row}");
        assert_eq!(cells[3], format!("`{root}`"), "{row}");
        let grouped = size
            .to_string()
            .as_bytes()
            .rchunks(3)
            .rev()
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(
            cells[4].trim_end_matches(" |"),
            format!("{grouped} bytes ({})", nix_human(size)),
            "{row}"
        );
        // `why` on the file: the headline and every path's sizes.
        let v = json_of(&format!("nixcut why {file} --format json"));
        assert_eq!(v["closure_size"], size);
        assert_eq!(v["path_count"], g.len());
        for r in v["paths"].as_array().unwrap() {
            let p = r["path"].as_str().unwrap();
            assert_eq!(r["closure_size"], closure(&g, p), "{file}: {p}");
            assert_eq!(r["added_size"], added(&g, &root, p), "{file}: {p}");
        }
        sizes.insert(base, size);
        graphs.push(g);
    }
    let (rocm, cuda) = (sizes["llama-cpp-rocm.json"], sizes["llama-cpp-cuda.json"]);
    let said = format!(
        "`llama-cpp-rocm` weighed {} against {} for the CUDA build",
        human(rocm),
        human(cuda)
    );
    assert!(readme.contains(&said), "README.md should say: {said}");
    // examples/README.md's published figures: each reconstructed closure, and how Nix
    // prints it.
    let mut rows = 0;
    for row in examples
        .lines()
        .filter(|l| l.starts_with("| `") && l.matches(" | ").count() == 4)
    {
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
        let base = cells[0].trim_matches('`');
        let Some((g, p)) = graphs.iter().find_map(|g| {
            g.keys()
                .find(|p| p.ends_with(&format!("/{base}")))
                .map(|p| (g, p))
        }) else {
            continue;
        };
        let size = closure(g, p);
        assert_eq!(cells[2].replace(',', ""), size.to_string(), "{row}");
        assert_eq!(cells[3], nix_human(size), "{row}");
        assert_eq!(cells[1], nix_human(size), "{row}: published");
        rows += 1;
    }
    assert_eq!(rows, 16, "the 16 published paths");
}

#[test]
fn the_ci_recipe_gate_fails_with_the_ratio_the_readme_gives() {
    let readme = words("README.md");
    let cmd = "nixcut check examples/llama-cpp-rocm.json --against examples/llama-cpp-cuda.json --max-ratio 2";
    assert!(readme.contains(&format!("`{cmd}`")), "README.md runs {cmd}");
    let (rocm, _) = path_info_graph("examples/llama-cpp-rocm.json");
    let (cuda, _) = path_info_graph("examples/llama-cpp-cuda.json");
    let ratio = closure(&rocm, &root(&rocm)) as f64 / closure(&cuda, &root(&cuda)) as f64;
    assert!(ratio > 2.0);
    let said = format!("(exit 1, the ROCm closure is {ratio:.2} times the CUDA one)");
    assert!(readme.contains(&said), "README.md should say: {said}");
    let (code, out, err) = run_as_written(cmd);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains(&format!("ratio {ratio:.2}×")), "{out}");
}

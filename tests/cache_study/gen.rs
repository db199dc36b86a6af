//! A binary cache of generated store paths for the cache-study tests: real ELF programs
//! (tests/fixtures/elf/prog with its six store hashes rewritten, as Nix rewrites hashes)
//! whose RUNPATH names a library that supplies their DT_NEEDED `libfoo.so` and one that
//! supplies nothing, GPU code objects (clang offload bundles for one architecture each),
//! documentation naming a manual, and symlinks into kernel packages. Every path has a
//! `.ls` listing, so RUNPATH entries resolve as with cache.nixos.org. Deterministic.
//!
//! Names are those the fixture's strings carry (`foo`, `bar`, `glibc`, `src`, `tensile`,
//! `share`), since only hashes are rewritten; applications are `app-N-1.0`, GPU packages
//! `kernels-N`, manuals `manual-N`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const NIX32: &[u8] = b"0123456789abcdfghijklmnpqrsvwxyz";
/// The fixture's hashes and what each names.
const FIXTURE: [(&str, &str); 6] = [
    ("1b9p07z77phvv2hf6gm9f28syp39f039", "foo"),
    ("2c9p07z77phvv2hf6gm9f28syp39f039", "bar"),
    ("5g9p07z77phvv2hf6gm9f28syp39f039", "glibc"),
    ("6h9p07z77phvv2hf6gm9f28syp39f039", "src"),
    ("3d9p07z77phvv2hf6gm9f28syp39f039", "tensile"),
    ("4f9p07z77phvv2hf6gm9f28syp39f039", "share"),
];
const ARCHS: [&str; 4] = ["gfx90a", "gfx1100", "gfx908", "gfx1030"];

/// A file tree, as a NAR holds it.
enum Node {
    File { exec: bool, data: Vec<u8> },
    Dir(BTreeMap<String, Node>),
    Link(String),
}

fn dir<const N: usize>(entries: [(&str, Node); N]) -> Node {
    Node::Dir(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn file(data: Vec<u8>) -> Node {
    Node::File { exec: false, data }
}

fn nar_str(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
    out.resize(out.len() + (8 - b.len() % 8) % 8, 0);
}

fn nar_node(out: &mut Vec<u8>, n: &Node) {
    nar_str(out, b"(");
    nar_str(out, b"type");
    match n {
        Node::File { exec, data } => {
            nar_str(out, b"regular");
            if *exec {
                nar_str(out, b"executable");
                nar_str(out, b"");
            }
            nar_str(out, b"contents");
            nar_str(out, data);
        }
        Node::Link(t) => {
            nar_str(out, b"symlink");
            nar_str(out, b"target");
            nar_str(out, t.as_bytes());
        }
        Node::Dir(entries) => {
            nar_str(out, b"directory");
            for (name, child) in entries {
                nar_str(out, b"entry");
                nar_str(out, b"(");
                nar_str(out, b"name");
                nar_str(out, name.as_bytes());
                nar_str(out, b"node");
                nar_node(out, child);
                nar_str(out, b")");
            }
        }
    }
    nar_str(out, b")");
}

fn nar(n: &Node) -> Vec<u8> {
    let mut out = Vec::new();
    nar_str(&mut out, b"nix-archive-1");
    nar_node(&mut out, n);
    out
}

fn listing(n: &Node) -> serde_json::Value {
    match n {
        Node::File { exec, data } => {
            serde_json::json!({"type": "regular", "size": data.len(), "executable": exec})
        }
        Node::Link(t) => serde_json::json!({"type": "symlink", "target": t}),
        Node::Dir(e) => {
            let entries: serde_json::Map<String, serde_json::Value> =
                e.iter().map(|(k, v)| (k.clone(), listing(v))).collect();
            serde_json::json!({"type": "directory", "entries": entries})
        }
    }
}

/// A store hash from a seed string.
fn hash(seed: &str) -> String {
    Sha256::digest(seed.as_bytes())
        .iter()
        .take(32)
        .map(|b| NIX32[(*b as usize) % 32] as char)
        .collect()
}

/// A clang offload bundle file with one device entry for `arch`, `pages` × 4 KiB long.
fn bundle(arch: &str, pages: u64) -> Vec<u8> {
    let ids = [
        "host-x86_64-unknown-linux-gnu-".to_string(),
        format!("hipv4-amdgcn-amd-amdhsa--{arch}"),
    ];
    let mut b = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    b.extend_from_slice(&(ids.len() as u64).to_le_bytes());
    for (i, id) in ids.iter().enumerate() {
        let size = if i == 0 { 64 } else { 4096 * pages };
        b.extend_from_slice(&(4096u64 * (i as u64 + 1)).to_le_bytes());
        b.extend_from_slice(&size.to_le_bytes());
        b.extend_from_slice(&(id.len() as u64).to_le_bytes());
        b.extend_from_slice(id.as_bytes());
    }
    b.resize((8192 + 4096 * pages) as usize, 0x5a);
    b
}

/// The generated cache.
pub struct Cache {
    /// The cache directory (nix-cache-info, narinfos, listings, nar/).
    pub dir: PathBuf,
    /// The applications' store paths.
    pub apps: Vec<String>,
    /// The GPU packages' store paths.
    pub kernels: Vec<String>,
    /// An application whose NAR file is gone (a 404).
    pub missing_nar: String,
    /// An application whose NAR does not match its NarHash.
    pub corrupt: String,
    /// A hash no narinfo has.
    pub unknown: String,
    /// Store paths written.
    pub count: usize,
}

struct Writer {
    dir: PathBuf,
    count: usize,
}

impl Writer {
    /// Write one store path; returns its full store path.
    fn put(&mut self, hash: &str, name: &str, tree: &Node, refs: &[&str]) -> String {
        let base = format!("{hash}-{name}");
        let bytes = nar(tree);
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect();
        let file = format!("nar/{digest}.nar");
        std::fs::write(self.dir.join(&file), &bytes).unwrap();
        let mut names: Vec<&str> = refs.iter().map(|r| r.rsplit('/').next().unwrap()).collect();
        names.sort_unstable();
        names.dedup();
        std::fs::write(
            self.dir.join(format!("{hash}.narinfo")),
            format!(
                "StorePath: /nix/store/{base}\nURL: {file}\nCompression: none\n\
                 NarHash: sha256:{digest}\nNarSize: {}\nFileSize: {}\nReferences: {}\n",
                bytes.len(),
                bytes.len(),
                names.join(" ")
            ),
        )
        .unwrap();
        let ls = serde_json::json!({"version": 1, "root": listing(tree)});
        std::fs::write(self.dir.join(format!("{hash}.ls")), ls.to_string()).unwrap();
        self.count += 1;
        format!("/nix/store/{base}")
    }
}

/// Generate a cache of `apps` applications and their dependencies under `dir`
/// (about 1.5 store paths per application).
pub fn generate(out: &Path, apps: usize) -> Cache {
    let prog = std::fs::read(super::common::repo().join("tests/fixtures/elf/prog")).unwrap();
    std::fs::create_dir_all(out.join("nar")).unwrap();
    std::fs::write(out.join("nix-cache-info"), "StoreDir: /nix/store\n").unwrap();
    let mut w = Writer {
        dir: out.to_path_buf(),
        count: 0,
    };
    let n_libs = (apps / 4).max(2);
    let n_side = (apps / 8).max(2);
    let h = |kind: &str, i: usize| hash(&format!("{kind}-{i}"));
    let pad = |i: usize, n: usize| vec![b'.'; 512 * (1 + (i * 7919) % n)];
    let glibc_h = h("glibc", 0);
    let glibc = w.put(
        &glibc_h,
        "glibc",
        &dir_of_lib("ld-linux.so.2", pad(0, 4)),
        &[],
    );
    let shares: Vec<(String, String)> = (0..n_side)
        .map(|i| {
            let hh = h("share", i);
            let p = w.put(&hh, "share", &dir([("data", file(pad(i, 16)))]), &[]);
            (hh, p)
        })
        .collect();
    let foos: Vec<(String, String)> = (0..n_libs)
        .map(|i| {
            let hh = h("foo", i);
            let p = w.put(&hh, "foo", &dir_of_lib("libfoo.so", pad(i, 8)), &[]);
            (hh, p)
        })
        .collect();
    // A library nobody needs, whose text names a data directory.
    let bars: Vec<(String, String)> = (0..n_libs)
        .map(|i| {
            let hh = h("bar", i);
            let share = &shares[(i * 7) % n_side].1;
            let mut data = format!("data={share}/data\n").into_bytes();
            data.extend(pad(i, 32));
            let p = w.put(&hh, "bar", &dir_of_lib("libbar.so", data), &[share]);
            (hh, p)
        })
        .collect();
    let simple = |w: &mut Writer, kind: &str, i: usize, body: &str| {
        let hh = h(kind, i);
        let p = w.put(&hh, kind, &dir([(body, file(pad(i, 4)))]), &[]);
        (hh, p)
    };
    let srcs: Vec<(String, String)> = (0..n_side)
        .map(|i| simple(&mut w, "src", i, "main.c"))
        .collect();
    let tensiles: Vec<(String, String)> = (0..n_side)
        .map(|i| simple(&mut w, "tensile", i, "include"))
        .collect();
    let manuals: Vec<String> = (0..n_side)
        .map(|i| {
            let hh = h("manual", i);
            w.put(
                &hh,
                &format!("manual-{i}"),
                &dir([(
                    "share",
                    dir([("doc", dir([("manual.txt", file(pad(i, 16)))]))]),
                )]),
                &[],
            )
        })
        .collect();
    let kernels: Vec<String> = (0..n_side * 2)
        .map(|i| {
            let hh = h("kernels", i);
            let mut files = BTreeMap::new();
            for j in 0..1 + i % 3 {
                let arch = ARCHS[(i + j) % ARCHS.len()];
                files.insert(
                    format!("kernel-{j}-{arch}.hsaco"),
                    file(bundle(arch, 1 + ((i + j) % 5) as u64)),
                );
            }
            w.put(
                &hh,
                &format!("kernels-{i}"),
                &dir([("lib", dir([("kernels", Node::Dir(files))]))]),
                &[],
            )
        })
        .collect();
    let mut app_paths = Vec::new();
    for i in 0..apps {
        let hh = h("app", i);
        let needed = &foos[i % n_libs];
        let bar = &bars[(i * 3 + 1) % n_libs];
        let src = &srcs[i % n_side];
        let tensile = &tensiles[(i * 5) % n_side];
        let share = &shares[(i * 11) % n_side];
        let mut elf = prog.clone();
        for (old, kind) in FIXTURE {
            let new = match kind {
                "foo" => &needed.0,
                "bar" => &bar.0,
                "glibc" => &glibc_h,
                "src" => &src.0,
                "tensile" => &tensile.0,
                _ => &share.0,
            };
            let at = elf
                .windows(32)
                .position(|x| x == old.as_bytes())
                .expect("the fixture holds each hash");
            elf[at..at + 32].copy_from_slice(new.as_bytes());
        }
        let mut refs: Vec<&str> = vec![&glibc, &needed.1, &bar.1, &src.1, &tensile.1, &share.1];
        let mut top: BTreeMap<String, Node> = BTreeMap::new();
        // Its own name, so that no two applications share a NAR.
        top.insert("name".into(), file(format!("app-{i}\n").into_bytes()));
        top.insert(
            "bin".into(),
            dir([(
                "prog",
                Node::File {
                    exec: true,
                    data: elf,
                },
            )]),
        );
        if i % 3 == 0 {
            let manual = &manuals[i % n_side];
            refs.push(manual);
            top.insert(
                "share".into(),
                dir([(
                    "doc",
                    dir([(
                        "README",
                        file(format!("See {manual}/share/doc\n").into_bytes()),
                    )]),
                )]),
            );
        }
        if i % 4 == 0 {
            let k = &kernels[i % kernels.len()];
            refs.push(k);
            top.insert(
                "lib".into(),
                dir([("kernels", Node::Link(format!("{k}/lib/kernels")))]),
            );
        }
        if i % 5 == 0 {
            // Its own GPU code too.
            let arch = ARCHS[i % ARCHS.len()];
            let lib = top
                .entry("lib".into())
                .or_insert_with(|| Node::Dir(BTreeMap::new()));
            if let Node::Dir(m) = lib {
                m.insert(format!("own-{arch}.hsaco"), file(bundle(arch, 2)));
            }
        }
        app_paths.push(w.put(&hh, &format!("app-{i}-1.0"), &Node::Dir(top), &refs));
    }
    // Two applications spoiled after the fact: one NAR deleted, one altered.
    let nar_of = |p: &str| -> PathBuf {
        let hh = &p["/nix/store/".len().."/nix/store/".len() + 32];
        let text = std::fs::read_to_string(out.join(format!("{hh}.narinfo"))).unwrap();
        let url = text
            .lines()
            .find_map(|l| l.strip_prefix("URL: "))
            .unwrap()
            .to_string();
        out.join(url)
    };
    let missing_nar = app_paths[1].clone();
    std::fs::remove_file(nar_of(&missing_nar)).unwrap();
    let corrupt = app_paths[2].clone();
    let f = nar_of(&corrupt);
    let mut bytes = std::fs::read(&f).unwrap();
    let last = bytes.len() - 20;
    bytes[last] ^= 0x20;
    std::fs::write(&f, bytes).unwrap();
    Cache {
        dir: out.to_path_buf(),
        apps: app_paths,
        kernels,
        missing_nar,
        corrupt,
        unknown: hash("nowhere"),
        count: w.count,
    }
}

fn dir_of_lib(name: &str, data: Vec<u8>) -> Node {
    dir([("lib", dir([(name, file(data))]))])
}

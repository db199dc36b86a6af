//! A generated pair of package sets with planted changes, for the tests of `diff` and
//! `check` on package sets and for `benches/package_sets.rs`. Deterministic from a seed.
//!
//! The world: base libraries (glibc, zlib, openssl with two outputs, gcc's lib), a
//! layered web of mid libraries (each references one to three libraries of lower
//! layers, most of them reaching openssl), `libfoo` (referenced only by every seventh
//! root), and the roots (`app<i>`, two `gcc` versions). What NEW changes:
//! - `libfoo` gains a reference to the new `libhuge-1.0` (400 MiB): the planted cause;
//! - openssl 3.0.12 → 3.0.13 (its `out` 4 KiB larger): everything above it is rebuilt,
//!   with a new hash and the same name and size (the mass rebuild);
//! - every 101st root grows by 1 MiB (a version bump of its own);
//! - every 211th root vanishes, and `roots / 200` new roots appear.
//!
//! Writers give the `nix path-info --json` of a side, its package-set file (store
//! paths one a line), its nix-eval-jobs listing and a binary-cache directory of
//! narinfos (with `FileSize`).

#![allow(dead_code)]

pub mod shapes;

use std::fmt::Write as _;
use std::path::Path;

pub const STORE: &str = "/nix/store";
pub const HUGE: u64 = 400 << 20;
pub const GROW: u64 = 1 << 20;
pub const OPENSSL_GROW: u64 = 4096;

/// One store path of one side.
#[derive(Debug, Clone)]
pub struct P {
    pub hash: String,
    pub name: String,
    pub size: u64,
    /// Indices into the side's `paths`.
    pub refs: Vec<usize>,
}

impl P {
    pub fn base(&self) -> String {
        format!("{}-{}", self.hash, self.name)
    }
    pub fn full(&self) -> String {
        format!("{STORE}/{}", self.base())
    }
}

/// One package set and its graph.
#[derive(Debug, Clone, Default)]
pub struct Side {
    pub paths: Vec<P>,
    /// Indices of the roots, in package-set order.
    pub roots: Vec<usize>,
}

/// The pair, and what was planted.
pub struct World {
    pub old: Side,
    pub new: Side,
    /// Roots in both sets whose new closure gains libhuge.
    pub huge_roots: usize,
}

/// Sizes of the world.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub roots: usize,
    pub libs: usize,
    pub layers: usize,
    pub seed: u64,
}

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

const NIX32: &[u8] = b"0123456789abcdfghijklmnpqrsvwxyz";

/// A store-path hash part (32 nix32 characters) for node `id` of a world.
pub fn hash(seed: u64, id: usize, salt: u64) -> String {
    let mut s = String::with_capacity(32);
    let mut x = mix(seed ^ mix(id as u64 ^ (salt << 40)));
    for i in 0..32 {
        if i % 12 == 0 {
            x = mix(x);
        }
        s.push(NIX32[(x & 31) as usize] as char);
        x >>= 5;
    }
    s
}

/// One node of the template both sides are made from.
struct T {
    old_name: Option<String>,
    new_name: Option<String>,
    old_size: u64,
    new_size: u64,
    old_refs: Vec<usize>,
    new_refs: Vec<usize>,
    /// Its own content changes in NEW (so it and everything above get new hashes).
    changed: bool,
}

impl T {
    fn same(name: String, size: u64, refs: Vec<usize>) -> T {
        T {
            old_name: Some(name.clone()),
            new_name: Some(name),
            old_size: size,
            new_size: size,
            old_refs: refs.clone(),
            new_refs: refs,
            changed: false,
        }
    }
}

/// Generate the world.
pub fn generate(p: Params) -> World {
    let mut rnd = {
        let mut x = mix(p.seed);
        move || {
            x = mix(x);
            x
        }
    };
    // Base.
    let mut t: Vec<T> = vec![
        T::same("glibc-2.38-27".into(), 30 << 20, vec![]), // 0
        T::same("zlib-1.3".into(), 200 << 10, vec![0]),    // 1
        T {
            old_name: Some("openssl-3.0.12".into()),
            new_name: Some("openssl-3.0.13".into()),
            old_size: 6 << 20,
            new_size: (6 << 20) + OPENSSL_GROW,
            old_refs: vec![0, 1],
            new_refs: vec![0, 1],
            changed: true,
        }, // 2
        T {
            old_name: Some("openssl-3.0.12-bin".into()),
            new_name: Some("openssl-3.0.13-bin".into()),
            old_size: 1 << 20,
            new_size: 1 << 20,
            old_refs: vec![0, 2],
            new_refs: vec![0, 2],
            changed: false,
        }, // 3
        T {
            old_name: None,
            new_name: Some("libhuge-1.0".into()),
            old_size: 0,
            new_size: HUGE,
            old_refs: vec![],
            new_refs: vec![0],
            changed: true,
        }, // 4
        T {
            old_name: Some("libfoo-1.2".into()),
            new_name: Some("libfoo-1.2".into()),
            old_size: 2 << 20,
            new_size: 2 << 20,
            old_refs: vec![0],
            new_refs: vec![0, 4],
            changed: true,
        }, // 5
        T::same("gcc-12.3.0-lib".into(), 8 << 20, vec![0]), // 6
    ];
    let base = t.len();
    // Mid libraries, in layers: layer 0 references base libraries, layer l > 0 one to
    // three libraries of the layers below (mostly the layer just below: long chains).
    let layer_len = p.libs.div_ceil(p.layers.max(1)).max(1);
    for j in 0..p.libs {
        let layer = j / layer_len;
        let mut refs = vec![0usize];
        if layer == 0 {
            if rnd() % 10 < 8 {
                refs.push(2);
            }
            if rnd() % 3 == 0 {
                refs.push(1);
            }
            if rnd() % 5 == 0 {
                refs.push(6);
            }
        } else {
            let k = 1 + (rnd() % 3) as usize;
            for _ in 0..k {
                let lo = if rnd() % 4 == 0 {
                    0
                } else {
                    (layer - 1) * layer_len
                };
                let hi = layer * layer_len;
                refs.push(base + lo + (rnd() as usize) % (hi - lo));
            }
        }
        refs.sort_unstable();
        refs.dedup();
        let size = (50 << 10) + rnd() % (5 << 20);
        t.push(T::same(format!("libmid{j}-1.{}", j % 10), size, refs));
    }
    let libs_end = t.len();
    let pick_lib = |r: u64| {
        // Biased to the upper layers (large closures).
        let span = (libs_end - base) as u64;
        let a = r % span;
        let b = (r >> 32) % span;
        base + a.max(b) as usize
    };
    // Roots.
    let mut old_roots = Vec::new();
    let mut new_roots = Vec::new();
    let mut huge_roots = 0;
    for i in 0..p.roots {
        let mut refs = vec![0usize];
        for _ in 0..1 + rnd() % 4 {
            refs.push(pick_lib(rnd()));
        }
        if i % 7 == 0 {
            refs.push(5);
        }
        if i % 13 == 0 {
            refs.push(3);
        }
        refs.sort_unstable();
        refs.dedup();
        let size = (10 << 10) + rnd() % (2 << 20);
        let grows = i % 101 == 5;
        let vanishes = i % 211 == 3;
        let id = t.len();
        t.push(T {
            old_name: Some(format!("app{i}-1.0")),
            new_name: (!vanishes).then(|| format!("app{i}-{}", if grows { "1.1" } else { "1.0" })),
            old_size: size,
            new_size: size + if grows { GROW } else { 0 },
            old_refs: refs.clone(),
            new_refs: refs,
            changed: grows,
        });
        old_roots.push(id);
        if !vanishes {
            new_roots.push(id);
            if i % 7 == 0 {
                huge_roots += 1;
            }
        }
    }
    for k in 0..p.roots / 200 {
        let refs = vec![0, pick_lib(rnd())];
        let id = t.len();
        t.push(T {
            old_name: None,
            new_name: Some(format!("fresh{k}-0.1")),
            old_size: 0,
            new_size: 300 << 10,
            old_refs: vec![],
            new_refs: refs,
            changed: true,
        });
        new_roots.push(id);
    }
    // Two versions of one package, both roots in both sets (matched by exact name).
    for (v, size) in [("12.3.0", 90u64 << 20), ("13.2.0", 95 << 20)] {
        let id = t.len();
        t.push(T::same(format!("gcc-{v}"), size, vec![0, 6]));
        old_roots.push(id);
        new_roots.push(id);
    }
    // Hashes: NEW's is new for a changed node and everything that reaches one.
    let mut rebuilt = vec![false; t.len()];
    for i in 0..t.len() {
        rebuilt[i] = t[i].changed || t[i].new_refs.iter().any(|&r| rebuilt[r]);
    }
    let side = |is_new: bool, roots: &[usize]| {
        let mut index = vec![usize::MAX; t.len()];
        let mut paths = Vec::new();
        for (i, n) in t.iter().enumerate() {
            let name = if is_new { &n.new_name } else { &n.old_name };
            if let Some(name) = name {
                index[i] = paths.len();
                let salt = u64::from(is_new && rebuilt[i]);
                paths.push(P {
                    hash: hash(p.seed, i, salt),
                    name: name.clone(),
                    size: if is_new { n.new_size } else { n.old_size },
                    refs: Vec::new(),
                });
            }
        }
        for (i, n) in t.iter().enumerate() {
            if index[i] == usize::MAX {
                continue;
            }
            let refs = if is_new { &n.new_refs } else { &n.old_refs };
            paths[index[i]].refs = refs.iter().map(|&r| index[r]).collect();
        }
        Side {
            paths,
            roots: roots.iter().map(|&r| index[r]).collect(),
        }
    };
    World {
        old: side(false, &old_roots),
        new: side(true, &new_roots),
        huge_roots,
    }
}

/// Write `old.json`, `old.paths`, `new.json` and `new.paths` (each side as
/// [`path_info_json`] and [`store_paths`]) into `dir`, which must exist.
pub fn write_files(dir: &Path, w: &World) {
    for (name, side) in [("old", &w.old), ("new", &w.new)] {
        std::fs::write(dir.join(format!("{name}.json")), path_info_json(side)).unwrap();
        std::fs::write(dir.join(format!("{name}.paths")), store_paths(side)).unwrap();
    }
}

/// The side as `nix path-info --json` (Nix 2.18's array form).
pub fn path_info_json(s: &Side) -> String {
    let mut out = String::from("[");
    for (i, p) in s.paths.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let refs: Vec<String> = s
            .paths_refs(p)
            .map(|r| format!("\"{}\"", r.full()))
            .collect();
        let _ = write!(
            out,
            "{{\"path\":\"{}\",\"narSize\":{},\"references\":[{}]}}",
            p.full(),
            p.size,
            refs.join(",")
        );
    }
    out.push_str("]\n");
    out
}

impl Side {
    fn paths_refs<'a>(&'a self, p: &'a P) -> impl Iterator<Item = &'a P> + 'a {
        p.refs.iter().map(move |&r| &self.paths[r])
    }
}

/// The package-set file: the roots' store paths, one a line.
pub fn store_paths(s: &Side) -> String {
    s.roots.iter().map(|&r| s.paths[r].full() + "\n").collect()
}

/// The `FileSize` the side's narinfos give path `p` (what a download of its
/// compressed NAR costs): a third of its NAR size, plus a header.
pub fn file_size(p: &P) -> u64 {
    p.size / 3 + 120
}

/// The side as nix-eval-jobs output: one job per root, named `jobs.<key>` (the
/// matching key of its name), its only output `out` the root.
pub fn eval_jobs(s: &Side) -> String {
    let mut out = String::new();
    for &r in &s.roots {
        let p = &s.paths[r];
        let attr = format!("jobs.{}", key(&p.name));
        let _ = writeln!(
            out,
            "{{\"attr\":\"{attr}\",\"attrPath\":[\"jobs\",\"{}\"],\"drvPath\":\"{STORE}/{}-{}.drv\",\"name\":\"{}\",\"outputs\":{{\"out\":\"{}\"}},\"system\":\"x86_64-linux\"}}",
            key(&p.name),
            p.hash,
            p.name,
            p.name,
            p.full()
        );
    }
    out
}

/// Write the side's narinfos (and `nix-cache-info`) into `dir`.
pub fn write_cache(s: &Side, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("nix-cache-info"),
        "StoreDir: /nix/store\nWantMassQuery: 1\n",
    )
    .unwrap();
    for p in &s.paths {
        let refs: Vec<String> = s.paths_refs(p).map(P::base).collect();
        let text = format!(
            "StorePath: {}\nURL: nar/{}.nar\nCompression: none\nFileSize: {}\nNarHash: sha256:{}{}\nNarSize: {}\nReferences: {}\n",
            p.full(),
            p.hash,
            file_size(p),
            p.hash,
            &p.hash[..20],
            p.size,
            refs.join(" ")
        );
        std::fs::write(dir.join(format!("{}.narinfo", p.hash)), text).unwrap();
    }
}

/// Closure size of path `v`, by a plain walk (the independent computation).
pub fn closure_size(s: &Side, v: usize) -> u64 {
    let mut seen = vec![false; s.paths.len()];
    let mut stack = vec![v];
    let mut total = 0;
    while let Some(x) = stack.pop() {
        if std::mem::replace(&mut seen[x], true) {
            continue;
        }
        total += s.paths[x].size;
        stack.extend(s.paths[x].refs.iter().copied());
    }
    total
}

/// NAR bytes per package name (no version) in the closure of `v`.
pub fn package_bytes(s: &Side, v: usize) -> std::collections::BTreeMap<String, u64> {
    let mut seen = vec![false; s.paths.len()];
    let mut stack = vec![v];
    let mut out = std::collections::BTreeMap::new();
    while let Some(x) = stack.pop() {
        if std::mem::replace(&mut seen[x], true) {
            continue;
        }
        *out.entry(pname(&s.paths[x].name)).or_insert(0) += s.paths[x].size;
        stack.extend(s.paths[x].refs.iter().copied());
    }
    out
}

/// The package name of a generated name: everything before the first `-` followed by
/// a digit (all generated names have a version).
pub fn pname(name: &str) -> String {
    let b = name.as_bytes();
    for i in 0..b.len() {
        if b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            return name[..i].to_string();
        }
    }
    name.to_string()
}

/// The matching key of a generated root: package name plus output (`bin` for
/// `…-bin`, else `out`).
pub fn key(name: &str) -> String {
    match name.rsplit_once('-') {
        Some((_, o)) if o.bytes().all(|c| c.is_ascii_lowercase()) => format!("{}.{o}", pname(name)),
        _ => pname(name),
    }
}

/// The paths the side's roots reach (their closures' union).
pub fn reachable(s: &Side) -> Vec<usize> {
    let mut seen = vec![false; s.paths.len()];
    let mut stack: Vec<usize> = s.roots.clone();
    while let Some(x) = stack.pop() {
        if std::mem::replace(&mut seen[x], true) {
            continue;
        }
        stack.extend(s.paths[x].refs.iter().copied());
    }
    (0..s.paths.len()).filter(|&i| seen[i]).collect()
}

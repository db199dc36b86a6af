//! Generator for `benches/package_sets/run.sh` (the package-set diff over HTTP): writes
//! a pair of package sets with planted changes (`tests/set_world`) as one binary-cache
//! directory of narinfos (both sets' closures), the two package-set files, and the list
//! of every narinfo URL path (for the plain client the run compares against).
//!
//!   cargo bench --bench package_sets -- DIR [ROOTS] [LIBS] [LAYERS]
//!
//! Defaults: 60,000 roots and 80,000 libraries in 40 layers (about 280,000 narinfos for
//! the pair). Without DIR (as `cargo bench` runs every bench) it prints how to run it.
//!
//!   cargo bench --bench package_sets -- DIR --shape KIND ROOTS
//!
//! writes a pair of another shape (`tests/set_world/shapes.rs`: star, chain, wide,
//! layered) as `nix path-info --json` files (`old.json`, `new.json`) and the two
//! package-set files, for `benches/package_sets/shapes.sh`.

#[path = "../tests/set_world/mod.rs"]
mod set_world;

use std::io::Write;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(dir) = args.first() else {
        eprintln!("package_sets: generator only; run benches/package_sets/run.sh");
        return;
    };
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    if args.get(1).map(String::as_str) == Some("--shape") {
        let kind = args.get(2).map_or("star", String::as_str);
        let Some(w) = set_world::shapes::shape(kind, num(3, 100_000), 2024) else {
            eprintln!(
                "package_sets: unknown shape `{kind}`: one of {:?}",
                set_world::shapes::SHAPES
            );
            std::process::exit(2);
        };
        let dir = Path::new(dir);
        std::fs::create_dir_all(dir).unwrap();
        set_world::write_files(dir, &w);
        eprintln!(
            "{kind}: {} roots old, {} new; {} + {} paths",
            w.old.roots.len(),
            w.new.roots.len(),
            w.old.paths.len(),
            w.new.paths.len()
        );
        return;
    }
    let p = set_world::Params {
        roots: num(1, 60_000),
        libs: num(2, 80_000),
        layers: num(3, 40),
        seed: 2024,
    };
    let dir = Path::new(dir);
    let w = set_world::generate(p);
    let cache = dir.join("cache");
    set_world::write_cache(&w.old, &cache);
    set_world::write_cache(&w.new, &cache);
    std::fs::write(dir.join("old.paths"), set_world::store_paths(&w.old)).unwrap();
    std::fs::write(dir.join("new.paths"), set_world::store_paths(&w.new)).unwrap();
    // Every narinfo the two walks need (what the roots reach), each once.
    let mut hashes = std::collections::BTreeSet::new();
    for s in [&w.old, &w.new] {
        for v in set_world::reachable(s) {
            hashes.insert(s.paths[v].hash.clone());
        }
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("narinfos.txt")).unwrap());
    for h in &hashes {
        writeln!(f, "/{h}.narinfo").unwrap();
    }
    f.flush().unwrap();
    eprintln!(
        "{} roots old, {} new; {} narinfos; libhuge reaches {} roots",
        w.old.roots.len(),
        w.new.roots.len(),
        hashes.len(),
        w.huge_roots
    );
}

//! Package-set pairs of other shapes than the layered world, for the benchmark of
//! `diff` on package sets (`benches/package_sets.rs`) and the test that its cause pass
//! does linear work. Deterministic; every shape has N roots per side, each its own
//! package (`app<i>`), and the same kinds of change: a shared library grows (so every
//! path above it is rebuilt with a new hash and the same size), and every 101st root
//! grows by a version bump of its own.
//!
//! - `star`: every root references one shared library (`libshared`), nothing else.
//! - `chain`: every root has a private chain of 8 packages (`app<i>-dep<j>`) ending in
//!   one shared chain of 1,000 packages (`core<k>`) at a random depth; the bottom of
//!   the shared chain grows.
//! - `wide`: every root references 10 private packages and 5 of 1,000 shared
//!   libraries; every 50th shared library grows.
//! - `layered`: the world of [`super::generate`] (as many libraries as roots, in 40
//!   layers).

use super::{hash, mix, Side, World, P};

/// A side under construction: names, sizes and references by index.
struct Build {
    paths: Vec<P>,
    roots: Vec<usize>,
}

impl Build {
    fn add(&mut self, salt: u64, name: String, size: u64, refs: Vec<usize>) -> usize {
        let id = self.paths.len();
        self.paths.push(P {
            hash: hash(salt, id, 0),
            name,
            size,
            refs,
        });
        id
    }
}

/// The shapes [`shape`] knows.
pub const SHAPES: [&str; 4] = ["star", "chain", "wide", "layered"];

/// Generate `kind` with `n` roots per side; `None` for an unknown kind.
pub fn shape(kind: &str, n: usize, seed: u64) -> Option<World> {
    if kind == "layered" {
        return Some(super::generate(super::Params {
            roots: n,
            libs: n,
            layers: 40,
            seed,
        }));
    }
    let side = |new: bool| {
        // Old and new differ in salt wherever something below changed, so rebuilt
        // paths get new hashes; unchanged ones keep theirs (salt 0).
        let mut b = Build {
            paths: Vec::new(),
            roots: Vec::new(),
        };
        let grow = |base: u64, by: u64| if new { base + by } else { base };
        let rebuilt = |changed: bool| if new && changed { seed ^ 1 } else { seed };
        let shared: Vec<usize> = match kind {
            "star" => vec![b.add(
                rebuilt(true),
                format!("libshared-1.{}", u8::from(new)),
                grow(1 << 20, 4096),
                vec![],
            )],
            "chain" => {
                let mut below = b.add(
                    rebuilt(true),
                    "core0-1.0".into(),
                    grow(1 << 20, 4096),
                    vec![],
                );
                let mut chain = vec![below];
                for k in 1..1000 {
                    below = b.add(rebuilt(true), format!("core{k}-1.0"), 10 << 10, vec![below]);
                    chain.push(below);
                }
                chain
            }
            "wide" => (0..1000)
                .map(|k| {
                    let changed = k % 50 == 0;
                    let size = if changed {
                        grow(100 << 10, 1024)
                    } else {
                        100 << 10
                    };
                    b.add(rebuilt(changed), format!("shared{k}-1.0"), size, vec![])
                })
                .collect(),
            _ => return None,
        };
        for i in 0..n {
            let own = i % 101 == 0;
            let r = mix(seed ^ (i as u64));
            let (changed, refs) = match kind {
                "star" => (true, vec![shared[0]]),
                "chain" => {
                    let mut below = shared[(r % 1000) as usize];
                    for j in 0..8 {
                        below = b.add(
                            rebuilt(true),
                            format!("app{i}-dep{j}-1.0"),
                            20 << 10,
                            vec![below],
                        );
                    }
                    (true, vec![below])
                }
                _ => {
                    let mut refs: Vec<usize> = (0..10)
                        .map(|j| b.add(seed, format!("app{i}-part{j}-1.0"), 30 << 10, vec![]))
                        .collect();
                    let picks: Vec<usize> = (0..5)
                        .map(|j| shared[(mix(r ^ j) % 1000) as usize])
                        .collect();
                    // The shared libraries are the first 1,000 paths: index k is `shared<k>`.
                    let changed = picks.iter().any(|&s| s % 50 == 0);
                    refs.extend(picks);
                    refs.sort_unstable();
                    refs.dedup();
                    (changed, refs)
                }
            };
            let version = if new && own { "1.1" } else { "1.0" };
            let size = if new && own {
                (64 << 10) + 1024
            } else {
                64 << 10
            };
            let root = b.add(
                rebuilt(changed || own),
                format!("app{i}-{version}"),
                size,
                refs,
            );
            b.roots.push(root);
        }
        Some(Side {
            paths: b.paths,
            roots: b.roots,
        })
    };
    Some(World {
        old: side(false)?,
        new: side(true)?,
        huge_roots: 0,
    })
}

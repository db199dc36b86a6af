//! Whole-store graphs in three shapes, built in registration order (a path only
//! references paths registered before it, or itself, as in a real store).
//!
//! Every shape is a function of (paths, references per path, roots, seed): the same
//! parameters give the same store. The graph is kept in one compressed adjacency
//! (`offsets`/`targets`), 4 bytes a reference, so 44 million references take 180 MB.

/// Nix's base-32 alphabet (no e, o, t, u).
pub const BASE32: &[u8] = b"0123456789abcdfghijklmnpqrsvwxyz";

/// splitmix64: small, fast, and good enough for shapes and sizes.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }
    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u = self.unit().max(1e-300);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 32 base-32 characters derived from `(domain, i)`: 160 bits of a hash, so two
/// different inputs collide with negligible probability.
pub fn hash32(domain: u64, i: u64, out: &mut String) {
    let a = mix(domain ^ mix(i));
    let b = mix(a ^ 0x5851_f42d_4c95_7f2d);
    let c = mix(b ^ i);
    let mut bits = [a, b, c];
    for _ in 0..32 {
        out.push(BASE32[(bits[0] & 31) as usize] as char);
        bits[0] = (bits[0] >> 5) | (bits[1] << 59);
        bits[1] = (bits[1] >> 5) | (bits[2] << 59);
        bits[2] >>= 5;
    }
}

/// What a path is; decides its name, its size and its database columns.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A package from the binary cache (substituted: signed, not ultimate).
    Package,
    /// A bootstrap stage of stdenv.
    Bootstrap,
    /// A NixOS system generation's top level.
    System,
    /// A user profile generation (`user-environment`).
    UserEnv,
    /// A locally built path (`nix build`, CI): ultimate, unsigned.
    Local,
    /// A development shell's environment.
    Shell,
}

/// Where a root's symlink lives, in the layouts Nix itself makes.
pub enum Link {
    /// `profiles/system-N-link` (and `profiles/system` pointing at the newest).
    System { generation: u32, newest: bool },
    /// `profiles/per-user/USER/profile-N-link`.
    UserProfile {
        user: u32,
        generation: u32,
        newest: bool,
    },
    /// `gcroots/auto/HASH` -> `/home/USER/DIR/result-N` -> the store path.
    Auto { user: u32, dir: u32, n: u32 },
    /// A symlink straight under `gcroots/NAME/…`.
    Direct { group: &'static str, n: u32 },
    /// Hydra's kind: a regular file under `gcroots/hydra` named after the path.
    HydraFile,
}

/// A path's name: a random package name with this version (0: a random one), or
/// fixed parts.
enum NameOf {
    Random(u32),
    Fixed(u32, u32),
}

pub struct Root {
    pub target: u32,
    pub link: Link,
}

pub struct Store {
    pub kinds: Vec<Kind>,
    /// Package name index and version, per path.
    pub names: Vec<(u32, u32)>,
    pub sizes: Vec<u64>,
    pub offsets: Vec<u64>,
    pub targets: Vec<u32>,
    pub roots: Vec<Root>,
    pub users: u32,
}

impl Store {
    fn new(n: usize, refs: usize) -> Store {
        Store {
            kinds: Vec::with_capacity(n),
            names: Vec::with_capacity(n),
            sizes: Vec::with_capacity(n),
            offsets: {
                let mut o = Vec::with_capacity(n + 1);
                o.push(0);
                o
            },
            targets: Vec::with_capacity(refs + refs / 16),
            roots: Vec::new(),
            users: 1,
        }
    }
    pub fn len(&self) -> usize {
        self.sizes.len()
    }
    pub fn refs(&self, i: usize) -> &[u32] {
        &self.targets[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
    /// Registers one path; `refs` must name registered paths. Returns its id.
    fn add(&mut self, rng: &mut Rng, kind: Kind, name: NameOf, refs: &mut Vec<u32>) -> u32 {
        let id = self.len() as u32;
        let name = match name {
            NameOf::Random(version) => {
                let pname = rng.below(20_000) as u32;
                (
                    pname,
                    if version == 0 {
                        rng.below(1000) as u32
                    } else {
                        version
                    },
                )
            }
            NameOf::Fixed(a, b) => (a, b),
        };
        // About a third of real store paths reference themselves (a binary's RPATH,
        // a script's own shebang).
        if kind != Kind::UserEnv && rng.chance(0.3) {
            refs.push(id);
        }
        refs.sort_unstable();
        refs.dedup();
        self.targets.extend_from_slice(refs);
        refs.clear();
        self.offsets.push(self.targets.len() as u64);
        self.kinds.push(kind);
        self.names.push(name);
        self.sizes.push(nar_size(rng, kind));
        id
    }
}

/// NAR sizes: lognormal around a median per kind (packages: 150 KiB median, heavy
/// tail), and one package in 2,000 huge (1–8 GiB, a CUDA or LLVM of the kind).
fn nar_size(rng: &mut Rng, kind: Kind) -> u64 {
    let (median, sigma): (f64, f64) = match kind {
        Kind::Package | Kind::Local | Kind::Bootstrap => (150.0 * 1024.0, 2.2),
        Kind::System | Kind::UserEnv | Kind::Shell => (40.0 * 1024.0, 1.0),
    };
    if matches!(kind, Kind::Package | Kind::Local) && rng.chance(0.0005) {
        return (1u64 << 30) + rng.below(7u64 << 30);
    }
    let s = (median.ln() + sigma * rng.normal()).exp();
    // NAR sizes are multiples of 8; the smallest NAR (an empty file) is 120 bytes.
    ((s as u64).clamp(120, 4u64 << 30) + 7) & !7
}

/// Shape parameters: the totals to aim at and the seed.
#[derive(Clone, Copy)]
pub struct Params {
    pub paths: usize,
    pub refs_per_path: f64,
    pub roots: usize,
    pub seed: u64,
}

/// How many references a package gets: uniform around the mean the parameters ask
/// for, before the self-reference (added for a third of the paths) and deduplication.
fn degree(rng: &mut Rng, mean: f64) -> usize {
    let m = (mean - 0.3).max(1.0);
    let spread = (m * 0.6).floor();
    let lo = m - spread;
    let x = lo + rng.unit() * 2.0 * spread;
    x.floor() as usize + usize::from(rng.chance(x.fract()))
}

/// A popular path among the first `n` (libc, zlib, bash, …): cubic bias to the bottom.
fn popular(rng: &mut Rng, n: u32) -> u32 {
    let u = rng.unit();
    ((u * u * u) * f64::from(n.clamp(1, 3000))) as u32
}

/// A nixpkgs-like base of `count` packages: references to popular basics, to the
/// package's own family (recent paths) and to anything older.
fn base(store: &mut Store, rng: &mut Rng, count: usize, mean: f64, bootstrap: bool) {
    let mut refs = Vec::new();
    let first = store.len() as u32;
    for k in 0..count {
        let id = store.len() as u32;
        let have = id - first;
        if have > 0 {
            for _ in 0..degree(rng, mean) {
                let j = match rng.below(3) {
                    0 => first + popular(rng, have),
                    1 => id - 1 - rng.below(u64::from(have.min(200))) as u32,
                    _ => first + rng.below(u64::from(have)) as u32,
                };
                refs.push(j);
            }
        }
        let kind = if bootstrap && k < 64 {
            Kind::Bootstrap
        } else {
            Kind::Package
        };
        let v = rng.below(1000) as u32;
        store.add(rng, kind, NameOf::Random(v), &mut refs);
    }
}

/// (a) A desktop or CI builder: many NixOS system generations and user profile
/// generations over a big shared base (most of them deleted since, their unique
/// paths garbage), and many small `result` roots of local builds.
pub fn builder(p: Params) -> Store {
    let mut rng = Rng(p.seed ^ 0xa);
    let mut s = Store::new(p.paths, (p.paths as f64 * p.refs_per_path) as usize);
    let n_base = p.paths * 12 / 100;
    base(&mut s, &mut rng, n_base, p.refs_per_path, true);
    let base_n = s.len() as u32;

    let (sys_gens, users, user_gens) = (400u32, 40u32, 25u32);
    let (sys_kept, user_kept) = (120u32, 8u32);
    s.users = users + 1; // user 0 builds, users 1..=40 have profiles
    let gens = sys_gens + users * user_gens;
    let per_gen = (p.paths * 20 / 100) / gens as usize;
    let mut refs = Vec::new();
    // Each generation upgrades `per_gen` packages: new paths over the base and over
    // the previous generation's upgrades, and a top level referencing its upgrades
    // and a few hundred base packages (so every closure holds most of the base).
    let mut prev: Vec<Vec<u32>> = vec![Vec::new(); users as usize + 1];
    let mut order: Vec<(u32, u32)> = (0..sys_gens).map(|g| (0, g)).collect();
    for u in 1..=users {
        for g in 0..user_gens {
            // user profiles are upgraded along with the system, interleaved
            order.push((u, g * sys_gens / user_gens + u % 16));
        }
    }
    order.sort_by_key(|&(u, g)| (g, u));
    let mut user_gen_no = vec![0u32; users as usize + 1];
    for &(u, _) in &order {
        let mut new = Vec::with_capacity(per_gen);
        for _ in 0..per_gen {
            for _ in 0..degree(&mut rng, p.refs_per_path) {
                let j = match rng.below(4) {
                    0 => popular(&mut rng, base_n),
                    1 if !new.is_empty() => new[rng.below(new.len() as u64) as usize],
                    2 if !prev[u as usize].is_empty() => {
                        let pv = &prev[u as usize];
                        pv[rng.below(pv.len() as u64) as usize]
                    }
                    _ => rng.below(u64::from(base_n)) as u32,
                };
                refs.push(j);
            }
            new.push(s.add(&mut rng, Kind::Package, NameOf::Random(0), &mut refs));
        }
        refs.extend(new.iter().copied().filter(|_| rng.chance(0.5)));
        for _ in 0..300 {
            refs.push(rng.below(u64::from(base_n)) as u32);
        }
        let g = user_gen_no[u as usize];
        user_gen_no[u as usize] += 1;
        let (kind, total, kept) = if u == 0 {
            (Kind::System, sys_gens, sys_kept)
        } else {
            (Kind::UserEnv, user_gens, user_kept)
        };
        let top = s.add(&mut rng, kind, NameOf::Fixed(u, g), &mut refs);
        if g >= total - kept {
            let newest = g == total - 1;
            let link = if u == 0 {
                Link::System {
                    generation: g + 1,
                    newest,
                }
            } else {
                Link::UserProfile {
                    user: u,
                    generation: g + 1,
                    newest,
                }
            };
            s.roots.push(Root { target: top, link });
        }
        prev[u as usize] = new;
    }
    let gen_end = s.len() as u32;

    // Local builds: most rooted by `result` links (auto roots), some by CI's direct
    // links, a few by Hydra's files, and 5% of the paths left over from builds
    // whose links were deleted (garbage).
    let result_roots = p.roots.saturating_sub(s.roots.len());
    let budget = p.paths.saturating_sub(s.len());
    let garbage = budget / 20;
    let mut left = budget - garbage;
    let mut dir_fill = vec![0u32; users as usize + 1];
    let mut dirs = vec![0u32; users as usize + 1];
    let mut n_direct = 0u32;
    for r in 0..result_roots {
        let roots_left = (result_roots - r) as f64;
        let m = ((left as f64 / roots_left) * (0.4 + 1.2 * rng.unit()))
            .round()
            .max(1.0) as usize;
        let m = m.min(left.saturating_sub(result_roots - r - 1)).max(1);
        left = left.saturating_sub(m);
        let last = local_build(&mut s, &mut rng, p, m, base_n, gen_end);
        let x = rng.unit();
        let link = if x < 0.8 {
            let u = rng.below(u64::from(users) + 1) as u32;
            let uu = u as usize;
            dir_fill[uu] += 1;
            if dir_fill[uu] > 100 {
                dir_fill[uu] = 1;
                dirs[uu] += 1;
            }
            Link::Auto {
                user: u,
                dir: dirs[uu],
                n: dir_fill[uu],
            }
        } else if x < 0.999 {
            n_direct += 1;
            Link::Direct {
                group: "ci",
                n: n_direct,
            }
        } else {
            Link::HydraFile
        };
        s.roots.push(Root { target: last, link });
    }
    let mut g = garbage;
    while g > 0 {
        let m = (1 + rng.below(3) as usize).min(g);
        local_build(&mut s, &mut rng, p, m, base_n, gen_end);
        g -= m;
    }
    s
}

/// `m` new local paths (a small build and its own parts) over the base and recent
/// generations; returns the last, the one a `result` link names.
fn local_build(s: &mut Store, rng: &mut Rng, p: Params, m: usize, base_n: u32, upto: u32) -> u32 {
    let mut refs = Vec::new();
    let first = s.len() as u32;
    let mut last = first;
    for _ in 0..m {
        let id = s.len() as u32;
        for _ in 0..degree(rng, p.refs_per_path) {
            let j = match rng.below(8) {
                0..=3 => popular(rng, base_n),
                4 if id > first => first + rng.below(u64::from(id - first)) as u32,
                5 => base_n + rng.below(u64::from(upto - base_n)) as u32,
                _ => rng.below(u64::from(base_n)) as u32,
            };
            refs.push(j);
        }
        if id > first {
            refs.push(id - 1);
        }
        last = s.add(rng, Kind::Local, NameOf::Random(0), &mut refs);
    }
    last
}

/// (b) Wide: one independent small closure per root (a CI cache of development
/// shells) over a shared base.
pub fn wide(p: Params) -> Store {
    let mut rng = Rng(p.seed ^ 0xb);
    let mut s = Store::new(p.paths, (p.paths as f64 * p.refs_per_path) as usize);
    let n_base = p.paths * 4 / 100;
    base(&mut s, &mut rng, n_base, p.refs_per_path, true);
    let base_n = s.len() as u32;
    s.users = 1;
    let budget = p.paths - s.len();
    let garbage = budget / 50;
    let mut left = budget - garbage;
    let mut refs = Vec::new();
    for r in 0..p.roots {
        let roots_left = (p.roots - r) as f64;
        let m = ((left as f64 / roots_left) * (0.4 + 1.2 * rng.unit()))
            .round()
            .max(1.0) as usize;
        let m = m.min(left.saturating_sub(p.roots - r - 1)).max(1);
        left = left.saturating_sub(m);
        let first = s.len() as u32;
        for k in 0..m {
            let id = s.len() as u32;
            let own = k + 1 == m;
            for _ in 0..degree(&mut rng, p.refs_per_path) {
                let j = match rng.below(4) {
                    0 | 1 => popular(&mut rng, base_n),
                    2 if id > first => first + rng.below(u64::from(id - first)) as u32,
                    _ => rng.below(u64::from(base_n)) as u32,
                };
                refs.push(j);
            }
            if own && id > first {
                refs.extend(first..id);
            }
            let kind = if own { Kind::Shell } else { Kind::Local };
            let id = s.add(&mut rng, kind, NameOf::Random(r as u32), &mut refs);
            if own {
                s.roots.push(Root {
                    target: id,
                    link: Link::Auto {
                        user: 0,
                        dir: (r / 1000) as u32,
                        n: (r % 1000) as u32,
                    },
                });
            }
        }
    }
    for _ in 0..garbage {
        for _ in 0..degree(&mut rng, p.refs_per_path) {
            refs.push(rng.below(u64::from(base_n)) as u32);
        }
        s.add(&mut rng, Kind::Local, NameOf::Random(0), &mut refs);
    }
    s
}

/// (c) Deep layered: 24 stdenv bootstrap stages, then 40 layers of packages, each
/// referencing mostly the layer below (chains 60+ long); the roots are chosen among
/// the top layers. What no root reaches (bottom-layer leftovers) is garbage.
pub fn layered(p: Params) -> Store {
    let mut rng = Rng(p.seed ^ 0xc);
    let mut s = Store::new(p.paths, (p.paths as f64 * p.refs_per_path) as usize);
    let mut refs = Vec::new();
    let (stages, per_stage) = (24usize, 40usize);
    let mut prev = 0u32..0u32;
    for _ in 0..stages {
        let start = s.len() as u32;
        for _ in 0..per_stage {
            let id = s.len() as u32;
            for _ in 0..degree(&mut rng, p.refs_per_path).min(12) {
                if !prev.is_empty() {
                    refs.push(prev.start + rng.below(u64::from(prev.end - prev.start)) as u32);
                }
                if id > start && rng.chance(0.3) {
                    refs.push(start + rng.below(u64::from(id - start)) as u32);
                }
            }
            s.add(&mut rng, Kind::Bootstrap, NameOf::Random(0), &mut refs);
        }
        prev = start..s.len() as u32;
    }
    let stdenv = prev.clone();
    let layers = 40usize;
    let per_layer = (p.paths - s.len()) / layers;
    let top_layers = p.roots.div_ceil(per_layer.max(1)).min(layers) + 1;
    let bottom_n = s.len() as u32 + per_layer as u32;
    let mut candidates = 0usize;
    let mut chosen = 0usize;
    let candidate_total = per_layer * top_layers.min(layers);
    let mut user_fill = 0u32;
    for l in 0..layers {
        let start = s.len() as u32;
        let count = if l + 1 == layers {
            p.paths - s.len()
        } else {
            per_layer
        };
        for _ in 0..count {
            for _ in 0..degree(&mut rng, p.refs_per_path) {
                let j = match rng.below(10) {
                    0..=4 => prev.start + rng.below(u64::from(prev.end - prev.start)) as u32,
                    5 | 6 => rng.below(u64::from(start)) as u32,
                    7 | 8 => popular(&mut rng, bottom_n.min(start)),
                    _ => stdenv.start + rng.below(u64::from(stdenv.end - stdenv.start)) as u32,
                };
                refs.push(j);
            }
            let id = s.add(&mut rng, Kind::Package, NameOf::Random(l as u32), &mut refs);
            if l + top_layers >= layers && candidates < candidate_total {
                // selection sampling: exactly `p.roots` of the candidates
                if (rng.below((candidate_total - candidates) as u64) as usize) < p.roots - chosen {
                    chosen += 1;
                    let link = if rng.chance(0.7) {
                        user_fill += 1;
                        Link::Auto {
                            user: 0,
                            dir: user_fill / 100,
                            n: user_fill % 100,
                        }
                    } else {
                        Link::Direct {
                            group: "ci",
                            n: chosen as u32,
                        }
                    };
                    s.roots.push(Root { target: id, link });
                }
                candidates += 1;
            }
        }
        prev = start..s.len() as u32;
    }
    s
}

/// What Nix's garbage collector would keep: the closure of every root's target.
/// Returns (store size, unreachable paths, unreachable bytes). O(paths + references).
pub fn expected(s: &Store) -> (u64, u64, u64) {
    let mut live = vec![false; s.len()];
    let mut stack: Vec<u32> = Vec::new();
    for r in &s.roots {
        if !live[r.target as usize] {
            live[r.target as usize] = true;
            stack.push(r.target);
        }
    }
    while let Some(i) = stack.pop() {
        for &j in s.refs(i as usize) {
            if !live[j as usize] {
                live[j as usize] = true;
                stack.push(j);
            }
        }
    }
    let total: u64 = s.sizes.iter().sum();
    let (mut n, mut b) = (0u64, 0u64);
    for (i, &l) in live.iter().enumerate() {
        if !l {
            n += 1;
            b += s.sizes[i];
        }
    }
    (total, n, b)
}

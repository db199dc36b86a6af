//! Writes a generated store to disk the way Nix 2.8 lays one out under a chroot root
//! `DIR`: `DIR/nix/var/nix/db/db.sqlite` with Nix's own schema (version 10, copied
//! from a store `nix-store --store 'local?root=…' --add` made), the GC roots as the
//! symlinks Nix makes (profiles, `gcroots/auto` indirect roots pointing at
//! `/home/USER/…/result-N` as on the real machine, direct links, Hydra's files), and,
//! when asked, one empty file per valid path under `DIR/nix/store` (Nix's collector
//! lists dead paths by reading that directory, not the database).

use std::fmt::Write as _;
use std::os::unix::fs::symlink;
use std::path::Path;

use super::shapes::{hash32, Kind, Link, Rng, Store};

const PREFIXES: [&str; 12] = [
    "",
    "python3.11-",
    "perl5.38-",
    "lib",
    "haskell-",
    "node-",
    "go-",
    "rust-",
    "x",
    "gnome-",
    "qt6-",
    "texlive-",
];
const STEMS: [&str; 40] = [
    "zlib",
    "openssl",
    "curl",
    "glib",
    "gtk",
    "pango",
    "cairo",
    "boost",
    "icu",
    "sqlite",
    "expat",
    "libxml2",
    "ncurses",
    "readline",
    "bzip2",
    "xz",
    "zstd",
    "pcre",
    "gmp",
    "mpfr",
    "llvm",
    "gcc",
    "binutils",
    "cmake",
    "ninja",
    "meson",
    "git",
    "mesa",
    "wayland",
    "systemd",
    "dbus",
    "harfbuzz",
    "freetype",
    "fontconfig",
    "libpng",
    "libjpeg",
    "ffmpeg",
    "gstreamer",
    "protobuf",
    "grpc",
];

fn push_name(out: &mut String, kind: Kind, (a, b): (u32, u32)) {
    let p = PREFIXES[a as usize % PREFIXES.len()];
    let s = STEMS[(a as usize / PREFIXES.len()) % STEMS.len()];
    let k = a as usize / (PREFIXES.len() * STEMS.len());
    let _ = match kind {
        Kind::Package => write!(out, "{p}{s}{k}-{}.{}.{}", b / 100, b / 10 % 10, b % 10),
        Kind::Bootstrap => write!(out, "bootstrap-stage-{s}{k}"),
        Kind::System => write!(out, "nixos-system-host-23.11.{b}"),
        Kind::UserEnv => write!(out, "user-environment"),
        Kind::Local => write!(out, "{p}{s}{k}-0.1.0-git"),
        Kind::Shell => write!(out, "nix-shell-env-{b}"),
    };
}

/// `/nix/store/HASH-NAME` of path `i` into `out` (cleared first).
pub fn store_path(s: &Store, seed: u64, i: usize, out: &mut String) {
    out.clear();
    out.push_str("/nix/store/");
    hash32(seed, i as u64, out);
    out.push('-');
    push_name(out, s.kinds[i], s.names[i]);
}

/// Writes `DIR/nix/var/nix/db/db.sqlite` and the `schema` file next to it.
pub fn database(dir: &Path, s: &Store, seed: u64) -> rusqlite::Result<()> {
    let db_dir = dir.join("nix/var/nix/db");
    std::fs::create_dir_all(&db_dir).expect("create db directory");
    std::fs::write(db_dir.join("schema"), "10").expect("write schema version");
    let file = db_dir.join("db.sqlite");
    let _ = std::fs::remove_file(&file);
    let mut conn = rusqlite::Connection::open(&file)?;
    conn.execute_batch(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;
         PRAGMA cache_size=-1000000;",
    )?;
    conn.execute_batch(nixcut::load::store_db::NIX_SCHEMA_TABLES)?;
    let tx = conn.transaction()?;
    {
        let mut ins = tx.prepare(
            "INSERT INTO ValidPaths (id, path, hash, registrationTime, deriver, narSize, ultimate, sigs, ca)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)",
        )?;
        let mut rng = Rng(seed ^ 0xdb);
        let (mut path, mut hash, mut deriver, mut sig) =
            (String::new(), String::new(), String::new(), String::new());
        let mut time = 1_600_000_000i64;
        for i in 0..s.len() {
            store_path(s, seed, i, &mut path);
            hash.clear();
            hash.push_str("sha256:");
            for _ in 0..4 {
                let _ = write!(hash, "{:016x}", rng.next());
            }
            deriver.clear();
            deriver.push_str("/nix/store/");
            hash32(seed ^ 0xd7, i as u64, &mut deriver);
            deriver.push('-');
            push_name(&mut deriver, s.kinds[i], s.names[i]);
            deriver.push_str(".drv");
            time += rng.below(3) as i64;
            let substituted = matches!(s.kinds[i], Kind::Package | Kind::Bootstrap);
            let sigs = if substituted {
                sig.clear();
                sig.push_str("cache.nixos.org-1:");
                hash32(seed ^ 0x5e, i as u64, &mut sig);
                hash32(seed ^ 0x5f, i as u64, &mut sig);
                sig.push_str("AbCdEfGhIjKlMnOpQrStUvWxYz0123==");
                Some(sig.as_str())
            } else {
                None
            };
            let ultimate = if substituted { None } else { Some(1i64) };
            ins.execute(rusqlite::params![
                i as i64 + 1,
                path,
                hash,
                time,
                deriver,
                s.sizes[i] as i64,
                ultimate,
                sigs
            ])?;
        }
        let mut ins = tx.prepare("INSERT INTO Refs (referrer, reference) VALUES (?1, ?2)")?;
        for i in 0..s.len() {
            for &j in s.refs(i) {
                ins.execute([i as i64 + 1, i64::from(j) + 1])?;
            }
        }
    }
    tx.commit()?;
    conn.execute_batch(nixcut::load::store_db::NIX_SCHEMA_REF_INDEXES)?;
    // Nix opens its database in WAL mode; the mode is recorded in the file.
    conn.execute_batch("PRAGMA locking_mode=NORMAL; PRAGMA journal_mode=WAL;")?;
    Ok(())
}

fn user_name(u: u32) -> String {
    if u == 0 {
        "builder".to_owned()
    } else {
        format!("user{u}")
    }
}

/// Writes the GC roots (and the directories Nix creates) under `dir`. Returns the
/// number of root links written.
pub fn roots(dir: &Path, s: &Store, seed: u64) -> std::io::Result<usize> {
    let var = dir.join("nix/var/nix");
    let gcroots = var.join("gcroots");
    let profiles = var.join("profiles");
    for d in ["auto", "ci", "hydra", "per-user"] {
        std::fs::create_dir_all(gcroots.join(d))?;
    }
    std::fs::create_dir_all(profiles.join("per-user"))?;
    std::fs::create_dir_all(dir.join("nix/store"))?;
    // As on a NixOS machine: `gcroots/profiles -> /nix/var/nix/profiles`.
    let _ = std::fs::remove_file(gcroots.join("profiles"));
    symlink("/nix/var/nix/profiles", gcroots.join("profiles"))?;
    for u in 0..s.users {
        let name = user_name(u);
        std::fs::create_dir_all(dir.join("home").join(&name))?;
        if u > 0 {
            std::fs::create_dir_all(profiles.join("per-user").join(&name))?;
            std::fs::create_dir_all(gcroots.join("per-user").join(&name))?;
        }
    }
    let mut target = String::new();
    let mut made_dirs = std::collections::HashSet::new();
    let mut auto_n = 0u64;
    for r in &s.roots {
        store_path(s, seed, r.target as usize, &mut target);
        match r.link {
            Link::System { generation, newest } => {
                let link = format!("system-{generation}-link");
                symlink(&target, profiles.join(&link))?;
                if newest {
                    symlink(&link, profiles.join("system"))?;
                }
            }
            Link::UserProfile {
                user,
                generation,
                newest,
            } => {
                let name = user_name(user);
                let d = profiles.join("per-user").join(&name);
                let link = format!("profile-{generation}-link");
                symlink(&target, d.join(&link))?;
                if newest {
                    symlink(&link, d.join("profile"))?;
                    let home = dir.join("home").join(&name);
                    symlink(
                        format!("/nix/var/nix/profiles/per-user/{name}/profile"),
                        home.join(".nix-profile"),
                    )?;
                }
            }
            Link::Auto { user, dir: d, n } => {
                let rel = format!("home/{}/src/p{d}", user_name(user));
                if made_dirs.insert((user, d)) {
                    std::fs::create_dir_all(dir.join(&rel))?;
                }
                let file = format!("result-{n}");
                symlink(&target, dir.join(&rel).join(&file))?;
                // Nix names an indirect root after a hash of the link's path and
                // points it at that absolute path on the machine.
                let mut auto = String::new();
                hash32(seed ^ 0xa070, auto_n, &mut auto);
                auto_n += 1;
                symlink(format!("/{rel}/{file}"), gcroots.join("auto").join(auto))?;
            }
            Link::Direct { group, n } => {
                symlink(&target, gcroots.join(group).join(format!("job-{n}")))?;
            }
            Link::HydraFile => {
                let base = target.rsplit('/').next().unwrap_or_default();
                std::fs::write(gcroots.join("hydra").join(base), "")?;
            }
        }
    }
    Ok(s.roots.len())
}

/// One empty file per valid path under `DIR/nix/store`, for Nix's collector.
pub fn store_files(dir: &Path, s: &Store, seed: u64) -> std::io::Result<()> {
    let store = dir.join("nix/store");
    std::fs::create_dir_all(&store)?;
    let mut p = String::new();
    for i in 0..s.len() {
        store_path(s, seed, i, &mut p);
        std::fs::File::create(store.join(&p["/nix/store/".len()..]))?;
    }
    Ok(())
}

//! The live store: the closure of a store path as the local Nix knows it.
//!
//! First choice is the store's own database, read directly and read-only by
//! `super::store_db`: no process is spawned and Nix computes no closure sizes, so it is
//! much faster, and it is the only way to read a store under `--store-root` (a chroot
//! store or a mounted image, whose database is `<store-root>/nix/var/nix/db/db.sqlite`).
//! Whenever the database cannot be used (absent, locked past a short timeout, an
//! unexpected schema, a store directory that is not the local store's), the installed
//! `nix` is asked instead, silently; only when that fails too are both reasons
//! reported. Set `NIXCUT_NO_STORE_DB=1` (or [`LoadOptions::no_store_db`]) to skip the
//! database and always ask `nix`.
//!
//! Asking `nix` means `nix path-info --json -r -S` of the store path, read by
//! `super::path_info_json`. The flags depend on the version (`nix --version`): Nix
//! 2.33+ gets `--json-format 2` (the stable, base-name keyed format) and, should that
//! flag be refused anyway, the query is retried without it.
//! `--extra-experimental-features nix-command` is always passed, so Nix builds that do
//! not enable the `nix` command by default work too. Nothing here writes to the store:
//! only `path-info` is run, with substitution off so that a path missing locally is
//! reported rather than downloaded. A store under `--store-root` is never queried
//! through `nix`, because opening it would make Nix create its database there.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use super::options::NixCommand;
use super::{path_info_json, store_db, LoadError, LoadOptions};
use crate::store::{Closure, SourceKind, StorePath};

/// A Nix version as `nix --version` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NixVersion {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch version (0 when absent).
    pub patch: u32,
    /// Whether this is Lix, whose 2.9x versions do not have Nix 2.33's flags.
    pub lix: bool,
    /// The full line.
    pub text: String,
}

impl NixVersion {
    /// Whether `nix path-info` takes `--json-format` (Nix 2.33+, not Lix).
    pub fn has_json_format(&self) -> bool {
        !self.lix && (self.major, self.minor) >= (2, 33)
    }
}

/// Parse `nix (Nix) 2.8.0`, `nix (Lix, like Nix) 2.91.1`, `nix (Determinate Nix
/// 3.6.2) 2.29.0`: the version is the last word.
pub fn parse_version(s: &str) -> Option<NixVersion> {
    let line = s.lines().next()?.trim();
    let word = line.split_whitespace().last()?;
    let mut nums = word.split('.').map(|p| {
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    let major = nums.next()??;
    let minor = nums.next()??;
    let patch = nums.next().flatten().unwrap_or(0);
    Some(NixVersion {
        major,
        minor,
        patch,
        lix: line.contains("Lix"),
        text: line.to_string(),
    })
}

impl NixCommand {
    fn run(&self, args: &[OsString]) -> Result<Output, LoadError> {
        Command::new(&self.program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|source| LoadError::NixMissing {
                program: self.program.display().to_string(),
                source,
            })
    }

    fn command_line(&self, args: &[OsString]) -> String {
        let mut s = self.program.display().to_string();
        for a in args {
            s.push(' ');
            s.push_str(&a.to_string_lossy());
        }
        s
    }

    fn failed(&self, args: &[OsString], out: &Output) -> LoadError {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stderr = stderr.trim();
        // Keep the end, where Nix puts the error, if it printed a lot.
        let tail: String = {
            let chars: Vec<char> = stderr.chars().collect();
            let start = chars.len().saturating_sub(4000);
            chars[start..].iter().collect()
        };
        LoadError::NixFailed {
            command: self.command_line(args),
            status: out.status.to_string(),
            stderr: tail,
        }
    }

    /// Run `nix --version` and parse it.
    pub fn version(&self) -> Result<NixVersion, LoadError> {
        let args = [OsString::from("--version")];
        let out = self.run(&args)?;
        if !out.status.success() {
            return Err(self.failed(&args, &out));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        parse_version(&text).ok_or_else(|| LoadError::NixFailed {
            command: self.command_line(&args),
            status: "unrecognised output".into(),
            stderr: format!("expected `nix (Nix) X.Y.Z`, got `{}`", text.trim()),
        })
    }

    /// `nix path-info --json -r -S` of `store_path` (a full path), as text.
    pub fn path_info_json(
        &self,
        store_path: &str,
        version: &NixVersion,
    ) -> Result<String, LoadError> {
        let with_format = path_info_args(store_path, version.has_json_format());
        let out = self.run(&with_format)?;
        let out = if !out.status.success()
            && version.has_json_format()
            && String::from_utf8_lossy(&out.stderr).contains("json-format")
        {
            let plain = path_info_args(store_path, false);
            let retry = self.run(&plain)?;
            if !retry.status.success() {
                return Err(self.failed(&plain, &retry));
            }
            retry
        } else if !out.status.success() {
            return Err(self.failed(&with_format, &out));
        } else {
            out
        };
        String::from_utf8(out.stdout).map_err(|e| LoadError::NixFailed {
            command: self.command_line(&with_format),
            status: "output is not UTF-8".into(),
            stderr: e.to_string(),
        })
    }
}

/// The arguments of the path-info query.
pub fn path_info_args(store_path: &str, json_format_2: bool) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "--extra-experimental-features",
        "nix-command",
        "--option",
        "substitute",
        "false",
        "path-info",
        "--json",
        "-r",
        "-S",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    if json_format_2 {
        args.push("--json-format".into());
        args.push("2".into());
    }
    args.push(store_path.into());
    args
}

/// Load the closure of `store_path`, which `input` named, from the live store: from
/// its database when it can be read, else through `nix`.
pub fn load(
    input: &Path,
    store_path: &StorePath,
    opts: &LoadOptions,
) -> Result<Closure, LoadError> {
    let db_file = if opts.no_store_db {
        None
    } else {
        store_db::location(opts)
    };
    load_from(input, store_path, opts, db_file.as_deref())
}

/// [`load`], reading the database `db_file` if any.
fn load_from(
    input: &Path,
    store_path: &StorePath,
    opts: &LoadOptions,
    db_file: Option<&Path>,
) -> Result<Closure, LoadError> {
    let sd = opts.store_dir_or_default();
    let full = sd.display(store_path);
    let physical = opts.physical_store_dir().join(store_path.to_string());
    if let Err(e) = std::fs::symlink_metadata(&physical) {
        return Err(LoadError::io(&physical, e));
    }
    // Why the database did not answer: unreadable, or it does not list the path.
    let mut db_failure: Option<LoadError> = None;
    let mut db_says_invalid = false;
    if let Some(file) = db_file {
        let read = if opts.store_root.is_some() {
            store_db::read_closure_under_store_root
        } else {
            store_db::read_closure
        };
        match read(file, &full, &sd) {
            Ok(Some(mut c)) => {
                c.origin = input.display().to_string();
                return Ok(c);
            }
            Ok(None) => {
                db_says_invalid = true;
                db_failure = Some(LoadError::Invalid {
                    path: input.to_path_buf(),
                    message: format!(
                        "{full} is not a valid path according to the store database {}",
                        file.display()
                    ),
                });
            }
            Err(e) => db_failure = Some(e),
        }
    }
    if opts.store_root.is_some() {
        // Nix is not pointed at a store root: it would create its database there.
        let why = match db_failure {
            Some(e @ LoadError::Io { .. }) => e.to_string(),
            Some(e) => return Err(e),
            None => format!(
                "reading its store database is turned off ({})",
                store_db::NO_STORE_DB_ENV
            ),
        };
        return Err(LoadError::Unsupported {
            path: input.to_path_buf(),
            what: format!("querying {full} in a store under --store-root through nix ({why})"),
            hint: "run `nix path-info --json -r -S` where that store is mounted as the \
                   store, or use a closureInfo, registration or binary cache, and pass that \
                   file"
                .into(),
        });
    }
    match load_through_nix(input, store_path, &full, opts) {
        Ok(c) => Ok(c),
        // The database does not list the path, and Nix said why: its words, as always.
        Err(e @ LoadError::NixFailed { .. }) if db_says_invalid => Err(e),
        Err(e) => match db_failure {
            Some(db) => Err(LoadError::LiveStore {
                store_db: Box::new(db),
                nix: Box::new(e),
            }),
            None => Err(e),
        },
    }
}

/// Load the closure of `store_path` (`full` in the store directory) through
/// `nix path-info`.
fn load_through_nix(
    input: &Path,
    store_path: &StorePath,
    full: &str,
    opts: &LoadOptions,
) -> Result<Closure, LoadError> {
    let version = opts.nix.version()?;
    let text = opts.nix.path_info_json(full, &version)?;
    let origin = PathBuf::from(format!("`nix path-info --json` of {full}"));
    let mut c = path_info_json::parse_owned(text, &origin, opts)?;
    c.source = SourceKind::LiveStore;
    c.origin = input.display().to_string();
    c.declared_roots = vec![store_path.clone()];
    if !c.paths.contains_key(store_path) {
        return Err(LoadError::Invalid {
            path: input.to_path_buf(),
            message: format!(
                "{} ({}) did not describe {full}",
                version.text,
                origin.display()
            ),
        });
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        let v = parse_version("nix (Nix) 2.8.0\n").unwrap();
        assert_eq!((v.major, v.minor, v.patch, v.lix), (2, 8, 0, false));
        assert!(!v.has_json_format());
        assert!(parse_version("nix (Nix) 2.33.1").unwrap().has_json_format());
        assert!(parse_version("nix (Nix) 2.35pre20250101_abc")
            .unwrap()
            .has_json_format());
        let lix = parse_version("nix (Lix, like Nix) 2.91.1").unwrap();
        assert!(lix.lix && !lix.has_json_format());
        let det = parse_version("nix (Determinate Nix 3.6.2) 2.29.0").unwrap();
        assert_eq!((det.major, det.minor), (2, 29));
        assert_eq!(parse_version("hello"), None);
        assert_eq!(parse_version(""), None);
    }

    #[test]
    fn arguments() {
        let a = path_info_args("/nix/store/x", true);
        let s: Vec<_> = a.iter().map(|x| x.to_string_lossy().into_owned()).collect();
        assert_eq!(
            s.join(" "),
            "--extra-experimental-features nix-command --option substitute false \
             path-info --json -r -S --json-format 2 /nix/store/x"
        );
        assert!(!path_info_args("/nix/store/x", false)
            .iter()
            .any(|x| x == "--json-format"));
    }

    #[test]
    fn missing_nix_is_a_clear_error() {
        let nix = NixCommand::new("/nonexistent/nix-for-nixcut-tests");
        let e = nix.version().unwrap_err();
        assert!(matches!(e, LoadError::NixMissing { .. }));
        assert!(e.to_string().contains("install Nix"), "{e}");
    }

    fn fake_nix(dir: &Path, script: &str) -> NixCommand {
        use std::os::unix::fs::PermissionsExt;
        let fake = dir.join("nix");
        std::fs::write(&fake, format!("#!/bin/sh\n{script}")).unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        NixCommand::new(fake)
    }

    #[test]
    fn falls_back_when_json_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let nix = fake_nix(
            dir.path(),
            "case \"$*\" in\n\
             --version) echo 'nix (Nix) 2.33.0';;\n\
             *--json-format*) echo \"error: unrecognised flag '--json-format'\" >&2; exit 1;;\n\
             *) echo '[]';;\n\
             esac\n",
        );
        let v = nix.version().unwrap();
        assert!(v.has_json_format());
        assert_eq!(nix.path_info_json("/nix/store/x", &v).unwrap().trim(), "[]");
    }

    use crate::load::store_db::tests::{fixture_db, APP, HASH, LIB};
    use crate::store::StoreDir;

    /// A store directory in `dir` (logical = physical) holding `bases`, and options
    /// for it with `nix`.
    fn temp_store(dir: &Path, bases: &[&str], nix: NixCommand) -> (LoadOptions, String) {
        let store = dir.join("store");
        for b in bases {
            std::fs::create_dir_all(store.join(b)).unwrap();
        }
        let sd = store.to_str().unwrap().to_string();
        let opts = LoadOptions {
            store_dir: Some(StoreDir::new(&sd)),
            nix,
            ..LoadOptions::default()
        };
        (opts, sd)
    }

    /// A `nix` that answers `path-info` with `json`.
    fn nix_answering(dir: &Path, json: &str) -> NixCommand {
        fake_nix(
            dir,
            &format!(
                "case \"$*\" in\n--version) echo 'nix (Nix) 2.8.0';;\n*) echo '{json}';;\nesac\n"
            ),
        )
    }

    #[test]
    fn the_database_answers_without_nix() {
        let dir = tempfile::tempdir().unwrap();
        let (opts, sd) = temp_store(dir.path(), &[APP], NixCommand::new("/nonexistent/nix"));
        let db = fixture_db(dir.path(), &sd);
        let root = StorePath::from_base_name(APP).unwrap();
        let input = Path::new("./result");
        let c = load_from(input, &root, &opts, Some(&db)).unwrap();
        assert_eq!(c.paths.len(), 3);
        assert_eq!(c.source, SourceKind::LiveStore);
        assert_eq!(c.origin, "./result");
        assert_eq!(c.declared_roots, vec![root]);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn an_unreadable_database_falls_back_to_nix_silently() {
        let dir = tempfile::tempdir().unwrap();
        let nix_dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let json = format!(
            r#"[{{"path":"{}/{APP}","narHash":"{HASH}","narSize":5,"references":[]}}]"#,
            store.display()
        );
        let (opts, _) = temp_store(dir.path(), &[APP], nix_answering(nix_dir.path(), &json));
        let junk = dir.path().join("db.sqlite");
        std::fs::write(&junk, "not a database ".repeat(200)).unwrap();
        let root = StorePath::from_base_name(APP).unwrap();
        let c = load_from(Path::new("r"), &root, &opts, Some(&junk)).unwrap();
        assert_eq!(c.paths.len(), 1, "nix's answer");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        // No database at all: the same.
        let absent = dir.path().join("absent.sqlite");
        let c = load_from(Path::new("r"), &root, &opts, Some(&absent)).unwrap();
        assert_eq!(c.paths.len(), 1);
        assert!(!absent.exists(), "never created");
    }

    #[test]
    fn when_nix_fails_too_both_reasons_are_given() {
        let dir = tempfile::tempdir().unwrap();
        let (opts, _) = temp_store(dir.path(), &[APP], NixCommand::new("/nonexistent/nix"));
        let junk = dir.path().join("junk.sqlite");
        std::fs::write(&junk, "not a database ".repeat(200)).unwrap();
        let root = StorePath::from_base_name(APP).unwrap();
        let e = load_from(Path::new("r"), &root, &opts, Some(&junk)).unwrap_err();
        assert!(matches!(e, LoadError::LiveStore { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("install Nix") && msg.contains("junk.sqlite"),
            "{msg}"
        );
    }

    #[test]
    fn a_path_the_database_does_not_list_gets_nix_s_error() {
        let dir = tempfile::tempdir().unwrap();
        let nix_dir = tempfile::tempdir().unwrap();
        let absent = "0000000000000000000000000000000g-absent-1";
        let nix = fake_nix(
            nix_dir.path(),
            "case \"$*\" in\n--version) echo 'nix (Nix) 2.8.0';;\n\
             *) echo \"error: path is not valid\" >&2; exit 1;;\nesac\n",
        );
        let (opts, sd) = temp_store(dir.path(), &[absent, LIB], nix);
        let db = fixture_db(dir.path(), &sd);
        let root = StorePath::from_base_name(absent).unwrap();
        let e = load_from(Path::new("r"), &root, &opts, Some(&db)).unwrap_err();
        assert!(matches!(e, LoadError::NixFailed { .. }), "{e}");
        assert!(e.to_string().contains("is not valid"), "{e}");
        // Without nix: both.
        let opts = LoadOptions {
            nix: NixCommand::new("/nonexistent/nix"),
            ..opts
        };
        let e = load_from(Path::new("r"), &root, &opts, Some(&db)).unwrap_err();
        assert!(
            e.to_string()
                .contains("not a valid path according to the store database"),
            "{e}"
        );
    }

    #[test]
    fn a_store_root_is_read_through_its_database() {
        let root = tempfile::tempdir().unwrap();
        let absent = "0000000000000000000000000000000g-absent-1";
        for b in [APP, absent] {
            std::fs::create_dir_all(root.path().join("nix/store").join(b)).unwrap();
        }
        let db_dir = root.path().join("nix/var/nix/db");
        std::fs::create_dir_all(&db_dir).unwrap();
        let db = fixture_db(&db_dir, "/nix/store");
        let before = std::fs::read(&db).unwrap();
        let opts = LoadOptions {
            store_root: Some(root.path().to_path_buf()),
            nix: NixCommand::new("/nonexistent/nix"),
            ..LoadOptions::default()
        };
        let input = root.path().join("nix/store").join(APP);
        let c = crate::load::load(input.to_str().unwrap(), &opts).unwrap();
        assert_eq!(c.paths.len(), 3);
        assert_eq!(c.declared_roots[0].to_string(), APP);
        assert_eq!(c.store_dir.as_str(), "/nix/store");
        assert_eq!(std::fs::read(&db).unwrap(), before, "only read");

        let input = root.path().join("nix/store").join(absent);
        let e = crate::load::load(input.to_str().unwrap(), &opts).unwrap_err();
        assert!(matches!(e, LoadError::Invalid { .. }), "{e}");
        assert!(e.to_string().contains("db.sqlite"), "{e}");

        let off = LoadOptions {
            no_store_db: true,
            ..opts
        };
        let input = root.path().join("nix/store").join(APP);
        let e = crate::load::load(input.to_str().unwrap(), &off).unwrap_err();
        assert!(matches!(e, LoadError::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains("NIXCUT_NO_STORE_DB"), "{e}");
    }

    #[test]
    fn failing_nix_reports_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("nix");
        std::fs::write(
            &fake,
            "#!/bin/sh\necho 'error: no such thing' >&2\nexit 3\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = NixCommand::new(&fake).version().unwrap_err().to_string();
        assert!(
            e.contains("no such thing") && e.contains("exit status: 3"),
            "{e}"
        );
    }
}

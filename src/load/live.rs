//! The live store, queried through the installed `nix`: `nix path-info --json -r -S`
//! of a store path, read by `super::path_info_json`.
//!
//! The flags depend on the version (`nix --version`): Nix 2.33+ gets `--json-format 2`
//! (the stable, base-name keyed format) and, should that flag be refused anyway, the
//! query is retried without it. `--extra-experimental-features nix-command` is always
//! passed, so Nix builds that do not enable the `nix` command by default work too.
//! Nothing here writes to the store: only `path-info` is run, with substitution off so
//! that a path missing locally is reported rather than downloaded. A store under
//! `--store-root` is not queried, because opening it would make Nix create its
//! database there.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{path_info_json, LoadError, LoadOptions};
use crate::store::{Closure, SourceKind, StorePath};

/// The `nix` program to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NixCommand {
    /// The program: a name looked up in `PATH` or a path.
    pub program: PathBuf,
}

impl Default for NixCommand {
    fn default() -> Self {
        NixCommand {
            program: PathBuf::from("nix"),
        }
    }
}

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
    /// A command for `program`.
    pub fn new(program: impl Into<PathBuf>) -> NixCommand {
        NixCommand {
            program: program.into(),
        }
    }

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

/// Load the closure of `store_path`, which `input` named, from the live store.
pub fn load(
    input: &Path,
    store_path: &StorePath,
    opts: &LoadOptions,
) -> Result<Closure, LoadError> {
    let full = opts.store_dir_or_default().display(store_path);
    if opts.store_root.is_some() {
        return Err(LoadError::Unsupported {
            path: input.to_path_buf(),
            what: format!("querying {full} in a store under --store-root through nix"),
            hint: "run `nix path-info --json -r -S` where that store is mounted as the \
                   store, or use a closureInfo, registration or binary cache, and pass that \
                   file"
                .into(),
        });
    }
    let physical = opts.physical_store_dir().join(store_path.to_string());
    if let Err(e) = std::fs::symlink_metadata(&physical) {
        return Err(LoadError::io(&physical, e));
    }
    let version = opts.nix.version()?;
    let text = opts.nix.path_info_json(&full, &version)?;
    let origin = PathBuf::from(format!("`nix path-info --json` of {full}"));
    let mut c = path_info_json::parse(&text, &origin, opts)?;
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

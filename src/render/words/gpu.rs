//! What the `gpu` report says: its heading, the totals line, what `--gpu-targets`
//! leaves, and the short forms of per-path architecture lists.

use crate::render::text::{count, name_of, signed_percent, thousands};
use crate::report::{GpuPath, GpuReport};
use crate::store::format_size;

/// `part` as a percentage of `whole`, one decimal (`62.5%`); `–` for an empty whole.
pub(crate) fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "–".to_string();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

pub(crate) fn heading(r: &GpuReport) -> String {
    format!(
        "GPU code in {}: {} closure, {}",
        name_of(&r.root),
        format_size(r.closure_size),
        count(r.path_count, "path", "paths")
    )
}

/// `GPU 3.2 MiB (62.5%) in 15 architectures · generic 91 KiB · host 1.8 MiB`.
pub(crate) fn totals(r: &GpuReport) -> String {
    if r.closure_size > 0 && r.unscanned_bytes >= r.closure_size {
        return format!(
            "GPU bytes not known: no file of the closure was read ({} not read)",
            format_size(r.unscanned_bytes)
        );
    }
    let mut s = format!(
        "GPU {} ({}) in {}; generic {} ({}); host {}",
        format_size(r.gpu_bytes),
        percent(r.gpu_bytes, r.closure_size),
        count(r.archs.len() as u64, "architecture", "architectures"),
        format_size(r.generic_bytes),
        count(r.generic_files, "file", "files"),
        format_size(r.host_bytes),
    );
    if r.unscanned_bytes > 0 {
        s.push_str(&format!("; not read {}", format_size(r.unscanned_bytes)));
    }
    s
}

/// What the closure becomes with only the targets, or `None` without `--gpu-targets`.
pub(crate) fn after(r: &GpuReport) -> Option<String> {
    let size = r.closure_size_after?;
    let paths_after = r.path_count_after.unwrap_or(r.path_count);
    if r.closure_size > 0 && r.unscanned_bytes >= r.closure_size {
        return Some(format!(
            "with only {}: not known: no file of the closure was read ({} not read), so \
             nothing could be dropped; give the store (--store-root) or a binary cache with \
             its NARs",
            r.gpu_targets.join(", "),
            format_size(r.unscanned_bytes)
        ));
    }
    let how = match (r.estimated, r.unscanned_bytes) {
        (_, 0) if r.estimated => "; estimated: fat binaries rebuilt with fewer targets".to_string(),
        (_, 0) => "; exact: per-architecture files dropped".to_string(),
        (true, n) => format!(
            "; estimated: fat binaries rebuilt with fewer targets, {} not read",
            format_size(n)
        ),
        (false, n) => format!(
            "; per-architecture files dropped, {} not read",
            format_size(n)
        ),
    };
    Some(format!(
        "with only {}: {} → {} ({} less{}), {} → {}{}",
        r.gpu_targets.join(", "),
        format_size(r.closure_size),
        format_size(size),
        format_size(r.closure_size.saturating_sub(size)),
        if r.closure_size > 0 {
            format!(
                ", {}",
                signed_percent(
                    -(r.closure_size.saturating_sub(size) as f64) * 100.0 / r.closure_size as f64
                )
            )
        } else {
            String::new()
        },
        thousands(r.path_count),
        count(paths_after, "path", "paths"),
        how
    ))
}

/// The largest architectures of one path: `gfx90a 1.2 MiB, gfx942 800 KiB, +3 more`.
pub(crate) fn path_archs(p: &GpuPath, max: usize) -> String {
    let mut v: Vec<(&String, &u64)> = p.archs.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let mut parts: Vec<String> = v
        .iter()
        .take(max)
        .map(|(a, b)| format!("{a} {}", format_size(**b)))
        .collect();
    if v.len() > max {
        parts.push(format!("+{} more", v.len() - max));
    }
    parts.join(", ")
}

/// `gfx90a:xnack+, gfx90a:xnack-` shortened past `max` variants.
pub(crate) fn targets(t: &[String], max: usize) -> String {
    if t.len() <= max {
        return t.join(", ");
    }
    format!("{}, … ({} variants)", t[..max].join(", "), t.len())
}

impl std::fmt::Display for crate::report::GpuWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::report::{GpuVendor, GpuWarning as W};
        match self {
            W::Load(w) => w.fmt(f),
            W::Input(w) => f.write_str(w),
            W::Evidence { path, warning } => write!(f, "{path}: {warning}"),
            W::Unread {
                count,
                of,
                example,
                why,
            } => write!(
                f,
                "{count} of {of} paths could not be read, so their bytes are not split up \
                 (e.g. {example}: {why})"
            ),
            W::MoreThanNar { path, bytes, nar } => write!(
                f,
                "{path}: its files hold {bytes} bytes of GPU code and data, more than its NAR \
                 size ({nar}) says; its GPU bytes are cut to the NAR size, so the \
                 architectures' figures add up to more than the total"
            ),
            W::FilesUnavailable => f.write_str(
                "the files of these paths are not available: nothing could be split up by \
                 architecture; use --store-root or a binary cache with nar/",
            ),
            W::TargetAbsent { target } => write!(
                f,
                "--gpu-targets {target}: the closure holds no code or data for {target}"
            ),
            W::NoRemedy { vendor, bytes } => {
                let (what, setting) = match vendor {
                    GpuVendor::Amd => ("AMD processor", "gpuTargets"),
                    GpuVendor::Nvidia => ("CUDA architecture", "cudaCapabilities"),
                };
                write!(
                    f,
                    "--gpu-targets names no {what}: the closure's {} of {what} code would all \
                     go, which no {setting} setting does (build those packages without that \
                     GPU support instead); no {setting} remedy is proposed",
                    format_size(*bytes)
                )
            }
        }
    }
}

/// In JSON a warning is its sentence.
impl serde::Serialize for crate::report::GpuWarning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

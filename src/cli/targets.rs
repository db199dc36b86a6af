//! `--gpu-targets`: every item is a GPU architecture nixcut knows, checked before any
//! input is read, so a typo (`gfx130`) is an error naming the nearest known ones rather
//! than a proposal to build for nothing.

use anyhow::{bail, Result};

use nixcut::classify::{
    is_known_gpu_arch, known_arch_range, nearest_gpu_archs, GpuTarget, GpuVendor,
};

/// The items of `--gpu-targets`, trimmed and checked; an error when one is not a known
/// architecture, or when the flag was given with nothing in it.
pub(super) fn checked(items: &[String]) -> Result<Vec<String>> {
    let given: Vec<String> = items
        .iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    if given.is_empty() && !items.is_empty() {
        bail!(
            "--gpu-targets names no target: give AMD processors (gfx1030, gfx90a:xnack+) \
             or CUDA architectures (sm_90, 8.6), separated by commas"
        );
    }
    for t in &given {
        let Some(GpuTarget { base, .. }) = GpuTarget::parse(t) else {
            continue;
        };
        if !is_known_gpu_arch(&base) {
            let near = nearest_gpu_archs(&base, 4).join(", ");
            let range =
                |v| known_arch_range(v).map_or(String::new(), |(a, b)| format!("{a} to {b}"));
            bail!(
                "--gpu-targets {}: `{base}` is not a GPU architecture nixcut knows; the \
                 nearest known: {near} (AMD processors {}, CUDA {}; `nixcut gpu ROOT` \
                 lists those the closure holds)",
                super::printable(t),
                range(GpuVendor::Amd),
                range(GpuVendor::Nvidia),
            );
        }
    }
    Ok(given)
}

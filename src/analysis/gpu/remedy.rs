//! Remedies in nixpkgs' terms for what `--gpu-targets` drops: a `gpuTargets` override
//! per package (its attribute from the GPU library table), one `cudaCapabilities`
//! setting for every CUDA package, and what no setting can say.

use super::after::After;
use crate::classify::{gpu_library, GpuTarget};
use crate::report::{GpuOption, GpuRebuild, GpuRemedy, GpuVendor, GpuWarning, NixCode};
use crate::store::{parse_package_name, Closure};

/// What no remedy can say: the targets name no architecture of a vendor whose code the
/// closure holds, so that code would all go, and `gpuTargets = [ ]` or
/// `cudaCapabilities = [ ]` is no setting nixpkgs builds.
pub(super) fn no_remedy_warnings(a: &After, targets: &[String]) -> Vec<GpuWarning> {
    let mut out = Vec::new();
    for vd in [GpuVendor::Amd, GpuVendor::Nvidia] {
        let bytes: u64 = a.saved_by_path.values().filter_map(|by| by.get(&vd)).sum();
        if bytes > 0 && !targets.iter().any(|t| GpuVendor::of_base(t) == vd) {
            out.push(GpuWarning::NoRemedy { vendor: vd, bytes });
        }
    }
    out
}

/// Remedies in nixpkgs' terms for what the targets drop: `gpuTargets` for each
/// package whose AMD code shrinks (itself, or store paths that leave with it), one
/// `cudaCapabilities` setting for every package whose CUDA code does.
pub(super) fn remedies(c: &Closure, a: &After, targets: &[String]) -> Vec<GpuRemedy> {
    let sd = &c.store_dir;
    let amd: Vec<String> = targets
        .iter()
        .filter(|t| GpuVendor::of_base(t) == GpuVendor::Amd)
        .cloned()
        .collect();
    let cuda: Vec<String> = targets
        .iter()
        .map(|t| GpuTarget::from_id(t))
        .filter(|t| t.vendor == GpuVendor::Nvidia)
        .map(|t| t.nixpkgs_value())
        .collect();
    let mut out = Vec::new();
    let mut nvidia = GpuRemedy {
        option: GpuOption::CudaCapabilities,
        packages: Vec::new(),
        paths: Vec::new(),
        value: cuda.clone(),
        rebuild: NixCode::Facts(GpuRebuild::CudaCapabilities {
            capabilities: cuda.clone(),
        }),
        saves: 0,
    };
    for (p, by_vendor) in &a.saved_by_path {
        let pname = parse_package_name(p.name()).pname.to_string();
        for (vd, &bytes) in by_vendor {
            if bytes == 0 {
                continue;
            }
            match vd {
                // No target of that vendor: no setting to propose (see
                // `no_remedy_warnings`).
                GpuVendor::Amd if amd.is_empty() => {}
                GpuVendor::Nvidia if cuda.is_empty() => {}
                GpuVendor::Amd => {
                    let attribute = gpu_library(&pname)
                        .filter(|l| l.takes == Some(GpuOption::GpuTargets))
                        .map_or_else(|| pname.clone(), |l| l.attribute.to_string());
                    out.push(GpuRemedy {
                        option: GpuOption::GpuTargets,
                        packages: vec![pname.clone()],
                        paths: vec![sd.display(p)],
                        value: amd.clone(),
                        rebuild: NixCode::Facts(GpuRebuild::GpuTargets {
                            attribute,
                            targets: amd.clone(),
                        }),
                        saves: bytes,
                    });
                }
                GpuVendor::Nvidia => {
                    nvidia.packages.push(pname.clone());
                    nvidia.paths.push(sd.display(p));
                    nvidia.saves += bytes;
                }
            }
        }
    }
    // A package's per-architecture sub-derivations (`rocblas-tensile-gfx10`, as
    // nixpkgs' rocblas builds them) are rebuilt by the package's own gpuTargets.
    out.sort_by_key(|m| m.packages[0].len());
    let names: Vec<String> = out.iter().map(|m| m.packages[0].clone()).collect();
    let mut merged: Vec<GpuRemedy> = Vec::new();
    for m in out {
        let owner = names
            .iter()
            .filter(|n| m.packages[0].starts_with(&format!("{n}-")))
            .min_by_key(|n| n.len());
        match owner.and_then(|o| merged.iter_mut().find(|x| &x.packages[0] == o)) {
            Some(x) => {
                x.paths.extend(m.paths);
                x.saves += m.saves;
            }
            None => merged.push(m),
        }
    }
    let mut out = merged;
    if !nvidia.packages.is_empty() {
        nvidia.packages.sort();
        nvidia.packages.dedup();
        out.push(nvidia);
    }
    out.sort_by(|x, y| {
        y.saves
            .cmp(&x.saves)
            .then_with(|| x.packages.cmp(&y.packages))
    });
    out
}

#!/usr/bin/env python3
"""Pick a realistic subset of Tensile file names per rocblas-tensile group.

Run once by hand; the lists it writes to ../tensile-lists/<series>/<group>.txt are
committed, so builds do not need it. Usage:

    python3 tests/worlds/src/gen-tensile-lists.py tests/fixtures/tensile-files.tsv

Each output line is `<file name>\t<target>` where target is the GPU target the file is
built for (`gfx90a-xnack+`, `gfx1030`, ...) or `any` for the arch-generic fallbacks.
"""
import csv, os, sys

GROUPS = {  # nixpkgs rocmPackages_5.rocblas: gfx80 gfx90 gfx94 gfx10 gfx11 + fallbacks
    "gfx80": ["gfx803"],
    "gfx90": ["gfx900", "gfx906", "gfx908", "gfx90a"],
    "gfx94": ["gfx940", "gfx941", "gfx942"],
    "gfx10": ["gfx1010", "gfx1012", "gfx1030"],
    "gfx11": ["gfx1100", "gfx1101", "gfx1102"],
}
# fallback placeholders used everywhere (each arch group ships their _fallback_<target>.hsaco)
FALLBACK_BASES = [
    "TensileLibrary_Type_HH_Contraction_l_Ailk_Bjlk_Cijk_Dijk_fallback",
    "TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk_fallback",
]
N_FALLBACK_DAT = 8
PLACEHOLDER_ARCHS = 2       # archs per group that get placeholder .dat/.co pairs
PLACEHOLDERS_PER_ARCH = 2


def main(tsv, outdir):
    rows = []
    with open(tsv) as f:
        lines = [l for l in f if not l.startswith("#")]
    for r in csv.DictReader(lines, delimiter="\t"):
        rows.append(r)
    for series in ("5.7.1", "6.2.2"):
        rs = [r for r in rows if r["rocblas_version"] == series]
        name = lambda r: os.path.basename(r["path"])
        os.makedirs(os.path.join(outdir, series), exist_ok=True)
        for group, archs in GROUPS.items():
            sel = []
            archs = [a for a in archs if any(r["arch"] == a for r in rs)]
            if not archs:
                continue  # gfx803 is gone in 6.x
            for a in archs:
                ar = [r for r in rs if r["arch"] == a]
                sel += [(name(r), a) for r in ar if r["class"] == "lazy-master-index"]
                sel += [(name(r), r["target_variant"]) for r in ar if r["class"] == "helper-kernels-code-object"]
            for a in archs[-PLACEHOLDER_ARCHS:]:
                ar = [r for r in rs if r["arch"] == a]
                dats = [r for r in ar if r["class"] == "placeholder-library"][:PLACEHOLDERS_PER_ARCH]
                for d in dats:
                    sel.append((name(d), a))
                    co = name(d)[:-4] + ".co"
                    if any(name(r) == co for r in ar):
                        sel.append((co, a))
                src = [r for r in ar if r["class"] == "source-code-object"][:2]
                sel += [(name(r), r["target_variant"]) for r in src]
            for a in archs:
                ar = [r for r in rs if r["arch"] == a]
                sel += [(name(r), r["target_variant"]) for r in ar
                        if r["class"] == "fallback-source-code-object"
                        and name(r).startswith(FALLBACK_BASES[0] + "_")]
            write(outdir, series, group, sel)
        fb = [r for r in rs if r["class"].startswith("fallback-placeholder-library")]
        fb.sort(key=lambda r: (name(r)[:-4] not in FALLBACK_BASES, name(r)))
        write(outdir, series, "fallbacks", [(name(r), "any") for r in fb[:N_FALLBACK_DAT]])


def write(outdir, series, group, sel):
    seen, out = set(), []
    for n, t in sel:
        if n not in seen:
            seen.add(n)
            out.append(f"{n}\t{t}\n")
    with open(os.path.join(outdir, series, group + ".txt"), "w") as f:
        f.writelines(out)
    print(series, group, len(out), file=sys.stderr)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    main(sys.argv[1], os.path.join(here, "..", "tensile-lists"))

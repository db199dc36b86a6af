#!/usr/bin/env bash
# Self-test of the test worlds: builds them with the local Nix and checks that every
# planted piece of evidence is where README.md says, and that the references Nix itself
# registered are exactly the intended ones. Needs nix-build, readelf, python3.
#
#   tests/worlds/verify.sh           # checks (a few seconds once built)
#   tests/worlds/verify.sh --check   # also rebuild everything with nix-build --check
#                                    # (fails unless the builds are bit-for-bit reproducible)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${NIX_CONFIG:-}" ]; then
  export NIX_CONFIG=$'sandbox = false\nbuild-users-group =\nexperimental-features = nix-command\nsubstituters ='
fi

fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi; }
hashof() { basename "$1" | cut -c1-32; }

# attr -> store path, for one world variant: P[rocm:rocblas], P[rocm6:rocblas], ...
declare -A P
load() { # load KEY WORLD ARGS...
  local key=$1 world=$2; shift 2
  while IFS=$'\t' read -r a p; do P[$key:$a]=$p; done \
    < <("$here/build.sh" "$world" --all "$@" 2>/dev/null)
}
load rocm rocm
load rocm6 rocm --argstr version 6.0.0 --arg heavy true
load rocmh rocm --arg heavy true
load cuda cuda
[ -n "${P[rocm:llama-cpp-rocm]:-}" ] && [ -n "${P[cuda:llama-cpp-cuda]:-}" ] ||
  { echo "build failed"; exit 1; }

# expect_refs KEY ATTR DEP... : nix-store -q --references equals exactly these attrs.
expect_refs() {
  local key=$1 attr=$2; shift 2
  local want got
  want=$(for d in "$@"; do echo "${P[$key:$d]}"; done | sort)
  got=$(nix-store -q --references "${P[$key:$attr]}" | sort)
  if [ "$want" = "$got" ]; then ok "references of $key:$attr"; else
    bad "references of $key:$attr"; diff <(echo "$want") <(echo "$got") | sed 's/^/     /'; fi
}

groups5="rocblas-tensile-gfx80 rocblas-tensile-gfx90 rocblas-tensile-gfx94 rocblas-tensile-gfx10 rocblas-tensile-gfx11 rocblas-tensile-fallbacks"
expect_refs rocm glibc
expect_refs rocm gcc-lib glibc
expect_refs rocm rocm-llvm glibc
expect_refs rocm rocm-runtime glibc gcc-lib rocm-llvm libdrm
expect_refs rocm clr glibc rocm-runtime rocm-comgr rocm-llvm bash
# shellcheck disable=SC2086
expect_refs rocm rocblas rocblas $groups5 tensile clr glibc rocm-cmake cmake bash zstd rocm-runtime
expect_refs rocm rocsparse glibc clr rocsparse-src rocm-comgr
expect_refs rocm rocsolver glibc clr rocblas rocsparse rocm-device-libs
expect_refs rocm hipblas glibc clr rocblas rocsolver   # not cmake: its hash is upper-cased
expect_refs rocm llama-cpp-rocm glibc clr rocblas hipblas
expect_refs rocm6 llama-cpp-rocm glibc clr rocblas hipblas big-blob
expect_refs cuda llama-cpp-cuda glibc cuda_cudart libcublas
expect_refs cuda libcublas glibc cuda_cudart
expect_refs cuda cuda_cudart glibc gcc-lib
check "glibc and gcc-lib are the same paths in both worlds" \
  test "${P[rocm:glibc]}${P[rocm:gcc-lib]}" = "${P[cuda:glibc]}${P[cuda:gcc-lib]}"

rt=${P[rocm:rocm-runtime]} rb=${P[rocm:rocblas]} ll=${P[rocm:llama-cpp-rocm]}
hsa=$rt/lib/libhsa-runtime64.so.1.11.0
dyn=$(readelf -d "$hsa")
check "elf-needed: libhsa NEEDED libhelper.so" grep -q 'NEEDED.*\[libhelper.so\]' <<<"$dyn"
check "elf-needed: libhsa RUNPATH has gcc-lib/lib" grep -q "RUNPATH.*${P[rocm:gcc-lib]}/lib" <<<"$dyn"
check "elf-runpath-unused: libhsa RUNPATH has rocm-llvm/lib" grep -q "RUNPATH.*${P[rocm:rocm-llvm]}/lib" <<<"$dyn"
check "elf-string: libhsa .rodata has the amdgpu.ids path" \
  grep -qF "${P[rocm:libdrm]}/share/libdrm/amdgpu.ids" <(readelf -p .rodata "$hsa")
check "elf-source-path: librocblas .rodata has Error in <tensile>/.../Tensile.hpp" \
  grep -qF "Error in ${P[rocm:tensile]}/include/tensile/Tensile.hpp" <(readelf -p .rodata "$rb/lib/librocblas.so")
check "elf-interpreter: llama-server PT_INTERP is glibc's loader" \
  grep -qF "interpreter: ${P[rocm:glibc]}/lib/ld-linux-x86-64.so.2]" <(readelf -l "$ll/bin/llama-server")
check "elf-needed: llama-server RUNPATH hipblas:rocblas:clr:glibc" \
  grep -qF "runpath: [${P[rocm:hipblas]}/lib:$rb/lib:${P[rocm:clr]}/lib:${P[rocm:glibc]}/lib]" \
  <(readelf -d "$ll/bin/llama-server")

# Every RUNPATH entry of every ELF file supplies a NEEDED library, except rocm-llvm's
# lib/ in libhsa-runtime64 (the planted elf-runpath-unused).
unused=$(for r in "${P[rocm:llama-cpp-rocm]}" "${P[cuda:llama-cpp-cuda]}"; do
  for f in $(find $(nix-store -qR "$r") -type f); do
    [ "$(head -c4 "$f" | tr -d '\000')" = $'\x7fELF' ] || continue
    d=$(readelf -d "$f" 2>/dev/null) || continue
    needed=$(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<<"$d")
    for dir in $(sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p' <<<"$d" | tr ':' ' '); do
      used=0; for n in $needed; do [ -e "$dir/$n" ] && used=1; done
      [ $used = 1 ] || echo "$f $dir"
    done
  done
done | sort -u)
# Entries that supply no NEEDED library: rocm-llvm's in libhsa, rocm-comgr's in
# librocsparse and glibc's in libamd_comgr (which needs nothing) are elf-runpath-unused;
# rocm-comgr's in libamdhip64, which dlopens libamd_comgr.so.2 from it, is
# elf-runpath-dlopen.
want_unused=$(printf '%s\n' "$hsa ${P[rocm:rocm-llvm]}/lib" \
  "${P[rocm:rocm-comgr]}/lib/libamd_comgr.so.2 ${P[rocm:glibc]}/lib" \
  "${P[rocm:clr]}/lib/libamdhip64.so ${P[rocm:rocm-comgr]}/lib" \
  "${P[rocm:rocsparse]}/lib/librocsparse.so ${P[rocm:rocm-comgr]}/lib" | sort -u)
check "elf-runpath-unused/dlopen: RUNPATH entries without NEEDED are the four planted ones" \
  test "$unused" = "$want_unused"
check "elf-runpath-dlopen: libamdhip64.so names libamd_comgr.so.2 in .rodata" \
  grep -qF libamd_comgr.so.2 <(readelf -p .rodata "${P[rocm:clr]}/lib/libamdhip64.so")
check "elf-needed: every library NEEDs libc.so.6" \
  test -z "$(for f in "$hsa" "$rb/lib/librocblas.so" "${P[rocm:gcc-lib]}/lib/libhelper.so" "${P[cuda:libcublas]}/lib/libcublas.so.12"; do
    readelf -d "$f" | grep -q 'NEEDED.*\[libc.so.6\]' || echo "$f"; done)"

# sections_with HASH FILE: the ELF sections holding HASH, one per line.
sections_with() {
  python3 - "$1" "$2" <<'PY'
import struct, sys
h, data = sys.argv[1].encode(), open(sys.argv[2], "rb").read()
shoff, = struct.unpack_from("<Q", data, 0x28)
ent, num, stri = struct.unpack_from("<HHH", data, 0x3a)
secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * ent) for i in range(num)]
base = secs[stri][4]
name = lambda o: data[base + o:data.index(b"\0", base + o)].decode()
found = set()
pos = data.find(h)
while pos >= 0:
    owner = [name(s[0]) for s in secs if s[1] != 8 and s[4] <= pos < s[4] + s[5]]
    found.add(owner[0] if owner else "(outside sections)")
    pos = data.find(h, pos + 1)
print("\n".join(sorted(found)))
PY
}
secs=$(sections_with "$(hashof "${P[rocm:rocsparse-src]}")" "${P[rocm:rocsparse]}/lib/librocsparse.so")
check "elf-debug: rocsparse-src only in .debug_* of librocsparse.so ($(echo $secs))" \
  test -n "$secs" -a -z "$(grep -v '^\.debug_' <<<"$secs")"
secs=$(sections_with "$(hashof "${P[rocm:rocm-device-libs]}")" "${P[rocm:rocsolver]}/lib/librocsolver.so")
check "elf-other: rocm-device-libs only in .note.nixcut of librocsolver.so ($secs)" test "$secs" = .note.nixcut

lib=$rb/lib/rocblas/library
nlinks=$(find "$lib" -type l | wc -l)
ngroup=0; for g in $groups5; do ngroup=$((ngroup + $(ls "${P[rocm:$g]}/lib/rocblas/library" | wc -l))); done
check "symlink: rocblas library has one symlink per group file ($nlinks)" test "$nlinks" = "$ngroup"
check "symlink: the only regular file there is TensileManifest.txt" \
  test "$(find "$lib" -type f -printf '%f\n')" = TensileManifest.txt
check "manifest: /build/source lines" grep -q '^/build/source/build/Tensile/library/' "$lib/TensileManifest.txt"
check "manifest: one line names the gfx94 group" \
  test "$(grep -c "^${P[rocm:rocblas-tensile-gfx94]}/lib/rocblas/library/" "$lib/TensileManifest.txt")" = 1
cm=$rb/lib/cmake/rocblas/rocblas-config.cmake
for d in tensile clr rocm-cmake; do check "build-config: rocblas-config.cmake names $d" grep -qF "${P[rocm:$d]}" "$cm"; done
check "build-config: rocblas.pc prefix" grep -qx "prefix=$rb" "$rb/lib/pkgconfig/rocblas.pc"
check "build-config: librocblas.la names clr" grep -qF "${P[rocm:clr]}/lib" "$rb/lib/librocblas.la"
check "build-config: nix-support/propagated-build-inputs" \
  grep -qx "${P[rocm:rocm-cmake]} ${P[rocm:clr]}" "$rb/nix-support/propagated-build-inputs"
check "doc: BUILD-INFO names cmake" grep -qF "${P[rocm:cmake]}/bin/cmake" "$rb/share/doc/rocblas/BUILD-INFO"
check "doc: cmake's hash is nowhere else in rocblas" \
  test "$(grep -rlF "$(hashof "${P[rocm:cmake]}")" "$rb" --exclude-dir=library)" = "$rb/share/doc/rocblas/BUILD-INFO"
check "script: store-path shebang" test "$(head -n1 "$rb/bin/rocblas-bench-wrapper")" = "#!${P[rocm:bash]}/bin/sh"
check "script: executable" test -x "$rb/bin/rocblas-bench-wrapper"
stamp=$rb/share/rocblas/$(hashof "${P[rocm:rocblas-tensile-fallbacks]}")-tensile.stamp
check "file-name: $(basename "$stamp") exists" test -f "$stamp"
check "file-name: its contents hold no hash" bash -c "! grep -qE '[0-9a-z]{32}' '$stamp'"
blob=$rb/share/rocblas/blob.bin
check "binary: zstd hash only at offset 65520" \
  test "$(grep -boa "$(hashof "${P[rocm:zstd]}")" "$blob")" = "65520:$(hashof "${P[rocm:zstd]}")"
check "binary: blob.bin has NUL bytes" grep -qaP '\x00' "$blob"
check "symlink (dangling): target is <tensile>/does-not-exist" \
  test "$(readlink "$rb/share/rocblas/tensile-dangling")" = "${P[rocm:tensile]}/does-not-exist"
check "symlink (dangling): target missing" test ! -e "$rb/share/rocblas/tensile-dangling"
check "text: notes.txt names rocm-runtime" grep -qF "$rt" "$rb/share/rocblas/notes.txt"
up=$(hashof "${P[rocm:cmake]}" | tr a-z A-Z)
check "upper-cased cmake hash is in hipblas" grep -qF "$up" "${P[rocm:hipblas]}/share/hipblas/build-tools.txt"

amd() { readelf -h "$1" | grep -E 'Machine|Flags|ABI Version' | tr -s ' ' | tr '\n' ' '; }
check "tensile: gfx90a-xnack+ Kernels.so is AMDGPU gfx90a xnack on" \
  grep -q 'AMD GPU.*gfx90a, xnack on' <<<"$(amd "$lib/Kernels.so-000-gfx90a-xnack+.hsaco")"
check "tensile: gfx1102 .co is AMDGPU e_flags 0x47 (gfx1102), code object v4 (ABI 2)" \
  grep -q 'ABI Version: 2 .*AMD GPU .*Flags: 0x47,' <<<"$(amd "$(ls "$lib"/*_gfx1102.co | head -n1)")"
check "tensile: fallback hsaco is CCOB" test "$(head -c4 "$(ls "$lib"/*_fallback_gfx942.hsaco)")" = CCOB
check "tensile: source hsaco is an offload bundle" \
  test "$(head -c24 "$(ls "$lib"/*_CU104_gfx90a-xnack+.hsaco)")" = __CLANG_OFFLOAD_BUNDLE__
check "rocsparse: .hip_fatbin holds an offload bundle" \
  grep -q __CLANG_OFFLOAD_BUNDLE__ <(readelf -p .hip_fatbin "${P[rocm:rocsparse]}/lib/librocsparse.so")
check "cuda: .nv_fatbin starts with 0xBA55ED50" \
  grep -q '50ed55ba' <(readelf -x .nv_fatbin "${P[cuda:libcublas]}/lib/libcublas.so.12" | sed -n 3p)

check "version 6.0.0: no gfx80 group" test -z "${P[rocm6:rocblas-tensile-gfx80]:-}"
check "version 6.0.0: rocblas-6.0.0" test "${P[rocm6:rocblas]#*-}" = rocblas-6.0.0
check "version 6.0.0: code object v5 (ABI 3)" grep -q 'ABI Version: 3' \
  <<<"$(amd "$(ls "${P[rocm6:rocblas-tensile-gfx11]}"/lib/rocblas/library/*.co | head -n1)")"
check "version 6.0.0: rocm-runtime unchanged" test "${P[rocm6:rocm-runtime]}" = "$rt"
size() { nix path-info -S "$1" | awk '{print $2}'; }
check "heavy: closure grows by >= 2 MiB" test $(( $(size "${P[rocmh:llama-cpp-rocm]}") - $(size "$ll") )) -ge 2097152
expect_refs rocmh llama-cpp-rocm glibc clr rocblas hipblas big-blob

cache=$(mktemp -d)
check "nix copy to a file:// cache with NAR listings" \
  nix copy --to "file://$cache?compression=xz&write-nar-listing=true" "$ll"
check "cache: one .narinfo and one .ls per closure path" \
  test "$(ls "$cache"/*.narinfo | wc -l)" = "$(nix-store -qR "$ll" | wc -l)" -a \
       "$(ls "$cache"/*.ls | wc -l)" = "$(nix-store -qR "$ll" | wc -l)"
rm -rf "$cache"

if [ "${1:-}" = --check ]; then
  for spec in "rocm" "rocm --argstr version 6.0.0 --arg heavy true" "cuda"; do
    # shellcheck disable=SC2086
    set -- $spec; w=$1; shift
    args=(); while IFS=$'\t' read -r a _; do args+=(-A "$a"); done < <("$here/build.sh" "$w" --all "$@" 2>/dev/null)
    check "reproducible: nix-build --check $spec" nix-build "$here/$w.nix" "$@" "${args[@]}" --no-out-link --check
  done
fi

echo
[ $fails = 0 ] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }

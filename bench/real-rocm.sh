#!/usr/bin/env bash
# nixcut on the real ROCm stack: Debian 13's rocBLAS, rocSOLVER, hipBLAS, rocRAND and
# RCCL as a 4 GB Nix closure (tests/worlds/trixie.nix), against reading the bytes each
# command needs with the plainest tools, in the same run on the same data, page cache
# warm (cold page cache aside: every figure reads the same files first).
#
#   bench/real-rocm.sh [RUNS]       # default 5 runs each; prints a Markdown table
#
# - `why ROOT`, cold scan cache: finds every reference by reading every byte of every
#   file, as Nix itself does. Baseline: `cat` of every file of the closure.
# - `why ROOT`, warm scan cache (what a second run costs).
# - `gpu ROOT`: reads ELF headers, section tables and offload-bundle headers only.
#   Baseline: the same headers read by tests/gpu_reader.py (Python, no nixcut code),
#   and `cat` of every ELF file's first 64 KiB.
# Needs Nix (nix-bin), hipcc, patchelf; downloads the packages once (fetch-trixie.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-5}
export NIX_CONFIG=${NIX_CONFIG:-$'sandbox = false\nbuild-users-group =\nexperimental-features = nix-command\nsubstituters ='}
debs=$("$here/tests/worlds/fetch-trixie.sh")
root=$("$here/tests/worlds/build.sh" trixie --argstr debs "$debs" 2>/dev/null)
(cd "$here" && cargo build --release --quiet)
nixcut=${CARGO_TARGET_DIR:-$here/target}/release/nixcut
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mapfile -t paths < <(nix-store -qR "$root")
find "${paths[@]}" -type f > "$work/files"
bytes=$(xargs -a "$work/files" -d '\n' stat -c %s | awk '{s+=$1} END {printf "%.0f", s}')
: > "$work/elfs"
while IFS= read -r f; do
  [ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] && echo "$f" >> "$work/elfs"
done < "$work/files"
# Warm the page cache once.
xargs -a "$work/files" -d '\n' cat > /dev/null

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timeit() { # timeit NAME COMMAND... -> median seconds of $runs runs
  local name=$1; shift
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
  done | median | xargs printf '%.3f\n'

}
cold_why() { rm -rf "$work/cache"; XDG_CACHE_HOME=$work/cache "$nixcut" why "$root"; }
warm_why() { XDG_CACHE_HOME=$work/warm "$nixcut" why "$root"; }
gpu() { XDG_CACHE_HOME=$work/warm "$nixcut" gpu "$root"; }
cold_gpu() { rm -rf "$work/gcache"; XDG_CACHE_HOME=$work/gcache "$nixcut" gpu "$root"; }
cat_all() { xargs -a "$work/files" -d '\n' cat; }
cat_heads() { while IFS= read -r f; do head -c 65536 "$f"; done < "$work/elfs"; }
reader() { for p in "${paths[@]}"; do python3 "$here/tests/gpu_reader.py" "$p"; done; }
warm_why > /dev/null 2>&1
t_cold=$(timeit cold cold_why)
t_cat=$(timeit cat cat_all)
t_warm=$(timeit warm warm_why)
t_gpu=$(timeit gpu gpu)
t_cold_gpu=$(timeit cold_gpu cold_gpu)
t_heads=$(timeit heads cat_heads)
t_reader=$(timeit reader reader)
ratio() { echo "scale=3; $1 / $2" | bc | xargs printf '%.2f'; }
echo "closure: ${#paths[@]} paths, $(wc -l < "$work/files") files, $bytes bytes, $(wc -l < "$work/elfs") ELF files; $runs runs, medians"
echo
echo "| command | nixcut (s) | baseline | baseline (s) | ratio |"
echo "|---|--:|---|--:|--:|"
echo "| why, cold scan cache | $t_cold | cat every file | $t_cat | $(ratio "$t_cold" "$t_cat") |"
echo "| why, warm scan cache | $t_warm | cat every file | $t_cat | $(ratio "$t_warm" "$t_cat") |"
echo "| gpu | $t_gpu | head -c 64KiB of every ELF file | $t_heads | $(ratio "$t_gpu" "$t_heads") |"
echo "| gpu, cold scan cache | $t_cold_gpu | head -c 64KiB of every ELF file | $t_heads | $(ratio "$t_cold_gpu" "$t_heads") |"
echo "| gpu | $t_gpu | tests/gpu_reader.py on every path | $t_reader | $(ratio "$t_gpu" "$t_reader") |"

#!/usr/bin/env bash
# Benchmark: `nixcut refs --closure ROOT` against `nix why-depends --all --precise ROOT
# LEAF` and `cat` over the same files, in one run. Prints Markdown rows for
# BENCHMARKS.md.
#
#   benches/refs/run.sh [TOTAL_MIB]      # default 2200 (a closure of about 2.2 GiB)
#   BASELINE=/path/to/old/nixcut benches/refs/run.sh   # also time an older build, interleaved
#
# Builds the data with the local Nix (benches/refs/data.nix: references planted at random
# offsets, half random bytes, half text), builds nixcut in release mode, then times each
# tool three times and reports the median. The OS page cache is warmed once for all
# tools alike (every tool then reads from memory); "cold" and "warm" refer to nixcut's
# own scan cache ($XDG_CACHE_HOME/nixcut), which the cold runs start without.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
total=${1:-2200}
export NIX_CONFIG=${NIX_CONFIG:-$'sandbox = false\nbuild-users-group =\nexperimental-features = nix-command\nsubstituters ='}

command -v nix-build >/dev/null || { echo "run.sh: needs Nix (apt-get install -y nix-bin)" >&2; exit 2; }
(cd "$repo" && cargo build --release --quiet)
nixcut=$repo/target/release/nixcut

echo "building ${total} MiB of benchmark data with Nix…" >&2
root=$(nix-build "$here/data.nix" --arg totalMiB "$total" -A root --no-out-link)
leaf=$(nix-build "$here/data.nix" --arg totalMiB "$total" -A leaf --no-out-link)
mapfile -t paths < <(nix-store -qR "$root")
bytes=$(nix path-info -S --json "$root" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[0]["closureSize"] if isinstance(d,list) else list(d.values())[0]["closureSize"])')
files=$(find "${paths[@]}" -type f | wc -l)

# Median of three runs of a command, in seconds.
median() {
  local t=()
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s.%N)
    t+=("$(echo "$e - $s" | bc -l)")
  done
  printf '%s\n' "${t[@]}" | sort -n | sed -n 2p
}

cat_all() { find "${paths[@]}" -type f -print0 | xargs -0 cat >/dev/null; }
cold() { local d; d=$(mktemp -d); XDG_CACHE_HOME=$d "$nixcut" refs --closure "$root" --format json; rm -rf "$d"; }
warm_dir=$(mktemp -d)
warm() { XDG_CACHE_HOME=$warm_dir "$nixcut" refs --closure "$root" --format json; }
why_depends() { nix why-depends --all --precise "$root" "$leaf"; }

cat_all # warm the page cache once, for every tool alike
XDG_CACHE_HOME=$warm_dir "$nixcut" refs --closure "$root" --format json >/dev/null # fill the scan cache

t_cat=$(median cat_all)
t_cold=$(median cold)
t_warm=$(median warm)
t_nix=$(median why_depends)
hits=$(XDG_CACHE_HOME=$warm_dir "$nixcut" refs --closure "$root" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(r["evidence_count"] for p in d["paths"] for r in p["references"]))')

# Before/after: the older binary and this one, cold, interleaved run by run so that load
# and frequency drift hit both alike; median of five each, wall and CPU (user+sys).
if [ -n "${BASELINE:-}" ]; then
  ab() { # binary -> "wall cpu"
    local d out; d=$(mktemp -d)
    out=$( { /usr/bin/time -f '%e %U %S' env XDG_CACHE_HOME="$d" "$1" refs --closure "$root" --format json >/dev/null; } 2>&1 | tail -1)
    rm -rf "$d"; awk '{ printf "%s %.3f\n", $1, $2 + $3 }' <<<"$out"
  }
  bw=(); bc_=(); nw=(); nc=()
  for _ in 1 2 3 4 5; do
    read -r w c < <(ab "$BASELINE"); bw+=("$w"); bc_+=("$c")
    read -r w c < <(ab "$nixcut"); nw+=("$w"); nc+=("$c")
  done
  med() { printf '%s\n' "$@" | sort -n | sed -n 3p; }
  echo
  printf '| build | refs --closure cold, wall (median of 5) | CPU user+sys |\n|---|--:|--:|\n'
  printf '| baseline (%s) | %.2f s | %.2f s |\n' "$BASELINE" "$(med "${bw[@]}")" "$(med "${bc_[@]}")"
  printf '| this build | %.2f s | %.2f s |\n' "$(med "${nw[@]}")" "$(med "${nc[@]}")"
  printf 'this / baseline: wall %.2f, CPU %.2f\n' "$(echo "$(med "${nw[@]}") / $(med "${bw[@]}")" | bc -l)" "$(echo "$(med "${nc[@]}") / $(med "${bc_[@]}")" | bc -l)"
  echo
fi

gib=$(echo "$bytes / 1073741824" | bc -l)
printf '| data | tool | median of 3 | vs. nixcut cold |\n|---|---|--:|--:|\n'
row() { printf '| %.2f GiB, %d paths, %d files | %s | %.2f s | %.2f× |\n' "$gib" "${#paths[@]}" "$files" "$1" "$2" "$(echo "$2 / $t_cold" | bc -l)"; }
row "cat over every file" "$t_cat"
row "nixcut refs --closure (cold scan cache, $hits hits reported)" "$t_cold"
row "nixcut refs --closure (warm scan cache)" "$t_warm"
row "nix why-depends --all --precise ROOT LEAF" "$t_nix"
echo
printf 'nixcut cold / why-depends = %.2f (goal ≤ 0.5); nixcut cold / cat = %.2f (goal ≤ 1.5); cold / warm = %.1f (goal ≥ 10)\n' \
  "$(echo "$t_cold / $t_nix" | bc -l)" "$(echo "$t_cold / $t_cat" | bc -l)" "$(echo "$t_cold / $t_warm" | bc -l)"
rm -rf "$warm_dir"

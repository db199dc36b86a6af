#!/usr/bin/env bash
# Benchmark: `nixcut split PKG --for ROOT` against `nixcut refs --closure ROOT` on the
# 2.2 GiB closure of benches/refs (same data, same binary, cold scan cache each run,
# page cache warmed once for both). Goal: split within 1.2× of refs. Prints Markdown
# rows for BENCHMARKS.md.
#
#   benches/split/run.sh [TOTAL_MIB] [PKG]   # defaults 2200, bench-pkg-2
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
total=${1:-2200}
pkg=${2:-bench-pkg-2}
export NIX_CONFIG=${NIX_CONFIG:-$'sandbox = false\nbuild-users-group =\nexperimental-features = nix-command\nsubstituters ='}

command -v nix-build >/dev/null || { echo "run.sh: needs Nix (apt-get install -y nix-bin)" >&2; exit 2; }
(cd "$repo" && cargo build --release --quiet)
nixcut=$repo/target/release/nixcut

echo "building ${total} MiB of benchmark data with Nix…" >&2
root=$(nix-build "$repo/benches/refs/data.nix" --arg totalMiB "$total" -A root --no-out-link)
mapfile -t paths < <(nix-store -qR "$root")

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
cold() { local d; d=$(mktemp -d); XDG_CACHE_HOME=$d "$nixcut" "$@" --format json; rm -rf "$d"; }

find "${paths[@]}" -type f -print0 | xargs -0 cat >/dev/null # warm the page cache once
t_refs=$(median cold refs --closure "$root")
t_split=$(median cold split "$pkg" --for "$root")
t_split_all=$(median cold split "$(basename "$root")" --for "$root")

printf '| tool (cold scan cache) | median of 3 | vs. refs --closure |\n|---|--:|--:|\n'
row() { printf '| %s | %.2f s | %.2f× |\n' "$1" "$2" "$(echo "$2 / $t_refs" | bc -l)"; }
row "nixcut refs --closure ROOT" "$t_refs"
row "nixcut split $pkg --for ROOT" "$t_split"
row "nixcut split ROOT --for ROOT" "$t_split_all"
printf '\nsplit / refs = %.2f (goal ≤ 1.2)\n' "$(echo "$t_split / $t_refs" | bc -l)"

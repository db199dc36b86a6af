#!/usr/bin/env bash
# Benchmark: the closure walk of `nixcut why --cache URL ROOT` against
# `nix path-info -r --store URL ROOT`, over a generated binary cache of N narinfos
# (default 20,000; benches/http/gen.py) served by nginx on 127.0.0.1, in one run.
# Prints a Markdown table for BENCHMARKS.md.
#
#   benches/http/run.sh [N]
#
# Needs nginx (Debian: apt-get install -y nginx-light) and Nix (nix-bin). nginx is
# started by this script on a free loopback port with its own configuration and stopped
# (by its process id) on exit. Each tool runs three times; the median is reported.
# "cold" runs start with empty caches: nixcut's ($XDG_CACHE_HOME/nixcut) and Nix's own
# narinfo cache ($XDG_CACHE_HOME/nix), so both fetch every narinfo; the "warm" nixcut
# runs keep the narinfo cache of a first run (with its record of the walked closure)
# and its scan cache for the evidence of the top paths, whose NARs the cold runs fetch
# and scan.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
n=${1:-20000}
export NIX_CONFIG=${NIX_CONFIG:-$'experimental-features = nix-command\nsubstituters ='}

nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx_bin" ] || { echo "run.sh: needs nginx (apt-get install -y nginx-light)" >&2; exit 2; }
command -v nix >/dev/null || { echo "run.sh: needs Nix (apt-get install -y nix-bin)" >&2; exit 2; }
(cd "$repo" && cargo build --release --quiet)
nixcut=$repo/target/release/nixcut

work=$(mktemp -d)
nginx_pid=
cleanup() {
  if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "generating a cache of $n narinfos…" >&2
root=$(python3 "$here/gen.py" "$work/cache" "$n")
chmod -R a+rX "$work"
# shellcheck source=../nginx.sh
. "$here/../nginx.sh"
start_nginx "$work"

# Median of three runs of a command after a setup step (not timed): "wall cpu" in
# seconds, cpu being user + system time (children included) of the median run.
median() {
  local setup=$1 t=() r
  shift
  TIMEFORMAT='%R %U %S'
  for _ in 1 2 3; do
    "$setup"
    r=$( { time "$@" >/dev/null 2>&1; } 2>&1 )
    t+=("$(echo "$r" | awk '{ printf "%s %.2f", $1, $2 + $3 }')")
  done
  printf '%s\n' "${t[@]}" | sort -n | sed -n 2p
}

# Cold runs get an empty cache directory; warm runs the one a first run filled.
fresh() { rm -rf "$work/xdg"; mkdir -p "$work/xdg"; }
keep() { :; }
nixcut_cold() { XDG_CACHE_HOME=$work/xdg "$nixcut" why --cache "$url" "$root"; }
warm_dir=$work/warm
nixcut_warm() { XDG_CACHE_HOME=$warm_dir "$nixcut" why --cache "$url" "$root"; }
nix_cold() { XDG_CACHE_HOME=$work/xdg nix path-info -r --store "$url" "$root"; }

# Both tools see the same closure; the first nixcut run fills the warm cache.
fresh
count_nix=$(XDG_CACHE_HOME=$work/xdg nix path-info -r --store "$url" "$root" | wc -l)
nixcut_warm >/dev/null
count_nixcut=$(XDG_CACHE_HOME=$warm_dir "$nixcut" why --cache "$url" "$root" --no-evidence --top 1 --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["path_count"])')
[ "$count_nix" = "$count_nixcut" ] || { echo "run.sh: nix sees $count_nix paths, nixcut $count_nixcut" >&2; exit 1; }

read -r t_nix c_nix < <(median fresh nix_cold)
read -r t_cold c_cold < <(median fresh nixcut_cold)
read -r t_warm c_warm < <(median keep nixcut_warm)
load=$(cut -d' ' -f1 /proc/loadavg)

printf '| closure | tool | wall, median of 3 | CPU (user+sys) | vs. nixcut cold |\n|---|---|--:|--:|--:|\n'
row() { printf '| %d narinfos over HTTP (nginx, loopback) | %s | %.2f s | %.2f s | %.2f× |\n' "$count_nix" "$1" "$2" "$3" "$(echo "$2 / $t_cold" | bc -l)"; }
row '`nix path-info -r --store URL ROOT` (empty narinfo cache)' "$t_nix" "$c_nix"
row '`nixcut why --cache URL ROOT`, cold' "$t_cold" "$c_cold"
row '`nixcut why --cache URL ROOT`, narinfo cache warm' "$t_warm" "$c_warm"
printf '\nnix / nixcut cold: %.1f× (at least 4 wanted); cold / warm: %.1f× (at least 10 wanted); load average %s on %s cores\n' \
  "$(echo "$t_nix / $t_cold" | bc -l)" "$(echo "$t_cold / $t_warm" | bc -l)" "$load" "$(nproc)"

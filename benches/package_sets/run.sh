#!/usr/bin/env bash
# Benchmark: `nixcut diff OLD NEW --cache URL` of two package sets (60,000 roots each,
# about 280,000 narinfos for the pair by default; tests/set_world generates them with
# planted changes and a mass rebuild) served by nginx on 127.0.0.1, against a plain
# concurrent client (benches/package_sets/fetch.py: 16 threads, one kept-alive
# connection each) that only fetches the same narinfos, in one run.
#
#   benches/package_sets/run.sh [ROOTS LIBS LAYERS]
#
# Needs nginx (Debian: apt-get install -y nginx-light), started here on a free loopback
# port with its own configuration and stopped by its process id on exit. Each command
# runs once (the machine is shared): the plain client, nixcut cold (empty
# $XDG_CACHE_HOME), nixcut warm (the narinfo cache the cold run filled). Peak memory is
# the maximum resident set size from /usr/bin/time. Prints Markdown for BENCHMARKS.md.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
roots=${1:-60000}
libs=${2:-80000}
layers=${3:-40}

nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx_bin" ] || { echo "run.sh: needs nginx (apt-get install -y nginx-light)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "run.sh: needs /usr/bin/time (apt-get install -y time)" >&2; exit 2; }
(cd "$repo" && cargo build --release --quiet && cargo bench --bench package_sets --no-run --quiet 2>/dev/null)
nixcut=$repo/target/release/nixcut
gen=$(ls -t "$repo"/target/release/deps/package_sets-* | grep -v '\.d$' | head -1)

work=${NIXCUT_BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
nginx_pid=
cleanup() {
  if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
  [ -n "${NIXCUT_BENCH_DIR:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

if [ ! -f "$work/narinfos.txt" ]; then
  echo "generating $roots roots, $libs libraries in $layers layers…" >&2
  "$gen" "$work" "$roots" "$libs" "$layers"
fi
chmod -R a+rX "$work"
# shellcheck source=../nginx.sh
. "$here/../nginx.sh"
start_nginx "$work"

# "wall peak-KiB" of one run.
timed() {
  local out=$work/time.txt
  /usr/bin/time -f '%e %M' -o "$out" "$@" >/dev/null
  cat "$out"
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
n=$(wc -l <"$work/narinfos.txt")
read -r t_plain m_plain < <(timed python3 "$here/fetch.py" 127.0.0.1 "$port" "$work/narinfos.txt" 16)
rm -rf "$work/xdg"; mkdir -p "$work/xdg"
diff_cmd=("$nixcut" diff "$work/old.paths" "$work/new.paths" --cache "$url" --format json)
read -r t_cold m_cold < <(XDG_CACHE_HOME=$work/xdg timed "${diff_cmd[@]}")
read -r t_warm m_warm < <(XDG_CACHE_HOME=$work/xdg timed "${diff_cmd[@]}")
XDG_CACHE_HOME=$work/xdg "${diff_cmd[@]}" >"$work/report.json"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
summary=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
c = r["causes"][0]
n = r["counts"]["both"]
print("%d roots in both; first cause: %s %s in %d roots, %d bytes; %d + %d paths" % (
    n, c["name"], c["change"], c["roots"], c["bytes"], r["old"]["path_count"], r["new"]["path_count"]))
' "$work/report.json")

printf '| %s narinfos, %s roots per set, nginx on loopback | wall | peak memory | vs. plain client |\n|---|--:|--:|--:|\n' "$n" "$roots"
row() { printf '| %s | %.2f s | %d MiB | %.2f× |\n' "$1" "$2" "$(( $3 / 1024 ))" "$(echo "$2 / $t_plain" | bc -l)"; }
row 'plain client: fetch.py, 16 threads, keep-alive, fetch only' "$t_plain" "$m_plain"
row '`nixcut diff OLD NEW --cache URL`, cold (empty narinfo cache)' "$t_cold" "$m_cold"
row '`nixcut diff OLD NEW --cache URL`, warm' "$t_warm" "$m_warm"
printf '\n%s\n\nload average before: %s, after: %s, on %s cores\n' "$summary" "$load_before" "$load_after" "$(nproc)"

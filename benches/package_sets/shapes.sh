#!/usr/bin/env bash
# Benchmark: `nixcut diff OLD NEW --graph old.json --graph new.json` of package-set pairs
# of several shapes (tests/set_world/shapes.rs: star, chain, wide, layered; N roots per
# side), against Python's `json.load` of the same two graph files (the plain reader
# the yardstick compares with), in one run. Peak memory and wall time from
# /usr/bin/time -v. Prints Markdown for BENCHMARKS.md.
#
#   benches/package_sets/shapes.sh [SHAPE:ROOTS ...]   (default: star:100000
#                                                       star:300000 chain:100000
#                                                       wide:100000 layered:30000)
#
# Each command runs once (the machine is shared); generated pairs are kept in
# $NIXCUT_BENCH_DIR (default: a temporary directory, removed on exit).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
[ -x /usr/bin/time ] || { echo "shapes.sh: needs /usr/bin/time (apt-get install -y time)" >&2; exit 2; }
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(star:100000 star:300000 chain:100000 wide:100000 layered:30000)
target=${CARGO_TARGET_DIR:-$repo/target}
(cd "$repo" && cargo build --release --quiet && cargo bench --bench package_sets --no-run --quiet 2>/dev/null)
nixcut=$target/release/nixcut
gen=$(ls -t "$target"/release/deps/package_sets-* | grep -v '\.d$' | head -1)
work=${NIXCUT_BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
cleanup() { [ -n "${NIXCUT_BENCH_DIR:-}" ] || rm -rf "$work"; }
trap cleanup EXIT

# "wall peak-KiB" of one run, from GNU time's verbose report.
timed() {
  local out=$work/time.txt
  /usr/bin/time -v -o "$out" "$@" >/dev/null
  local wall rss
  wall=$(awk -F': ' '/Elapsed/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$out")
  rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$out")
  echo "$wall $rss"
}

printf '| shape, roots per side | paths (old + new) | `json.load` of both graphs | `nixcut diff --graph` | ratio | nixcut peak memory |\n|---|--:|--:|--:|--:|--:|\n'
for c in "${cases[@]}"; do
  shape=${c%%:*}
  roots=${c#*:}
  d=$work/$shape-$roots
  [ -f "$d/new.paths" ] || "$gen" "$d" --shape "$shape" "$roots" 2>/dev/null
  paths=$(( $(grep -o '"path"' "$d/old.json" | wc -l) + $(grep -o '"path"' "$d/new.json" | wc -l) ))
  read -r t_py _ < <(timed python3 -c 'import json, sys; [json.load(open(f)) for f in sys.argv[1:]]' "$d/old.json" "$d/new.json")
  read -r t_nx m_nx < <(timed "$nixcut" diff "$d/old.paths" "$d/new.paths" --graph "$d/old.json" --graph "$d/new.json" --format json)
  printf '| %s, %s | %s | %.2f s | %.2f s | %.2f× | %d MiB |\n' "$shape" "$roots" "$paths" "$t_py" "$t_nx" \
    "$(echo "$t_nx / $t_py" | bc -l)" "$(( m_nx / 1024 ))"
done
printf '\nload average at the end: %s, on %s cores\n' "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"

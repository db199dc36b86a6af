#!/usr/bin/env bash
# Issue 35: how long `nixcut browse` takes to open — its first frame, with every size
# drawn — on generated 100,000-path closures, against `nixcut why` on the same file in
# the same run, and the yardstick's peer (Python's `json.load` of the file: the least
# any tool reading it must do). Prints one Markdown table for BENCHMARKS.md.
#
#   bench/browse.sh [N_RUNS] [PATHS]          (defaults: 5 runs, 100000 paths)
#
# NIXCUT=BINARY times that binary instead of building target/release/nixcut;
# BROWSE_DIR=DIR keeps (and reuses) the generated inputs; SHAPES="..." picks the graph
# shapes of benches/yardstick/gen.py (default: all three: `shallow`, the wide one — a
# root referring to thousands of paths, most closures small; `layered`, 40 layers;
# `chain`, the deep one — one chain through every path).
#
# The first frame is `nixcut browse FILE --dump-screen 160x48`: the whole process —
# load, graph, dominators and added sizes, the selected path's closure size, the
# frame drawn on ratatui's test backend and printed — so it is an upper bound of the
# terminal's first frame (the terminal UI draws the same frame before reading a key).
# `why` is the default table (top 25) and `why --format json` (every path), both as a
# user runs them. Each row's commands run alternately N times; medians of wall time,
# CPU (user + system) of the median run, largest peak RSS.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
runs=${1:-5}
n=${2:-100000}
[ -x /usr/bin/time ] || { echo "browse.sh: needs /usr/bin/time (apt-get install -y time)" >&2; exit 2; }
if [ -z "${NIXCUT:-}" ]; then
  (cd "$repo" && cargo build --release --quiet --bin nixcut)
  NIXCUT=$repo/target/release/nixcut
fi
dir=${BROWSE_DIR:-}
if [ -z "$dir" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
shapes=${SHAPES:-shallow layered chain}
for shape in $shapes; do
  if [ ! -f "$dir/$shape/object.json" ]; then
    echo "generating $n-path closures ($shape) in $dir/$shape…" >&2
    python3 "$repo/benches/yardstick/gen.py" "$dir/$shape" "$n" "$shape"
  fi
done

one() {
  local out
  out=$( { /usr/bin/time -f '%e %U %S %M' "$@" >/dev/null; } 2>&1 | tail -1 )
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' <<<"$out"
}
med() { sort -n | awk '{ w[NR] = $1; c[NR] = $2; if ($3 > p) p = $3 } END { m = int((NR + 1) / 2); print w[m], c[m], p }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }
py=(python3 -c 'import json,sys
json.load(open(sys.argv[1]))')

echo
echo "| shape ($n paths, object.json) | browse: first frame 160x48 | CPU | peak RSS | why (table, top 25) | CPU | why --format json | json.load | browse / why (table) | browse / json.load |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
for shape in $shapes; do
  f=$dir/$shape/object.json
  # The frame must have its sizes: the selected path's closure and added size.
  frame=$("$NIXCUT" browse "$f" --dump-screen 160x48)
  grep -q 'closure   [0-9]' <<<"$frame" && grep -q 'added     [0-9]' <<<"$frame" \
    || { echo "browse.sh: the first frame of $shape has no sizes:" >&2; echo "$frame" >&2; exit 1; }
  a=() b=() c=() d=()
  for _ in $(seq "$runs"); do
    a+=("$(one "$NIXCUT" browse "$f" --dump-screen 160x48)")
    b+=("$(one "$NIXCUT" why "$f")")
    c+=("$(one "$NIXCUT" why "$f" --format json)")
    d+=("$(one "${py[@]}" "$f")")
  done
  read -r aw ac ap < <(printf '%s\n' "${a[@]}" | med)
  read -r bw bc _ < <(printf '%s\n' "${b[@]}" | med)
  read -r cw _ _ < <(printf '%s\n' "${c[@]}" | med)
  read -r dw _ _ < <(printf '%s\n' "${d[@]}" | med)
  printf '| %s | %.2f s | %.2f s | %s | %.2f s | %.2f s | %.2f s | %.2f s | %.2f | %.2f |\n' \
    "$shape" "$aw" "$ac" "$(mib $((ap * 1024)))" "$bw" "$bc" "$cw" "$dw" \
    "$(echo "$aw / $bw" | bc -l)" "$(echo "$aw / $dw" | bc -l)"
done
echo
echo "$runs runs of each, interleaved; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(nproc) cores"

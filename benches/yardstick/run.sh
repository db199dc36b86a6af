#!/usr/bin/env bash
# Yardstick (issues 14 and 24): `nixcut why` and `nixcut diff` on generated
# 100,000-path closures against Python's `json.load` of the same file(s), in one run,
# interleaved. Prints one Markdown table per graph shape for BENCHMARKS.md.
#
#   benches/yardstick/run.sh [N_RUNS] [PATHS]       (defaults: 5 runs, 100000 paths)
#
# NIXCUT=BINARY times that binary instead of building target/release/nixcut;
# YARDSTICK_DIR=DIR keeps (and reuses) the generated inputs; ONLY=WORD keeps the rows
# whose label contains WORD (`ONLY=why` leaves out the diff row); SHAPES="..." picks
# the graph shapes (default: `shallow layered chain`; see gen.py).
#
# Inputs (benches/yardstick/gen.py), per shape: one closure in the three `nix path-info
# --json` shapes (array: Nix <= 2.18; object: 2.19+; versioned `{version, info}`:
# 2.33+) and a mass rebuild of it (every hash changed, a tenth of the NAR sizes
# changed). Graph shapes: `shallow` (issue 14's: references biased to the first 64
# paths and 200 predecessors, most closures small), `layered` (40 layers, references
# spread over every lower layer) and `chain` (one chain through all paths, references
# spread over the whole depth: every closure large). For each
# row the yardstick and nixcut run alternately N times; the table has the median wall
# time, the CPU time (user + system) of the median run, and the largest peak resident
# set of any run (`/usr/bin/time -f %M`). The ratio is nixcut / json.load, wall time;
# for diff the yardstick is json.load of both files (one process, one after the other).
#
# A shell script rather than a cargo bench: the yardstick is another program, and the
# inputs must be files both tools read; benches/why.rs keeps the in-process brute force.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
runs=${1:-5}
n=${2:-100000}
[ -x /usr/bin/time ] || { echo "run.sh: needs /usr/bin/time (apt-get install -y time)" >&2; exit 2; }
if [ -z "${NIXCUT:-}" ]; then
  (cd "$repo" && cargo build --release --quiet)
  NIXCUT=$repo/target/release/nixcut
fi
dir=${YARDSTICK_DIR:-}
if [ -z "$dir" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
shapes=${SHAPES:-shallow layered chain}
for shape in $shapes; do
  if [ ! -f "$dir/$shape/rebuild.json" ]; then
    echo "generating $n-path closures ($shape) in $dir/$shape…" >&2
    python3 "$here/gen.py" "$dir/$shape" "$n" "$shape"
  fi
done

# one LABEL CMD... -> "wall cpu peak_kib" of one run, output discarded
one() {
  local out
  out=$( { /usr/bin/time -f '%e %U %S %M' "$@" >/dev/null; } 2>&1 | tail -1 )
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' <<<"$out"
}
# median of "wall cpu peak" lines: wall and cpu of the median run, largest peak
med() { sort -n | awk '{ w[NR] = $1; c[NR] = $2; if ($3 > p) p = $3 } END { m = int((NR + 1) / 2); print w[m], c[m], p }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }

py=(python3 -c 'import json,sys
for f in sys.argv[1:]:
    json.load(open(f))')
for shape in $shapes; do
d=$dir/$shape
rows=(
  "why --format json, array shape (Nix ≤ 2.18)|array.json|why $d/array.json --no-evidence --format json"
  "why --format json, object shape (Nix 2.19+)|object.json|why $d/object.json --no-evidence --format json"
  "why --format json, {version, info} shape (Nix 2.33+)|versioned.json|why $d/versioned.json --no-evidence --format json"
  "why (table, top 25), object shape|object.json|why $d/object.json --no-evidence"
  "diff --format json, mass rebuild (object shape)|object.json rebuild.json|diff $d/object.json $d/rebuild.json --format json"
)
echo
echo "Graph shape: $shape"
echo
echo "| command ($n paths, $shape) | input | nixcut: wall | CPU | json.load: wall | CPU | nixcut / json.load | nixcut peak RSS | json.load peak RSS | peak RSS / input |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
for r in "${rows[@]}"; do
  label=${r%%|*} rest=${r#*|}
  [[ $label == *"${ONLY:-}"* ]] || continue
  files=${rest%%|*} args=${rest#*|}
  inputs=() bytes=0
  for f in $files; do inputs+=("$d/$f"); bytes=$((bytes + $(stat -c %s "$d/$f"))); done
  a=() b=()
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086  # args are whitespace-free paths and flags
    a+=("$(one "$NIXCUT" $args)")
    b+=("$(one "${py[@]}" "${inputs[@]}")")
  done
  read -r nw nc np < <(printf '%s\n' "${a[@]}" | med)
  read -r pw pc pp < <(printf '%s\n' "${b[@]}" | med)
  printf '| %s | %s | %.2f s | %.2f s | %.2f s | %.2f s | %.2f | %s | %s | %.2f |\n' \
    "$label" "$(mib "$bytes")" "$nw" "$nc" "$pw" "$pc" "$(echo "$nw / $pw" | bc -l)" \
    "$(mib $((np * 1024)))" "$(mib $((pp * 1024)))" "$(echo "$np * 1024 / $bytes" | bc -l)"
done
echo
echo "$runs runs of each, interleaved; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(nproc) cores"
done

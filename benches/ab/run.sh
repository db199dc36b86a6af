#!/usr/bin/env bash
# Before/after: two nixcut builds on the same generated closures, runs interleaved so
# that load and frequency drift hit both alike; median of N wall times (and CPU
# user+sys) per command. Prints Markdown rows for BENCHMARKS.md.
#
#   benches/ab/run.sh OLD_BINARY NEW_BINARY DIR [N]
#
# DIR holds closure-100000.json and closure-12000.json, as `NIXCUT_BENCH_DIR=DIR cargo
# bench --bench why` leaves them.
set -euo pipefail
old=$1 new=$2 dir=$3 n=${4:-5}
big=$dir/closure-100000.json small=$dir/closure-12000.json
[ -f "$big" ] && [ -f "$small" ] || { echo "ab: run NIXCUT_BENCH_DIR=$dir cargo bench --bench why first" >&2; exit 2; }

commands=(
  "why (table)|why $big --no-evidence"
  "why --format json|why $big --no-evidence --format json"
  "diff 12k → 100k --format json|diff $small $big --format json"
  "check --max-size|check $big --max-size 1TiB"
)
one() { # binary, args -> "wall cpu"
  local out
  out=$( { /usr/bin/time -f '%e %U %S' "$1" $2 >/dev/null; } 2>&1 | tail -1 )
  awk '{ printf "%s %.3f\n", $1, $2 + $3 }' <<<"$out"
}
med() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
printf '| command (100,000 paths) | before: wall | after: wall | before: CPU | after: CPU | after / before (wall) |\n|---|--:|--:|--:|--:|--:|\n'
for c in "${commands[@]}"; do
  label=${c%%|*} args=${c#*|}
  ow=() oc=() nw=() nc=()
  for _ in $(seq "$n"); do
    read -r w u < <(one "$old" "$args"); ow+=("$w"); oc+=("$u")
    read -r w u < <(one "$new" "$args"); nw+=("$w"); nc+=("$u")
  done
  mow=$(med "${ow[@]}") mnw=$(med "${nw[@]}") moc=$(med "${oc[@]}") mnc=$(med "${nc[@]}")
  printf '| %s | %.2f s | %.2f s | %.2f s | %.2f s | %.2f |\n' "$label" "$mow" "$mnw" "$moc" "$mnc" "$(echo "$mnw / $mow" | bc -l)"
done

#!/usr/bin/env bash
# Benchmark: `nixcut gpu` on a closure holding a 1 GiB fat binary against `cat` over the
# same files (issue 11: at most a tenth of cat's time, cold scan cache). Prints Markdown
# for BENCHMARKS.md.
#
#   benches/gpu/run.sh [DIR] [MIB_PER_TARGET]   # defaults /tmp/nixcut-bench-gpu, 128
#
# Generates once (benches/gpu/gen.py, no downloads; cached in DIR, ~1.1 GiB of disk) a
# store-like tree DIR/nix/store with three store paths, one holding a host ELF whose
# .hip_fatbin is one uncompressed offload bundle of 8 targets of ~MIB_PER_TARGET MiB of
# pseudo-random bytes each, and DIR/closure.json (`nix path-info --json`, NAR sizes by
# the framing rule, checked against `nix-store --dump` when Nix is installed). Builds
# nixcut in release mode, warms the page cache once with cat, then runs, interleaved, 5
# times each: `cat FILES >/dev/null` and `nixcut gpu DIR/closure.json --store-root DIR
# --format json` with a fresh empty XDG_CACHE_HOME (no scan cache), and `nixcut
# --version` (what starting the process costs alone). Reports medians, the ratio and
# peak RSS (/usr/bin/time), and fails unless nixcut's per-architecture bytes for the
# fat binary's store path are exactly what the generator wrote.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=${1:-/tmp/nixcut-bench-gpu}
mib=${2:-128}
runs=5

[ -x /usr/bin/time ] || { echo "run.sh: needs GNU time (apt-get install -y time)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "run.sh: needs python3" >&2; exit 2; }

stamp=$dir/.generated-$mib
if [ ! -e "$stamp" ]; then
  if [ -e "$dir" ]; then
    # Only a tree this script made is removed (its files are read-only, like a store's).
    if [ -e "$dir/closure.json" ] && [ -d "$dir/nix/store" ]; then
      chmod -R u+w "$dir" && rm -rf "$dir"
    elif [ -n "$(ls -A "$dir")" ]; then
      echo "run.sh: $dir exists and is not a benchmark tree; give another directory" >&2
      exit 2
    fi
  fi
  mkdir -p "$dir"
  need_kib=$(( (8 * mib + 32) * 1024 ))
  free_kib=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
  if [ "$free_kib" -lt "$need_kib" ]; then
    echo "run.sh: $dir needs $((need_kib / 1024)) MiB free, has $((free_kib / 1024)) MiB" >&2
    exit 2
  fi
  echo "generating $((8 * mib)) MiB of fat binary in $dir…" >&2
  python3 "$here/gen.py" "$dir" "$mib"
  if command -v nix-store >/dev/null; then
    for p in "$dir"/nix/store/*; do
      want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["/nix/store/" + sys.argv[2]]["narSize"])' "$dir/closure.json" "$(basename "$p")")
      got=$(nix-store --dump "$p" | wc -c)
      [ "$want" = "$got" ] || { echo "run.sh: NAR size of $p: gen.py says $want, nix-store --dump $got" >&2; exit 1; }
    done
  fi
  touch "$stamp"
fi
json=$dir/closure.json

(cd "$repo" && cargo build --release --quiet)
nixcut=$repo/target/release/nixcut

mapfile -d '' files < <(find "$dir/nix/store" -type f -print0 | sort -z)
bytes=$(du -cb --apparent-size "${files[@]}" | tail -1 | cut -f1)
on_disk=$(du -ck "${files[@]}" | tail -1 | cut -f1)
npaths=$(find "$dir/nix/store" -mindepth 1 -maxdepth 1 -type d | wc -l)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat "${files[@]}" >/dev/null # warm the page cache once, for both alike

# The numbers first: nixcut's per-architecture bytes of the fat binary's path must be
# what gen.py wrote, and the parts must add up to the closure.
cache=$(mktemp -d)
XDG_CACHE_HOME=$cache "$nixcut" gpu "$json" --store-root "$dir" --format json >"$tmp/report.json"
rm -rf "$cache"
python3 - "$dir/expected.json" "$tmp/report.json" <<'EOF'
import json, sys
want = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
path = want["fat_binary"].split("/lib/")[0]
row = next((p for p in rep["paths"] if p["path"] == path), None)
got = row["archs"] if row else {}
print("| arch | bytes written by gen.py | nixcut gpu reports |\n|---|--:|--:|")
for a in sorted(set(want["archs"]) | set(got)):
    print(f"| {a} | {want['archs'].get(a, '–')} | {got.get(a, '–')} |")
parts = sum(rep[k] for k in ("gpu_bytes", "generic_bytes", "host_bytes", "unscanned_bytes"))
ok = got == want["archs"] and parts == rep["closure_size"] == want["closure_size"]
ok = ok and rep["unscanned_bytes"] == 0 and not rep["warnings"]
if not ok:
    print(f"MISMATCH: closure {rep['closure_size']} (gen.py {want['closure_size']}), "
          f"parts {parts}, warnings {rep['warnings']}", file=sys.stderr)
    sys.exit(1)
print()
EOF

# One timed run: "<seconds> <peak RSS KiB>".
timed() {
  local s e
  s=$(date +%s%N)
  /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null
  e=$(date +%s%N)
  echo "$(( e - s )) $(tail -1 "$tmp/rss")"
}
run_nixcut() {
  local c out
  c=$(mktemp -d)
  out=$(XDG_CACHE_HOME=$c timed "$nixcut" gpu "$json" --store-root "$dir" --format json)
  rm -rf "$c"
  echo "$out"
}

load_before=$(uptime)
t_cat=(); m_cat=(); t_nix=(); m_nix=(); t_ver=(); m_ver=()
for _ in $(seq "$runs"); do
  read -r t m < <(timed cat "${files[@]}"); t_cat+=("$t"); m_cat+=("$m")
  read -r t m < <(run_nixcut); t_nix+=("$t"); m_nix+=("$m")
  read -r t m < <(timed "$nixcut" --version); t_ver+=("$t"); m_ver+=("$m")
done
load_after=$(uptime)

med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
lo() { printf '%s\n' "$@" | sort -n | head -1; }
hi() { printf '%s\n' "$@" | sort -n | tail -1; }
ms() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1e6 }'; }
c=$(med "${t_cat[@]}"); n=$(med "${t_nix[@]}")
ratio=$(awk -v a="$n" -v b="$c" 'BEGIN { printf "%.3f", a / b }')
gib=$(awk -v b="$bytes" 'BEGIN { printf "%.2f", b / 1073741824 }')
fat=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fat_binary"])' "$dir/expected.json")
fat_gib=$(awk -v b="$(stat -c %s "$dir$fat")" 'BEGIN { printf "%.2f", b / 1073741824 }')
data="$gib GiB, $npaths paths, ${#files[@]} files; one fat binary of $fat_gib GiB, 8 targets"
printf '| data | tool | median of %d | min – max | peak RSS | vs. cat |\n|---|---|--:|--:|--:|--:|\n' "$runs"
row() { # label times-array-name rss-array-name
  local -n ts=$2 rss=$3
  printf '| %s | %s | %s ms | %s – %s ms | %d MiB | %.3f× |\n' "$data" "$1" "$(ms "$(med "${ts[@]}")")" \
    "$(ms "$(lo "${ts[@]}")")" "$(ms "$(hi "${ts[@]}")")" "$(( $(med "${rss[@]}") / 1024 ))" \
    "$(awk -v a="$(med "${ts[@]}")" -v b="$c" 'BEGIN { print a / b }')"
}
row "cat over every file" t_cat m_cat
row "nixcut gpu --format json (cold scan cache)" t_nix m_nix
row "nixcut --version (process start alone, for reference)" t_ver m_ver
echo
met=$(awk -v r="$ratio" 'BEGIN { print (r <= 0.1) ? "met" : "NOT met" }')
echo "nixcut gpu / cat = $ratio (goal ≤ 0.1): $met. Files: $bytes bytes, $((on_disk / 1024)) MiB on disk."
echo "load before: $load_before"
echo "load after:  $load_after"

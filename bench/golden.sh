#!/usr/bin/env bash
# Record what a nixcut binary prints for a fixed matrix of commands, formats and
# inputs, one file per run (stdout, then stderr and the exit code), so that two builds
# can be compared byte for byte while the code is reshaped:
#
#   bench/golden.sh BIN OUTDIR            # shipped examples and fixtures (no Nix needed)
#   bench/golden.sh BIN OUTDIR --worlds   # + the rocm and cuda test worlds (needs nix-build)
#   diff -r OLD_OUTDIR NEW_OUTDIR
#
# Tables are written at a fixed width (COLUMNS=120, NO_COLOR) and each run gets its own
# empty XDG_CACHE_HOME, so the outputs depend on the binary alone. HTML pages are kept
# too: they carry the same numbers and words.
set -uo pipefail

[ $# -ge 2 ] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
bin=$(realpath "$1"); out=$2; shift 2
worlds=0
[ "${1:-}" = --worlds ] && worlds=1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

export NO_COLOR=1 COLUMNS=120
n=0
run() { # run NAME ARGS...: stdout to NAME.out, stderr and exit code to NAME.err
  local name=$1; shift
  n=$((n + 1))
  local cache="$scratch/cache-$n"
  mkdir -p "$cache"
  (cd "$here" && XDG_CACHE_HOME="$cache" "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err")
  echo "exit $?" >>"$out/$name.err"
}

ex=examples
rocm=$ex/rocm-world-cache
for f in table json markdown html dot; do
  run "why-rocm-cache.$f" why "$rocm" --format "$f"
  run "why-llama-rocm.$f" why "$ex/llama-cpp-rocm.json" --format "$f"
done
for f in table json markdown html; do
  run "why-target-rocm-cache.$f" why "$rocm" rocblas-tensile-gfx90 --format "$f"
  run "gpu-rocm-cache.$f" gpu "$rocm" --format "$f"
  run "gpu-targets-rocm-cache.$f" gpu "$rocm" --gpu-targets gfx1030 --format "$f"
  run "split-rocblas.$f" split rocblas --for "$rocm" --format "$f"
  run "split-rocblas-targets.$f" split rocblas --for "$rocm" --gpu-targets gfx1030 --format "$f"
  run "diff-rocm-cuda.$f" diff "$ex/llama-cpp-cuda.json" "$ex/llama-cpp-rocm.json" --format "$f"
done
for f in table json markdown; do
  run "why-top8.$f" why "$rocm" --top 8 --format "$f"
  run "refs-closure.$f" refs --closure "$rocm" --format "$f"
  run "explain.$f" refs --closure "$rocm" --explain /nix/store/wxyrv3j045xhs95yi7khz99xzfzixids-rocblas-5.7.1/lib/librocblas.so --format "$f"
  run "check-against.$f" check "$ex/llama-cpp-rocm.json" --against "$ex/llama-cpp-cuda.json" --max-ratio 2 --format "$f"
  run "check-size.$f" check "$rocm" --max-size 1MiB --format "$f"
  run "rules.$f" rules --format "$f"
  run "why-registration.$f" why "$ex/small-registration/registration" --format "$f"
done
run snapshot-rocm snapshot "$rocm" -o /dev/stdout
run "check-baseline" check "$rocm" --baseline "$out/snapshot-rocm.out" --max-growth 5%
for f in tests/fixtures/load/*.json tests/fixtures/load/closure-info tests/fixtures/load/export-references-graph tests/fixtures/load/binary-cache tests/fixtures/load/dump-db.txt tests/fixtures/load/attrs.json; do
  b=$(basename "$f")
  run "load-$b.table" why "$f" --top 5
  run "load-$b.json" why "$f" --format json
done

if [ $worlds = 1 ]; then
  for w in rocm cuda; do
    root=$("$here/tests/worlds/build.sh" "$w") || { echo "golden: could not build the $w world" >&2; exit 1; }
    for f in table json markdown; do
      run "world-$w-why.$f" why "$root" --format "$f"
      run "world-$w-refs.$f" refs --closure "$root" --format "$f"
      run "world-$w-gpu.$f" gpu "$root" --format "$f"
    done
    [ $w = rocm ] && run "world-$w-split.json" split rocblas --for "$root" --format json
  done
fi
echo "golden: $n runs written to $out"

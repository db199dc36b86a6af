#!/usr/bin/env bash
# Build a test world with the local Nix and print store paths.
#
#   tests/worlds/build.sh rocm                          # root llama-cpp-rocm
#   tests/worlds/build.sh rocm --arg heavy true         # + big-blob-1.0
#   tests/worlds/build.sh rocm --argstr version 6.0.0   # other names, no gfx80 group
#   tests/worlds/build.sh rocm --argstr tag t1          # distinct store paths
#   tests/worlds/build.sh cuda                          # root llama-cpp-cuda
#   tests/worlds/build.sh rocm rocblas clr              # these attributes, one path a line
#   tests/worlds/build.sh rocm --all                    # every attribute: "<attr>\t<path>"
#
# Words after the world that do not start with '-' are attribute names; everything else
# is passed to nix-build (--arg, --argstr, -j, ...). Never creates result symlinks.
# Without NIX_CONFIG set, uses the single-user root settings these machines need and
# no substituters (there is no binary cache; this avoids cache.nixos.org retries).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[ $# -ge 1 ] || usage
world=$1; shift
case $world in
  rocm) root=llama-cpp-rocm ;;
  cuda) root=llama-cpp-cuda ;;
  trixie) root=llama-server-hip ;;
  -h|--help) usage ;;
  *) echo "build.sh: unknown world '$world' (rocm, cuda or trixie)" >&2; exit 2 ;;
esac
file=$here/$world.nix

attrs=() all=0 extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --all) all=1 ;;
    -h|--help) usage ;;
    -*) extra+=("$@"); break ;;
    *) attrs+=("$1") ;;
  esac
  shift
done

if [ -z "${NIX_CONFIG:-}" ]; then
  export NIX_CONFIG=$'sandbox = false\nbuild-users-group =\nexperimental-features = nix-command\nsubstituters ='
fi
command -v nix-build >/dev/null || { echo "build.sh: nix-build not found (apt-get install -y nix-bin)" >&2; exit 2; }

if [ $all = 1 ]; then
  # Attribute names depend on the arguments (gfx80 only for 5.x, big-blob only if heavy).
  # A function with `...` receives every --arg/--argstr from the command line. Nix 2.8
  # does not call it at all when there are none, hence the dummy __buildsh argument.
  mapfile -t attrs < <(nix-instantiate --eval --strict --json --arg __buildsh null "${extra[@]}" \
    -E "args@{ ... }: builtins.attrNames (import $file (removeAttrs args [\"__buildsh\"]))" |
    tr -d '[]"' | tr ',' '\n')
  [ ${#attrs[@]} -gt 0 ] || { echo "build.sh: could not list attributes" >&2; exit 1; }
fi
[ ${#attrs[@]} -gt 0 ] || attrs=("$root")

args=()
for a in "${attrs[@]}"; do args+=(-A "$a"); done
mapfile -t paths < <(nix-build "$file" "${args[@]}" --no-out-link "${extra[@]}")
[ ${#paths[@]} -eq ${#attrs[@]} ] || { echo "build.sh: nix-build failed" >&2; exit 1; }

for i in "${!attrs[@]}"; do
  if [ $all = 1 ]; then printf '%s\t%s\n' "${attrs[$i]}" "${paths[$i]}"; else echo "${paths[$i]}"; fi
done

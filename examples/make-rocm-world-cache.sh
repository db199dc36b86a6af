#!/usr/bin/env bash
# Rewrite examples/rocm-world-cache/: a binary cache directory (nix-cache-info,
# *.narinfo, .ls listings, xz-compressed NARs) of the Nix-built ROCm test world
# (tests/worlds/rocm.nix, root llama-cpp-rocm-0.0.0, 25 paths, 2.6 MB of files).
#
#   examples/make-rocm-world-cache.sh
#
# Needs Nix (Debian's nix-bin works: tests/worlds/build.sh sets the single-user options).
# The world copies the host's loader and libc into glibc-2.36, so a rebuild on another
# machine gives other store paths for glibc and everything above it: the committed
# cache is what the README's quick start and tests/examples.rs read, and they ask for
# names and evidence, not for these hashes.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$here/rocm-world-cache
if [ -z "${NIX_CONFIG:-}" ]; then
  export NIX_CONFIG=$'sandbox = false\nbuild-users-group =\nexperimental-features = nix-command\nsubstituters ='
fi
root=$("$here/../tests/worlds/build.sh" rocm)
rm -rf "$out"
nix copy --to "file://$out?compression=xz&write-nar-listing=true" "$root"
du -sh "$out"

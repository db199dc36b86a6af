#!/usr/bin/env bash
# Regenerate the treemap screenshots shown in the README from the shipped examples:
# `nixcut why … --format html`, photographed by Debian's headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in llama-cpp-rocm llama-cpp-cuda; do
  ./target/release/nixcut why "examples/$name.json" --format html >"$tmp/$name.html"
  mkdir -p "$tmp/profile-$name"
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile-$name" --window-size=1400,820 \
    --screenshot="examples/$name.png" "file://$tmp/$name.html" 2>/dev/null
done

# The Nix-built test world has files, so its colours are verdicts.
if command -v nix-build >/dev/null 2>&1; then
  export NIX_CONFIG=$'sandbox = false\nbuild-users-group =\nexperimental-features = nix-command\nsubstituters ='
  root=$(bash tests/worlds/build.sh rocm --all | awk -F'\t' '$1 == "llama-cpp-rocm" { print $2 }')
  ./target/release/nixcut why "$root" --format html >"$tmp/world.html"
  mkdir -p "$tmp/profile-world"
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile-world" --window-size=1400,820 \
    --screenshot=examples/world-rocm-verdicts.png "file://$tmp/world.html" 2>/dev/null
  # What each GPU architecture costs, with only gfx1030 kept.
  ./target/release/nixcut gpu "$root" --gpu-targets gfx1030 --format html >"$tmp/gpu.html"
  mkdir -p "$tmp/profile-gpu"
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile-gpu" --window-size=1100,700 \
    --screenshot=examples/world-rocm-gpu.png "file://$tmp/gpu.html" 2>/dev/null
fi
ls -l examples/*.png

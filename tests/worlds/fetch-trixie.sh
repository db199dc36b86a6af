#!/usr/bin/env bash
# Download Debian 13 ("trixie")'s ROCm packages for tests/worlds/trixie.nix with
# `apt-get download`, through a sources list and package lists of their own under
# target/debian-trixie/ (the machine's own apt state is not touched), cached there
# between runs. Prints the directory holding the .deb files.
#
#   tests/worlds/fetch-trixie.sh [DIR]     # default: <repository>/target/debian-trixie
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${1:-$here/../../target/debian-trixie}
mkdir -p "$root/debs" "$root/lists/partial" "$root/cache/archives/partial"
root=$(cd "$root" && pwd)
packages=(librocblas0 librocblas-dev librocsolver0 libhipblas0 libhipblas-dev librocrand1
  librocrand-dev libhiprand1 librccl1 librccl-dev libamdhip64-5 libamdhip64-dev
  rocm-device-libs-17)
missing=()
for p in "${packages[@]}"; do
  compgen -G "$root/debs/${p}_*.deb" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  # The same Debian archive the machine's own apt uses (its main suite's URI), suite trixie.
  uri=$(apt-get indextargets --format '$(REPO_URI) $(CODENAME) $(TARGET_OF)' 2>/dev/null |
    awk '$3 == "deb" && $2 !~ /-/ { print $1; exit }')
  [ -n "$uri" ] || { echo "fetch-trixie: no Debian archive in apt's sources (apt-get update first)" >&2; exit 1; }
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  echo "deb [signed-by=$keyring] $uri trixie main" > "$root/sources.list"
  opts=(-o "Dir::Etc::SourceList=$root/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$root/lists" -o "Dir::Cache=$root/cache"
    -o Dir::State::status=/dev/null -q)
  echo "fetch-trixie: downloading ${missing[*]}" >&2
  apt-get "${opts[@]}" update >&2
  (cd "$root/debs" && apt-get "${opts[@]}" download "${missing[@]}" >&2)
fi
echo "$root/debs"

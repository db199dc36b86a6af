# Generic builder for the test worlds: run by /bin/sh (dash on Debian) with PATH=/usr/bin:/bin.
# Every derivation passes its script in $buildCommand (see lib.nix).
set -eu
cd "$NIX_BUILD_TOP"
# -ffile-prefix-map keeps the random build directory out of the outputs (determinism).
CFLAGS="-O2 -fPIC -ffile-prefix-map=$NIX_BUILD_TOP=/build"
LDNEW="-Wl,--enable-new-dtags"   # RUNPATH, not RPATH

# The 32-character hash part of a store path.
hashof() { basename "$1" | cut -c1-32; }

eval "$buildCommand"

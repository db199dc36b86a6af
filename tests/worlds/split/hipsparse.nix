# A real Debian ROCm library packaged as nixpkgs did before splitting outputs: the
# runtime package and its `-dev` package in one output (`debs`: a directory holding
# libhipsparse0_*.deb and libhipsparse-dev_*.deb, downloaded by the test helper with
# `apt-get download`). /usr becomes $out, so the CMake files name the package itself as
# a multi-output build would, and the library's RUNPATH points at the world's glibc.
#
#   nix-build tests/worlds/split/hipsparse.nix --arg debs /path/to/debs -A hipsparse
#   nix-build … --argstr plan report.json -A split.dev
{ debs, plan ? null }:
let
  lib = import ../lib.nix { };
  hipsparse = lib.mkDerivation {
    name = "hipsparse-5.3.3";
    inherit debs;
    buildCommand = ''
      for d in $debs/libhipsparse0_*.deb $debs/libhipsparse-dev_*.deb; do
        dpkg-deb -x "$d" unpacked
      done
      mkdir -p $out
      cp -a unpacked/usr/include $out/include
      cp -a unpacked/usr/lib/x86_64-linux-gnu $out/lib
      cp -a unpacked/usr/share $out/share
      chmod -R u+w $out
      sed -i "s|/usr/lib/x86_64-linux-gnu|$out/lib|g; s|/usr/include|$out/include|g; s|/usr|$out|g" \
        $out/lib/cmake/hipsparse/*.cmake
      patchelf --set-rpath ${lib.glibc}/lib $out/lib/libhipsparse.so.0.1
    '';
  };
in
{
  inherit hipsparse;
  split = if plan == null then null else import ./split-package.nix { inherit plan; orig = hipsparse; };
}

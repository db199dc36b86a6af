# A program that dlopens a driver by a formatted name (src/dri-loader.c: "%s_dri.so"),
# with the drivers' directory in its RUNPATH (issue 19, item 7): `nixcut split` must
# keep that directory, though it supplies no DT_NEEDED library.
#
#   nix-build tests/worlds/split/dri.nix -A loader
#   nix-build … --argstr plan report.json -A split.out
{ plan ? null }:
let
  lib = import ../lib.nix { };
  drivers = lib.mkDerivation {
    name = "dri-drivers-1.0";
    src = ../src/helper.c;
    buildCommand = ''
      mkdir -p $out/lib/dri
      gcc $CFLAGS -shared -o $out/lib/dri/radeon_dri.so $src
    '';
  };
  loader = lib.mkDerivation {
    name = "dri-loader-1.0";
    src = ../src/dri-loader.c;
    buildCommand = ''
      mkdir -p $out/bin $out/share/doc/dri-loader
      gcc $CFLAGS $src $LDNEW -Wl,-rpath,${drivers}/lib/dri:${lib.glibc}/lib -ldl \
        -o $out/bin/dri-loader
      echo "loads %s_dri.so" > $out/share/doc/dri-loader/README
    '';
  };
in
{
  inherit drivers loader;
  split = if plan == null then null else import ./split-package.nix { inherit plan; orig = loader; };
}

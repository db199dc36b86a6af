# A library with both DT_RPATH and DT_RUNPATH (issue 20, point 1): the loader ignores
# the DT_RPATH (${gcc-lib}/lib), so `nixcut split` may cut that reference. GNU ld writes
# only one of the two tags, so the library is linked with DT_RPATH and a DT_AUXILIARY
# naming ${glibc}/lib, whose tag is then turned into DT_RUNPATH (dyntag.py).
#
#   nix-build tests/worlds/split/shadowed.nix -A shadowed
#   nix-build … --argstr plan report.json -A split.out
{ plan ? null }:
let
  lib = import ../lib.nix { };
  shadowed = lib.mkDerivation {
    name = "shadowed-1.0";
    src = ../src/helper.c;
    dyntag = ./dyntag.py;
    buildCommand = ''
      cp $src shadowed.c
      mkdir -p $out/lib
      gcc $CFLAGS -shared -Wl,-soname,libshadowed.so -Wl,--disable-new-dtags \
        -Wl,-rpath,${lib.gcc-lib}/lib -Wl,-f,${lib.glibc}/lib \
        -o $out/lib/libshadowed.so shadowed.c
      python3 $dyntag $out/lib/libshadowed.so 0x7ffffffd 0x1d
    '';
  };
in
{
  inherit shadowed;
  split = if plan == null then null else import ./split-package.nix { inherit plan; orig = shadowed; };
}

# A leaf with one library and no references: `nixcut split` must answer no_split.
let
  lib = import ../lib.nix { };
in
lib.mkDerivation {
  name = "leaf-1.0";
  src = ../src/zstd.c;
  buildCommand = ''
    cp $src leaf.c
    mkdir -p $out/lib
    gcc $CFLAGS -shared -Wl,-soname,libleaf.so.1 -o $out/lib/libleaf.so.1 leaf.c
  '';
}

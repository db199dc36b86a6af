# A package whose include directories and archives are named `foo'x`, `foo$out`,
# `foo${x}` and ``foo`x`` (quoted_names.py), named by its pkg-config files, its CMake
# file and its `bin/q-config`; and the code `nixcut split` generated for it applied
# (apply-code.nix): `nix-build quoted-names.nix -A pkg`, then
# `--arg code ./split.nix -A applied.dev`.
{ code ? null }:
let
  lib = import ../lib.nix { };
  pkg = lib.mkDerivation {
    name = "quoted-names-1.0";
    make = ./quoted_names.py;
    buildCommand = "python3 $make";
  };
  apply = import ./apply-code.nix { inherit code; orig = pkg; };
in
{
  inherit pkg;
  postFixup = if code == null then null else apply.postFixup;
  applied = if code == null then null else apply.applied;
}

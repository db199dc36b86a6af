# A package whose file names attack `nixcut split`'s generated code (hostile_names.py),
# and that code applied (apply-code.nix): `nix-build hostile-names.nix -A pkg`, then
# `--arg code ./split.nix -A applied.static`.
{ code ? null }:
let
  lib = import ../lib.nix { };
  pkg = lib.mkDerivation {
    name = "hostile-names-1.0";
    make = ./hostile_names.py;
    buildCommand = "python3 $make";
  };
  apply = import ./apply-code.nix { inherit code; orig = pkg; };
in
{
  inherit pkg;
  postFixup = if code == null then null else apply.postFixup;
  applied = if code == null then null else apply.applied;
}

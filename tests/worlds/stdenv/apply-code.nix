# `nixcut split`'s generated code (file `code`) applied the way nixpkgs calls it, to
# `package` built with the stdenv model (./default.nix): the code's function gets the
# package for its own argument, the model's removeReferencesTo, and for each other
# argument the store path `paths` gives (identifier -> path). The result is the split
# package (its outputs as attributes).
#
#   nix-build tests/worlds/stdenv/apply-code.nix --arg code ./split.nix \
#     --arg package '(import ./cmake.nix { }).ember' -A dev
{ code, package, paths ? { } }:
let
  stdenv = import ./. { };
  split = import code;
  args = builtins.mapAttrs
    (n: _:
      if n == "removeReferencesTo" then stdenv.removeReferencesTo
      else if paths ? ${n} then paths.${n}
      else package)
    (builtins.functionArgs split);
in
split args

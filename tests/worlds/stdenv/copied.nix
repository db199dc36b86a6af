# A package whose build installs exactly the files of `orig` (a package of a test world
# built without the stdenv model, or unpacked from Debian packages), built with the
# stdenv model so that a split's code runs under stdenv's hooks: the install copies
# `orig` and points its self references at $out (same name, same length). Like
# nixpkgs' ROCm packages it takes `gpuTargets`: a build for fewer targets writes no
# file of the others (drop_archs.py); `override` changes the arguments. `testCheck` is
# the tests' own last step.
{ orig, tag ? "", gpuTargets ? [ "all" ], testCheck ? "" }:
let
  args = { inherit orig tag gpuTargets testCheck; };
  pkg = (import ./. { inherit tag; }).mkDerivation {
    name = orig.name;
    inherit orig testCheck;
    rewrite = ../split/rewrite.py;
    dropArchs = ./drop_archs.py;
    gpuTargets = builtins.concatStringsSep " " gpuTargets;
    installPhase = ''
      mkdir -p "$out"
      cp -a "$orig"/. "$out"/
      chmod -R u+w "$out"
      python3 "$rewrite" "$out" "$orig" "$out"
      python3 "$dropArchs" "$out" $gpuTargets
    '';
  };
in
pkg // { override = a: import ./copied.nix (args // a); }

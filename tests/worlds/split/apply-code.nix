# The Nix code `nixcut split` generated for `orig` (file `code`), applied as nixpkgs
# would run it: the code is called with a stand-in for every argument (`orig` for the
# package, whose overrideAttrs applies the function to no old attributes) and its
# postFixup runs with bash in a copy of `orig` whose self references name $out, with the
# nixpkgs verbs (verbs.sh: moveToOutput expands its pattern unquoted, as nixpkgs' does)
# and the real patchelf. The build fails if a command in a file name ran.
{ code, outputs, orig }:
let
  stand-in = { overrideAttrs = f: f { }; outPath = "${orig}"; };
  split = import code;
  attrs = split (builtins.mapAttrs (_: _: stand-in) (builtins.functionArgs split));
in
{
  inherit (attrs) postFixup;
  applied = builtins.derivation {
    name = orig.name;
    system = builtins.currentSystem;
    builder = "/bin/bash";
    PATH = "/usr/bin:/bin";
    inherit outputs orig;
    inherit (attrs) postFixup;
    verbs = ./verbs.sh;
    rewrite = ./rewrite.py;
    args = [ "-c" ''
      set -eu -o pipefail
      cd "$NIX_BUILD_TOP"
      . "$verbs"
      remove-references-to() { remove_references_to "$@"; }
      cp -a "$orig"/. "$out"/ && chmod -R u+w "$out"
      python3 "$rewrite" "$out" "$orig" "$out"
      for o in $outputs; do eval "mkdir -p \"\$$o\""; done
      eval "$postFixup"
      for o in $outputs; do eval "d=\$$o"; mkdir -p "$d"; done
      if ls | grep -q pwned; then echo "a file name ran a command: $(ls)" >&2; exit 1; fi
      propagateDev
    '' ];
  };
}

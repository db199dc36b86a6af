# A package whose file names attack `nixcut split`'s generated code (hostile_names.py),
# and the generated code applied: `nix-build hostile-names.nix -A pkg`, then
# `--arg code ./split.nix --arg outputs '[ "out" "static" ]' -A applied.static`.
# `applied` evaluates the code's postFixup with a stand-in package (its overrideAttrs
# applies the function to no old attributes) and runs it with bash and the nixpkgs verbs
# (verbs.sh: moveToOutput expands its pattern unquoted, as nixpkgs' does). The build
# fails if a command in a file name ran.
{ code ? null, outputs ? [ "out" ] }:
let
  lib = import ../lib.nix { };
  pkg = lib.mkDerivation {
    name = "hostile-names-1.0";
    make = ./hostile_names.py;
    buildCommand = "python3 $make";
  };
  stand-in = { overrideAttrs = f: f { }; outPath = "${pkg}"; };
  split = import code;
  args = builtins.mapAttrs (_: _: stand-in) (builtins.functionArgs split);
  attrs = split args;
in
{
  inherit pkg;
  postFixup = if code == null then null else attrs.postFixup;
  applied = if code == null then null else builtins.derivation {
    name = pkg.name;
    system = builtins.currentSystem;
    builder = "/bin/bash";
    PATH = "/usr/bin:/bin";
    inherit outputs;
    inherit (attrs) postFixup;
    orig = pkg;
    verbs = ./verbs.sh;
    args = [ "-c" ''
      set -eu
      cd "$NIX_BUILD_TOP"
      . "$verbs"
      cp -a "$orig"/. "$out"/ && chmod -R u+w "$out"
      for o in $outputs; do eval "mkdir -p \"\$$o\""; done
      eval "$postFixup"
      for o in $outputs; do eval "d=\$$o"; [ -n "$(ls -A "$d")" ] || rmdir "$d"; mkdir -p "$d"; done
      if ls | grep -q pwned; then echo "a file name ran a command: $(ls)" >&2; exit 1; fi
      propagateDev
    '' ];
  };
}

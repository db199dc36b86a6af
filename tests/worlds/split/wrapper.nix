# A wrapper that execs its package's own helper by absolute path (issue 19, item 7):
# bin/greet runs $out/libexec/greet-helper; both go to the bin output, so the wrapper
# must name $bin/libexec/greet-helper after the split.
#
#   nix-build tests/worlds/split/wrapper.nix -A wrapper
#   nix-build … --argstr plan report.json -A split.bin
{ plan ? null }:
let
  lib = import ../lib.nix { };
  wrapper = lib.mkDerivation {
    name = "greet-1.0";
    buildCommand = ''
      mkdir -p $out/bin $out/libexec $out/share/greet
      printf '#!/bin/sh\nexec %s/libexec/greet-helper "$@"\n' "$out" > $out/bin/greet
      printf '#!/bin/sh\necho hello from the helper\n' > $out/libexec/greet-helper
      chmod +x $out/bin/greet $out/libexec/greet-helper
      echo data > $out/share/greet/words
    '';
  };
in
{
  inherit wrapper;
  split = if plan == null then null else import ./split-package.nix { inherit plan; orig = wrapper; };
}

# The Nix code `nixcut split` generated for `orig` (file `code`), applied as nixpkgs
# would run it: `orig`'s files installed by a package built with the stdenv model
# (../stdenv/copied.nix: nixpkgs' phases and multiple-outputs hooks), the code called
# with that package for its own argument (../stdenv/apply-code.nix), so its postFixup
# runs with bash after stdenv's moves, with the nixpkgs verbs (verbs.sh: moveToOutput
# expands its pattern unquoted, as nixpkgs' does) and the real patchelf. The build fails
# if a command in a file name ran. `paths` (JSON: identifier -> store path) gives the
# code's other arguments.
{ code, orig, paths ? "{}" }:
let
  package = import ../stdenv/copied.nix {
    inherit orig;
    testCheck = ''
      if ls "$NIX_BUILD_TOP" | grep -q pwned; then
        echo "a file name ran a command: $(ls "$NIX_BUILD_TOP")" >&2
        exit 1
      fi
    '';
  };
  applied = import ../stdenv/apply-code.nix {
    inherit code package;
    paths = builtins.fromJSON paths;
  };
in
{
  inherit applied;
  inherit (applied.attrs) postFixup;
}

# Applies a `nixcut split` report (its JSON) to the rocm world's rocblas with plain
# builtins.derivation and shell equivalents of the nixpkgs verbs (verbs.sh), then
# rebuilds the consumer against the new outputs: rocsolver, hipblas and llama-cpp-rocm
# are copied with every old store path's hash rewritten to the new one (the names stay
# the same, so lengths do, and ELF offsets stay valid).
#
#   nix-build tests/worlds/split/apply.nix --argstr plan report.json -A llama-cpp-rocm
#
# With `--argstr debs DIR` the same for the trixie world (Debian 13's real rocBLAS,
# ../trixie.nix): rocsolver, hipblas and llama-server-hip are rebuilt the same way.
#
# With `--arg code FILE` instead of `plan`, rocblas is the generated Nix code applied as
# nixpkgs would: to a package installing rocblas' files built with the stdenv model
# (../stdenv/copied.nix), through overrideAttrs; `--argstr paths JSON` maps the code's
# other arguments to store paths ({"tensile": "/nix/store/…"}).
{ plan ? null, code ? null, paths ? "{}", debs ? "" }:
let
  trixie = debs != "";
  world = if trixie then import ../trixie.nix { inherit debs; } else import ../rocm.nix { };
  pkg = world.rocblas;
  rocblas = if code != null
    then import ../stdenv/apply-code.nix {
      inherit code;
      package = import ../stdenv/copied.nix { orig = pkg; };
      paths = builtins.fromJSON paths;
    }
    else import ./split-package.nix { inherit plan; orig = pkg; };
  # A copy of `orig` with each [ old new ] pair's hash rewritten.
  rewritten = orig: pairs: builtins.derivation {
    name = orig.name;
    system = builtins.currentSystem;
    builder = "/bin/sh";
    PATH = "/usr/bin:/bin";
    args = [ "-c" ''
      set -eu
      mkdir -p $out && cp -a $orig/. $out/ && chmod -R u+w $out
      python3 $rewrite $out ${builtins.concatStringsSep " " (map toString pairs)}
    '' ];
    inherit orig;
    rewrite = ./rewrite.py;
  };
  rocsolver = rewritten world.rocsolver [ pkg rocblas.out ];
  hipblas = rewritten world.hipblas [ pkg rocblas.out world.rocsolver rocsolver ];
  consumer = if trixie then world.llama-server-hip else world.llama-cpp-rocm;
  rebuilt = rewritten consumer
    [ pkg rocblas.out world.rocsolver rocsolver world.hipblas hipblas ];
in
{ inherit rocblas rocsolver hipblas; }
// (if trixie then { llama-server-hip = rebuilt; } else { llama-cpp-rocm = rebuilt; })

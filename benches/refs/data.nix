# Benchmark data for `nixcut refs --closure`: a chain of packages of about
# `totalMiB` MiB in all, with references planted at random offsets. Every package
# references the leaf and the next package, so `nix why-depends --all --precise ROOT
# LEAF` has to read every package too (same data for both tools).
#
# Half of each package is random binary (few nix32 runs, the scanner skips fast),
# half is text made of lower-case words (long runs of the nix32 alphabet, the slow
# case). Built with the host's python3; no nixpkgs.
{ packages ? 16, totalMiB ? 2200, seed ? "1" }:
let
  mk = name: script: refs: builtins.derivation {
    inherit name;
    system = builtins.currentSystem;
    builder = "/bin/sh";
    args = [ "-c" "/usr/bin/python3 ${./gen.py} \"$out\" ${toString (totalMiB / packages)} ${seed}-${name} ${toString refs}" ];
    PATH = "/usr/bin:/bin";
  };
  leaf = mk "bench-leaf" "" [ ];
  pkg = i: if i == packages then leaf
    else mk "bench-pkg-${toString i}" "" [ leaf (pkg (i + 1)) ];
in
{ root = pkg 1; inherit leaf; }

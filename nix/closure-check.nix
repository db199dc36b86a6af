# A derivation whose build fails when `package`'s closure breaks a size budget or grows
# too much over a baseline: a closure-size gate that runs inside `nix build` / `nix
# flake check`, sandbox included, without the `nix` CLI.
#
#   import ./nix/closure-check.nix {
#     nixcut = nixcut;                        # a derivation or path with bin/nixcut
#     package = pkgs.llama-cpp;                # what to gate
#     maxSize = "1.5GiB";                      # bytes, or a size string nixcut parses
#     baseline = ./ci/closure-baseline.json;   # a `nixcut snapshot` (or any input file)
#     maxGrowth = "5%";                        # with baseline; nixcut's default is 5%
#     against = ./ci/cuda-closure.json;        # another closure (`nix path-info --json -r`
#     maxRatio = 2;                            #   of the CUDA build): at most 2 times it
#   }
#
# Give at least one of maxSize, baseline, against; all given must pass.
#
# How: with `__structuredAttrs = true`, `exportReferencesGraph.closure = [ package ]`
# makes Nix write the closure of `package` (path, narHash, narSize, references,
# closureSize per path) into `.attrs.json` in the build directory, which is the builder's
# working directory. `$NIX_ATTRS_JSON_FILE` names the same file (Nix 2.8 already sets
# it; checked), but the builder is nixcut itself, with no shell to expand variables, so
# it reads `.attrs.json` relative to the working directory. nixcut prints its report to
# the build log (the failure reasons come last, so they are in the log tail `nix-build`
# shows) and exits 1 when a criterion fails, which fails the build. On success the
# output `$out` is a file holding the Markdown report (`--summary`, reached through
# `builtins.placeholder "out"`, which Nix rewrites in `args`).
#
# Plain `builtins.derivation`: no nixpkgs needed, so it also works in the test suite.
# nixpkgs' `outputChecks.<out>.maxClosureSize` is the built-in alternative for a
# package's own derivation; this one works for any package after the fact, supports
# baselines, and says which paths are to blame.
{ nixcut
, package
, maxSize ? null
, baseline ? null
, maxGrowth ? null
, against ? null
, maxRatio ? null
, name ? "closure-check-${package.name or "package"}"
, system ? package.system or builtins.currentSystem
, top ? 10
, ...
}:
let
  str = x: if builtins.isString x then x else toString x;
  criteria =
    (if maxSize != null then [ "--max-size" (str maxSize) ] else [ ])
    ++ (if baseline != null then [ "--baseline" "${baseline}" ] else [ ])
    ++ (if maxGrowth != null then [ "--max-growth" (str maxGrowth) ] else [ ])
    ++ (if against != null then [ "--against" "${against}" "--max-ratio" (str maxRatio) ] else [ ]);
in
assert (maxSize != null || baseline != null || against != null)
  || throw "closure-check.nix: give maxSize, baseline or against (any of them, combined)";
assert (against == null) == (maxRatio == null)
  || throw "closure-check.nix: against and maxRatio go together";
assert (maxGrowth == null || baseline != null)
  || throw "closure-check.nix: maxGrowth needs a baseline";
builtins.derivation {
  inherit name system;
  builder = "${nixcut}/bin/nixcut";
  args = [
    "check"
    ".attrs.json"
    "--store-dir"
    builtins.storeDir
    "--summary"
    (builtins.placeholder "out")
    "--top"
    (toString top)
    "--color"
    "never"
  ] ++ criteria;
  __structuredAttrs = true;
  exportReferencesGraph.closure = [ package ];
}

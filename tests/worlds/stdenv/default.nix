# A model of nixpkgs' stdenv.mkDerivation (setup.sh: the phases and the
# multiple-outputs hooks) for rebuilding a split the way nixpkgs would, without nixpkgs.
#
#   let stdenv = import ./stdenv { }; in
#   stdenv.mkDerivation { name = "x-1.0"; installPhase = "…"; }
#
# Attributes: `name`, `outputs` (default [ "out" ]), `installPhase` (the package's build
# and install; it may use $cmakeFlags or $configureFlags/$installFlags as nixpkgs'
# hooks set them), `postInstall`, `preFixup`, `postFixup`, `outputDev`, `outputBin`,
# `outputInclude`, `outputLib`, …, `propagatedBuildOutputs`, `nativeBuildInputs` (names
# only: the model runs the host's tools). Everything else is passed to the builder.
# The result has `overrideAttrs` (a function of the old attributes, as nixpkgs').
{ tag ? "" }:
let
  mkDerivation = attrs0:
    let
      attrs = { outputs = [ "out" ]; } // attrs0;
      env = builtins.removeAttrs attrs [ "nativeBuildInputs" ];
      drv = builtins.derivation ({
        system = builtins.currentSystem;
        builder = "/bin/bash";
        args = [ ./setup.sh ];
        PATH = "/usr/bin:/bin";
        verbs = ../split/verbs.sh;
      } // (if tag == "" then { } else { inherit tag; }) // env);
    in
    drv // {
      overrideAttrs = f: mkDerivation (attrs // f attrs);
      inherit attrs;
    };
in
{
  inherit mkDerivation;
  # The stand-in for nixpkgs' removeReferencesTo (the model's verbs provide the tool).
  removeReferencesTo = "remove-references-to";
}

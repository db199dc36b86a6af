# nixcut, built with nixpkgs' rustPlatform. `doCheck = true`: building the package runs
# the whole test suite (`cargo test`). Tests that need a real Nix (the Nix-built test
# worlds, nix/closure-check.nix) find no `nix-build` inside the sandbox and print
# `SKIP …`; every other test runs, on the shipped examples and fixtures.
#
# Untested here: this machine has no nixpkgs, so neither this file nor ../flake.nix
# could be evaluated. nix/closure-check.nix, which needs no nixpkgs, is tested.
{ lib
, rustPlatform
, pkg-config
, xz
, zstd
}:
let
  cargoToml = lib.importTOML ../Cargo.toml;
in
rustPlatform.buildRustPackage {
  pname = cargoToml.package.name;
  inherit (cargoToml.package) version;

  # Only what cargo build and cargo test read: a README or CI edit does not rebuild.
  src = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      ../Cargo.toml
      ../Cargo.lock
      ../src
      ../benches
      ../tests
      ../examples
      (lib.fileset.maybeMissing ../proptest-regressions)
    ];
  };

  cargoLock.lockFile = ../Cargo.lock;

  # xz2 and zstd link the system libraries when pkg-config finds them (else they build
  # their bundled copies).
  nativeBuildInputs = [ pkg-config ];
  buildInputs = [ xz zstd ];

  doCheck = true;

  meta = {
    description = cargoToml.package.description;
    license = with lib.licenses; [ mit asl20 ];
    mainProgram = "nixcut";
    platforms = lib.platforms.unix;
  };
}

{
  description = "nixcut: explain what makes a Nix closure big, and gate closure size in CI";

  # Untested here: there is no nixpkgs on the development machines, so this flake has
  # not been evaluated. nix/closure-check.nix (plain builtins.derivation) is tested by
  # tests/closure_check_nix.rs with Nix 2.8.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAllSystems = f:
        nixpkgs.lib.genAttrs systems (system: f system nixpkgs.legacyPackages.${system});
    in
    {
      packages = forAllSystems (system: pkgs: {
        nixcut = pkgs.callPackage ./nix/package.nix { };
        default = self.packages.${system}.nixcut;
      });

      apps = forAllSystems (system: pkgs: {
        default = {
          type = "app";
          program = "${self.packages.${system}.default}/bin/nixcut";
          meta.description = "Explain and gate Nix closure sizes";
        };
      });

      checks = forAllSystems (system: pkgs:
        let nixcut = self.packages.${system}.default;
        in {
          # Building the package runs the test suite (doCheck = true in nix/package.nix).
          tests = nixcut;

          fmt = pkgs.runCommand "nixcut-fmt" { nativeBuildInputs = [ pkgs.rustfmt ]; } ''
            cd ${nixcut.src}
            find src tests benches -name '*.rs' -exec rustfmt --check --edition 2021 {} +
            touch $out
          '';

          clippy = nixcut.overrideAttrs (old: {
            pname = "nixcut-clippy";
            nativeBuildInputs = old.nativeBuildInputs ++ [ pkgs.clippy ];
            buildPhase = ''
              runHook preBuild
              cargo clippy --offline --all-targets -- -D warnings
              runHook postBuild
            '';
            doCheck = false;
            installPhase = "touch $out";
          });

          # nixcut gating its own closure, as any flake can with lib.closureCheck.
          closure-size = self.lib.closureCheck {
            package = nixcut;
            maxSize = "100MiB";
          };
        });

      devShells = forAllSystems (system: pkgs: {
        default = pkgs.mkShell {
          inputsFrom = [ self.packages.${system}.default ];
          packages = with pkgs; [ cargo rustc clippy rustfmt rust-analyzer ];
          RUST_SRC_PATH = "${pkgs.rustPlatform.rustLibSrc}";
        };
      });

      # Fail a build when a package's closure breaks a budget or grows over a baseline:
      #
      #   checks.x86_64-linux.closure = nixcut.lib.closureCheck {
      #     package = self.packages.x86_64-linux.default;
      #     maxSize = "2GiB";                        # and/or
      #     baseline = ./ci/closure-baseline.json;   # from `nixcut snapshot`
      #     maxGrowth = "5%";                        # and/or
      #     against = ./ci/cuda-closure.json;        # `nix path-info --json -r` of
      #     maxRatio = 2;                            #   another build, at most 2 times it
      #   };
      #
      # Arguments are those of nix/closure-check.nix; `nixcut` defaults to this flake's
      # package for the package's system.
      lib.closureCheck = args:
        import ./nix/closure-check.nix ({
          nixcut = self.packages.${args.system or args.package.system}.default;
        } // args);
    };
}

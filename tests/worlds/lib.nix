# Shared helper and leaf packages of the test worlds (rocm.nix, cuda.nix).
# Both worlds import this file with the same `tag`, so the leaves below are identical
# store paths in both closures.
{ tag ? "" }:
let
  mkDerivation = { name, buildCommand, ... }@attrs:
    builtins.derivation ({
      system = builtins.currentSystem;
      builder = "/bin/sh";
      args = [ ./builder.sh ];
      PATH = "/usr/bin:/bin";
    } // (if tag == "" then { } else { inherit tag; }) // attrs);

  # Shell lines setting $inputs to the inputs a build given only $dev gets: dev and what
  # its nix-support/propagated-build-inputs names, recursively (as stdenv does).
  inputsOfDev = ''
    inputs=
    add() {
      case " $inputs " in *" $1 "*) return ;; esac
      inputs="$inputs $1"
      if [ -f "$1/nix-support/propagated-build-inputs" ]; then
        for p in $(cat "$1/nix-support/propagated-build-inputs"); do add "$p"; done
      fi
    }
    add $dev
  '';

  # gpubin.py: fake-but-parseable GPU binaries (AMDGPU ELF, offload bundles, CCOB, fatbins).
  gpubin = ./src/gpubin.py;
in
rec {
  inherit mkDerivation gpubin inputsOfDev;

  # glibc-like leaf: the host's real loader and libc. The loader is the PT_INTERP of the
  # executables (elf-interpreter); lib/ supplies libc.so.6 to every RUNPATH (elf-needed).
  glibc = mkDerivation {
    name = "glibc-2.36";
    buildCommand = ''
      mkdir -p $out/lib
      cp -L /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/libc.so.6 $out/lib/
      chmod 0555 $out/lib/*
    '';
  };

  # gcc-libs-like: a real shared library built with gcc -shared (NEEDED by rocm-runtime
  # and cuda_cudart through RUNPATH: elf-needed).
  gcc-lib = mkDerivation {
    name = "gcc-12.2.0-lib";
    src = ./src/helper.c;
    buildCommand = ''
      cp $src helper.c
      mkdir -p $out/lib
      gcc $CFLAGS -shared -Wl,-soname,libhelper.so $LDNEW -Wl,-rpath,${glibc}/lib \
        -o $out/lib/libhelper.so helper.c
    '';
  };

  # bash-like: a shell to put in shebangs (script evidence). A copy of the host's dash.
  bash = mkDerivation {
    name = "bash-5.2p15";
    buildCommand = ''
      mkdir -p $out/bin
      cp -L /bin/dash $out/bin/sh
      ln -s sh $out/bin/bash
    '';
  };
}

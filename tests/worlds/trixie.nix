# The real ROCm stack of Debian 13 ("trixie") as a Nix closure: rocBLAS 5.5.1 with its
# Tensile data (2.2 GB), rocSOLVER, hipBLAS, rocRAND/hipRAND, RCCL and the HIP runtime,
# each its own store path with RUNPATHs set by patchelf as nixpkgs does, and a consumer
# compiled with Debian's hipcc against hipBLAS, rocBLAS, rocRAND and RCCL the way
# llama.cpp's HIP backend is (its own kernels in a fat binary for two targets).
#
#   tests/worlds/fetch-trixie.sh              # the .deb files, cached under target/
#   tests/worlds/build.sh trixie --argstr debs "$PWD/target/debian-trixie/debs"
#
#   debs     directory holding the downloaded .deb files (fetch-trixie.sh); each one is
#            added to the store by content, so the store paths do not depend on where
#            the repository is checked out
#   variant  "" for the packages as Debian ships them; "renamed-data" moves rocBLAS'
#            Tensile directory to lib/rocblas/2.47.0/library.moved (a broken package:
#            rocBLAS aborts at start, nothing opens the data) for the agreement test
#   tag      mixed into every derivation to force distinct store paths
{ debs, variant ? "", tag ? "" }:
let
  lib = import ./lib.nix { inherit tag; };
  inherit (lib) mkDerivation;

  # The one .deb of package `name` in `debs` (`librocblas0_5.5.1+dfsg-7_amd64.deb`).
  deb = name:
    let
      files = builtins.attrNames (builtins.readDir debs);
      prefix = "${name}_";
      matches = builtins.filter
        (f: builtins.substring 0 (builtins.stringLength prefix) f == prefix) files;
    in
    if matches == [ ] then throw "trixie.nix: no ${name}_*.deb in ${debs} (run tests/worlds/fetch-trixie.sh)"
    else builtins.path { path = /. + "${debs}/${builtins.head matches}"; name = builtins.head matches; };

  libdirs = ps: builtins.concatStringsSep ":" (map (p: "${p}/lib") ps);

  # Host runtime libraries the Debian binaries need (libc, libm, libstdc++, libgcc_s):
  # what nixpkgs' glibc and gcc-unwrapped.lib are to rocmPackages.
  runtime = mkDerivation {
    name = "gcc-runtime-12.2.0";
    buildCommand = ''
      mkdir -p $out/lib
      for f in ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1; do
        cp -L /lib/x86_64-linux-gnu/$f $out/lib/ 2>/dev/null || cp -L /lib64/$f $out/lib/
      done
      chmod 0555 $out/lib/*
    '';
  };

  # Unpack packages into $out (and $dev), usr/lib/x86_64-linux-gnu -> lib, usr/include ->
  # include, usr/share/doc dropped; then point every ELF file's RUNPATH at `deps`.
  fromDebs = { name, outDebs, devDebs ? [ ], deps ? [ ], extra ? "" }:
    mkDerivation ({
      inherit name;
      outputs = if devDebs == [ ] then [ "out" ] else [ "out" "dev" ];
      outDebs = map deb outDebs;
      devDebs = map deb devDebs;
      rpath = libdirs (deps ++ [ runtime ]);
      buildCommand = ''
        unpack() { # unpack DEST DEB...
          dest=$1; shift
          mkdir -p x $dest
          for d in "$@"; do dpkg-deb -x $d x; done
          if [ -d x/usr/lib/x86_64-linux-gnu ]; then mkdir -p $dest/lib; cp -a x/usr/lib/x86_64-linux-gnu/. $dest/lib/; fi
          if [ -d x/usr/include ]; then cp -a x/usr/include $dest/; fi
          # Device libraries: usr/lib/llvm-17/lib/clang/17/amdgcn -> amdgcn.
          for a in x/usr/lib/llvm-*/lib/clang/*/amdgcn; do [ -d "$a" ] && cp -a "$a" $dest/; done
          rm -rf x
        }
        unpack $out $outDebs
        for f in $out/lib/*.so.*; do
          [ -f "$f" ] && ! [ -L "$f" ] || continue
          chmod u+w "$f"
          patchelf --set-rpath "$rpath" "$f"
        done
        if [ -n "''${dev:-}" ]; then
          unpack $dev $devDebs
          # The development symlink points at the library in $out, as nixpkgs' dev outputs do.
          for l in $dev/lib/*.so; do
            [ -L "$l" ] || continue
            ln -sf $out/lib/$(basename $(readlink $l)) $l
          done
          # CMake configs name /usr paths; nixpkgs' are rewritten to the outputs.
          find $dev/lib -name '*.cmake' -exec sed -i \
            -e "s|/usr/lib/x86_64-linux-gnu/lib|$out/lib/lib|g" \
            -e "s|/usr/include|$dev/include|g" {} +
        fi
        ${extra}
      '';
    });

  hip = fromDebs {
    name = "clr-5.7.1";
    outDebs = [ "libamdhip64-5" ];
    devDebs = [ "libamdhip64-dev" ];
    extra = ''
      # Like nixpkgs' clr, which propagates the device libraries to its users (build-only).
      mkdir -p $dev/nix-support
      echo ${rocm-device-libs} > $dev/nix-support/propagated-build-inputs
    '';
  };

  rocm-device-libs = fromDebs {
    name = "rocm-device-libs-17";
    outDebs = [ "rocm-device-libs-17" ];
  };

  rocblas = fromDebs {
    name = "rocblas-5.5.1";
    outDebs = [ "librocblas0" ];
    devDebs = [ "librocblas-dev" ];
    deps = [ hip ];
    extra = if variant == "renamed-data" then ''
      mv $out/lib/rocblas/2.47.0/library $out/lib/rocblas/2.47.0/library.moved
    '' else "";
  };

  rocsolver = fromDebs {
    name = "rocsolver-5.5.1";
    outDebs = [ "librocsolver0" ];
    deps = [ rocblas hip ];
  };

  hipblas = fromDebs {
    name = "hipblas-5.5.1";
    outDebs = [ "libhipblas0" ];
    devDebs = [ "libhipblas-dev" ];
    deps = [ rocblas rocsolver hip ];
  };

  rocrand = fromDebs {
    name = "rocrand-5.7.1";
    outDebs = [ "librocrand1" "libhiprand1" ];
    devDebs = [ "librocrand-dev" ];
    deps = [ hip ];
  };

  rccl = fromDebs {
    name = "rccl-5.4.3";
    outDebs = [ "librccl1" ];
    devDebs = [ "librccl-dev" ];
    deps = [ hip ];
  };

  # The consumer: llama.cpp's HIP backend in miniature. Its own kernel for gfx1030 and
  # gfx908 in a fat binary; NEEDs hipBLAS, rocBLAS, rocRAND, RCCL and the HIP runtime.
  llama-server-hip = mkDerivation {
    name = "llama-server-hip-0.0.0";
    src = ./src/llama-server-hip.hip;
    inherit variant;
    buildCommand = ''
      cp $src app.hip
      mkdir -p $out/bin
      hipcc --offload-arch=gfx1030 --offload-arch=gfx908 -O2 \
        -ffile-prefix-map=$NIX_BUILD_TOP=/build \
        -I${hipblas.dev}/include -I${rocblas.dev}/include -I${rocrand.dev}/include \
        -I${rccl.dev}/include \
        -o $out/bin/llama-server app.hip \
        -L${hipblas}/lib -L${rocblas}/lib -L${rocrand}/lib -L${rccl}/lib -L${hip}/lib \
        -l:libhipblas.so.0 -l:librocblas.so.0 -l:librocrand.so.1 -l:librccl.so.1 \
        -l:libamdhip64.so.5 -Wl,--allow-shlib-undefined
      patchelf --set-interpreter ${runtime}/lib/ld-linux-x86-64.so.2 \
        --set-rpath ${libdirs [ hipblas rocblas rocrand rccl hip runtime ]} $out/bin/llama-server
    '';
  };
in
{
  inherit runtime hip rocm-device-libs rocblas rocsolver hipblas rocrand rccl llama-server-hip;
}

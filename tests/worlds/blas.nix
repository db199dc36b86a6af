# A BLAS-like library that is not librocblas (issue 22): `libfastblas.so` keeps its
# Tensile-style kernels in lib/fastblas/library and names that directory
# ("fastblas/library") and the pattern of its master index
# ("TensileLibrary_lazy_%s.dat") in its .rodata strings. No data-directory rule knows
# it, so only its strings say what it opens.
#
#   nix-build tests/worlds/blas.nix -A blas-app --no-out-link
#   nix-build tests/worlds/blas.nix --arg dats /dir -A blas-app   # + index files from /dir
#
# fastblas-kernels-gfx90a, -gfx1030: per-architecture files (lazy master .dat, .co code
# objects of two problem types, a Kernels.so-000-<arch>.hsaco); fastblas-kernels-fallbacks: arch-generic
# *_fallback.dat. fastblas symlinks every one of them into lib/fastblas/library, writes
# a TensileManifest.txt of build paths there, and copies the files of `dats` (when
# given: MessagePack index files the test writes) into it. blas-app: bin/blas-app, which
# NEEDs libfastblas.so.
{ dats ? null }:
let
  lib = import ./lib.nix { };
  inherit (lib) mkDerivation glibc gpubin;
  rpath = ps: "-Wl,--enable-new-dtags -Wl,-rpath,"
    + builtins.concatStringsSep ":" (map (p: "${p}/lib") ps);
  group = name: unit: files: mkDerivation {
    name = "fastblas-kernels-${name}-1.0";
    list = builtins.toFile "fastblas-${name}.txt"
      (builtins.concatStringsSep "" (map (f: "${f}\n") files));
    buildCommand = ''
      mkdir -p $out/lib/fastblas/library
      python3 ${gpubin} tensile $list $out/lib/fastblas/library ${toString unit} 2
    '';
  };
  kind = "TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk";
  # A second problem type's code object, which the test's indexes never name.
  other = "TensileLibrary_Type_DD_Contraction_l_Ailk_Bjlk_Cijk_Dijk";
  perArch = arch: [
    "TensileLibrary_lazy_${arch}.dat\t${arch}"
    "Kernels.so-000-${arch}.hsaco\t${arch}"
    "${kind}_${arch}.co\t${arch}"
    "${kind}_${arch}.dat\t${arch}"
    "${other}_${arch}.co\t${arch}"
  ];
  fastblas-kernels-gfx90a = group "gfx90a" 4096 (perArch "gfx90a");
  fastblas-kernels-gfx1030 = group "gfx1030" 2048 (perArch "gfx1030");
  fastblas-kernels-fallbacks = group "fallbacks" 1024 [
    "${kind}_fallback.dat\tany"
  ];
  groups = [ fastblas-kernels-gfx90a fastblas-kernels-gfx1030 fastblas-kernels-fallbacks ];
  fastblas = mkDerivation ({
    name = "fastblas-1.0";
    src = ./src/fastblas.c;
    buildCommand = ''
      cp $src fastblas.c
      d=$out/lib/fastblas/library
      mkdir -p $d
      gcc $CFLAGS -shared -Wl,-soname,libfastblas.so.1 -o $out/lib/libfastblas.so.1 \
        fastblas.c ${rpath [ glibc ]}
      ln -s libfastblas.so.1 $out/lib/libfastblas.so
      for path in ${builtins.concatStringsSep " " (map toString groups)}; do
        ln -s $path/lib/fastblas/library/* $d/
      done
      # The test's index files replace the symlinks of the same name.
      if [ -n "''${dats:-}" ]; then
        for f in $dats/*; do rm -f "$d/''${f##*/}"; cp "$f" $d/; done
      fi
      for f in $d/*; do
        echo "/build/source/build/Tensile/library/''${f##*/}"
      done > $d/TensileManifest.txt
    '';
  } // (if dats == null then { } else { inherit dats; }));
  blas-app = mkDerivation {
    name = "blas-app-1.0";
    src = ./src/blas-app.c;
    buildCommand = ''
      cp $src blas-app.c
      mkdir -p $out/bin
      gcc $CFLAGS -Wl,--dynamic-linker=${glibc}/lib/ld-linux-x86-64.so.2 \
        -o $out/bin/blas-app blas-app.c -L${fastblas}/lib -lfastblas ${rpath [ fastblas glibc ]}
    '';
  };
in
{
  inherit glibc fastblas blas-app fastblas-kernels-gfx90a fastblas-kernels-gfx1030
    fastblas-kernels-fallbacks;
}
